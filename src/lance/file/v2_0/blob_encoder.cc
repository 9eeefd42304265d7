// A 2.0 blob field: each non-empty value is written out of line (before the
// pages of its batch) and the column stores a packed struct of u64
// {position, size} per row: (0, 0) for an empty value, (1, 0) for a null.
// The column encoding says so: ColumnEncoding{blob{inner: values}}.
#include <arrow/array/array_nested.h>
#include <arrow/array/array_primitive.h>

#include "lance/file/v2_0/array_encoder.h"
#include "lance/file/v2_0/field_encoders.h"

namespace lance::file::v2_0 {
namespace {

namespace enc = pb::encodings20;

Field DescriptionField() {
  Field f;
  f.name = "description";
  f.logical_type = "struct";
  f.metadata = {{kBlobMetaKey, "true"}, {kPackedStructMetaKey, "true"}};
  for (const char* name : {"position", "size"}) {
    Field c;
    c.name = name;
    c.logical_type = "uint64";
    f.children.push_back(c);
  }
  return f;
}

class BlobEncoder : public LegacyFieldEncoder {
 public:
  BlobEncoder(std::string name, uint32_t column, const EncoderOptions& options, std::shared_ptr<EncodeContext> context)
      : name_(std::move(name)), descriptions_(MakePrimitiveEncoder(DescriptionField(), column, options)),
        context_(std::move(context)) {}

  uint32_t num_columns() const override { return 1; }

  Result<std::vector<EncodedPage>> Append(const std::shared_ptr<arrow::Array>& array,
                                          const std::shared_ptr<arrow::Array>&) override {
    if (array->type_id() != arrow::Type::LARGE_BINARY) {
      return Status::Invalid("blob field '", name_, "' must be large_binary, not ", array->type()->ToString());
    }
    if (context_->out_of_line == nullptr) {
      return Status::Invalid("blob field '", name_, "': no place for out-of-line values");
    }
    const auto& values = static_cast<const arrow::LargeBinaryArray&>(*array);
    const int64_t n = values.length();
    std::vector<uint64_t> positions(static_cast<size_t>(n)), sizes(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      if (values.IsNull(i)) {
        positions[i] = 1;
        continue;
      }
      const int64_t start = values.value_offset(i);
      const int64_t size = values.value_length(i);
      if (size == 0) continue;
      positions[i] = context_->out_of_line->Add(arrow::SliceBuffer(values.value_data(), start, size));
      sizes[i] = static_cast<uint64_t>(size);
    }
    auto pos = std::make_shared<arrow::UInt64Array>(n, arrow::Buffer::FromVector(std::move(positions)));
    auto len = std::make_shared<arrow::UInt64Array>(n, arrow::Buffer::FromVector(std::move(sizes)));
    LANCE_ASSIGN_OR_RAISE(auto desc, arrow::StructArray::Make({pos, len}, std::vector<std::string>{"position", "size"}));
    return descriptions_->Append(desc, nullptr);
  }

  Result<std::vector<EncodedPage>> FlushData() override { return descriptions_->FlushData(); }
  void AddFinalPages(std::vector<EncodedPage>*) override {}

  void AddColumns(std::vector<EncodedColumn>* columns) override {
    enc::ColumnEncoding encoding;
    encoding.mutable_blob()->mutable_inner()->mutable_values();
    EncodedColumn column;
    column.encoding_type_url = "/lance.encodings.ColumnEncoding";
    column.encoding = encoding.SerializeAsString();
    columns->push_back(std::move(column));
  }

 private:
  std::string name_;
  std::unique_ptr<LegacyFieldEncoder> descriptions_;
  std::shared_ptr<EncodeContext> context_;
};

}  // namespace

std::unique_ptr<LegacyFieldEncoder> MakeBlobEncoder(const Field& field, uint32_t column, const EncoderOptions& options,
                                                    std::shared_ptr<EncodeContext> context) {
  return std::make_unique<BlobEncoder>(field.name, column, options, std::move(context));
}

}  // namespace lance::file::v2_0
