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
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <arrow/record_batch.h>

#include "lance/dataset.h"
#include "lance/operations.h"
#include "lance/row_ops.h"
#include "lance/schema_evolution.h"
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
  /// After a successful Commit: what it wrote.
  const WriteResult& result() const { return result_; }

 private:
  std::shared_ptr<const Dataset> dataset_;
  WriteParams params_;
  WriteResult result_;
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
  /// After a successful Commit: what it wrote.
  const WriteResult& result() const { return result_; }

 private:
  std::shared_ptr<const Dataset> dataset_;
  WriteParams params_;
  WriteResult result_;
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

struct UpdateConfigOptions {
  /// Commit attempts (retry.num_retries); the change is never re-run: a
  /// concurrent change of the same key or metadata is a conflict.
  RetryParams retry;
  /// Record the transaction only inline in the manifest, with no
  /// _transactions/ file (writer flag 32; the reference's
  /// disable_transaction_file).
  bool disable_transaction_file = false;
};

/// Changes to the dataset's config, table metadata, schema metadata and
/// field metadata, committed as one UpdateConfig, as pylance's
/// update_config / delete_config_keys / update_metadata /
/// update_schema_metadata / update_field_metadata (and replace_*) do. Maps
/// not set are left alone. The config's `lance.auto_cleanup.*` keys take
/// effect from this commit on, as in pylance.
class UpdateConfigBuilder {
 public:
  explicit UpdateConfigBuilder(std::shared_ptr<const Dataset> dataset) : dataset_(std::move(dataset)) {}
  UpdateConfigBuilder& Config(UpdateMap update) {
    config_ = std::move(update);
    return *this;
  }
  UpdateConfigBuilder& TableMetadata(UpdateMap update) {
    table_metadata_ = std::move(update);
    return *this;
  }
  UpdateConfigBuilder& SchemaMetadata(UpdateMap update) {
    schema_metadata_ = std::move(update);
    return *this;
  }
  /// `field_path`: a top-level field's name, a nested one's with dots
  /// ("s.x"), as pylance's field paths. An unknown path fails the Commit.
  UpdateConfigBuilder& FieldMetadata(std::string field_path, UpdateMap update) {
    fields_.emplace_back(std::move(field_path), std::move(update));
    return *this;
  }
  UpdateConfigBuilder& Options(UpdateConfigOptions options) {
    options_ = std::move(options);
    return *this;
  }
  Result<std::shared_ptr<Dataset>> Commit();

 private:
  std::shared_ptr<const Dataset> dataset_;
  std::optional<UpdateMap> config_, table_metadata_, schema_metadata_;
  std::vector<std::pair<std::string, UpdateMap>> fields_;
  UpdateConfigOptions options_;
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
  /// The transaction only inline in the manifest (writer flag 32).
  RestoreBuilder& DisableTransactionFile(bool disable = true) {
    disable_transaction_file_ = disable;
    return *this;
  }
  Result<std::shared_ptr<Dataset>> Commit();

 private:
  std::shared_ptr<const Dataset> dataset_;
  uint64_t version_;
  RetryParams retry_;
  bool disable_transaction_file_ = false;
};

/// New columns: from SQL expressions over the existing ones (each fragment
/// gets a data file holding only them; a Merge), or all null (the schema
/// only; also a Merge). Either kind in one commit, not both.
class AddColumnsBuilder {
 public:
  explicit AddColumnsBuilder(std::shared_ptr<const Dataset> dataset) : dataset_(std::move(dataset)) {}
  /// Column `name` = `expression` (the language of update's SET values),
  /// evaluated on each row as it is.
  AddColumnsBuilder& Sql(std::string name, std::string expression) {
    sql_.emplace_back(std::move(name), std::move(expression));
    return *this;
  }
  /// An all-null column; `field` must be nullable.
  AddColumnsBuilder& AllNulls(std::shared_ptr<arrow::Field> field) {
    nulls_.push_back(std::move(field));
    return *this;
  }
  AddColumnsBuilder& Options(SchemaEvolutionOptions options) {
    options_ = options;
    return *this;
  }
  Result<std::shared_ptr<Dataset>> Commit();

 private:
  std::shared_ptr<const Dataset> dataset_;
  std::vector<std::pair<std::string, std::string>> sql_;
  std::vector<std::shared_ptr<arrow::Field>> nulls_;
  SchemaEvolutionOptions options_;
};

/// Removes columns (nested ones as "a.b") from the schema: a Project, no
/// data written; data files left with no live field leave their fragments.
class DropColumnsBuilder {
 public:
  DropColumnsBuilder(std::shared_ptr<const Dataset> dataset, std::vector<std::string> columns)
      : dataset_(std::move(dataset)), columns_(std::move(columns)) {}
  DropColumnsBuilder& Options(SchemaEvolutionOptions options) {
    options_ = options;
    return *this;
  }
  Result<std::shared_ptr<Dataset>> Commit();

 private:
  std::shared_ptr<const Dataset> dataset_;
  std::vector<std::string> columns_;
  SchemaEvolutionOptions options_;
};

/// Renames columns and changes their nullability (a Project), or their
/// type (a Merge: each fragment gets a data file of the cast columns).
class AlterColumnsBuilder {
 public:
  explicit AlterColumnsBuilder(std::shared_ptr<const Dataset> dataset) : dataset_(std::move(dataset)) {}
  AlterColumnsBuilder& Alter(ColumnAlteration alteration) {
    alterations_.push_back(std::move(alteration));
    return *this;
  }
  AlterColumnsBuilder& Options(SchemaEvolutionOptions options) {
    options_ = options;
    return *this;
  }
  Result<std::shared_ptr<Dataset>> Commit();

 private:
  std::shared_ptr<const Dataset> dataset_;
  std::vector<ColumnAlteration> alterations_;
  SchemaEvolutionOptions options_;
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
  /// The transaction only inline in the manifest (writer flag 32).
  DataOverlayBuilder& DisableTransactionFile(bool disable = true) {
    disable_transaction_file_ = disable;
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
  bool disable_transaction_file_ = false;
};

}  // namespace lance
