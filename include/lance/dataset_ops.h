// Operations started from an opened Dataset, in the iceberg-cpp style:
//
//   LANCE_ASSIGN_OR_RAISE(auto ds, lance::Dataset::Open(uri));
//   auto del = ds->NewDelete("id < 10");
//   LANCE_ASSIGN_OR_RAISE(auto v2, del.Options(options).Commit());
//   del.result().num_deleted_rows;   // the counts of the last Commit
//
// Every builder holds its dataset (a shared_ptr), uses its filesystem, and
// commits a transaction whose read version is the dataset's version, not
// the latest one: versions other writers committed since are checked with
// the reference's conflict rules at commit, and built upon where they
// allow (a concurrent delete of other rows is merged row by row). On a
// retryable conflict, delete, update and merge-insert run again on the
// new latest version, per their RetryParams, as the reference's
// execute_with_retry does. Commit returns the dataset at the new version;
// the dataset it started from still reads its own version.
//
// Commit() takes the rows for the operations that write them (append,
// overwrite, merge-insert). A builder may be committed more than once;
// each Commit is one new version. Builders are not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <arrow/record_batch.h>

#include "lance/dataset.h"
#include "lance/operations.h"
#include "lance/row_ops.h"
#include "lance/status.h"
#include "lance/write.h"

namespace lance {

/// Writes rows into new fragments and commits an Append.
class AppendBuilder {
 public:
  explicit AppendBuilder(std::shared_ptr<const Dataset> dataset) : dataset_(std::move(dataset)) {}
  /// File limits, storage version, progress, retry. `params.mode` is
  /// ignored (this is an append); the options that only apply when creating
  /// (stable row ids, naming) are ignored as the reference's append ignores
  /// them. `params.filesystem` must be unset or the dataset's.
  AppendBuilder& Options(WriteParams params) {
    params_ = std::move(params);
    return *this;
  }
  /// REQUIRES: `data`'s columns are the dataset's (by name).
  Result<std::shared_ptr<Dataset>> Commit(const std::shared_ptr<arrow::RecordBatchReader>& data);

 private:
  std::shared_ptr<const Dataset> dataset_;
  WriteParams params_;
};

/// Replaces the dataset's content (and schema) with new rows: an Overwrite.
class OverwriteBuilder {
 public:
  explicit OverwriteBuilder(std::shared_ptr<const Dataset> dataset) : dataset_(std::move(dataset)) {}
  /// As AppendBuilder::Options; `params.mode` is ignored (overwrite).
  OverwriteBuilder& Options(WriteParams params) {
    params_ = std::move(params);
    return *this;
  }
  Result<std::shared_ptr<Dataset>> Commit(const std::shared_ptr<arrow::RecordBatchReader>& data);

 private:
  std::shared_ptr<const Dataset> dataset_;
  WriteParams params_;
};

/// Deletes the rows where a predicate holds (see lance::DeleteRows).
class DeleteBuilder {
 public:
  DeleteBuilder(std::shared_ptr<const Dataset> dataset, std::string predicate)
      : dataset_(std::move(dataset)), predicate_(std::move(predicate)) {}
  DeleteBuilder& Options(DeleteOptions options) {
    options_ = std::move(options);
    return *this;
  }
  /// The new version; when no row matched nothing is committed and the
  /// dataset the run read is returned (result().committed is false).
  Result<std::shared_ptr<Dataset>> Commit();
  /// The counts of the last successful Commit.
  const DeleteResult& result() const { return result_; }

 private:
  std::shared_ptr<const Dataset> dataset_;
  std::string predicate_;
  DeleteOptions options_;
  DeleteResult result_;
};

/// UPDATE ... SET ... [WHERE ...] (see lance::UpdateRows).
class UpdateBuilder {
 public:
  explicit UpdateBuilder(std::shared_ptr<const Dataset> dataset) : dataset_(std::move(dataset)) {}
  /// column = SQL expression; at least one is required.
  UpdateBuilder& Set(std::string column, std::string expression) {
    set_.emplace_back(std::move(column), std::move(expression));
    return *this;
  }
  /// Only rows where `predicate` holds; unset = every row.
  UpdateBuilder& Where(std::string predicate) {
    predicate_ = std::move(predicate);
    return *this;
  }
  UpdateBuilder& Options(UpdateOptions options) {
    options_ = std::move(options);
    return *this;
  }
  /// The new version (committed even when no row matched, as pylance).
  Result<std::shared_ptr<Dataset>> Commit();
  const UpdateResult& result() const { return result_; }

