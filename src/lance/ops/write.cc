// WriteDataset: rows into new data files (fragments), then one commit:
// Overwrite for create and overwrite, Append for append.
#include <arrow/array.h>
#include <arrow/record_batch.h>
#include <arrow/type.h>
#include <arrow/util/byte_size.h>

#include <algorithm>
#include <random>

#include "lance/file/blob_v2.h"
#include "lance/io/object_store.h"
#include "lance/ops/blob_v2_external.h"
#include "lance/ops/blob_v2_input.h"
#include "lance/ops/blob_v2_sidecars.h"
#include "lance/txn/commit.h"
#include "lance/write.h"

namespace lance {
namespace {

constexpr const char* kDataDir = "data";

// The reference's data file names: the bits of three random bytes, then 26
// hex digits for thirteen more, plus ".lance".
std::string NewDataFileName() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  uint8_t b[16];
  for (int i = 0; i < 16; i += 8) {
    const uint64_t v = rng();
    for (int j = 0; j < 8; ++j) b[i + j] = static_cast<uint8_t>(v >> (8 * j));
  }
  std::string name;
  for (int i = 0; i < 3; ++i) {
    for (int bit = 7; bit >= 0; --bit) name += ((b[i] >> bit) & 1) ? '1' : '0';
  }
  static constexpr char kHex[] = "0123456789abcdef";
  for (int i = 3; i < 16; ++i) {
    name += kHex[b[i] >> 4];
    name += kHex[b[i] & 0xF];
  }
  return name + ".lance";
}

std::string NormalizeStorageVersion(const std::string& v) {
  if (v == "stable") return "2.2";
  if (v == "2.0" || v == "2.1" || v == "2.2") return v;
  return v;  // refused below with the value in the message
}

// Which field ids a data file of `storage_version` records, and their
// top-level column numbers: every field in 2.0, only leaves from 2.1 on
// (structs there are not columns of their own).
void FileFieldIds(const Schema& schema, const std::string& storage_version, DataFile* file) {
  const bool every_field = storage_version == "2.0";
  int32_t column = 0;
  std::vector<int32_t> blob_v2_ids;  // their children have no columns of their own
  for (const auto& f : schema.FieldsPreOrder()) {
    const Field* full = schema.FieldById(f.id);
    if (std::find(blob_v2_ids.begin(), blob_v2_ids.end(), f.parent_id) != blob_v2_ids.end()) continue;
    const bool blob_v2 = full != nullptr && file::IsBlobV2Field(*full);
    if (blob_v2) blob_v2_ids.push_back(f.id);
    const bool leaf = full == nullptr || full->children.empty() || blob_v2;
    if (!every_field && !leaf) continue;
    file->fields.push_back(f.id);
    file->column_indices.push_back(column++);
  }
}

// The input's columns in the dataset's order, matched by name.
Result<std::shared_ptr<arrow::RecordBatch>> ConformToSchema(const std::shared_ptr<arrow::RecordBatch>& batch,
                                                            const arrow::Schema& target,
                                                            const std::string& uri) {
  if (batch->schema()->Equals(target, /*check_metadata=*/false)) return batch;
  std::vector<std::shared_ptr<arrow::Array>> columns;
  for (const auto& field : target.fields()) {
    auto column = batch->GetColumnByName(field->name());
    if (!column) {
      return Status::Invalid("cannot append to ", uri, ": the input has no column '", field->name(), "'");
    }
    if (!column->type()->Equals(*field->type())) {
      return Status::Invalid("cannot append to ", uri, ": column '", field->name(), "' is ",
                             column->type()->ToString(), " in the input but ", field->type()->ToString(),
                             " in the dataset");
    }
    columns.push_back(column);
  }
  if (batch->num_columns() != target.num_fields()) {
    return Status::Invalid("cannot append to ", uri, ": the input has ", batch->num_columns(),
                           " columns, the dataset ", target.num_fields(), " (", target.ToString(), ")");
  }
  return arrow::RecordBatch::Make(std::make_shared<arrow::Schema>(target.fields()), batch->num_rows(),
                                  std::move(columns));
}

// Writes rows into data files, starting a new file (fragment) whenever the
// current one reaches max_rows_per_file rows or max_bytes_per_file bytes.
class FragmentWriter {
 public:
  FragmentWriter(const io::ObjectStore& store, const Schema& schema, const WriteParams& params,
                 FileWriterOptions file_options, ops::BlobV2ExternalPolicy external = {})
      : store_(store), schema_(schema), params_(params), file_options_(std::move(file_options)),
        external_(std::move(external)) {}

