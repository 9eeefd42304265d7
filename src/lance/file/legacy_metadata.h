// The footer metadata of a legacy (0.1) .lance file:
//   ... | Metadata msg (u32 length + protobuf) | i64 metadata_pos | u16 major | u16 minor | "LANC"
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "lance/status.h"

namespace lance::file {

inline constexpr size_t kLegacyFooterSize = 16;

struct LegacyFileMetadata {
  std::vector<int32_t> batch_offsets;  // 0, then cumulative rows after each batch
  uint64_t manifest_position = 0;
  uint64_t page_table_position = 0;
  uint64_t NumRows() const { return batch_offsets.empty() ? 0 : static_cast<uint64_t>(batch_offsets.back()); }
};

/// Where the metadata message starts, from the 16-byte footer.
Result<uint64_t> LegacyMetadataPosition(std::string_view footer, uint64_t file_size,
                                        const std::string& path);
/// Parses the length-prefixed Metadata message.
Result<LegacyFileMetadata> ParseLegacyMetadata(std::string_view message, const std::string& path);

}  // namespace lance::file
