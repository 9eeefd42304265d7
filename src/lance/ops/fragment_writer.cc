#include "lance/ops/fragment_writer.h"

#include <arrow/util/byte_size.h>

#include <algorithm>
#include <tuple>

#include "lance/file/blob_v2.h"
#include "lance/file/version.h"
#include "lance/util/random.h"

namespace lance::ops {
namespace {

constexpr const char* kDataDir = "data";
constexpr const char* kDataSuffix = ".lance";


// Which field ids a data file of `storage_version` records, and their
// column numbers: every field in 2.0, only leaves from 2.1 on (structs there
// are not columns of their own), a blob v2 column counting as one leaf.
void SetFileFields(const Schema& schema, const std::string& storage_version, DataFile* file) {
  // Legacy files address pages by field id: every field, no column indices.
  if (file::IsLegacyVersionName(storage_version)) {
    for (const auto& f : schema.FieldsPreOrder()) file->fields.push_back(f.id);
    return;
  }
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

}  // namespace

// The reference's data file names: the bits of three random bytes, then 26
// hex digits for thirteen more, plus ".lance".
std::string NewDataFileName() {
  const auto b = util::RandomBytes16();
  std::string name;
  for (int i = 0; i < 3; ++i) {
    for (int bit = 7; bit >= 0; --bit) name += ((b[i] >> bit) & 1) ? '1' : '0';
  }
  static constexpr char kHex[] = "0123456789abcdef";
  for (int i = 3; i < 16; ++i) {
    name += kHex[b[i] >> 4];
    name += kHex[b[i] & 0xF];
  }
  return name + kDataSuffix;
}

FragmentWriterOptions FragmentWriterOptions::FromParams(const WriteParams& params, std::string storage_version) {
  FragmentWriterOptions out;
  out.storage_version = std::move(storage_version);
  out.file_options = params.file_options;
  out.max_rows_per_file = params.max_rows_per_file;
  out.max_rows_per_group = params.max_rows_per_group;
  out.max_bytes_per_file = params.max_bytes_per_file;
  return out;
}

static void SetDictionaries(const std::map<int32_t, std::shared_ptr<arrow::Array>>& dictionaries,
                            std::vector<Field>* fields) {
  for (auto& f : *fields) {
    if (auto it = dictionaries.find(f.id); it != dictionaries.end()) f.dictionary_values = it->second;
    SetDictionaries(dictionaries, &f.children);
  }
}

FragmentWriter::FragmentWriter(const io::ObjectStore& store, Schema schema, FragmentWriterOptions options)
    : store_(store), schema_(std::move(schema)), options_(std::move(options)) {
  options_.file_options.version = options_.storage_version;
}

FragmentWriter::~FragmentWriter() = default;

bool FragmentWriter::legacy() const {
  return file::IsLegacyVersionName(options_.storage_version);
}

Status FragmentWriter::Write(std::shared_ptr<arrow::RecordBatch> batch) {
  if (options_.max_rows_per_file == 0) return Status::Invalid("max_rows_per_file must be at least 1");
  while (batch->num_rows() > 0) {
    if (!writer_ && !legacy_writer_) LANCE_RETURN_NOT_OK(OpenFile());
    // At most one row group at a time, so the byte limit is checked often.
    const uint64_t file_rows = RowsOfOpenFile();
    const uint64_t room = std::min(file_rows - rows_, std::max<uint64_t>(options_.max_rows_per_group, 1));
    const int64_t take = static_cast<int64_t>(std::min<uint64_t>(room, batch->num_rows()));
    auto part = batch->Slice(0, take);
    std::shared_ptr<arrow::RecordBatch> encoded = part;
    if (sidecars_) {
      LANCE_ASSIGN_OR_RAISE(encoded, sidecars_->Spill(part));
    }
    if (legacy_writer_) {
      LANCE_RETURN_NOT_OK(legacy_writer_->Write(encoded));
    } else {
      LANCE_RETURN_NOT_OK(writer_->Write(*encoded));
    }
    rows_ += static_cast<uint64_t>(take);
    total_rows_ += static_cast<uint64_t>(take);
    if (options_.on_progress) options_.on_progress(total_rows_);
    // The bytes the slice refers to: a slice's parent buffers counted
    // whole would end files after a few slices of a large batch.
    auto part_bytes = arrow::util::ReferencedBufferSize(*part);
    bytes_ += static_cast<uint64_t>(part_bytes.ok() ? *part_bytes : arrow::util::TotalBufferSize(*part));
    batch = batch->Slice(take);
    if (rows_ >= file_rows || bytes_ >= options_.max_bytes_per_file) {
      LANCE_RETURN_NOT_OK(FinishFile());
    }
  }
  return Status::OK();
}

uint64_t FragmentWriter::RowsOfOpenFile() const {
  const size_t file = fragments_.size();  // the open file's position
  if (file < options_.file_row_counts.size() && options_.file_row_counts[file] > 0) {
    return options_.file_row_counts[file];
  }
  return options_.max_rows_per_file;
}

Result<std::vector<Fragment>> FragmentWriter::Finish() {
  if (writer_ || legacy_writer_) LANCE_RETURN_NOT_OK(FinishFile());
  return fragments_;
}

void FragmentWriter::RemoveFiles() {
  writer_.reset();
  legacy_writer_.reset();
  if (sidecars_) {
    (void)sidecars_->Finish();
    for (const auto& path : sidecars_->created()) sidecar_files_.emplace_back(file_store_, path);
    sidecars_.reset();
  }
  for (const auto& [store, path] : sidecar_files_) (void)store->Delete(path);
  for (const auto& [store, path] : created_) (void)store->Delete(path);
}

Status FragmentWriter::OpenFile() {
  const std::string& version = options_.storage_version;
  if (!legacy() && version != "2.0" && version != "2.1" && version != "2.2") {
    return Status::NotImplemented("cannot write data files of data storage version '", version,
                                  "': lance-cpp writes 0.1 (legacy), 2.0, 2.1 and 2.2");
  }
  name_ = NewDataFileName();
  file_store_ = &store_;
  file_dir_ = kDataDir;
  file_base_id_.reset();
  if (!options_.targets.empty()) {
    const WriteTarget& target = options_.targets[fragments_.size() % options_.targets.size()];
    file_store_ = target.store.get();
    file_dir_ = target.is_dataset_root ? kDataDir : "";
    file_base_id_ = target.base_id;
  }
  const std::string path = file_dir_.empty() ? name_ : file_dir_ + "/" + name_;
  created_.emplace_back(file_store_, path);
  LANCE_ASSIGN_OR_RAISE(auto out, file_store_->OpenOutputStream(path));
  if (legacy()) {
    LANCE_ASSIGN_OR_RAISE(legacy_writer_, file::legacy::LegacyFileWriter::Open(std::move(out), name_, schema_,
                                                                              options_.max_rows_per_group));
    rows_ = 0;
    bytes_ = 0;
    return Status::OK();
  }
  LANCE_ASSIGN_OR_RAISE(writer_, FileWriter::Open(std::move(out), name_, schema_, options_.file_options));
  // Blob v2 values too large to stay inline go to .blob files beside it.
  if (std::any_of(schema_.fields.begin(), schema_.fields.end(), file::IsBlobV2Field)) {
    const std::string stem = name_.substr(0, name_.size() - std::string(kDataSuffix).size());
    sidecars_ = std::make_unique<BlobV2Sidecars>(*file_store_, file_dir_.empty() ? stem : file_dir_ + "/" + stem,
                                                 schema_,
                                                 options_.external);
  }
  rows_ = 0;
  bytes_ = 0;
  return Status::OK();
}

Status FragmentWriter::FinishFile() {
  if (sidecars_) {
    LANCE_RETURN_NOT_OK(sidecars_->Finish());
    for (const auto& path : sidecars_->created()) sidecar_files_.emplace_back(file_store_, path);
    sidecars_.reset();
  }
  uint64_t rows = 0;
  DataFile file;
  if (legacy_writer_) {
    LANCE_ASSIGN_OR_RAISE(rows, legacy_writer_->Finish());
    // The first file's dictionaries are the dataset's from now on.
    SetDictionaries(legacy_writer_->dictionaries(), &schema_.fields);
    std::tie(file.file_major_version, file.file_minor_version) = file::legacy::LegacyFileWriter::kVersionPair;
    legacy_writer_.reset();
  } else {
    LANCE_ASSIGN_OR_RAISE(rows, writer_->Finish());
    std::tie(file.file_major_version, file.file_minor_version) = writer_->version_pair();
  }
  file.path = name_;
  file.base_id = file_base_id_;
  SetFileFields(schema_, options_.storage_version, &file);
  // A 2.0 file's footer says 0.3; the manifest records 2.0, as pylance 14 does.
  if (file.file_major_version == 0 && file.file_minor_version == 3) {
    file.file_major_version = 2;
    file.file_minor_version = 0;
  }
  writer_.reset();
  LANCE_ASSIGN_OR_RAISE(int64_t size, file_store_->Size(created_.back().second));
  file.file_size_bytes = static_cast<uint64_t>(size);
  Fragment fragment;
  fragment.files.push_back(std::move(file));
  fragment.physical_rows = rows;
  fragments_.push_back(std::move(fragment));
  return Status::OK();
}

}  // namespace lance::ops
