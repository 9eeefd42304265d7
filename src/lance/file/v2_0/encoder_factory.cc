// The 2.0 encoders behind the FieldEncoder seam: which field encoder each
// field type gets (the reference's CoreFieldEncodingStrategy) and the
// top-level wrapper the container writer drives.
#include <arrow/type.h>

#include "lance/file/field_encoder.h"
#include "lance/file/v2_0/field_encoders.h"

namespace lance::file {
namespace v2_0 {
namespace {

bool IsPrimitive(const arrow::DataType& type) {
  switch (type.id()) {
    case arrow::Type::BOOL:
    case arrow::Type::DATE32:
    case arrow::Type::DATE64:
    case arrow::Type::DECIMAL128:
    case arrow::Type::DECIMAL256:
    case arrow::Type::DURATION:
    case arrow::Type::HALF_FLOAT:
    case arrow::Type::FLOAT:
    case arrow::Type::DOUBLE:
    case arrow::Type::INT8:
    case arrow::Type::INT16:
    case arrow::Type::INT32:
    case arrow::Type::INT64:
    case arrow::Type::UINT8:
    case arrow::Type::UINT16:
    case arrow::Type::UINT32:
    case arrow::Type::UINT64:
    case arrow::Type::NA:
    case arrow::Type::TIME32:
    case arrow::Type::TIME64:
    case arrow::Type::TIMESTAMP:
    case arrow::Type::FIXED_SIZE_BINARY:
    case arrow::Type::FIXED_SIZE_LIST:
    case arrow::Type::BINARY:
    case arrow::Type::LARGE_BINARY:
    case arrow::Type::STRING:
    case arrow::Type::LARGE_STRING:
      return true;
    default:
      return false;
  }
}

bool IsPackedStruct(const Field& field) {
  auto legacy = field.metadata.find(kPackedStructLegacyMetaKey);
  if (legacy != field.metadata.end()) return legacy->second == "true";
  return field.metadata.count(kPackedStructMetaKey) > 0;
}

// The seam's view of a 2.0 field: its struct header pages go out with the
// last data pages (they have no buffers, so only their column sees them).
class TopLevelEncoder : public FieldEncoder {
 public:
  TopLevelEncoder(std::unique_ptr<LegacyFieldEncoder> root, std::shared_ptr<EncodeContext> context)
      : root_(std::move(root)), context_(std::move(context)) {}
  uint32_t num_columns() const override { return root_->num_columns(); }
  Result<std::vector<EncodedPage>> Append(const std::shared_ptr<arrow::Array>& array) override {
    context_->out_of_line = out_of_line_;
    return root_->Append(array, nullptr);
  }
  Result<std::vector<EncodedPage>> AppendCopied(const std::shared_ptr<arrow::Array>& copy,
                                                const std::shared_ptr<arrow::Array>& original) override {
    context_->out_of_line = out_of_line_;
    return root_->Append(copy, original);
  }
  Result<std::vector<EncodedPage>> Flush() override {
    context_->out_of_line = out_of_line_;
    LANCE_ASSIGN_OR_RAISE(auto pages, root_->FlushData());
    root_->AddFinalPages(&pages);
    return pages;
  }
  Result<std::vector<EncodedColumn>> FinishColumns() override {
    std::vector<EncodedColumn> columns;
    root_->AddColumns(&columns);
    return columns;
  }

 private:
  std::unique_ptr<LegacyFieldEncoder> root_;
  std::shared_ptr<EncodeContext> context_;
};

}  // namespace

Result<std::unique_ptr<LegacyFieldEncoder>> MakeLegacyFieldEncoder(const Field& field, uint32_t* next_column,
                                                                   const EncoderOptions& options,
                                                                   const std::shared_ptr<EncodeContext>& context) {
  LANCE_ASSIGN_OR_RAISE(auto type, ArrowTypeFromField(field));
  if (IsPrimitive(*type)) {
    if (field.metadata.count(kBlobMetaKey) > 0) return MakeBlobEncoder(field, (*next_column)++, options, context);
    return MakePrimitiveEncoder(field, (*next_column)++, options);
  }
  switch (type->id()) {
    case arrow::Type::LIST:
    case arrow::Type::LARGE_LIST: {
      if (field.children.size() != 1) {
        return Status::Invalid("list field '", field.name, "' has ", field.children.size(), " children, expected 1");
      }
      const uint32_t column = (*next_column)++;
      LANCE_ASSIGN_OR_RAISE(auto items, MakeLegacyFieldEncoder(field.children[0], next_column, options, context));
      return MakeListEncoder(field, column, std::move(items), options);
    }
    case arrow::Type::STRUCT: {
      if (IsPackedStruct(field)) return MakePrimitiveEncoder(field, (*next_column)++, options);
      const uint32_t column = (*next_column)++;
      std::vector<std::unique_ptr<LegacyFieldEncoder>> children;
      for (const auto& child : field.children) {
        LANCE_ASSIGN_OR_RAISE(auto c, MakeLegacyFieldEncoder(child, next_column, options, context));
        children.push_back(std::move(c));
      }
      return MakeStructEncoder(field, column, std::move(children));
    }
    case arrow::Type::DICTIONARY: {
      const auto& value_type = *static_cast<const arrow::DictionaryType&>(*type).value_type();
      if (!IsPrimitive(value_type)) {
        return Status::NotImplemented("dictionary field '", field.name, "' whose values are ", value_type.ToString(),
                                      " in file version 2.0");
      }
      return MakePrimitiveEncoder(field, (*next_column)++, options);
    }
    default:
      return Status::NotImplemented("file version 2.0 cannot store field '", field.name, "' of type ",
                                    type->ToString());
  }
}

}  // namespace v2_0

Result<std::unique_ptr<FieldEncoder>> MakeFieldEncoderV2_0(const Field& field, uint32_t first_column,
                                                           const EncoderOptions& options) {
  uint32_t next = first_column;
  auto context = std::make_shared<v2_0::EncodeContext>();
  LANCE_ASSIGN_OR_RAISE(auto root, v2_0::MakeLegacyFieldEncoder(field, &next, options, context));
  return std::unique_ptr<FieldEncoder>(std::make_unique<v2_0::TopLevelEncoder>(std::move(root), std::move(context)));
}

}  // namespace lance::file
