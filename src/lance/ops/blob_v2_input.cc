#include "lance/ops/blob_v2_input.h"

#include <cstdint>
#include <vector>

#include <arrow/array.h>
#include <arrow/compute/cast.h>
#include <arrow/util/bit_util.h>
#include <arrow/util/key_value_metadata.h>

#include "lance/file/blob_v2.h"

namespace lance::ops {
namespace {

constexpr const char* kBlobKey = "lance-encoding:blob";

bool IsBinaryBlob(const arrow::Field& f) {
  return f.metadata() != nullptr && f.metadata()->Contains(kBlobKey) &&
         (f.type()->id() == arrow::Type::LARGE_BINARY || f.type()->id() == arrow::Type::BINARY);
}

const Field* FirstNestedBlob(const std::vector<Field>& fields) {
  for (const auto& f : fields) {
    if (f.metadata.count(kBlobKey) > 0 || file::IsBlobV2Field(f)) return &f;
    if (const Field* inner = FirstNestedBlob(f.children)) return inner;
  }
  return nullptr;
}

// The row rules pylance enforces on blob v2 input.
Status CheckBlobRows(const arrow::StructArray& input, const arrow::Array& data, const arrow::Array& uris,
                     const arrow::UInt64Array& positions, const arrow::UInt64Array& sizes, const std::string& field,
                     const std::string& uri) {
  for (int64_t r = 0; r < input.length(); ++r) {
    if (input.IsNull(r)) continue;
    const char* wrong = nullptr;
    if (data.IsValid(r) == uris.IsValid(r)) {
      wrong = "must set exactly one of `data` and `uri`";
    } else if (positions.IsValid(r) != sizes.IsValid(r)) {
      wrong = "must set both `position` and `size`, or neither";
    } else if (positions.IsValid(r) && data.IsValid(r)) {
      wrong = "cannot have both inline data and an external range";
    } else if (sizes.IsValid(r) && sizes.Value(r) == 0) {
      wrong = "external range `size` must be greater than zero";
    } else if (positions.IsValid(r) && positions.Value(r) > UINT64_MAX - sizes.Value(r)) {
      wrong = "external range overflows 64 bits";
    }
    if (wrong != nullptr) {
      return Status::Invalid("cannot write to ", uri, ": blob v2 field '", field, "' row ", r, " ", wrong);
    }
  }
  return Status::OK();
}

}  // namespace

std::shared_ptr<arrow::DataType> BlobV2LogicalType() {
  return arrow::struct_({arrow::field("data", arrow::large_binary()), arrow::field("uri", arrow::utf8())});
}

std::shared_ptr<arrow::DataType> BlobV2WriteType() {
  return arrow::struct_({arrow::field("data", arrow::large_binary()), arrow::field("uri", arrow::utf8()),
                         arrow::field("position", arrow::uint64()), arrow::field("size", arrow::uint64())});
}

std::shared_ptr<arrow::Schema> BlobV2InputSchema(const arrow::Schema& schema) {
  std::vector<std::shared_ptr<arrow::Field>> fields;
  for (const auto& f : schema.fields()) {
    if (!IsBinaryBlob(*f)) {
      fields.push_back(f);
      continue;
    }
    auto meta = arrow::key_value_metadata({"ARROW:extension:name"}, {std::string(file::kBlobV2ExtensionName)});
    fields.push_back(arrow::field(f->name(), BlobV2LogicalType(), f->nullable(), meta));
  }
  return arrow::schema(fields, schema.metadata());
}

Result<std::shared_ptr<arrow::RecordBatch>> ToBlobV2Input(const std::shared_ptr<arrow::RecordBatch>& batch,
                                                          const Schema& schema, const std::string& uri) {
  auto columns = batch->columns();
  auto fields = batch->schema()->fields();
  bool changed = false;
  for (const auto& field : schema.fields) {
    if (!file::IsBlobV2Field(field)) continue;
    const int i = batch->schema()->GetFieldIndex(field.name);
    if (i < 0) continue;  // the caller reports the missing column
    auto column = columns[i];
    const auto id = column->type_id();
    if (id == arrow::Type::STRUCT) {
      // pylance's own blob array: data or a uri, position/size slicing the uri.
      const auto& input = static_cast<const arrow::StructArray&>(*column);
      auto data = input.GetFieldByName("data");
      auto uris = input.GetFieldByName("uri");
      auto positions = input.GetFieldByName("position");
      auto sizes = input.GetFieldByName("size");
      if (!data || !uris || data->type_id() != arrow::Type::LARGE_BINARY || uris->type_id() != arrow::Type::STRING ||
          (positions && positions->type_id() != arrow::Type::UINT64) ||
          (sizes && sizes->type_id() != arrow::Type::UINT64) || (positions == nullptr) != (sizes == nullptr)) {
        return Status::TypeError("cannot write to ", uri, ": blob column '", field.name, "' is ",
                                 column->type()->ToString(), " in the input, not binary or a blob v2 struct");
      }
      LANCE_ASSIGN_OR_RAISE(auto flat, input.Flatten());
      data = flat[input.struct_type()->GetFieldIndex("data")];
      uris = flat[input.struct_type()->GetFieldIndex("uri")];
      if (positions) {
        positions = flat[input.struct_type()->GetFieldIndex("position")];
        sizes = flat[input.struct_type()->GetFieldIndex("size")];
      } else {
        LANCE_ASSIGN_OR_RAISE(positions, arrow::MakeArrayOfNull(arrow::uint64(), input.length()));
        LANCE_ASSIGN_OR_RAISE(sizes, arrow::MakeArrayOfNull(arrow::uint64(), input.length()));
      }
      LANCE_RETURN_NOT_OK(CheckBlobRows(input, *data, *uris, static_cast<const arrow::UInt64Array&>(*positions),
                                        static_cast<const arrow::UInt64Array&>(*sizes), field.name, uri));
      std::shared_ptr<arrow::Buffer> validity;
      if (input.null_count() > 0) {
        LANCE_ASSIGN_OR_RAISE(validity, arrow::AllocateEmptyBitmap(input.length()));
        for (int64_t r = 0; r < input.length(); ++r) {
          if (input.IsValid(r)) arrow::bit_util::SetBit(validity->mutable_data(), r);
        }
      }
      columns[i] = std::make_shared<arrow::StructArray>(BlobV2WriteType(), input.length(),
                                                        arrow::ArrayVector{data, uris, positions, sizes}, validity,
                                                        input.null_count());
      fields[i] = arrow::field(field.name, BlobV2WriteType(), fields[i]->nullable(), fields[i]->metadata());
      changed = true;
      continue;
    }
    if (id != arrow::Type::LARGE_BINARY && id != arrow::Type::BINARY) {
      return Status::TypeError("cannot write to ", uri, ": blob column '", field.name, "' is ",
                               column->type()->ToString(), " in the input, not binary");
    }
    if (id == arrow::Type::BINARY) {
      LANCE_ASSIGN_OR_RAISE(auto cast, arrow::compute::Cast(*column, arrow::large_binary()));
      column = cast;
    }
    LANCE_ASSIGN_OR_RAISE(auto no_uris, arrow::MakeArrayOfNull(arrow::utf8(), column->length()));
    LANCE_ASSIGN_OR_RAISE(auto no_ranges, arrow::MakeArrayOfNull(arrow::uint64(), column->length()));
    // The struct takes the rows' nulls, in a bitmap of its own from bit 0.
    std::shared_ptr<arrow::Buffer> validity;
    if (column->null_count() > 0) {
      LANCE_ASSIGN_OR_RAISE(validity, arrow::AllocateEmptyBitmap(column->length()));
      for (int64_t r = 0; r < column->length(); ++r) {
        if (column->IsValid(r)) arrow::bit_util::SetBit(validity->mutable_data(), r);
      }
    }
    auto logical = std::make_shared<arrow::StructArray>(BlobV2WriteType(), column->length(),
                                                        arrow::ArrayVector{column, no_uris, no_ranges, no_ranges},
                                                        validity, column->null_count());
    columns[i] = logical;
    fields[i] = arrow::field(field.name, BlobV2WriteType(), fields[i]->nullable(), fields[i]->metadata());
    changed = true;
  }
  if (!changed) return batch;
  return arrow::RecordBatch::Make(arrow::schema(fields, batch->schema()->metadata()), batch->num_rows(), columns);
}

Status CheckBlobV2Writable(const Schema& schema, const std::string& uri) {
  for (const auto& f : schema.fields) {
    if (file::IsBlobV2Field(f)) continue;
    const Field* blob = f.metadata.count(kBlobKey) > 0 ? &f : FirstNestedBlob(f.children);
    if (blob != nullptr) {
      return Status::NotImplemented("cannot write blob column '", blob->name, "' to ", uri,
                                    ": lance-cpp writes blob v2 (data storage version 2.2) only for top-level "
                                    "binary blob columns");
    }
  }
  return Status::OK();
}

}  // namespace lance::ops
