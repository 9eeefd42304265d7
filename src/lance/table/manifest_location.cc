#include "lance/table/manifest_location.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <limits>

namespace lance::table {
namespace {

constexpr std::string_view kVersionsDir = "_versions";
constexpr std::string_view kSuffix = ".manifest";
constexpr size_t kV2NameLength = 20 + kSuffix.size();  // 29

std::optional<uint64_t> ParseU64(std::string_view digits) {
  if (digits.empty()) return std::nullopt;
  uint64_t v = 0;
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (ec != std::errc() || ptr != digits.data() + digits.size()) return std::nullopt;
  return v;
}

}  // namespace

const char* NamingSchemeName(ManifestNamingScheme scheme) {
  return scheme == ManifestNamingScheme::kV2 ? "v2" : "v1";
}

std::string ManifestFileName(uint64_t version, ManifestNamingScheme scheme) {
  if (scheme == ManifestNamingScheme::kV1) return std::to_string(version) + std::string(kSuffix);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%020llu",
                static_cast<unsigned long long>(std::numeric_limits<uint64_t>::max() - version));
  return std::string(buf) + std::string(kSuffix);
}

std::optional<ManifestLocation> ParseManifestFileName(std::string_view name) {
  if (!name.ends_with(kSuffix)) return std::nullopt;
  if (name.starts_with("d")) return std::nullopt;  // detached: never "latest"
  std::string_view digits = name.substr(0, name.size() - kSuffix.size());
  auto n = ParseU64(digits);
  if (!n) return std::nullopt;
  ManifestLocation loc;
  loc.path = std::string(kVersionsDir) + "/" + std::string(name);
  // The reference tells the schemes apart by length alone.
  if (name.size() == kV2NameLength) {
    loc.naming = ManifestNamingScheme::kV2;
    loc.version = std::numeric_limits<uint64_t>::max() - *n;
  } else {
    loc.naming = ManifestNamingScheme::kV1;
    loc.version = *n;
  }
  return loc;
}

namespace {

// Every committed version, ascending; empty when there is none.
Result<std::vector<ManifestLocation>> ListCommitted(const io::ObjectStore& store) {
  // Names only: a stat per version would make every commit slower than the
  // last. Sizes stay unknown (-1).
  LANCE_ASSIGN_OR_RAISE(auto names, store.ListFileNames(std::string(kVersionsDir)));
  std::vector<ManifestLocation> out;
  for (const auto& name : names) {
    auto loc = ParseManifestFileName(name);
    if (!loc) continue;
    out.push_back(std::move(*loc));
  }
  for (const auto& loc : out) {
    if (loc.naming != out.front().naming) {
      return Status::Invalid("corrupt dataset ", store.uri(),
                             ": _versions/ mixes V1 and V2 manifest names (", out.front().path, ", ",
                             loc.path, ")");
    }
  }
  std::sort(out.begin(), out.end(),
            [](const ManifestLocation& a, const ManifestLocation& b) { return a.version < b.version; });
  return out;
}

}  // namespace

Result<std::vector<ManifestLocation>> ListManifests(const io::ObjectStore& store) {
  LANCE_ASSIGN_OR_RAISE(auto out, ListCommitted(store));
  if (out.empty()) {
    return Status::IOError("dataset not found: no manifest in ", store.FullPath(std::string(kVersionsDir)));
  }
  return out;
}

Result<ManifestLocation> LatestManifest(const io::ObjectStore& store) {
  LANCE_ASSIGN_OR_RAISE(auto all, ListManifests(store));
  return all.back();
}

Result<std::optional<ManifestLocation>> FindLatestManifest(const io::ObjectStore& store) {
  LANCE_ASSIGN_OR_RAISE(auto all, ListCommitted(store));
  if (all.empty()) return std::optional<ManifestLocation>();
  return std::optional<ManifestLocation>(std::move(all.back()));
}

Result<ManifestLocation> FindManifest(const io::ObjectStore& store, uint64_t version) {
  // Try the V2 name first, then V1, as the reference does.
  for (auto scheme : {ManifestNamingScheme::kV2, ManifestNamingScheme::kV1}) {
    ManifestLocation loc;
    loc.version = version;
    loc.naming = scheme;
    loc.path = std::string(kVersionsDir) + "/" + ManifestFileName(version, scheme);
    LANCE_ASSIGN_OR_RAISE(bool exists, store.Exists(loc.path));
    if (exists) return loc;
  }
  return Status::KeyError("version ", version, " of dataset ", store.uri(), " does not exist");
}

}  // namespace lance::table
