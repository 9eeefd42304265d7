// Table writes: create, append, overwrite, and the operations that modify
// rows (delete, update, merge-insert), restore and cleanup. Every call is one
// commit: a transaction plus a manifest for version latest + 1, atomically.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <arrow/record_batch.h>

#include "lance/dataset.h"
#include "lance/file_writer.h"
#include "lance/progress.h"
#include "lance/retry.h"
#include "lance/status.h"

namespace lance {

enum class WriteMode { kCreate, kAppend, kOverwrite };

/// What one write added: the rows and fragments of its own new data files
/// (a concurrent writer's appends, committed in between, are not counted).
struct WriteResult {
  uint64_t version = 0;  // the version committed
  uint64_t rows_written = 0;
  uint64_t fragments_written = 0;
};

struct WriteParams {
  WriteMode mode = WriteMode::kCreate;
  /// pylance's defaults.
  uint64_t max_rows_per_file = 1024 * 1024;
  uint64_t max_rows_per_group = 1024;
  uint64_t max_bytes_per_file = 90ull * 1024 * 1024 * 1024;
  /// "legacy"/"0.1", "2.0", "2.1", "2.2"/"stable"; unset = the existing
  /// dataset's, else 2.2. An append at another v2 version than the dataset's
  /// writes its files at it and sets the mixed data-file-versions feature bit
  /// (256), as pylance 14; legacy and v2 files are never mixed (refused).
  std::optional<std::string> data_storage_version;
  /// Only when creating (or overwriting); an existing dataset keeps its own.
  bool enable_stable_row_ids = false;
  /// Only when creating; an existing dataset keeps its naming scheme.
  /// pylance 14 names new datasets' manifests the V2 way.
  bool enable_v2_manifest_paths = true;
  /// Config entries to set when creating or overwriting (merged into the
  /// existing config); an append with entries is refused.
  std::map<std::string, std::string> config;
  /// pylance's auto_cleanup_options: only when creating a dataset, sets
  /// lance.auto_cleanup.interval and .older_than (formatted as pylance
  /// formats it, "14days 5s"), so that every `interval`-th commit removes
  /// versions older than `older_than_seconds`. Unset = no automatic cleanup.
  struct AutoCleanup {
    uint64_t interval = 20;
    uint64_t older_than_seconds = 14 * 24 * 3600;
  };
  std::optional<AutoCleanup> auto_cleanup;
  FileWriterOptions file_options;
  /// The branch an append or overwrite writes to (OpenOptions::branch);
  /// empty = main. Creating a dataset on a branch is refused: a branch is
  /// made with Dataset::CreateBranch.
  std::string branch;
  /// Base paths to register in the new dataset's manifest (pylance's
  /// initial_bases); only when creating. An id of 0 is assigned: one above
  /// the largest id given, from 1, as the reference does.
  std::vector<BasePath> initial_bases;
  /// Where the new data files go (pylance's target_bases): registered base
  /// paths named by name or path, or an id in decimal; several are used in
  /// turn, one file each. Empty = the dataset's own data/.
  std::vector<std::string> target_bases;
  /// Blob v2 external URIs outside the dataset's registered base paths:
  /// stored as absolute URIs when true, refused when false (pylance's
  /// allow_external_blob_outside_bases, default false).
  bool allow_external_blob_outside_bases = false;
  /// Reports stage "writing" in rows after each slice of rows written (at
  /// most max_rows_per_group); empty = no reports.
  ProgressCallback progress;
  /// The number of rows `data` holds, when the caller knows it (an Arrow
  /// IPC or Parquet file does): reported as the total of `progress`.
  std::optional<uint64_t> expected_rows;
  /// Commit attempts while other writers take the next version first
  /// (retry.num_retries); an append is checked and rebuilt on each new
  /// latest. Creating a dataset is tried once.
  RetryParams retry;
  /// Record the transaction only inline in the manifest, with no
  /// _transactions/ file (writer flag 32; the reference's
  /// disable_transaction_file).
  bool disable_transaction_file = false;
  /// The filesystem the dataset is written through (OpenOptions::filesystem):
  /// with it, the uri is a path inside it. Null = the one arrow::fs picks.
  std::shared_ptr<arrow::fs::FileSystem> filesystem;
  /// pylance's storage_options (OpenOptions::storage_options), used when
  /// WriteDataset opens `uri`.
  StorageOptions storage_options;
};

/// Writes `data` to `uri` per `params.mode` and returns the new version.
/// On an existing dataset: Dataset::Open(uri) at the latest version, then
/// NewAppend() or NewOverwrite() (lance/dataset_ops.h).
Result<std::shared_ptr<Dataset>> WriteDataset(const std::shared_ptr<arrow::RecordBatchReader>& data,
                                              const std::string& uri, const WriteParams& params = {});

}  // namespace lance