  Status Write(std::shared_ptr<arrow::RecordBatch> batch) {
    while (batch->num_rows() > 0) {
      if (!writer_) LANCE_RETURN_NOT_OK(OpenFile());
      // At most one row group at a time, so the byte limit is checked often.
      const uint64_t room = std::min(params_.max_rows_per_file - rows_,
                                     std::max<uint64_t>(params_.max_rows_per_group, 1));
      const int64_t take = static_cast<int64_t>(std::min<uint64_t>(room, batch->num_rows()));
      auto part = batch->Slice(0, take);
      std::shared_ptr<arrow::RecordBatch> encoded = part;
      if (sidecars_) {
        LANCE_ASSIGN_OR_RAISE(encoded, sidecars_->Spill(part));
      }
      LANCE_RETURN_NOT_OK(writer_->Write(*encoded));
      rows_ += static_cast<uint64_t>(take);
      total_rows_ += static_cast<uint64_t>(take);
      if (params_.on_progress) params_.on_progress(total_rows_);
      // The bytes the slice refers to: a slice's parent buffers counted
      // whole would end files after a few slices of a large batch.
      auto part_bytes = arrow::util::ReferencedBufferSize(*part);
      bytes_ += static_cast<uint64_t>(part_bytes.ok() ? *part_bytes : arrow::util::TotalBufferSize(*part));
      batch = batch->Slice(take);
      if (rows_ >= params_.max_rows_per_file || bytes_ >= params_.max_bytes_per_file) {
        LANCE_RETURN_NOT_OK(FinishFile());
      }
    }
    return Status::OK();
  }

  Result<std::vector<Fragment>> Finish() {
    if (writer_) LANCE_RETURN_NOT_OK(FinishFile());
    return fragments_;
  }

  /// Removes every data file this writer created (after a failure, so no
  /// partial output stays behind). Best effort.
  void RemoveFiles() {
    writer_.reset();
    if (sidecars_) (void)sidecars_->Finish();
    for (const auto& path : sidecar_files_) (void)store_.Delete(path);
    if (sidecars_) {
      for (const auto& path : sidecars_->created()) (void)store_.Delete(path);
    }
    for (const auto& name : created_) (void)store_.Delete(std::string(kDataDir) + "/" + name);
  }

 private:
  Status OpenFile() {
    name_ = NewDataFileName();
    created_.push_back(name_);
    LANCE_ASSIGN_OR_RAISE(auto out, store_.OpenOutputStream(std::string(kDataDir) + "/" + name_));
    LANCE_ASSIGN_OR_RAISE(writer_, FileWriter::Open(std::move(out), name_, schema_, file_options_));
    // Blob v2 values too large to stay inline go to .blob files beside it.
    sidecars_.reset();
    if (std::any_of(schema_.fields.begin(), schema_.fields.end(), file::IsBlobV2Field)) {
      const std::string stem = name_.substr(0, name_.size() - std::string(".lance").size());
      sidecars_ =
          std::make_unique<ops::BlobV2Sidecars>(store_, std::string(kDataDir) + "/" + stem, schema_, external_);
    }
    rows_ = 0;
    bytes_ = 0;
    return Status::OK();
  }

