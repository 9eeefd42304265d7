// Fragments and the files they are made of.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace lance {

/// One .lance file holding some of a fragment's columns.
struct DataFile {
  std::string path;                    // relative to data/ (or its base path)
  std::vector<int32_t> fields;         // field ids; -2 = tombstoned
  std::vector<int32_t> column_indices; // top-level column per field (v2 files)
  uint32_t file_major_version = 0;
  uint32_t file_minor_version = 0;
  uint64_t file_size_bytes = 0;        // 0 = unknown
  std::optional<uint32_t> base_id;
};

/// Which rows of a fragment are deleted, by reference to a file under
/// _deletions/.
struct DeletionFile {
  enum class Type { kArrowArray = 0, kBitmap = 1 };
  Type type = Type::kArrowArray;
  uint64_t read_version = 0;
  uint64_t id = 0;
  std::optional<uint64_t> num_deleted_rows;  // stored 0 means unknown
  std::optional<uint32_t> base_id;

  /// "arrow" or "bin".
  const char* Extension() const { return type == Type::kBitmap ? "bin" : "arrow"; }
  /// `{fragment_id}-{read_version}-{id}.{ext}`, the name inside _deletions/.
  std::string FileName(uint64_t fragment_id) const;
  /// `_deletions/` + FileName(): its path under the dataset root when it has
  /// no base id (else see table/file_locations.h).
  std::string RelativePath(uint64_t fragment_id) const;
};

/// A byte range of another file (row ids or lineage stored out of line).
struct ExternalFile {
  std::string path;  // relative to the table root
  uint64_t offset = 0;
  uint64_t size = 0;
};

/// Either inline serialized bytes or a reference to an external file.
struct SequenceRef {
  std::optional<std::string> inline_bytes;
  std::optional<ExternalFile> external;
  bool present() const { return inline_bytes.has_value() || external.has_value(); }
};

/// New values for some (physical row, field) cells of a fragment, layered
/// over its base files on read (reader/writer feature bit 64). A covered
/// row's value sits in `data_file` at its rank: the number of covered rows
/// below it in that field's coverage.
struct DataOverlayFile {
  DataFile data_file;
  /// Dense coverage: one portable Roaring bitmap of physical offsets shared
  /// by every field of `data_file`, as stored.
  std::optional<std::string> shared_offsets;
  /// Sparse coverage: one bitmap per entry of `data_file.fields`.
  std::optional<std::vector<std::string>> field_offsets;
  /// The version that committed the overlay; the higher wins where two
  /// overlays cover the same cell (list order breaks ties).
  uint64_t committed_version = 0;
};

/// A horizontal slice of the table: the same rows across one or more files.
struct Fragment {
  uint64_t id = 0;
  std::vector<DataFile> files;
  std::optional<DeletionFile> deletion_file;
  std::optional<uint64_t> physical_rows;  // stored 0 means unknown
  SequenceRef row_ids;                    // stable row ids (RowIdSequence)
  SequenceRef last_updated_at_versions;   // lineage (RowDatasetVersionSequence)
  SequenceRef created_at_versions;
  std::vector<DataOverlayFile> overlays;  // oldest first (by committed_version)
};

}  // namespace lance
