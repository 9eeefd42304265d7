#include "lance/ops/blob_v2_sidecars.h"

#include <arrow/array.h>
#include <arrow/builder.h>
#include <arrow/type.h>
#include <arrow/util/bit_util.h>

namespace lance::ops {
namespace {

std::string SidecarPathIn(const std::string& dir, uint32_t blob_id) {
  return dir + "/" + file::BlobV2SidecarFileName(blob_id);
}

}  // namespace

std::string BlobV2SidecarPath(const std::string& data_dir, const std::string& stem, uint32_t blob_id) {
  return SidecarPathIn(data_dir + "/" + stem, blob_id);
}

Result<std::string> BlobV2Sidecars::NewFile(uint32_t blob_id) {
  std::string path = SidecarPathIn(dir_, blob_id);
  created_.push_back(path);
  return path;
}

Result<std::shared_ptr<arrow::RecordBatch>> BlobV2Sidecars::Spill(const std::shared_ptr<arrow::RecordBatch>& batch) {
  auto columns = batch->columns();
  auto fields = batch->schema()->fields();
  bool changed = false;
  for (const auto& field : schema_.fields) {
    if (!file::IsBlobV2Field(field)) continue;
    const int i = batch->schema()->GetFieldIndex(field.name);
    if (i < 0 || columns[i]->type_id() != arrow::Type::STRUCT) continue;
    LANCE_ASSIGN_OR_RAISE(auto spilled, SpillColumn(columns[i], field));
    if (spilled == columns[i]) continue;
    columns[i] = spilled;
    fields[i] = arrow::field(field.name, spilled->type(), fields[i]->nullable(), fields[i]->metadata());
    changed = true;
  }
  if (!changed) return batch;
  return arrow::RecordBatch::Make(arrow::schema(fields, batch->schema()->metadata()), batch->num_rows(), columns);
}

Result<std::shared_ptr<arrow::Array>> BlobV2Sidecars::SpillColumn(const std::shared_ptr<arrow::Array>& column,
                                                                  const Field& field) {
  const file::BlobV2Thresholds thresholds = file::BlobV2ThresholdsOf(field);
  const auto& input = static_cast<const arrow::StructArray&>(*column);
  auto data_child = input.GetFieldByName("data");
  auto uri_child = input.GetFieldByName("uri");
  if (!data_child || data_child->type_id() != arrow::Type::LARGE_BINARY || !uri_child ||
      uri_child->type_id() != arrow::Type::STRING) {
    return column;
  }
  const auto& data = static_cast<const arrow::LargeBinaryArray&>(*data_child);
  const auto& uris = static_cast<const arrow::StringArray&>(*uri_child);
  // The range of an external value, when given (pylance's blob_field shape).
  auto range_child = [&](const char* name) -> const arrow::UInt64Array* {
    auto child = input.GetFieldByName(name);
    return child && child->type_id() == arrow::Type::UINT64 ? static_cast<const arrow::UInt64Array*>(child.get())
                                                            : nullptr;
  };
  const arrow::UInt64Array* range_positions = range_child("position");
  const arrow::UInt64Array* range_sizes = range_child("size");
  const int64_t n = input.length();
  bool any = false;
  for (int64_t r = 0; r < n && !any; ++r) {
    any = input.IsValid(r) && (uris.IsValid(r) || (data.IsValid(r) && static_cast<uint64_t>(data.value_length(r)) >
                                                                           thresholds.inline_max));
  }
  if (!any) return column;

  arrow::UInt8Builder kinds;
  arrow::UInt32Builder ids;
  arrow::UInt64Builder sizes, positions;
  arrow::StringBuilder blob_uris;
  for (int64_t r = 0; r < n; ++r) {
    if (input.IsValid(r) && uris.IsValid(r)) {
      // An external value, stored by reference.
      LANCE_ASSIGN_OR_RAISE(auto ref, ResolveExternalBlobUri(uris.GetString(r), external_, field.name));
      const bool ranged = range_positions && range_sizes && range_positions->IsValid(r) && range_sizes->IsValid(r);
      LANCE_RETURN_NOT_OK(kinds.Append(static_cast<uint8_t>(file::BlobV2Kind::kExternal)));
      LANCE_RETURN_NOT_OK(ids.Append(ref.base_id));
      LANCE_RETURN_NOT_OK(sizes.Append(ranged ? range_sizes->Value(r) : 0));
      LANCE_RETURN_NOT_OK(positions.Append(ranged ? range_positions->Value(r) : 0));
      LANCE_RETURN_NOT_OK(blob_uris.Append(ref.uri));
      continue;
    }
    const uint64_t size = data.IsValid(r) ? static_cast<uint64_t>(data.value_length(r)) : 0;
    if (!input.IsValid(r) || !data.IsValid(r) || size <= thresholds.inline_max) {
      LANCE_RETURN_NOT_OK(kinds.AppendNull());
      LANCE_RETURN_NOT_OK(ids.AppendNull());
      LANCE_RETURN_NOT_OK(sizes.AppendNull());
      LANCE_RETURN_NOT_OK(positions.AppendNull());
      LANCE_RETURN_NOT_OK(blob_uris.AppendNull());
      continue;
    }
    LANCE_RETURN_NOT_OK(blob_uris.AppendNull());
    const std::string_view bytes = data.GetView(r);
    if (size > thresholds.dedicated) {
      const uint32_t id = next_blob_id_++;
      LANCE_ASSIGN_OR_RAISE(auto path, NewFile(id));
      LANCE_RETURN_NOT_OK(store_.Write(path, bytes));
      LANCE_RETURN_NOT_OK(kinds.Append(static_cast<uint8_t>(file::BlobV2Kind::kDedicated)));
      LANCE_RETURN_NOT_OK(ids.Append(id));
      LANCE_RETURN_NOT_OK(sizes.Append(size));
      LANCE_RETURN_NOT_OK(positions.AppendNull());
      continue;
    }
    // A pack file takes values until the next would pass its size limit.
    if (!pack_ || pack_size_ + size > thresholds.pack_file) {
      const uint32_t id = next_blob_id_++;
      LANCE_RETURN_NOT_OK(Finish());
      LANCE_ASSIGN_OR_RAISE(auto path, NewFile(id));
      LANCE_ASSIGN_OR_RAISE(pack_, store_.OpenOutputStream(path));
      pack_id_ = id;
      pack_size_ = 0;
    }
    LANCE_RETURN_NOT_OK(pack_->Write(bytes.data(), static_cast<int64_t>(size)));
    LANCE_RETURN_NOT_OK(kinds.Append(static_cast<uint8_t>(file::BlobV2Kind::kPacked)));
    LANCE_RETURN_NOT_OK(ids.Append(pack_id_));
    LANCE_RETURN_NOT_OK(sizes.Append(size));
    LANCE_RETURN_NOT_OK(positions.Append(pack_size_));
    pack_size_ += size;
  }
  // data and uri, then the descriptor parts (the input's range children
  // would clash with `position`; they are in the descriptors now).
  LANCE_ASSIGN_OR_RAISE(auto flat, input.Flatten());
  arrow::ArrayVector children = {flat[input.struct_type()->GetFieldIndex("data")],
                                 flat[input.struct_type()->GetFieldIndex("uri")]};
  arrow::FieldVector child_fields = {arrow::field("data", arrow::large_binary()), arrow::field("uri", arrow::utf8())};
  std::shared_ptr<arrow::Array> kind_array, id_array, size_array, position_array, uri_array;
  LANCE_RETURN_NOT_OK(kinds.Finish(&kind_array));
  LANCE_RETURN_NOT_OK(ids.Finish(&id_array));
  LANCE_RETURN_NOT_OK(sizes.Finish(&size_array));
  LANCE_RETURN_NOT_OK(positions.Finish(&position_array));
  LANCE_RETURN_NOT_OK(blob_uris.Finish(&uri_array));
  children.insert(children.end(), {kind_array, id_array, size_array, position_array, uri_array});
  child_fields.insert(child_fields.end(),
                      {arrow::field("kind", arrow::uint8()), arrow::field("blob_id", arrow::uint32()),
                       arrow::field("blob_size", arrow::uint64()), arrow::field("position", arrow::uint64()),
                       arrow::field("blob_uri", arrow::utf8())});
  std::shared_ptr<arrow::Buffer> validity;
  if (input.null_count() > 0) {
    LANCE_ASSIGN_OR_RAISE(validity, arrow::AllocateEmptyBitmap(n));
    for (int64_t r = 0; r < n; ++r) {
      if (input.IsValid(r)) arrow::bit_util::SetBit(validity->mutable_data(), r);
    }
  }
  return std::make_shared<arrow::StructArray>(arrow::struct_(child_fields), n, children, validity,
                                              input.null_count());
}

Status BlobV2Sidecars::Finish() {
  if (!pack_) return Status::OK();
  auto pack = std::move(pack_);
  pack_.reset();
  return pack->Close();
}

}  // namespace lance::ops
