// Date and timestamp strings as pylance reads them (arrow-rs's parsers, which
// DataFusion casts strings with), and the time zone arithmetic that comparing a
// naive timestamp with a zoned column needs. Internal to src/lance/scan/filter_*.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <arrow/type_fwd.h>

#include "lance/status.h"

namespace lance::scan::filter {

/// A timestamp string split into the wall-clock time it writes and its zone, if any.
struct ParsedTimestamp {
  enum class Zone { kNone, kUtc, kOffset, kNamed };
  int64_t local_seconds = 0;  // seconds since 1970-01-01 00:00 of the wall-clock time
  int64_t nanos = 0;          // 0 .. 1'999'999'999 (a leap second adds one second)
  Zone zone = Zone::kNone;
  int32_t offset_seconds = 0;  // kOffset: east of UTC
  std::string zone_name;       // kNamed: an IANA name
};

/// arrow-rs `string_to_datetime`: `YYYY-MM-DD`, then optionally `T`/`t`/space,
/// `HH:MM:SS[.fraction]` or `HHMMSS`, then optionally `Z`, `+HH[:MM]`, `+HHMM` or a
/// zone name.
Result<ParsedTimestamp> ParseTimestampString(std::string_view s);

/// arrow-rs Date32 parsing: `YYYY-MM-DD`, `YYYY-M-D` (and mixes), `YYYYMMDD`, a
/// longer timestamp string (its UTC date), or a signed extended year `+YYYYY-MM-DD`.
Result<int32_t> ParseDateString(std::string_view s);

/// Days since 1970-01-01 of a proleptic Gregorian date (no validation).
int64_t DaysFromCivil(int64_t year, int month, int day);

/// Ticks per second of a unit (1, 1e3, 1e6, 1e9).
int64_t TicksPerSecond(arrow::TimeUnit::type unit);

/// Converts between units: multiplying (checked) or dividing, truncating toward
/// zero like arrow-rs's cast.
Result<int64_t> ConvertTimeUnit(int64_t value, arrow::TimeUnit::type from,
                                arrow::TimeUnit::type to);

/// The instant (in `unit` since the epoch, UTC) of the wall-clock time `local` in
/// `zone` (an IANA name or a fixed offset like "+05:00"). Ambiguous and nonexistent
/// local times are errors, as in arrow-rs.
Result<int64_t> LocalToUtc(int64_t local, arrow::TimeUnit::type unit, const std::string& zone);

/// The value a timestamp string takes in a column of type timestamp(unit, zone):
/// with no zone of its own it is wall-clock time in `zone` (UTC when `zone` is
/// empty); an explicit zone makes it an instant. Fractions below the unit are floored.
Result<int64_t> TimestampStringValue(const ParsedTimestamp& parsed, arrow::TimeUnit::type unit,
                                     const std::string& zone);

}  // namespace lance::scan::filter
