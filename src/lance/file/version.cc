#include "lance/file/version.h"

namespace lance::file {

Result<FileVersion> FileVersionFromPair(uint32_t major, uint32_t minor) {
  if (major == 0 && minor <= 2) return FileVersion::kLegacy;
  if ((major == 0 && minor == 3) || (major == 2 && minor == 0)) return FileVersion::kV2_0;
  if (major == 2 && minor == 1) return FileVersion::kV2_1;
  if (major == 2 && minor == 2) return FileVersion::kV2_2;
  return Status::NotImplemented("unsupported Lance file version ", major, ".", minor,
                                ": please upgrade lance-cpp");
}

Result<FileVersion> FileVersionFromString(std::string_view s) {
  if (s == "0.1" || s == "legacy") return FileVersion::kLegacy;
  if (s == "2.0") return FileVersion::kV2_0;
  if (s == "2.1") return FileVersion::kV2_1;
  if (s == "2.2" || s == "stable") return FileVersion::kV2_2;
  return Status::NotImplemented("unsupported Lance file version '", s,
                                "': please upgrade lance-cpp");
}

std::string CanonicalVersionName(std::string_view s) {
  auto v = FileVersionFromString(s);
  return v.ok() ? FileVersionToString(*v) : std::string(s);
}

bool IsLegacyVersionName(std::string_view s) {
  auto v = FileVersionFromString(s);
  return v.ok() && *v == FileVersion::kLegacy;
}

std::string FileVersionToString(FileVersion v) {
  switch (v) {
    case FileVersion::kLegacy: return "0.1";
    case FileVersion::kV2_0: return "2.0";
    case FileVersion::kV2_1: return "2.1";
    case FileVersion::kV2_2: return "2.2";
  }
  return "?";
}

std::pair<uint32_t, uint32_t> FileVersionToPair(FileVersion v) {
  switch (v) {
    case FileVersion::kLegacy: return {0, 2};
    case FileVersion::kV2_0: return {2, 0};
    case FileVersion::kV2_1: return {2, 1};
    case FileVersion::kV2_2: return {2, 2};
  }
  return {0, 0};
}

}  // namespace lance::file
