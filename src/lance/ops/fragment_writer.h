// The one writer of new fragments: Arrow batches in, data files under data/
// out, each one fragment with its DataFile record (path, field ids, column
// indices, file version as the manifest records it, size), blob v2 values
// too large to stay inline in `.blob` files beside it. Append, overwrite,
// update and merge-insert all write their rows through it.
// Internal to src/lance/ops.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <utility>
#include <string>
#include <vector>

#include <arrow/record_batch.h>

#include "lance/file/legacy/legacy_writer.h"
#include "lance/file_writer.h"
#include "lance/fragment.h"
#include "lance/io/object_store.h"
#include "lance/ops/blob_v2_external.h"
#include "lance/ops/blob_v2_sidecars.h"
#include "lance/schema.h"
#include "lance/status.h"
#include "lance/write.h"

namespace lance::ops {

/// A registered base path new data files go to (WriteParams::target_bases).
struct WriteTarget {
  uint32_t base_id = 0;
  std::shared_ptr<const io::ObjectStore> store;  // rooted at the base path
  bool is_dataset_root = false;                   // files in its data/, else directly in it
};

/// How new fragments are cut and encoded. The limits default to
/// WriteParams' (pylance's), which is also what pylance's update and
/// merge-insert use.
struct FragmentWriterOptions {
  /// "0.1" (legacy), "2.0", "2.1" or "2.2"; anything else is refused.
  std::string storage_version;
  /// Encoding options of every file; their version is storage_version.
  FileWriterOptions file_options;
  /// A file (fragment) ends when it has this many rows...
  uint64_t max_rows_per_file = WriteParams{}.max_rows_per_file;
  /// ...or this many bytes of input, checked after every slice of at most
  /// max_rows_per_group rows.
  uint64_t max_rows_per_group = WriteParams{}.max_rows_per_group;
  uint64_t max_bytes_per_file = WriteParams{}.max_bytes_per_file;
  /// When given, file i ends after file_row_counts[i] rows instead of
  /// max_rows_per_file (compaction spreads its rows evenly over its files,
  /// as the reference's write_fragments_internal_with_file_row_counts);
  /// files past the list use max_rows_per_file.
  std::vector<uint64_t> file_row_counts;
  /// How blob v2 external URIs are stored.
  BlobV2ExternalPolicy external;
  /// Where the files go, one file each in turn (the reference's round
  /// robin); empty = data/ of the writer's store.
  std::vector<WriteTarget> targets;
  /// Called with the rows written so far after each slice; empty = none.
  std::function<void(uint64_t rows_written)> on_progress;

  /// The options of a dataset write with `params` in `storage_version`.
  static FragmentWriterOptions FromParams(const WriteParams& params, std::string storage_version);
};

/// A new data file name as the reference makes them (random bits and hex,
/// ".lance").
std::string NewDataFileName();

/// Writes rows (the top-level fields of `schema`, in order) into new
/// fragments, in the order given. Fragments come back without ids, row ids
/// or lineage (the commit assigns them). Not thread-safe.
class FragmentWriter {
 public:
  /// REQUIRES: `store` outlives the writer.
  FragmentWriter(const io::ObjectStore& store, Schema schema, FragmentWriterOptions options);
  ~FragmentWriter();
  FragmentWriter(const FragmentWriter&) = delete;
  FragmentWriter& operator=(const FragmentWriter&) = delete;

  Status Write(std::shared_ptr<arrow::RecordBatch> batch);
  /// Ends the open file; every fragment written, in order.
  Result<std::vector<Fragment>> Finish();
  /// Removes every file written so far (after a failure, or when the
  /// commit did not take them). Best effort.
  void RemoveFiles();

  /// The schema files are written with: a legacy dictionary field has the
  /// values of the first file written (the dataset's, when it had them).
  const Schema& schema() const { return schema_; }

 private:
  Status OpenFile();
  Status FinishFile();
  uint64_t RowsOfOpenFile() const;

  const io::ObjectStore& store_;
  Schema schema_;
  FragmentWriterOptions options_;
  bool legacy() const;

  // The open data file's writer: legacy (0.1) files have their own.
  std::unique_ptr<FileWriter> writer_;
  std::unique_ptr<file::legacy::LegacyFileWriter> legacy_writer_;
  std::unique_ptr<BlobV2Sidecars> sidecars_;  // of the open data file
  using StoredFile = std::pair<const io::ObjectStore*, std::string>;
  std::vector<StoredFile> sidecar_files_;      // of the finished ones
  std::string name_;                           // of the open data file
  // Where the open data file goes: its store, directory and base id.
  const io::ObjectStore* file_store_ = nullptr;
  std::string file_dir_;
  std::optional<uint32_t> file_base_id_;
  uint64_t rows_ = 0;                          // in the open file
  uint64_t bytes_ = 0;                         // of input in the open file
  uint64_t total_rows_ = 0;
  std::vector<Fragment> fragments_;
  std::vector<StoredFile> created_;  // data files
};

}  // namespace lance::ops
