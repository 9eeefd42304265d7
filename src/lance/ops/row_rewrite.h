// Shared steps of the operations that rewrite rows (update, merge-insert):
// marking the old rows deleted, carrying stable row ids and lineage over to
// the rewritten rows, committing. Their new fragments are written by
// ops::FragmentWriter.
// Internal to src/lance/ops.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <arrow/record_batch.h>

#include "lance/dataset.h"
#include "lance/fragment.h"
#include "lance/io/object_store.h"
#include "lance/retry.h"
#include "lance/schema.h"
#include "lance/status.h"
#include "lance/txn/commit.h"
#include "lance/txn/conflict_resolver.h"

namespace lance::ops {


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
/// reference's policy (table/deletion_file.h). `known_deleted`, when given,
/// holds fragments' deleted offsets (by id, ascending) as already read from
/// `dataset`; other fragments' are read here.
Result<DeletionOutcome> MarkDeleted(const io::ObjectStore& store, const Dataset& dataset,
                                    const std::map<uint64_t, std::vector<uint32_t>>& offsets,
                                    const std::map<uint64_t, std::vector<uint32_t>>* known_deleted = nullptr);

/// For the first rows of `fragments` (in order), rewritten from rows of
/// `dataset`: their old stable row ids and row addresses. Gives each
/// fragment holding such rows a row-id sequence of their old ids, covering
/// those rows only, segments cut at `batch_ends` (RowRewrite::
/// row_id_batch_ends), as the reference's Update does; the commit gives the
/// rows after them (new rows of a merge-insert) new ids, looks up the
/// rewritten rows' created_at by their ids, and gives every row of a new
/// fragment its version as last_updated_at.
Status CarryRowIdentity(const Dataset& dataset, const std::vector<uint64_t>& row_ids,
                        const std::vector<uint64_t>& row_addrs, const std::vector<size_t>& batch_ends,
                        std::vector<Fragment>* fragments);

/// What an update or merge-insert commits.
struct RowRewrite {
  /// New fragments: the rewritten rows first, in the order of
  /// rewritten_row_addrs, then any new rows (a merge-insert's inserts),
  /// together in the same fragments as pylance writes them.
  std::vector<Fragment> new_fragments;
  std::vector<uint64_t> rewritten_row_ids;     // their stable row ids (only where the dataset has them)
  std::vector<uint64_t> rewritten_row_addrs;   // their old addresses, deleted
  /// Where the batches the reference would capture the rewritten rows' ids
  /// in end (positions in rewritten_row_ids, ascending): its row-id
  /// sequences have a segment per batch, contiguous Ranges merged. Empty:
  /// the rows of each new fragment are one batch.
  std::vector<size_t> row_id_batch_ends;
  std::vector<uint64_t> deleted_row_addrs;     // rows deleted outright
  std::vector<uint32_t> fields_for_preserving_frag_bitmap;
};

/// Commits `rewrite` on top of `dataset`'s version as one Update (rewrite
/// rows), as the reference does: stable row ids and lineage carried over,
/// old rows marked deleted. Returns the new version. Deletion files written
/// here are removed again on failure; the new data files are the caller's.
/// `retry.num_retries` bounds the commit attempts.
/// `committed`, when given, gets the commit itself.
Result<uint64_t> CommitRowRewrite(const io::ObjectStore& store, const Dataset& dataset, RowRewrite rewrite,
                                  const RetryParams& retry = {}, bool disable_transaction_file = false,
                                  std::optional<txn::CommitResult>* committed = nullptr);

/// pylance scans a fragment's live rows in batches of this many.
constexpr size_t kReferenceScanBatchRows = 8192;

/// Where pylance's scan batches would end among rows read in scan order,
/// given by their addresses: at each change of fragment, and every
/// `batch_rows` rows within one (0: no limit). For
/// RowRewrite::row_id_batch_ends.
std::vector<size_t> ScanBatchEnds(const std::vector<uint64_t>& row_addrs, size_t batch_rows);

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
