#include "lance/file/v2_1/encode_blob_v2.h"

#include <string>
#include <utility>

#include <arrow/array.h>
#include <arrow/builder.h>
#include <arrow/type.h>

#include "lance/file/blob_v2.h"

namespace lance::file::v2_1 {
namespace {

std::shared_ptr<arrow::DataType> DescriptorType() {
  return arrow::struct_({arrow::field("kind", arrow::uint8(), false),
                         arrow::field("position", arrow::uint64(), false),
                         arrow::field("size", arrow::uint64(), false),
                         arrow::field("blob_id", arrow::uint32(), false),
                         arrow::field("blob_uri", arrow::utf8(), false)});
}

template <typename ArrayType>
std::shared_ptr<ArrayType> ChildOf(const arrow::StructArray& input, const arrow::StructType& type, const char* name,
                                   arrow::Type::type id) {
  const int index = type.GetFieldIndex(name);
  if (index < 0 || type.field(index)->type()->id() != id) return nullptr;
  return std::static_pointer_cast<ArrayType>(input.field(index));
}

class BlobV2Encoder : public FieldEncoder {
 public:
  BlobV2Encoder(std::string name, uint64_t inline_threshold, std::unique_ptr<FieldEncoder> descriptors)
      : name_(std::move(name)), inline_threshold_(inline_threshold), descriptors_(std::move(descriptors)) {}

  uint32_t num_columns() const override { return descriptors_->num_columns(); }

