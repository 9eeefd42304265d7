// arrow-rs compatible date / timestamp string parsing for SQL filters.
#include "lance/scan/filter_temporal.h"

#include <charconv>
#include <cstdint>
#include <limits>
#include <string>

#include <arrow/array.h>
#include <arrow/builder.h>
#include <arrow/compute/api.h>
#include <arrow/datum.h>
#include <arrow/type.h>

namespace lance::scan::filter {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

bool IsLeapYear(int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

int DaysInMonth(int64_t y, int m) {
  static const int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && IsLeapYear(y) ? 29 : kDays[m - 1];
}

bool ValidDate(int64_t y, int m, int d) {
  return m >= 1 && m <= 12 && d >= 1 && d <= DaysInMonth(y, m);
}

int Digit(std::string_view s, size_t i) { return s[i] - '0'; }

// True when s[first, first + count) are all ASCII digits.
bool Digits(std::string_view s, size_t first, size_t count) {
  if (first + count > s.size()) return false;
  for (size_t i = first; i < first + count; ++i) {
    if (!IsDigit(s[i])) return false;
  }
  return true;
}

bool DigitAt(std::string_view s, size_t i) { return i < s.size() && IsDigit(s[i]); }

// `+HH:MM`, `+HHMM` or `+HH` (arrow-rs `parse_fixed_offset`).
bool ParseFixedOffset(std::string_view tz, int32_t* seconds) {
  char h1, h2, m1 = '0', m2 = '0';
  if (tz.size() == 6 && tz[3] == ':') {
    h1 = tz[1], h2 = tz[2], m1 = tz[4], m2 = tz[5];
  } else if (tz.size() == 5) {
    h1 = tz[1], h2 = tz[2], m1 = tz[3], m2 = tz[4];
  } else if (tz.size() == 3) {
    h1 = tz[1], h2 = tz[2];
  } else {
    return false;
  }
  if (!IsDigit(h1) || !IsDigit(h2) || !IsDigit(m1) || !IsDigit(m2)) return false;
  const int32_t secs = ((h1 - '0') * 10 + (h2 - '0')) * 3600 + ((m1 - '0') * 10 + (m2 - '0')) * 60;
  if (secs >= 86400) return false;
  if (tz[0] == '+') {
    *seconds = secs;
  } else if (tz[0] == '-') {
    *seconds = -secs;
  } else {
    return false;
  }
  return true;
}

Status ParseError(std::string_view s, const char* what) {
  return Status::Invalid("cannot parse timestamp '", s, "': ", what);
}

}  // namespace

int64_t DaysFromCivil(int64_t year, int month, int day) {
  // Howard Hinnant's days_from_civil.
  year -= month <= 2 ? 1 : 0;
  const int64_t era = (year >= 0 ? year : year - 399) / 400;
  const int64_t yoe = year - era * 400;
  const int64_t mp = month > 2 ? month - 3 : month + 9;
  const int64_t doy = (153 * mp + 2) / 5 + day - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

int64_t TicksPerSecond(arrow::TimeUnit::type unit) {
  switch (unit) {
    case arrow::TimeUnit::SECOND: return 1;
    case arrow::TimeUnit::MILLI: return 1000;
    case arrow::TimeUnit::MICRO: return 1000000;
    case arrow::TimeUnit::NANO: return 1000000000;
  }
  return 1;
}

Result<int64_t> ConvertTimeUnit(int64_t value, arrow::TimeUnit::type from,
                                arrow::TimeUnit::type to) {
  const int64_t f = TicksPerSecond(from);
  const int64_t t = TicksPerSecond(to);
  if (f == t) return value;
  if (f > t) return value / (f / t);
  int64_t out;
  if (__builtin_mul_overflow(value, t / f, &out)) {
    return Status::Invalid("timestamp out of range for its unit");
  }
  return out;
}

Result<ParsedTimestamp> ParseTimestampString(std::string_view s) {
  if (s.size() < 10) return ParseError(s, "a timestamp must have at least 10 characters");
  if (!Digits(s, 0, 4) || s[4] != '-' || !Digits(s, 5, 2) || s[7] != '-' ||
      !Digits(s, 8, 2)) {
    return ParseError(s, "expected a date YYYY-MM-DD");
  }
  const int64_t year = Digit(s, 0) * 1000 + Digit(s, 1) * 100 + Digit(s, 2) * 10 + Digit(s, 3);
  const int month = Digit(s, 5) * 10 + Digit(s, 6);
  const int day = Digit(s, 8) * 10 + Digit(s, 9);
  if (!ValidDate(year, month, day)) return ParseError(s, "no such date");
  ParsedTimestamp out;
  const int64_t days = DaysFromCivil(year, month, day);
  if (s.size() == 10) {
    out.local_seconds = days * 86400;
    return out;
  }
  if (s[10] != 'T' && s[10] != 't' && s[10] != ' ') {
    return ParseError(s, "expected 'T' or ' ' between date and time");
  }
  int hour, minute, second;
  int64_t nanos = 0;
  size_t end;
  if (Digits(s, 11, 2) && DigitAt(s, 14) && DigitAt(s, 15) && DigitAt(s, 17) && DigitAt(s, 18) &&
      s[13] == ':' && s[16] == ':') {
    hour = Digit(s, 11) * 10 + Digit(s, 12);
    minute = Digit(s, 14) * 10 + Digit(s, 15);
    second = Digit(s, 17) * 10 + Digit(s, 18);
    end = 19;
    if (end < s.size() && s[end] == '.') {
      size_t k = end + 1;
      while (DigitAt(s, k)) ++k;
      const size_t count = k - (end + 1);
      if (count == 0) return ParseError(s, "expected digits after '.'");
      int64_t scale = 100000000;
      for (size_t i = end + 1; i < k && i < end + 10; ++i) {
        nanos += Digit(s, i) * scale;
        scale /= 10;
      }
      end = k;
    }
  } else if (Digits(s, 11, 6) && !DigitAt(s, 17) && !DigitAt(s, 18)) {
    hour = Digit(s, 11) * 10 + Digit(s, 12);
    minute = Digit(s, 13) * 10 + Digit(s, 14);
    second = Digit(s, 15) * 10 + Digit(s, 16);
    end = 17;
  } else {
    return ParseError(s, "expected a time HH:MM:SS");
  }
  if (hour > 23 || minute > 59 || second > 60) return ParseError(s, "no such time");
  out.local_seconds = days * 86400 + hour * 3600 + minute * 60 + second;
  out.nanos = nanos;
  if (end >= s.size()) return out;
  if ((s[end] == 'Z' || s[end] == 'z') && end == s.size() - 1) {
    out.zone = ParsedTimestamp::Zone::kUtc;
    return out;
  }
  std::string_view zone = s.substr(end);
  while (!zone.empty() && (zone.front() == ' ' || zone.front() == '\t' || zone.front() == '\n' ||
                           zone.front() == '\r' || zone.front() == '\f' || zone.front() == '\v')) {
    zone.remove_prefix(1);
  }
  int32_t offset;
  if (ParseFixedOffset(zone, &offset)) {
    out.zone = ParsedTimestamp::Zone::kOffset;
    out.offset_seconds = offset;
    return out;
  }
  if (zone.empty()) return ParseError(s, "invalid time zone");
  out.zone = ParsedTimestamp::Zone::kNamed;
  out.zone_name = std::string(zone);
  // Validate the name now, so that a bad zone is reported as a parse error.
  auto check = LocalToUtc(0, arrow::TimeUnit::SECOND, out.zone_name);
  if (!check.ok()) {
    return Status::Invalid("cannot parse timestamp '", s, "': unknown time zone '", zone, "'");
  }
  return out;
}

Result<int32_t> ParseDateString(std::string_view s) {
  auto fail = [&]() { return Status::Invalid("cannot parse date '", s, "'"); };
  int64_t year;
  int month, day;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    // Extended year: at least four digits, then -MM-DD.
    const size_t hyphen = s.find('-', 1);
    if (hyphen == std::string_view::npos || hyphen < 5) return fail();
    int64_t y;
    const char* first = s.data() + (s[0] == '+' ? 1 : 0);
    auto [p, ec] = std::from_chars(first, s.data() + hyphen, y);
    if (ec != std::errc() || p != s.data() + hyphen) return fail();
    std::string_view rest = s.substr(hyphen + 1);
    const size_t dash = rest.find('-');
    if (dash == std::string_view::npos) return fail();
    int m = 0, d = 0;
    auto r1 = std::from_chars(rest.data(), rest.data() + dash, m);
    auto r2 = std::from_chars(rest.data() + dash + 1, rest.data() + rest.size(), d);
    if (r1.ec != std::errc() || r1.ptr != rest.data() + dash || r2.ec != std::errc() ||
        r2.ptr != rest.data() + rest.size()) {
      return fail();
    }
    year = y;
    month = m;
    day = d;
  } else if (s.size() > 10) {
    auto parsed = ParseTimestampString(s);
    if (!parsed.ok()) return fail();
    int64_t seconds = parsed->local_seconds;
    if (parsed->zone == ParsedTimestamp::Zone::kOffset) {
      seconds -= parsed->offset_seconds;
    } else if (parsed->zone == ParsedTimestamp::Zone::kNamed) {
      auto utc = LocalToUtc(seconds, arrow::TimeUnit::SECOND, parsed->zone_name);
      if (!utc.ok()) return fail();
      seconds = *utc;
    }
    seconds += parsed->nanos / 1000000000;
    int64_t days = seconds / 86400;
    if (seconds % 86400 < 0) --days;
    if (days < std::numeric_limits<int32_t>::min() || days > std::numeric_limits<int32_t>::max()) {
      return fail();
    }
    return static_cast<int32_t>(days);
  } else if (s.size() >= 5 && s[4] != '-') {
    if (s.size() != 8 || !Digits(s, 0, 8)) return fail();
    year = Digit(s, 0) * 1000 + Digit(s, 1) * 100 + Digit(s, 2) * 10 + Digit(s, 3);
    month = Digit(s, 4) * 10 + Digit(s, 5);
    day = Digit(s, 6) * 10 + Digit(s, 7);
  } else {
    // YYYY-M[M]-D[D]
    if (s.size() < 8 || !Digits(s, 0, 4) || s[4] != '-') return fail();
    size_t i = 5;
    size_t k = i;
    while (k < s.size() && IsDigit(s[k]) && k - i < 2) ++k;
    if (k == i || k >= s.size() || s[k] != '-') return fail();
    month = 0;
    for (size_t j = i; j < k; ++j) month = month * 10 + Digit(s, j);
    i = k + 1;
    k = i;
    while (k < s.size() && IsDigit(s[k]) && k - i < 2) ++k;
    if (k == i || k != s.size()) return fail();
    day = 0;
    for (size_t j = i; j < k; ++j) day = day * 10 + Digit(s, j);
    year = Digit(s, 0) * 1000 + Digit(s, 1) * 100 + Digit(s, 2) * 10 + Digit(s, 3);
  }
  if (!ValidDate(year, month, day)) return fail();
  const int64_t days = DaysFromCivil(year, month, day);
  if (days < std::numeric_limits<int32_t>::min() || days > std::numeric_limits<int32_t>::max()) {
    return fail();
  }
  return static_cast<int32_t>(days);
}

Result<int64_t> LocalToUtc(int64_t local, arrow::TimeUnit::type unit, const std::string& zone) {
  arrow::TimestampBuilder builder(arrow::timestamp(unit), arrow::default_memory_pool());
  LANCE_RETURN_NOT_OK(builder.Append(local));
  std::shared_ptr<arrow::Array> array;
  LANCE_RETURN_NOT_OK(builder.Finish(&array));
  arrow::compute::AssumeTimezoneOptions options(
      zone, arrow::compute::AssumeTimezoneOptions::AMBIGUOUS_RAISE,
      arrow::compute::AssumeTimezoneOptions::NONEXISTENT_RAISE);
  LANCE_ASSIGN_OR_RAISE(arrow::Datum out,
                        arrow::compute::CallFunction("assume_timezone", {array}, &options));
  const std::shared_ptr<arrow::Array> result = out.make_array();
  const auto& timestamps = static_cast<const arrow::TimestampArray&>(*result);
  if (timestamps.length() != 1 || timestamps.IsNull(0)) {
    return Status::Invalid("cannot place ", local, " in time zone '", zone, "'");
  }
  return timestamps.Value(0);
}

Result<int64_t> TimestampStringValue(const ParsedTimestamp& parsed, arrow::TimeUnit::type unit,
                                     const std::string& zone) {
  const int64_t ticks = TicksPerSecond(unit);
  int64_t value;
  if (__builtin_mul_overflow(parsed.local_seconds, ticks, &value) ||
      __builtin_add_overflow(value, parsed.nanos / (1000000000 / ticks), &value)) {
    return Status::Invalid("timestamp out of range for its unit");
  }
  switch (parsed.zone) {
    case ParsedTimestamp::Zone::kUtc:
      return value;
    case ParsedTimestamp::Zone::kOffset: {
      int64_t shifted;
      if (__builtin_sub_overflow(value, parsed.offset_seconds * ticks, &shifted)) {
        return Status::Invalid("timestamp out of range for its unit");
      }
      return shifted;
    }
    case ParsedTimestamp::Zone::kNamed:
      return LocalToUtc(value, unit, parsed.zone_name);
    case ParsedTimestamp::Zone::kNone:
      if (zone.empty()) return value;
      return LocalToUtc(value, unit, zone);
  }
  return value;
}

}  // namespace lance::scan::filter
