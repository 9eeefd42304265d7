// Lance file format versions and their on-disk (major, minor) pairs.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "lance/status.h"

namespace lance::file {

enum class FileVersion { kLegacy, kV2_0, kV2_1, kV2_2 };

/// (0,0), (0,1), (0,2) are legacy; (0,3) and (2,0) are both 2.0.
Result<FileVersion> FileVersionFromPair(uint32_t major, uint32_t minor);
/// "0.1"/"legacy", "2.0", "2.1", "2.2"; "stable" is 2.2, the pinned
/// reference's default.
Result<FileVersion> FileVersionFromString(std::string_view s);
/// "0.1", "2.0", "2.1", "2.2".
std::string FileVersionToString(FileVersion v);
/// A version name as the writers record it ("legacy" is "0.1", "stable"
/// 2.2); a name no version has comes back as it is, for its refusal to quote.
std::string CanonicalVersionName(std::string_view s);
/// "0.1" or "legacy": the v1 format, whose files never mix with v2 ones.
bool IsLegacyVersionName(std::string_view s);
/// The pair a writer records for the version.
std::pair<uint32_t, uint32_t> FileVersionToPair(FileVersion v);

}  // namespace lance::file