  Result<std::vector<EncodedPage>> Append(const std::shared_ptr<arrow::Array>& array) override {
    // pylance's blob_field() adds position/size children (for external
    // slices); only data and uri matter for inline values.
    const auto& type = *array->type();
    const auto* struct_type = type.id() == arrow::Type::STRUCT ? static_cast<const arrow::StructType*>(&type) : nullptr;
    const int data_index = struct_type ? struct_type->GetFieldIndex("data") : -1;
    const int uri_index = struct_type ? struct_type->GetFieldIndex("uri") : -1;
    if (data_index < 0 || uri_index < 0 || type.field(data_index)->type()->id() != arrow::Type::LARGE_BINARY ||
        type.field(uri_index)->type()->id() != arrow::Type::STRING) {
      return Status::TypeError("blob v2 field '", name_, "' takes struct<data: large_binary, uri: string>, got ",
                               type.ToString());
    }
    const auto& input = static_cast<const arrow::StructArray&>(*array);
    const auto& data = static_cast<const arrow::LargeBinaryArray&>(*input.field(data_index));
    const auto& uri = static_cast<const arrow::StringArray&>(*input.field(uri_index));
    // Rows the dataset writer already put into `.blob` files carry their
    // kind, blob id, size and position in children of those names.
    auto spilled_kind = ChildOf<arrow::UInt8Array>(input, *struct_type, "kind", arrow::Type::UINT8);
    auto spilled_id = ChildOf<arrow::UInt32Array>(input, *struct_type, "blob_id", arrow::Type::UINT32);
    auto spilled_size = ChildOf<arrow::UInt64Array>(input, *struct_type, "blob_size", arrow::Type::UINT64);
    auto spilled_position = ChildOf<arrow::UInt64Array>(input, *struct_type, "position", arrow::Type::UINT64);
    const bool has_spilled = spilled_kind && spilled_id && spilled_size && spilled_position;
    // External rows also carry the URI as stored (absolute, or relative to a base path).
    auto spilled_uri = ChildOf<arrow::StringArray>(input, *struct_type, "blob_uri", arrow::Type::STRING);
    if (out_of_line_ == nullptr) {
      return Status::Invalid("blob v2 field '", name_, "': the writer gave no place for out-of-line values");
    }
    const int64_t n = input.length();
    arrow::UInt8Builder kinds;
    arrow::UInt64Builder positions, sizes;
    arrow::UInt32Builder blob_ids;
    arrow::StringBuilder blob_uris;
    LANCE_RETURN_NOT_OK(kinds.Reserve(n));
    LANCE_RETURN_NOT_OK(positions.Reserve(n));
    LANCE_RETURN_NOT_OK(sizes.Reserve(n));
    LANCE_RETURN_NOT_OK(blob_ids.Reserve(n));
    LANCE_RETURN_NOT_OK(blob_uris.Reserve(n));
    for (int64_t i = 0; i < n; ++i) {
      uint64_t position = 0, size = 0;
      if (has_spilled && input.IsValid(i) && spilled_kind->IsValid(i)) {
        kinds.UnsafeAppend(spilled_kind->Value(i));
        positions.UnsafeAppend(spilled_position->IsValid(i) ? spilled_position->Value(i) : 0);
        sizes.UnsafeAppend(spilled_size->Value(i));
        blob_ids.UnsafeAppend(spilled_id->Value(i));
        LANCE_RETURN_NOT_OK(blob_uris.Append(spilled_uri && spilled_uri->IsValid(i) ? spilled_uri->GetView(i)
                                                                                      : std::string_view()));
        continue;
      }
      if (input.IsValid(i)) {
        if (uri.IsValid(i)) {
          return Status::Invalid("blob v2 field '", name_, "', row ", i,
                                 ": an external URI must be resolved by the dataset writer first");
        }
        if (data.IsValid(i)) {
          size = static_cast<uint64_t>(data.value_length(i));
          if (size > inline_threshold_) {
            return Status::NotImplemented("blob v2 field '", name_, "', row ", i, ": a value of ", size,
                                          " bytes is over the inline threshold (", inline_threshold_,
                                          "); only a dataset write puts larger values into .blob files");
          }
          // An empty value points at where the next one would go, as pylance's.
          position = size == 0 ? out_of_line_->next_position()
                               : out_of_line_->Add(arrow::SliceBuffer(data.value_data(), data.value_offset(i),
                                                                      static_cast<int64_t>(size)));
        }
      }
      kinds.UnsafeAppend(static_cast<uint8_t>(BlobV2Kind::kInline));
      positions.UnsafeAppend(position);
      sizes.UnsafeAppend(size);
      blob_ids.UnsafeAppend(0);
      LANCE_RETURN_NOT_OK(blob_uris.Append(""));
    }
    arrow::ArrayVector children(5);
    LANCE_RETURN_NOT_OK(kinds.Finish(&children[0]));
    LANCE_RETURN_NOT_OK(positions.Finish(&children[1]));
    LANCE_RETURN_NOT_OK(sizes.Finish(&children[2]));
    LANCE_RETURN_NOT_OK(blob_ids.Finish(&children[3]));
    LANCE_RETURN_NOT_OK(blob_uris.Finish(&children[4]));
    // A null row stays a null descriptor.
    std::shared_ptr<arrow::Buffer> validity;
    if (input.null_count() > 0) {
      LANCE_ASSIGN_OR_RAISE(validity, arrow::AllocateEmptyBitmap(n));
      for (int64_t i = 0; i < n; ++i) {
        if (input.IsValid(i)) arrow::bit_util::SetBit(validity->mutable_data(), i);
      }
    }
    auto descriptors = std::make_shared<arrow::StructArray>(DescriptorType(), n, children, validity,
                                                            input.null_count());
    return descriptors_->Append(descriptors);
  }

  Result<std::vector<EncodedPage>> Flush() override { return descriptors_->Flush(); }
  Result<std::vector<EncodedColumn>> FinishColumns() override { return descriptors_->FinishColumns(); }

 private:
  std::string name_;
  uint64_t inline_threshold_;
  std::unique_ptr<FieldEncoder> descriptors_;
};

}  // namespace

Result<std::unique_ptr<FieldEncoder>> MakeBlobV2Encoder(const Field& logical, uint32_t first_column,
                                                        const EncoderOptions& options) {
  if (options.version != FileVersion::kV2_2) {
    return Status::NotImplemented("blob v2 field '", logical.name, "' needs file version 2.2");
  }
  // The descriptors are a plain packed struct (the blob key only marks the
  // field in the file's schema).
  Field descriptor = BlobV2DescriptorField(logical);
  descriptor.metadata.erase("lance-encoding:blob");
  LANCE_ASSIGN_OR_RAISE(auto inner, MakeFieldEncoderV2_1(descriptor, first_column, options));
  return std::unique_ptr<FieldEncoder>(new BlobV2Encoder(logical.name, BlobV2ThresholdsOf(logical).inline_max, std::move(inner)));
}

}  // namespace lance::file::v2_1
