// Restore: an older version's content committed as the new latest version.
#include "lance/dataset_internal.h"
#include "lance/ops/dataset_ops_internal.h"
#include "lance/txn/commit.h"

namespace lance::ops {

Result<uint64_t> RestoreOnce(const Dataset& dataset, uint64_t version, const RetryParams& retry,
                             bool disable_transaction_file, Committed* committed) {
  const io::ObjectStore& store = *DatasetAccess::Store(dataset);
  LANCE_RETURN_NOT_OK(CheckWritable(dataset));
  // Fail early, before any file is written, on a version that is not there.
  LANCE_RETURN_NOT_OK(table::FindManifest(store, version).status());
  const txn::BaseVersion base = BaseVersionOf(dataset);
  txn::CommitOptions options;
  options.latest = &base;
  options.num_retries = static_cast<int>(retry.num_retries);
  options.disable_transaction_file = disable_transaction_file;
  auto t = txn::Transaction::Make(dataset.version(), txn::Restore{version});
  LANCE_ASSIGN_OR_RAISE(auto result, ops::CommitTransaction(store, std::move(t), options));
  const uint64_t committed_version = result.version;
  if (committed) *committed = std::move(result);
  return committed_version;
}

}  // namespace lance::ops
