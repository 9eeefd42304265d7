// One run of each operation on a dataset handle; the builders of
// lance/dataset_ops.h (ops/dataset_ops.cc) add the re-runs, and the URI
// functions (DeleteRows, WriteDataset, ...) open a handle and use the
// builders. Internal to src/lance/ops.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <arrow/record_batch.h>

#include "lance/dataset.h"
#include "lance/io/object_store.h"
#include "lance/operations.h"
#include "lance/row_ops.h"
#include "lance/txn/commit.h"
#include "lance/write.h"

namespace lance::ops {

/// Refuses, before any file is written, a dataset whose writer feature
/// flags hold a bit this build does not support ("upgrade").
Status CheckWritable(const Dataset& dataset);

/// The dataset's version as a commit's base (CommitOptions::latest).
txn::BaseVersion BaseVersionOf(const Dataset& dataset);

/// What an operation committed, when it did: the builder's handle on the
/// new version is made from it rather than read back from storage.
using Committed = std::optional<txn::CommitResult>;

/// The dataset at `version` in the store of `from` (`from` itself when it
/// is at that version): what a builder's Commit returns. `committed`, when
/// it made `version` on top of `from`, gives it without reading storage.
Result<std::shared_ptr<Dataset>> AtVersion(const Dataset& from, uint64_t version, Committed committed = std::nullopt);

/// Delete, update and merge-insert on `dataset`'s version, committed with it
/// as the read version. A retryable conflict is returned, not retried.
/// `committed`, when given, gets the commit made (if any).
Result<DeleteResult> DeleteOnce(const std::shared_ptr<const Dataset>& dataset, const std::string& predicate,
                                const DeleteOptions& options, Committed* committed = nullptr);
Result<UpdateResult> UpdateOnce(const std::shared_ptr<const Dataset>& dataset,
                                const std::vector<std::pair<std::string, std::string>>& set,
                                const std::string& predicate, const UpdateOptions& options,
                                Committed* committed = nullptr);
/// `source` may be read again on a re-run.
Result<MergeInsertResult> MergeInsertOnce(const std::shared_ptr<const Dataset>& dataset,
                                          arrow::RecordBatchReader& source, const MergeInsertParams& params,
                                          Committed* committed = nullptr);

/// Restore of `version` committed on top of `dataset`'s version.
Result<uint64_t> RestoreOnce(const Dataset& dataset, uint64_t version, const RetryParams& retry,
                             bool disable_transaction_file = false, Committed* committed = nullptr);

/// Writes `data` into `store` per `params.mode` on top of `dataset` (its
/// version, or null when there is no dataset yet) and returns the version
/// committed with what was written (the commit itself in `committed`).
Result<WriteResult> WriteRows(const std::shared_ptr<io::ObjectStore>& store, const Dataset* dataset,
                              arrow::RecordBatchReader& data, const WriteParams& params,
                              Committed* committed = nullptr);

/// Tags and cleanup in the dataset whose root is `store`: a tag on
/// `version` of `branch` (nullopt = main), whose versions are in
/// `versions`; cleanup of `branch`'s versions in `versions` (keeping the
/// versions its tags and the branches made from it reference).
Status CreateTagIn(const io::ObjectStore& store, const io::ObjectStore& versions,
                   const std::optional<std::string>& branch, const std::string& name, uint64_t version);
Status DeleteTagIn(const io::ObjectStore& store, const std::string& name);
Result<CleanupResult> CleanupIn(const std::shared_ptr<io::ObjectStore>& store,
                                const std::shared_ptr<io::ObjectStore>& versions,
                                const std::optional<std::string>& branch, int64_t older_than_seconds,
                                bool delete_unverified, const CleanupOptions& options);

/// Which versions a cleanup removes: the reference's CleanupPolicy. A
/// version goes when every condition set holds, it is older than
/// `keep_from_version` and no tag names it.
struct CleanupPolicy {
  /// Versions whose manifest timestamp is at or after this are kept.
  std::optional<int64_t> before_timestamp_nanos;
  /// Versions at or after this are kept.
  std::optional<uint64_t> before_version;
  /// The version the cleanup runs from: it and every newer one are kept;
  /// 0 = the latest.
  uint64_t keep_from_version = 0;
  bool delete_unverified = false;
  /// Refuse, removing nothing, when a tagged version would otherwise go.
  bool error_if_tagged_old_versions = false;
  /// At most this many deletes per second; 0 = no limit.
  uint64_t delete_rate_limit = 0;
};
/// `root`, `store` and `branch` as CleanupIn's.
Result<CleanupResult> CleanupWithPolicy(const std::shared_ptr<io::ObjectStore>& root,
                                        const std::shared_ptr<io::ObjectStore>& store,
                                        const std::optional<std::string>& branch, const CleanupPolicy& policy,
                                        const CleanupOptions& options);

/// Commits `txn` (txn::Commit), then runs the automatic cleanup the new
/// version's `lance.auto_cleanup.*` config asks for (auto_cleanup.h). A
/// failed cleanup does not fail the commit: it is reported as a warning.
Result<txn::CommitResult> CommitTransaction(const io::ObjectStore& store, txn::Transaction txn,
                                            const txn::CommitOptions& options);

/// Refuses a write to a dataset whose config holds a `lance.` key whose
/// meaning pylance 14 implements and lance-cpp does not, naming the key.
Status CheckConfigSupported(const Dataset& dataset);
/// The same for config entries about to be written to `uri`.
Status CheckConfigKeys(const std::map<std::string, std::string>& config, const std::string& uri);

}  // namespace lance::ops