  Status FinishFile() {
    if (sidecars_) {
      LANCE_RETURN_NOT_OK(sidecars_->Finish());
      sidecar_files_.insert(sidecar_files_.end(), sidecars_->created().begin(), sidecars_->created().end());
      sidecars_.reset();
    }
    LANCE_ASSIGN_OR_RAISE(uint64_t rows, writer_->Finish());
    DataFile file;
    file.path = name_;
    FileFieldIds(schema_, file_options_.version, &file);
    std::tie(file.file_major_version, file.file_minor_version) = writer_->version_pair();
    // A 2.0 file's footer says 0.3; the manifest records 2.0, as pylance 14 does.
    if (file.file_major_version == 0 && file.file_minor_version == 3) {
      file.file_major_version = 2;
      file.file_minor_version = 0;
    }
    writer_.reset();
    LANCE_ASSIGN_OR_RAISE(int64_t size, store_.Size(std::string(kDataDir) + "/" + name_));
    file.file_size_bytes = static_cast<uint64_t>(size);
    Fragment fragment;
    fragment.files.push_back(std::move(file));
    fragment.physical_rows = rows;
    fragments_.push_back(std::move(fragment));
    return Status::OK();
  }

  const io::ObjectStore& store_;
  const Schema& schema_;
  const WriteParams& params_;
  FileWriterOptions file_options_;
  ops::BlobV2ExternalPolicy external_;  // how blob v2 URIs are stored
  std::unique_ptr<FileWriter> writer_;
  std::unique_ptr<ops::BlobV2Sidecars> sidecars_;  // of the open data file
  std::vector<std::string> sidecar_files_;         // of the finished ones
  std::string name_;
  uint64_t rows_ = 0;
  uint64_t bytes_ = 0;
  uint64_t total_rows_ = 0;
  std::vector<Fragment> fragments_;
  std::vector<std::string> created_;
};

// Writes every batch of `data` through `writer`.
Result<std::vector<Fragment>> WriteAll(arrow::RecordBatchReader& data, FragmentWriter& writer, const Schema& schema,
                                       bool conform, const arrow::Schema& target, const std::string& uri) {
  while (true) {
    std::shared_ptr<arrow::RecordBatch> batch;
    LANCE_RETURN_NOT_OK(data.ReadNext(&batch));
    if (!batch) break;
    LANCE_ASSIGN_OR_RAISE(batch, ops::ToBlobV2Input(batch, schema, uri));
    if (conform) {
      LANCE_ASSIGN_OR_RAISE(batch, ConformToSchema(batch, target, uri));
    }
    LANCE_RETURN_NOT_OK(writer.Write(std::move(batch)));
  }
  return writer.Finish();
}

const Field* FirstBlobV2Field(const std::vector<Field>& fields) {
  for (const auto& f : fields) {
    if (file::IsBlobV2Field(f)) return &f;
    if (const Field* inner = FirstBlobV2Field(f.children)) return inner;
  }
  return nullptr;
}

}  // namespace