 private:
  std::shared_ptr<const Dataset> dataset_;
  std::vector<std::pair<std::string, std::string>> set_;
  std::string predicate_;
  UpdateOptions options_;
  UpdateResult result_;
};

/// pylance's merge_insert(on).when_...().execute(source) (see
/// lance::MergeInsert).
class MergeInsertBuilder {
 public:
  MergeInsertBuilder(std::shared_ptr<const Dataset> dataset, std::vector<std::string> on)
      : dataset_(std::move(dataset)) {
    params_.on = std::move(on);
  }
  MergeInsertBuilder& WhenMatchedUpdateAll() {
    params_.when_matched_update_all = true;
    return *this;
  }
  MergeInsertBuilder& WhenNotMatchedInsertAll() {
    params_.when_not_matched_insert_all = true;
    return *this;
  }
  /// Deletes target rows no source row matches (only those where
  /// `predicate` holds, when given).
  MergeInsertBuilder& WhenNotMatchedBySourceDelete(std::string predicate = "") {
    params_.when_not_matched_by_source_delete = true;
    params_.when_not_matched_by_source_predicate = std::move(predicate);
    return *this;
  }
  /// Every parameter at once; an empty `params.on` keeps the builder's keys.
  MergeInsertBuilder& Options(MergeInsertParams params) {
    if (params.on.empty()) params.on = std::move(params_.on);
    params_ = std::move(params);
    return *this;
  }
  /// Reads `source` whole (it is kept in memory for re-runs) and commits.
  Result<std::shared_ptr<Dataset>> Commit(const std::shared_ptr<arrow::RecordBatchReader>& source);
  const MergeInsertResult& result() const { return result_; }

 private:
  std::shared_ptr<const Dataset> dataset_;
  MergeInsertParams params_;
  MergeInsertResult result_;
};

/// Commits the content of an older version as the new latest version.
class RestoreBuilder {
 public:
  RestoreBuilder(std::shared_ptr<const Dataset> dataset, uint64_t version)
      : dataset_(std::move(dataset)), version_(version) {}
  /// Commit attempts (retry.num_retries); a restore is never re-run.
  RestoreBuilder& Options(RetryParams retry) {
    retry_ = retry;
    return *this;
  }
  Result<std::shared_ptr<Dataset>> Commit();

 private:
  std::shared_ptr<const Dataset> dataset_;
  uint64_t version_;
  RetryParams retry_;
};

/// Appends data overlay files to fragments: pylance's
/// LanceOperation.DataOverlay (feature bit 64). Each overlay is a data file
/// already written (one value column per field of `file.fields`, in that
/// order, as DataFile.column_indices say) holding the values of the covered
/// physical rows (deleted ones included), the smallest covered row's value
/// first. The commit stamps each overlay with the new version; on read the
/// newest covering overlay wins, deletions after. Unstable, as in pylance
/// 14: Commit refuses unless LANCE_ENABLE_UNSTABLE_DATA_OVERLAY_FILES is set.
class DataOverlayBuilder {
 public:
  explicit DataOverlayBuilder(std::shared_ptr<const Dataset> dataset) : dataset_(std::move(dataset)) {}
  /// A dense overlay of fragment `fragment_id`: `offsets` (any order, no
  /// repeats) covered for every field of `file`. Consecutive calls for the
  /// same fragment form one group, later ones newer (pylance's
  /// DataOverlayGroup); another fragment starts the next group.
  DataOverlayBuilder& AddDense(uint64_t fragment_id, DataFile file, std::vector<uint32_t> offsets);
  /// A sparse overlay: one offset set per entry of `file.fields`.
  DataOverlayBuilder& AddSparse(uint64_t fragment_id, DataFile file, std::vector<std::vector<uint32_t>> offsets);
  /// Commit attempts (retry.num_retries); the operation is never re-run.
  DataOverlayBuilder& Options(RetryParams retry) {
    retry_ = retry;
    return *this;
  }
  Result<std::shared_ptr<Dataset>> Commit();

 private:
  DataOverlayBuilder& Add(uint64_t fragment_id, DataFile file, std::vector<std::vector<uint32_t>> offsets,
                          bool dense);

  std::shared_ptr<const Dataset> dataset_;
  std::vector<std::pair<uint64_t, std::vector<DataOverlayFile>>> groups_;
  Status error_;
  RetryParams retry_;
};

}  // namespace lance
