// Delete: rows matching a predicate are marked in each fragment's deletion
// file (the old set plus the new rows); fully deleted fragments are removed.
#include "lance/dataset.h"
#include "lance/dataset_internal.h"
#include "lance/ops/dataset_ops_internal.h"
#include "lance/operations.h"
#include "lance/ops/row_rewrite.h"
#include "lance/scan/matching_rows.h"
#include "lance/txn/commit.h"
#include "lance/util/progress_reporter.h"

namespace lance::ops {

Result<DeleteResult> DeleteOnce(const std::shared_ptr<const Dataset>& dataset, const std::string& predicate,
                                const DeleteOptions& options, Committed* committed_out) {
  const io::ObjectStore& store = *DatasetAccess::Store(*dataset);
  LANCE_RETURN_NOT_OK(CheckWritable(*dataset));
  const uint64_t read_version = dataset->version();
  uint64_t physical_total = 0;
  if (options.progress) {
    for (const auto& f : dataset->manifest().fragments) {
      LANCE_ASSIGN_OR_RAISE(uint64_t rows, dataset->PhysicalRows(f));
      physical_total += rows;
    }
  }
  util::ProgressStage scanning(options.progress, "scanning", "rows", physical_total);
  // The deleted rows the scan read are those the new deletion files extend:
  // read once.
  std::vector<std::vector<uint32_t>> deleted;
  LANCE_ASSIGN_OR_RAISE(auto matches, scan::MatchingRows(dataset, predicate, arrow::default_memory_pool(),
                                                         &scanning, &deleted));
  scanning.Finish();

  DeleteResult result;
  result.version = read_version;
  std::map<uint64_t, std::vector<uint32_t>> offsets, known_deleted;
  const auto& fragments = dataset->manifest().fragments;
  for (size_t i = 0; i < fragments.size(); ++i) {
    if (matches[i].empty()) continue;
    offsets[fragments[i].id] = std::move(matches[i]);
    if (i < deleted.size()) known_deleted[fragments[i].id] = std::move(deleted[i]);
  }
  // Even when nothing matched pylance 14 commits a Delete that changes no
  // fragment, so a new version; so does this.
  LANCE_ASSIGN_OR_RAISE(auto deletions, ops::MarkDeleted(store, *dataset, offsets, &known_deleted));
  result.num_deleted_rows = deletions.num_deleted_rows;

  txn::Delete op;
  op.predicate = predicate;
  op.updated_fragments = std::move(deletions.updated_fragments);
  op.deleted_fragment_ids = std::move(deletions.removed_fragment_ids);
  auto t = txn::Transaction::Make(read_version, std::move(op));
  // The handle's version stands in for the latest: if others committed
  // since, the commit finds out and checks against them.
  const txn::BaseVersion base = BaseVersionOf(*dataset);
  txn::CommitOptions commit_options;
  commit_options.latest = &base;
  commit_options.num_retries = static_cast<int>(options.retry.num_retries);
  commit_options.disable_transaction_file = options.disable_transaction_file;
  commit_options.affected_rows = std::move(deletions.affected_rows);
  auto committed = ops::CommitTransaction(store, std::move(t), commit_options);
  if (!committed.ok()) {
    for (const auto& path : deletions.written_files) (void)store.Delete(path);  // no manifest refers to them
    return committed.status();
  }
  result.version = committed->version;
  result.committed = true;
  if (committed_out) *committed_out = std::move(*committed);
  return result;
}

}  // namespace lance::ops