Result<std::shared_ptr<Dataset>> WriteDataset(const std::shared_ptr<arrow::RecordBatchReader>& data,
                                              const std::string& uri, const WriteParams& params) {
  if (params.max_rows_per_file == 0) return Status::Invalid("max_rows_per_file must be at least 1");
  LANCE_ASSIGN_OR_RAISE(auto store, io::ObjectStore::Open(uri));
  // Checks the writer feature flags before any file is written.
  LANCE_ASSIGN_OR_RAISE(auto base, txn::LoadLatestForWrite(*store));
  if (params.mode == WriteMode::kCreate && base) {
    return Status::Invalid("cannot create dataset ", uri, ": it already exists (version ",
                           base->location.version, "); use append or overwrite");
  }
  const bool appending = params.mode == WriteMode::kAppend && base;

  Schema schema;
  std::string storage_version;
  std::shared_ptr<arrow::Schema> target;
  if (appending) {
    schema = base->file.manifest.schema;
    storage_version = base->file.manifest.data_storage_version;
    if (storage_version.empty()) {
      OpenOptions at;
      at.version = std::to_string(base->location.version);
      LANCE_ASSIGN_OR_RAISE(auto ds, Dataset::Open(uri, at));
      LANCE_ASSIGN_OR_RAISE(storage_version, ds->DataStorageVersion());
    }
    if (params.data_storage_version &&
        NormalizeStorageVersion(*params.data_storage_version) != storage_version) {
      return Status::Invalid("cannot append to ", uri, ": it stores data as version ", storage_version,
                             ", not ", *params.data_storage_version);
    }
    LANCE_ASSIGN_OR_RAISE(target, schema.ToArrow());
  } else {
    if (params.data_storage_version) {
      storage_version = NormalizeStorageVersion(*params.data_storage_version);
    } else if (base && !base->file.manifest.data_storage_version.empty()) {
      storage_version = base->file.manifest.data_storage_version;
    } else {
      storage_version = "2.2";
    }
    target = data->schema();
    // A 2.2 dataset keeps binary blob columns as blob v2, as pylance's.
    if (storage_version == "2.2") target = ops::BlobV2InputSchema(*target);
    LANCE_ASSIGN_OR_RAISE(schema, Schema::FromArrow(*target, 0));
  }
  if (storage_version != "2.0" && storage_version != "2.1" && storage_version != "2.2") {
    return Status::Invalid("cannot write data storage version '", storage_version, "' to ", uri,
                           ": lance-cpp writes 2.0, 2.1 and 2.2");
  }

  if (storage_version == "2.2") {
    // pylance keeps blob columns of 2.2 datasets as blob v2: the logical
    // struct<data, uri> in the manifest, descriptors in the files.
    LANCE_RETURN_NOT_OK(ops::CheckBlobV2Writable(schema, uri));
    std::vector<std::shared_ptr<arrow::Field>> fields = target->fields();
    for (size_t i = 0; i < schema.fields.size() && i < fields.size(); ++i) {
      if (file::IsBlobV2Field(schema.fields[i])) fields[i] = fields[i]->WithType(ops::BlobV2WriteType());
    }
    target = arrow::schema(fields, target->metadata());
  } else if (const Field* blob = FirstBlobV2Field(schema.fields)) {
    return Status::NotImplemented("cannot write blob v2 column '", blob->name, "' to ", uri,
                                  ": blob v2 needs data storage version 2.2");
  }

  FileWriterOptions file_options = params.file_options;
  file_options.version = storage_version;
  ops::BlobV2ExternalPolicy external;
  if (base) external.bases = base->file.manifest.base_paths;
  external.allow_outside_bases = params.allow_external_blob_outside_bases;
  FragmentWriter writer(*store, schema, params, file_options, std::move(external));
  auto written = WriteAll(*data, writer, schema, appending, *target, uri);
  if (!written.ok()) {
    writer.RemoveFiles();
    return written.status();
  }
  std::vector<Fragment> fragments = std::move(*written);

  txn::CommitOptions options;
  options.new_dataset_naming =
      params.enable_v2_manifest_paths ? table::ManifestNamingScheme::kV2 : table::ManifestNamingScheme::kV1;
  options.enable_stable_row_ids = params.enable_stable_row_ids;
  options.data_storage_version = storage_version;
  const uint64_t read_version = base ? base->location.version : 0;
  txn::Operation op;
  if (appending) {
    op = txn::Append{std::move(fragments)};
  } else {
    op = txn::Overwrite{std::move(fragments), std::move(schema), params.config};
  }
  options.num_retries = params.mode == WriteMode::kCreate ? 1 : static_cast<int>(params.retry.num_retries);
  auto committed = txn::Commit(*store, txn::Transaction::Make(read_version, std::move(op)), options);
  if (!committed.ok()) {
    writer.RemoveFiles();  // no manifest refers to them
    return committed.status();
  }
  OpenOptions at;
  at.version = std::to_string(committed->version);
  return Dataset::Open(uri, at);
}

}  // namespace lance
