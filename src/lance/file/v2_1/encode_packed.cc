#include "lance/file/v2_1/encode_packed.h"

#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include <arrow/array/util.h>
#include <arrow/type.h>

#include "lance/file/v2_1/encode_strings.h"

namespace lance::file::v2_1::encode {

namespace {

bool IsVariableWidth(arrow::Type::type id) {
  return id == arrow::Type::STRING || id == arrow::Type::BINARY || id == arrow::Type::LARGE_STRING ||
         id == arrow::Type::LARGE_BINARY;
}

// One child's bytes ready to be interleaved into the rows.
struct PackedChild {
  PageValues values;
  bool variable = false;
  uint64_t width = 0;  // bytes per value (fixed) or per length (variable)
};

// A variable child as the reference's per-value compressor leaves it (the
// child's own metadata steers it, not the struct's).
Result<std::pair<PageValues, pb21::CompressiveEncoding>> CompressChild(PageValues values,
                                                                       const CompressionParams& params) {
  if (UsePerValueZstd(values, params)) {
    LANCE_ASSIGN_OR_RAISE(PageValues compressed, CompressEachValue(values));
    pb21::CompressiveEncoding general;
    general.mutable_general()->mutable_compression()->set_scheme(pb21::COMPRESSION_ALGORITHM_ZSTD);
    general.mutable_general()->mutable_compression()->set_level(kPerValueZstdLevel);
    *general.mutable_general()->mutable_values() = VariableEncoding(compressed.bits_per_offset);
    return std::make_pair(std::move(compressed), std::move(general));
  }
  if (UseFsst(values, params)) {
    LANCE_ASSIGN_OR_RAISE(auto fsst, FsstValues(values));
    auto encoding = FsstEncoding(std::move(fsst.first), VariableEncoding(fsst.second.bits_per_offset));
    return std::make_pair(std::move(fsst.second), std::move(encoding));
  }
  auto encoding = VariableEncoding(values.bits_per_offset);
  return std::make_pair(std::move(values), std::move(encoding));
}

}  // namespace

bool HasVariableWidthChild(const arrow::DataType& struct_type) {
  for (const auto& f : struct_type.fields()) {
    if (IsVariableWidth(f->type()->id())) return true;
  }
  return false;
}

Result<PageValues> PackVariableRows(const arrow::ArrayData& data, const std::vector<CompressionParams>& child_params) {
  const uint64_t n = static_cast<uint64_t>(data.length);
  const auto structs = arrow::MakeArray(std::make_shared<arrow::ArrayData>(data));
  std::vector<PackedChild> children;
  pb21::CompressiveEncoding encoding;
  auto* packed = encoding.mutable_variable_packed_struct();
  for (int c = 0; c < data.type->num_fields(); ++c) {
    auto child_data = data.child_data[c]->Slice(data.offset, data.length);
    if (child_data->GetNullCount() > 0) {
      const auto child = arrow::MakeArray(child_data);
      for (int64_t i = 0; i < data.length; ++i) {
        if (child->IsNull(i) && structs->IsValid(i)) {
          // The reference refuses these too (no per-value encoding of nullable blocks).
          return Status::NotImplemented("packed struct child '", data.type->field(c)->name(), "' has null values ",
                                        "(a packed struct with variable-width children stores no child validity)");
        }
      }
    }
    // Under null rows the child's bytes are stored as they are.
    child_data->buffers[0] = nullptr;
    child_data->null_count = 0;
    LANCE_ASSIGN_OR_RAISE(PageValues values, ToPageValues(arrow::MakeArray(child_data)));
    auto* field = packed->add_fields();
    PackedChild child;
    if (values.kind == PageValues::Kind::kVariable) {
      const CompressionParams params =
          static_cast<size_t>(c) < child_params.size() ? child_params[c] : CompressionParams{};
      LANCE_ASSIGN_OR_RAISE(auto compressed, CompressChild(std::move(values), params));
      child.values = std::move(compressed.first);
      child.variable = true;
      child.width = child.values.bits_per_offset / 8;
      *field->mutable_value() = std::move(compressed.second);
      field->set_bits_per_length(child.values.bits_per_offset);
    } else {
      if (!values.fsl.empty() || values.bits_per_value % 8 != 0) {
        return Status::NotImplemented("packed struct child '", data.type->field(c)->name(), "' of type ",
                                      data.type->field(c)->type()->ToString());
      }
      child.values = std::move(values);
      child.width = child.values.bits_per_value / 8;
      *field->mutable_value() = FlatEncoding(child.values.bits_per_value);
      field->set_bits_per_value(child.values.bits_per_value);
    }
    children.push_back(std::move(child));
  }

  std::string rows;
  std::vector<uint64_t> offsets;
  offsets.reserve(n + 1);
  offsets.push_back(0);
  for (uint64_t r = 0; r < n; ++r) {
    for (const auto& child : children) {
      const char* bytes = child.values.data && child.values.data->size() > 0
                              ? reinterpret_cast<const char*>(child.values.data->data())
                              : nullptr;
      if (!child.variable) {
        if (bytes) rows.append(bytes + r * child.width, child.width);
        continue;
      }
      const uint64_t start = child.values.offsets[r], len = child.values.offsets[r + 1] - start;
      rows.append(reinterpret_cast<const char*>(&len), child.width);  // little-endian prefix
      if (len > 0) rows.append(bytes + start, len);
    }
    offsets.push_back(rows.size());
  }
  PageValues out;
  out.kind = PageValues::Kind::kVariable;
  out.num_values = n;
  out.bits_per_offset = rows.size() <= 0xFFFFFFFFull ? 32 : 64;
  out.offsets = std::move(offsets);
  out.data = arrow::Buffer::FromString(std::move(rows));
  out.row_encoding = std::move(encoding);
  return out;
}

}  // namespace lance::file::v2_1::encode
