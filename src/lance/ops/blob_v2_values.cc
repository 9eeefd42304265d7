#include "lance/ops/blob_v2_values.h"

#include <arrow/array.h>
#include <arrow/builder.h>
#include <arrow/io/interfaces.h>
#include <arrow/util/bit_util.h>

#include <algorithm>
#include <unordered_map>

#include "lance/file/blob_v2.h"
#include "lance/ops/blob_v2_input.h"
#include "lance/ops/blob_v2_sidecars.h"
#include "lance/table/file_locations.h"

namespace lance::ops {
namespace {

// Opens each file once for all the values read from it.
class FileCache {
 public:
  Result<std::shared_ptr<arrow::Buffer>> Read(const table::FileLocation& location, uint64_t position,
                                              uint64_t size) {
    const std::string path = location.FullPath();
    auto it = files_.find(path);
    if (it == files_.end()) {
      LANCE_ASSIGN_OR_RAISE(auto file, location.store->OpenInputFile(location.path));
      it = files_.emplace(path, std::move(file)).first;
    }
    LANCE_ASSIGN_OR_RAISE(auto bytes,
                          it->second->ReadAt(static_cast<int64_t>(position), static_cast<int64_t>(size)));
    if (static_cast<uint64_t>(bytes->size()) != size) {
      return Status::IOError(path, " is too short: ", size, " bytes wanted at ", position, ", ", bytes->size(),
                             " there");
    }
    return bytes;
  }

