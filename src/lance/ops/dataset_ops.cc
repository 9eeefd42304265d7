// The operations a Dataset starts (lance/dataset_ops.h), and the URI
// functions, which open the dataset and use them: one path for each write.
#include "lance/dataset_ops.h"

#include "lance/dataset_internal.h"
#include "lance/ops/dataset_ops_internal.h"
#include "lance/ops/retry.h"
#include "lance/scan/matching_rows.h"
#include "lance/table/feature_flags.h"
#include "lance/table/manifest_location.h"

namespace lance {

namespace ops {

Status CheckWritable(const Dataset& dataset) {
  Status st = table::CheckCanWrite(dataset.manifest());
  if (!st.ok()) {
    const std::string manifest = DatasetAccess::Store(dataset)->FullPath(DatasetAccess::Location(dataset).path);
    return st.WithMessage("cannot write to ", dataset.uri(), " (manifest ", manifest, "): ", st.message());
  }
  return CheckConfigSupported(dataset);
}

txn::BaseVersion BaseVersionOf(const Dataset& dataset) {
  return txn::BaseVersion{DatasetAccess::Location(dataset), DatasetAccess::File(dataset)};
}

// Builders hold const handles; a Dataset is immutable, so handing out the
// same object is safe.
Result<std::shared_ptr<Dataset>> AtVersion(const Dataset& from, uint64_t version, Committed committed) {
  if (from.version() == version) return std::const_pointer_cast<Dataset>(from.shared_from_this());
  if (committed && committed->version == version) {
    return DatasetAccess::FromCommit(&from, DatasetAccess::Store(from), std::move(*committed));
  }
  return from.Checkout(std::to_string(version));
}

}  // namespace ops

namespace {

Status CheckSameFilesystem(const Dataset& dataset, const WriteParams& params, const char* op) {
  if (params.filesystem && params.filesystem != DatasetAccess::Store(dataset)->filesystem()) {
    return Status::Invalid(op, " to ", dataset.uri(),
                           ": WriteParams::filesystem differs from the filesystem the dataset was opened with; "
                           "leave it unset (the dataset's is used)");
  }
  return Status::OK();
}

Result<std::shared_ptr<Dataset>> WriteOnHandle(const std::shared_ptr<const Dataset>& dataset, WriteParams params,
                                               WriteMode mode, const std::shared_ptr<arrow::RecordBatchReader>& data,
                                               const char* op, WriteResult* result) {
  if (!data) return Status::Invalid(op, " to ", dataset->uri(), ": no data given");
  LANCE_RETURN_NOT_OK(CheckSameFilesystem(*dataset, params, op));
  params.mode = mode;
  ops::Committed committed;
  LANCE_ASSIGN_OR_RAISE(*result,
                        ops::WriteRows(DatasetAccess::Store(*dataset), dataset.get(), *data, params, &committed));
  return ops::AtVersion(*dataset, result->version, std::move(committed));
}

}  // namespace

// ---- Dataset: starting operations ----

AppendBuilder Dataset::NewAppend() const { return AppendBuilder(shared_from_this()); }
OverwriteBuilder Dataset::NewOverwrite() const { return OverwriteBuilder(shared_from_this()); }
DeleteBuilder Dataset::NewDelete(std::string predicate) const {
  return DeleteBuilder(shared_from_this(), std::move(predicate));
}
UpdateBuilder Dataset::NewUpdate() const { return UpdateBuilder(shared_from_this()); }
MergeInsertBuilder Dataset::NewMergeInsert(std::vector<std::string> on) const {
  return MergeInsertBuilder(shared_from_this(), std::move(on));
}
RestoreBuilder Dataset::NewRestore(uint64_t version) const { return RestoreBuilder(shared_from_this(), version); }

Status Dataset::CreateTag(const std::string& name, uint64_t version) const {
  return ops::CreateTagIn(*DatasetAccess::RootStore(*this), *DatasetAccess::Store(*this), branch(), name, version);
}

Status Dataset::DeleteTag(const std::string& name) const {
  return ops::DeleteTagIn(*DatasetAccess::RootStore(*this), name);
}

Result<CleanupResult> Dataset::CleanupOldVersions(int64_t older_than_seconds, bool delete_unverified,
                                                  const CleanupOptions& options) const {
  return ops::CleanupIn(DatasetAccess::RootStore(*this), DatasetAccess::Store(*this), branch(), older_than_seconds,
                        delete_unverified, options);
}

// ---- Builders ----

Result<std::shared_ptr<Dataset>> AppendBuilder::Commit(const std::shared_ptr<arrow::RecordBatchReader>& data) {
  return WriteOnHandle(dataset_, params_, WriteMode::kAppend, data, "append", &result_);
}

Result<std::shared_ptr<Dataset>> OverwriteBuilder::Commit(const std::shared_ptr<arrow::RecordBatchReader>& data) {
  return WriteOnHandle(dataset_, params_, WriteMode::kOverwrite, data, "overwrite", &result_);
}

Result<std::shared_ptr<Dataset>> DeleteBuilder::Commit() {
  std::shared_ptr<const Dataset> ran_on;
  ops::Committed committed;
  LANCE_ASSIGN_OR_RAISE(auto result,
                        ops::RunOnDatasetWithRetries(
                            options_.retry, "delete of " + dataset_->uri(), dataset_,
                            [&](const std::shared_ptr<const Dataset>& ds) {
                              return ops::DeleteOnce(ds, predicate_, options_, &committed);
                            },
                            &ran_on));
  result_ = result;
  return ops::AtVersion(*ran_on, result.version, std::move(committed));
}

Result<std::shared_ptr<Dataset>> UpdateBuilder::Commit() {
  if (set_.empty()) return Status::Invalid("update of ", dataset_->uri(), ": no column to set");
  std::shared_ptr<const Dataset> ran_on;
  ops::Committed committed;
  // A version committed meanwhile that touched the same rows is a
  // retryable conflict; the reference then runs the whole update again.
  LANCE_ASSIGN_OR_RAISE(auto result, ops::RunOnDatasetWithRetries(
                                         options_.retry, "update of " + dataset_->uri(), dataset_,
                                         [&](const std::shared_ptr<const Dataset>& ds) {
                                           return ops::UpdateOnce(ds, set_, predicate_, options_, &committed);
                                         },
                                         &ran_on));
  result_ = result;
  return ops::AtVersion(*ran_on, result.version, std::move(committed));
}

Result<std::shared_ptr<Dataset>> MergeInsertBuilder::Commit(const std::shared_ptr<arrow::RecordBatchReader>& source) {
  const std::string& uri = dataset_->uri();
  if (params_.on.empty()) return Status::Invalid("merge-insert into ", uri, ": no key column (on) given");
  if (!source) return Status::Invalid("merge-insert into ", uri, ": no source given");
  // The source is kept in memory so that a conflict can be retried, as the
  // reference does, with the same rows.
  std::vector<std::shared_ptr<arrow::RecordBatch>> batches;
  while (true) {
    std::shared_ptr<arrow::RecordBatch> batch;
    LANCE_RETURN_NOT_OK(source->ReadNext(&batch));
    if (!batch) break;
    batches.push_back(std::move(batch));
  }
  std::shared_ptr<const Dataset> ran_on;
  ops::Committed committed;
  LANCE_ASSIGN_OR_RAISE(
      auto result,
      ops::RunOnDatasetWithRetries(
          params_.retry, "merge-insert into " + uri, dataset_,
          [&](const std::shared_ptr<const Dataset>& ds) -> Result<MergeInsertResult> {
            LANCE_ASSIGN_OR_RAISE(auto replay, arrow::RecordBatchReader::Make(batches, source->schema()));
            return ops::MergeInsertOnce(ds, *replay, params_, &committed);
          },
          &ran_on));
  result_ = result;
  return ops::AtVersion(*ran_on, result.version, std::move(committed));
}

Result<std::shared_ptr<Dataset>> RestoreBuilder::Commit() {
  ops::Committed committed;
  LANCE_ASSIGN_OR_RAISE(uint64_t version,
                        ops::RestoreOnce(*dataset_, version_, retry_, disable_transaction_file_, &committed));
  return ops::AtVersion(*dataset_, version, std::move(committed));
}

// ---- The URI functions: open, then the builders ----

Result<std::shared_ptr<Dataset>> WriteDataset(const std::shared_ptr<arrow::RecordBatchReader>& data,
                                              const std::string& uri, const WriteParams& params) {
  if (!data) return Status::Invalid("write to ", uri, ": no data given");
  LANCE_ASSIGN_OR_RAISE(auto store, io::ObjectStore::Open(uri, params.filesystem, params.storage_options));
  LANCE_ASSIGN_OR_RAISE(auto latest, table::FindLatestManifest(*store));
  if (!params.branch.empty() && params.branch != "main") {
    if (!latest || params.mode == WriteMode::kCreate) {
      return Status::Invalid("cannot create dataset ", uri, " on branch ", params.branch,
                             ": branches are made from an existing dataset's version");
    }
    OpenOptions on_branch;
    on_branch.branch = params.branch;
    LANCE_ASSIGN_OR_RAISE(auto dataset, DatasetAccess::Open(store, on_branch));
    WriteParams rest = params;
    rest.filesystem = nullptr;
    if (params.mode == WriteMode::kAppend) return dataset->NewAppend().Options(std::move(rest)).Commit(data);
    return dataset->NewOverwrite().Options(std::move(rest)).Commit(data);
  }
  if (!latest) {
    // No dataset yet: every mode creates it.
    ops::Committed committed;
    LANCE_ASSIGN_OR_RAISE(WriteResult written, ops::WriteRows(store, nullptr, *data, params, &committed));
    if (committed && committed->version == written.version) {
      return DatasetAccess::FromCommit(nullptr, store, std::move(*committed));
    }
    OpenOptions at;
    at.version = std::to_string(written.version);
    return DatasetAccess::Open(store, at);
  }
  if (params.mode == WriteMode::kCreate) {
    return Status::Invalid("cannot create dataset ", uri, ": it already exists (version ", latest->version,
                           "); use append or overwrite");
  }
  LANCE_ASSIGN_OR_RAISE(auto dataset, DatasetAccess::Open(store, {}));
  WriteParams rest = params;
  rest.filesystem = nullptr;  // the dataset's, opened above
  if (params.mode == WriteMode::kAppend) return dataset->NewAppend().Options(std::move(rest)).Commit(data);
  return dataset->NewOverwrite().Options(std::move(rest)).Commit(data);
}

Result<DeleteResult> DeleteRows(const std::string& uri, const std::string& predicate, const DeleteOptions& options) {
  scan::FilterSetupInBackground filter_setup;  // while the manifest is read
  LANCE_ASSIGN_OR_RAISE(auto dataset, Dataset::Open(uri));
  auto del = dataset->NewDelete(predicate);
  LANCE_RETURN_NOT_OK(del.Options(options).Commit().status());
  return del.result();
}

Result<UpdateResult> UpdateRows(const std::string& uri, const std::vector<std::pair<std::string, std::string>>& set,
                                const std::string& predicate, const UpdateOptions& options) {
  LANCE_ASSIGN_OR_RAISE(auto dataset, Dataset::Open(uri));
  auto update = dataset->NewUpdate();
  for (const auto& [column, value] : set) update.Set(column, value);
  LANCE_RETURN_NOT_OK(update.Where(predicate).Options(options).Commit().status());
  return update.result();
}

Result<MergeInsertResult> MergeInsert(const std::string& uri, const std::shared_ptr<arrow::RecordBatchReader>& source,
                                      const MergeInsertParams& params) {
  LANCE_ASSIGN_OR_RAISE(auto dataset, Dataset::Open(uri));
  auto merge = dataset->NewMergeInsert(params.on);
  LANCE_RETURN_NOT_OK(merge.Options(params).Commit(source).status());
  return merge.result();
}

Result<uint64_t> RestoreVersion(const std::string& uri, uint64_t version) {
  LANCE_ASSIGN_OR_RAISE(auto dataset, Dataset::Open(uri));
  LANCE_ASSIGN_OR_RAISE(auto restored, dataset->NewRestore(version).Commit());
  return restored->version();
}

Status CreateTag(const std::string& uri, const std::string& name, uint64_t version) {
  LANCE_ASSIGN_OR_RAISE(auto store, io::ObjectStore::Open(uri));
  return ops::CreateTagIn(*store, *store, std::nullopt, name, version);
}

Status DeleteTag(const std::string& uri, const std::string& name) {
  LANCE_ASSIGN_OR_RAISE(auto store, io::ObjectStore::Open(uri));
  return ops::DeleteTagIn(*store, name);
}

Result<CleanupResult> CleanupOldVersions(const std::string& uri, int64_t older_than_seconds, bool delete_unverified,
                                         const CleanupOptions& options) {
  LANCE_ASSIGN_OR_RAISE(auto store, io::ObjectStore::Open(uri));
  return ops::CleanupIn(store, store, std::nullopt, older_than_seconds, delete_unverified, options);
}

}  // namespace lance
