// The bytes of a manifest file:
//   [IndexSection msg] [Transaction msg] Manifest msg | i64 pos | i16 0 | i16 2 | "LANC"
// where a "msg" is a little-endian u32 length followed by protobuf bytes.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lance/index_metadata.h"
#include "lance/manifest.h"
#include "lance/status.h"

namespace lance::table {

inline constexpr size_t kManifestFooterSize = 16;
inline constexpr std::string_view kManifestMagic = "LANC";

struct ManifestFile {
  Manifest manifest;
  std::vector<IndexMetadata> indices;            // the index section, if any
  std::optional<std::string> transaction_bytes;  // the inline Transaction message
};

/// Which feature-flag check runs on the raw manifest, before anything else
/// of it is interpreted. Writers need both: a commit is built from the
/// content it read, and flags are recomputed from that content, so a bit
/// it could not read would be dropped.
enum class FlagCheck { kNone, kRead, kWrite, kReadWrite };

/// Parses a whole manifest file. `path` names it in error messages.
Result<ManifestFile> ParseManifestFile(std::string_view bytes, const std::string& path,
                                       FlagCheck check = FlagCheck::kRead);

/// Lays out a manifest file as the reference writer does: the index section
/// (only when there are indices), then the transaction (if given), then the
/// manifest, whose section offsets this fills in.
std::string SerializeManifestFile(const Manifest& manifest, const std::vector<IndexMetadata>& indices,
                                  const std::string* transaction_bytes);

}  // namespace lance::table