 private:
  std::unordered_map<std::string, std::shared_ptr<arrow::io::RandomAccessFile>> files_;
};

// The data file of fragment `fragment_id` that holds field `field_id`.
Result<const DataFile*> FileOf(const Dataset& dataset, uint64_t fragment_id, int32_t field_id) {
  for (const auto& fragment : dataset.manifest().fragments) {
    if (fragment.id != fragment_id) continue;
    for (const auto& file : fragment.files) {
      if (std::find(file.fields.begin(), file.fields.end(), field_id) != file.fields.end()) return &file;
    }
    return Status::Invalid("fragment ", fragment_id, " of ", dataset.uri(), " has no data file with field ",
                           field_id);
  }
  return Status::KeyError("no fragment ", fragment_id, " in ", dataset.uri());
}

template <typename T>
const T* Child(const arrow::StructArray& descriptors, const char* name) {
  auto child = descriptors.GetFieldByName(name);
  return child ? dynamic_cast<const T*>(child.get()) : nullptr;
}

Result<std::shared_ptr<arrow::Array>> ReadColumn(FileCache& files, const table::FileLocator& locator,
                                                 const Dataset& dataset, const Field& field,
                                                 const arrow::StructArray& descriptors,
                                                 const std::vector<uint64_t>& row_addrs) {
  const auto* kinds = Child<arrow::UInt8Array>(descriptors, "kind");
  const auto* positions = Child<arrow::UInt64Array>(descriptors, "position");
  const auto* sizes = Child<arrow::UInt64Array>(descriptors, "size");
  const auto* blob_ids = Child<arrow::UInt32Array>(descriptors, "blob_id");
  if (!kinds || !positions || !sizes || !blob_ids) {
    return Status::Invalid("blob v2 column '", field.name, "' of ", dataset.uri(), " has descriptors of type ",
                           descriptors.type()->ToString());
  }
  const int64_t n = descriptors.length();
  arrow::LargeBinaryBuilder data;
  for (int64_t r = 0; r < n; ++r) {
    if (descriptors.IsNull(r)) {
      LANCE_RETURN_NOT_OK(data.AppendNull());
      continue;
    }
    const uint64_t addr = row_addrs[static_cast<size_t>(r)];
    const uint64_t size = sizes->Value(r);
    const auto kind = static_cast<file::BlobV2Kind>(kinds->Value(r));
    if (kind == file::BlobV2Kind::kExternal) {
      return Status::NotImplemented("cannot rewrite row ", addr & 0xFFFFFFFFu, " of fragment ", addr >> 32, " of ",
                                    dataset.uri(), ": its blob column '", field.name,
                                    "' holds an external URI, which lance-cpp does not write");
    }
    if (size == 0) {
      LANCE_RETURN_NOT_OK(data.Append("", 0));
      continue;
    }
    LANCE_ASSIGN_OR_RAISE(const DataFile* file, FileOf(dataset, addr >> 32, field.id));
    const std::string stem = file->path.substr(0, file->path.size() - std::min<size_t>(file->path.size(), 6));
    // The data file itself, or a sidecar in the same data directory (which
    // may be another base's, e.g. in a shallow clone).
    std::string name;
    uint64_t position = positions->Value(r);
    switch (kind) {
      case file::BlobV2Kind::kInline:
        name = file->path;
        break;
      case file::BlobV2Kind::kPacked:
        name = stem + "/" + file::BlobV2SidecarFileName(blob_ids->Value(r));
        break;
      case file::BlobV2Kind::kDedicated:
        name = stem + "/" + file::BlobV2SidecarFileName(blob_ids->Value(r));
        position = 0;
        break;
      default:
        return Status::Invalid("blob column '", field.name, "' of ", dataset.uri(), ": row ", addr & 0xFFFFFFFFu,
                               " of fragment ", addr >> 32, " has unknown blob kind ", int(kinds->Value(r)));
    }
    LANCE_ASSIGN_OR_RAISE(auto location, locator.Locate(table::FileKind::kData, file->base_id, name,
                                                        "data file " + file->path));
    auto bytes = files.Read(location, position, size);
    if (!bytes.ok()) {
      return bytes.status().WithMessage("reading blob column '", field.name, "' of ", dataset.uri(), ": ",
                                        bytes.status().message());
    }
    LANCE_RETURN_NOT_OK(data.Append((*bytes)->data(), (*bytes)->size()));
  }
  std::shared_ptr<arrow::Array> values;
  LANCE_RETURN_NOT_OK(data.Finish(&values));
  LANCE_ASSIGN_OR_RAISE(auto no_uris, arrow::MakeArrayOfNull(arrow::utf8(), n));
  // The struct's validity in a bitmap of its own, from bit 0.
  std::shared_ptr<arrow::Buffer> validity;
  if (descriptors.null_count() > 0) {
    LANCE_ASSIGN_OR_RAISE(validity, arrow::AllocateEmptyBitmap(n));
    for (int64_t r = 0; r < n; ++r) {
      if (descriptors.IsValid(r)) arrow::bit_util::SetBit(validity->mutable_data(), r);
    }
  }
  return std::make_shared<arrow::StructArray>(BlobV2LogicalType(), n, arrow::ArrayVector{values, no_uris},
                                              validity, descriptors.null_count());
}

}  // namespace

bool HasBlobV2Columns(const Dataset& dataset) {
  const auto& fields = dataset.manifest().schema.fields;
  return std::any_of(fields.begin(), fields.end(), file::IsBlobV2Field);
}

std::shared_ptr<arrow::Schema> BlobV2WritableSchema(const Dataset& dataset, const arrow::Schema& schema) {
  auto fields = schema.fields();
  for (const auto& field : dataset.manifest().schema.fields) {
    if (!file::IsBlobV2Field(field)) continue;
    const int i = schema.GetFieldIndex(field.name);
    if (i >= 0) fields[i] = fields[i]->WithType(BlobV2LogicalType());
  }
  return arrow::schema(std::move(fields), schema.metadata());
}

Result<std::shared_ptr<arrow::RecordBatch>> ReadBlobV2Values(const io::ObjectStore& store, const Dataset& dataset,
                                                             const std::shared_ptr<arrow::RecordBatch>& batch,
                                                             const std::vector<uint64_t>& row_addrs) {
  if (static_cast<int64_t>(row_addrs.size()) != batch->num_rows()) {
    return Status::Invalid("blob values of ", dataset.uri(), ": ", batch->num_rows(), " rows but ",
                           row_addrs.size(), " row addresses");
  }
  // Not owned: `store` outlives this call.
  const std::shared_ptr<const io::ObjectStore> root(std::shared_ptr<const io::ObjectStore>{}, &store);
  const table::FileLocator locator(root, dataset.manifest());
  FileCache files;
  auto columns = batch->columns();
  auto fields = batch->schema()->fields();
  bool changed = false;
  for (const auto& field : dataset.manifest().schema.fields) {
    if (!file::IsBlobV2Field(field)) continue;
    const int i = batch->schema()->GetFieldIndex(field.name);
    if (i < 0 || columns[i]->type_id() != arrow::Type::STRUCT) continue;
    const auto& descriptors = static_cast<const arrow::StructArray&>(*columns[i]);
    if (!descriptors.GetFieldByName("kind")) continue;  // already values
    LANCE_ASSIGN_OR_RAISE(columns[i], ReadColumn(files, locator, dataset, field, descriptors, row_addrs));
    fields[i] = fields[i]->WithType(BlobV2LogicalType());
    changed = true;
  }
  if (!changed) return batch;
  return arrow::RecordBatch::Make(arrow::schema(fields, batch->schema()->metadata()), batch->num_rows(),
                                  std::move(columns));
}

}  // namespace lance::ops
