// Where each version's manifest lives under _versions/, and how names map to
// version numbers in the two naming schemes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lance/io/object_store.h"
#include "lance/status.h"

namespace lance::table {

/// V1: `{n}.manifest`. V2: `{u64::MAX - n:020}.manifest`, so a lexical listing
/// starts at the newest version.
enum class ManifestNamingScheme { kV1, kV2 };

const char* NamingSchemeName(ManifestNamingScheme scheme);  // "v1" / "v2"

struct ManifestLocation {
  uint64_t version = 0;
  std::string path;  // relative to the dataset root
  ManifestNamingScheme naming = ManifestNamingScheme::kV1;
  int64_t size = -1;  // bytes; -1 when not known (listings do not stat)
};

/// The file name of `version` in `scheme`.
std::string ManifestFileName(uint64_t version, ManifestNamingScheme scheme);

/// Parses a name in _versions/. Returns nothing for names that are not a
/// committed manifest: staging files (`...manifest-{uuid}`), temp files,
/// detached versions (`d...`), anything not ending in ".manifest".
std::optional<ManifestLocation> ParseManifestFileName(std::string_view name);

/// Every committed (non-detached) version, ascending. Mixed naming schemes
/// in one directory are an error. No versions at all: NotFound.
Result<std::vector<ManifestLocation>> ListManifests(const io::ObjectStore& store);

/// The newest committed version.
Result<ManifestLocation> LatestManifest(const io::ObjectStore& store);
/// The same, or nothing when there is no committed version (one listing).
Result<std::optional<ManifestLocation>> FindLatestManifest(const io::ObjectStore& store);

/// The manifest of `version`, which must exist.
Result<ManifestLocation> FindManifest(const io::ObjectStore& store, uint64_t version);

}  // namespace lance::table
