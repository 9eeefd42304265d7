// What the manifest records about an index.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace lance {

/// One file of an index and its size, as the manifest lists it (pylance 14).
struct IndexFile {
  std::string path;  // relative to the index's directory
  uint64_t size_bytes = 0;
};

struct IndexMetadata {
  std::array<uint8_t, 16> uuid{};
  std::string name;
  std::vector<int32_t> fields;
  uint64_t dataset_version = 0;
  /// Fragment ids the index covers; nullopt when the stored bitmap is empty
  /// (which the format defines as "unknown").
  std::optional<std::vector<uint32_t>> fragment_ids;
  /// The bitmap's bytes as read from the manifest: written back as they are
  /// while `fragment_ids` still holds the same set, as pylance carries a
  /// bitmap it did not change (the same set can be serialized several ways).
  std::string stored_fragment_bitmap;
  std::string index_details_type_url;  // empty if no details were stored
  std::string index_details_value;
  std::optional<int32_t> index_version;
  std::optional<uint64_t> created_at_ms;
  std::optional<uint32_t> base_id;
  std::vector<int32_t> covering_fields;
  std::vector<IndexFile> files;  // empty when the writer listed none

  /// Hyphenated lowercase UUID text.
  std::string UuidString() const;
};

}  // namespace lance
