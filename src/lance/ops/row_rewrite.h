// Shared steps of the operations that rewrite rows (update, merge-insert):
// writing the new rows as new fragments, marking the old rows deleted, and
// carrying stable row ids and lineage over to the rewritten rows.
// Internal to src/lance/ops.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <arrow/record_batch.h>

#include "lance/dataset.h"
#include "lance/file_writer.h"
#include "lance/fragment.h"
#include "lance/io/object_store.h"
#include "lance/ops/blob_v2_sidecars.h"
#include "lance/retry.h"
#include "lance/schema.h"
#include "lance/status.h"
#include "lance/txn/conflict_resolver.h"

namespace lance::ops {

/// The reference's default rows per data file.
inline constexpr uint64_t kMaxRowsPerFile = 1024 * 1024;

/// Writes rows (top-level fields of `schema`, in order) into new data files
/// under data/, one fragment per file (blob v2 values too large to stay
/// inline in `.blob` files beside it). Fragments come back without ids.
/// Not thread-safe.
class NewFragmentWriter {
 public:
  NewFragmentWriter(const io::ObjectStore& store, Schema schema, std::string storage_version,
                    uint64_t max_rows_per_file = kMaxRowsPerFile);
  ~NewFragmentWriter();

  Status Write(std::shared_ptr<arrow::RecordBatch> batch);
  Result<std::vector<Fragment>> Finish();
  /// Removes every file written so far (after a failure). Best effort.
  void RemoveFiles();

 private:
  Status OpenFile();
  Status FinishFile();

  const io::ObjectStore& store_;
  Schema schema_;
  FileWriterOptions options_;
  uint64_t max_rows_per_file_;
  std::unique_ptr<FileWriter> writer_;
  std::unique_ptr<BlobV2Sidecars> sidecars_;  // of the open data file
  std::vector<std::string> sidecar_files_;     // of the finished ones
  std::string name_;
  uint64_t rows_ = 0;
  std::vector<Fragment> fragments_;
  std::vector<std::string> created_;
};

/// A fragment's new state after rows of it were deleted.
struct DeletionOutcome {
  std::vector<Fragment> updated_fragments;       // with a new deletion file
  std::vector<uint64_t> removed_fragment_ids;    // no live row left
  std::vector<std::string> written_files;        // for clean-up on failure
  uint64_t num_deleted_rows = 0;                 // rows not deleted before
  /// The rows newly deleted, for a row-level rebase at commit.
  std::shared_ptr<txn::AffectedRows> affected_rows;
};

/// Marks `offsets` (by fragment id) deleted in `dataset`, merged with each
/// fragment's existing deletion vector, writing new deletion files per the
/// reference's policy (table/deletion_file.h).
Result<DeletionOutcome> MarkDeleted(const io::ObjectStore& store, const Dataset& dataset,
                                    const std::map<uint64_t, std::vector<uint32_t>>& offsets);

/// For rows rewritten into `fragments` (in order): their old stable row ids
/// and row addresses. Sets each fragment's row-id sequence to the old ids,
/// created_at to each row's original version and last_updated_at to
/// `new_version`, as the reference's Update does.
Status CarryRowIdentity(const Dataset& dataset, const std::vector<uint64_t>& row_ids,
                        const std::vector<uint64_t>& row_addrs, uint64_t new_version,
                        std::vector<Fragment>* fragments);

/// What an update or merge-insert commits.
struct RowRewrite {
  std::vector<Fragment> rewritten;             // new fragments of rewritten rows, in row order
  std::vector<uint64_t> rewritten_row_ids;     // their stable row ids (only where the dataset has them)
  std::vector<uint64_t> rewritten_row_addrs;   // their old addresses, deleted
  std::vector<Fragment> inserted;              // new rows' fragments (new ids at commit)
  std::vector<uint64_t> deleted_row_addrs;     // rows deleted outright
  std::vector<uint32_t> fields_for_preserving_frag_bitmap;
};

/// Commits `rewrite` on top of `dataset`'s version as one Update (rewrite
/// rows), as the reference does: stable row ids and lineage carried over,
/// old rows marked deleted. Returns the new version. Deletion files written
/// here are removed again on failure; the new data files are the caller's.
/// `retry.num_retries` bounds the commit attempts.
Result<uint64_t> CommitRowRewrite(const io::ObjectStore& store, const Dataset& dataset, RowRewrite rewrite,
                                  const RetryParams& retry = {});

/// Whether the dataset assigns stable row ids.
bool UsesStableRowIds(const Dataset& dataset);

/// Columns (empty = all) of the live rows at `row_addrs` of `dataset`, in
/// that order: a take by position, without the row-id index a take by
/// stable row id builds.
Result<std::shared_ptr<arrow::Table>> TakeByAddress(const std::shared_ptr<const Dataset>& dataset,
                                                    const std::vector<uint64_t>& row_addrs,
                                                    const std::vector<std::string>& columns);

/// The rows of `batch` conformed to `target`: columns picked by name, in
/// target order, cast when the type differs. `what` names the source.
Result<std::shared_ptr<arrow::RecordBatch>> ConformBatch(const std::shared_ptr<arrow::RecordBatch>& batch,
                                                         const std::shared_ptr<arrow::Schema>& target,
                                                         const std::string& what);

}  // namespace lance::ops
