#include "lance/file/v2_1/encode_values.h"

#include <algorithm>
#include <cctype>
#include <cstring>

#include <arrow/type.h>
#include <arrow/util/bit_util.h>
#include <arrow/util/bitmap_ops.h>

#include "lance/file/v2_1/data_block.h"

namespace lance::file::v2_1::encode {

Result<std::shared_ptr<arrow::Buffer>> CopyBits(const std::shared_ptr<arrow::Buffer>& bits, int64_t offset,
                                                int64_t length) {
  if (!bits) {
    // All set.
    LANCE_ASSIGN_OR_RAISE(auto buffer, arrow::AllocateBuffer(arrow::bit_util::BytesForBits(length)));
    if (buffer->size() > 0) std::memset(buffer->mutable_data(), 0xFF, buffer->size());
    return std::shared_ptr<arrow::Buffer>(std::move(buffer));
  }
  return arrow::internal::CopyBitmap(arrow::default_memory_pool(), bits->data(), offset, length);
}

namespace {

Status FlatValues(const arrow::ArrayData& data, PageValues* out) {
  const auto& type = *data.type;
  if (type.id() == arrow::Type::BOOL) {
    out->bits_per_value = 1;
    LANCE_ASSIGN_OR_RAISE(out->data, CopyBits(data.buffers[1], data.offset, data.length));
    return Status::OK();
  }
  const int64_t bits = FixedBitWidth(type);
  if (bits <= 0 || bits % 8 != 0) return Status::NotImplemented("encoding values of type ", type.ToString());
  const int64_t width = bits / 8;
  out->bits_per_value = static_cast<uint64_t>(bits);
  if (data.length == 0) {
    out->data = std::make_shared<arrow::Buffer>(nullptr, 0);
  } else {
    out->data = arrow::SliceBuffer(data.buffers[1], data.offset * width, data.length * width);
  }
  return Status::OK();
}

}  // namespace

Result<PageValues> ToPageValues(const std::shared_ptr<arrow::Array>& array) {
  PageValues out;
  out.num_values = static_cast<uint64_t>(array->length());
  std::shared_ptr<arrow::ArrayData> data = array->data();
  switch (data->type->id()) {
    case arrow::Type::STRING:
    case arrow::Type::BINARY:
    case arrow::Type::LARGE_STRING:
    case arrow::Type::LARGE_BINARY: {
      const bool large = data->type->id() == arrow::Type::LARGE_STRING || data->type->id() == arrow::Type::LARGE_BINARY;
      out.kind = PageValues::Kind::kVariable;
      out.bits_per_offset = large ? 64 : 32;
      out.is_string = data->type->id() == arrow::Type::STRING || data->type->id() == arrow::Type::LARGE_STRING;
      out.offsets.resize(static_cast<size_t>(data->length) + 1, 0);
      if (data->length == 0) {
        out.data = std::make_shared<arrow::Buffer>(nullptr, 0);
        return out;
      }
      auto load = [&](int64_t i) -> uint64_t {
        return large ? static_cast<uint64_t>(data->GetValues<int64_t>(1)[i])
                     : static_cast<uint64_t>(data->GetValues<int32_t>(1)[i]);
      };
      const uint64_t base = load(0);
      for (int64_t i = 0; i <= data->length; ++i) out.offsets[i] = load(i) - base;
      const auto& bytes = data->buffers[2];
      out.data = bytes ? arrow::SliceBuffer(bytes, static_cast<int64_t>(base), static_cast<int64_t>(out.offsets.back()))
                       : std::make_shared<arrow::Buffer>(nullptr, 0);
      return out;
    }
    default:
      break;
  }
  if (data->type->id() == arrow::Type::STRUCT) {
    // Packed struct: rows of the children's bytes, one after another.
    uint64_t row_bytes = 0;
    std::vector<std::shared_ptr<arrow::ArrayData>> children;
    for (int c = 0; c < data->type->num_fields(); ++c) {
      auto child = data->child_data[c]->Slice(data->offset, data->length);
      const int64_t bits = FixedBitWidth(*child->type);
      if (bits <= 0 || bits % 8 != 0) {
        return Status::NotImplemented("packed struct child of type ", child->type->ToString());
      }
      out.packed_bits.push_back(static_cast<uint64_t>(bits));
      row_bytes += static_cast<uint64_t>(bits) / 8;
      children.push_back(std::move(child));
    }
    std::string rows(out.num_values * row_bytes, '\0');
    uint64_t at = 0;
    for (size_t c = 0; c < children.size(); ++c) {
      const uint64_t width = out.packed_bits[c] / 8;
      const uint8_t* src = children[c]->buffers[1] ? children[c]->buffers[1]->data() + children[c]->offset * width
                                                   : nullptr;
      for (uint64_t r = 0; src != nullptr && r < out.num_values; ++r) {
        std::memcpy(rows.data() + r * row_bytes + at, src + r * width, width);
      }
      at += width;
    }
    out.bits_per_value = row_bytes * 8;
    out.data = arrow::Buffer::FromString(std::move(rows));
    return out;
  }
  // Walk fixed-size lists down to their flat values.
  int64_t offset = data->offset, length = data->length;
  while (data->type->id() == arrow::Type::FIXED_SIZE_LIST) {
    const auto& fsl = static_cast<const arrow::FixedSizeListType&>(*data->type);
    const int64_t dim = fsl.list_size();
    const auto& child = data->child_data[0];
    offset = child->offset + offset * dim;
    length = length * dim;
    FslLayerValues layer;
    layer.dimension = static_cast<uint64_t>(dim);
    // The child's validity over the items of these rows.
    auto sliced = child->Slice(offset - child->offset, length);
    if (sliced->GetNullCount() > 0) {
      LANCE_ASSIGN_OR_RAISE(layer.validity, CopyBits(child->buffers[0], offset, length));
    }
    out.fsl.push_back(std::move(layer));
    data = child;
  }
  auto flat = data->Slice(offset - data->offset, length);
  LANCE_RETURN_NOT_OK(FlatValues(*flat, &out));
  return out;
}

// The widest value in bytes (fsl: the whole list).
uint64_t MaxValueBytes(const PageValues& values) {
  if (values.kind == PageValues::Kind::kVariable) {
    uint64_t max = 0;
    for (size_t i = 1; i < values.offsets.size(); ++i) max = std::max(max, values.offsets[i] - values.offsets[i - 1]);
    return max;
  }
  uint64_t bits = values.bits_per_value;
  for (const auto& l : values.fsl) bits *= l.dimension;
  return bits / 8;
}

pb21::CompressiveEncoding FlatEncoding(uint64_t bits) {
  pb21::CompressiveEncoding e;
  e.mutable_flat()->set_bits_per_value(bits);
  return e;
}

pb21::CompressiveEncoding FixedEncoding(const PageValues& values) {
  pb21::CompressiveEncoding e = FlatEncoding(values.bits_per_value);
  for (size_t i = values.fsl.size(); i-- > 0;) {
    pb21::CompressiveEncoding outer;
    auto* fsl = outer.mutable_fixed_size_list();
    fsl->set_items_per_value(values.fsl[i].dimension);
    fsl->set_has_validity(values.fsl[i].validity != nullptr);
    *fsl->mutable_values() = std::move(e);
    e = std::move(outer);
  }
  return e;
}

pb21::CompressiveEncoding VariableEncoding(uint32_t bits_per_offset) {
  pb21::CompressiveEncoding e;
  *e.mutable_variable()->mutable_offsets() = FlatEncoding(bits_per_offset);
  return e;
}

std::string_view Bytes(const std::shared_ptr<arrow::Buffer>& b) {
  if (!b || b->size() == 0) return {};
  return std::string_view(reinterpret_cast<const char*>(b->data()), static_cast<size_t>(b->size()));
}

pb21::CompressiveEncoding FsstEncoding(std::string symbol_table, pb21::CompressiveEncoding inner) {
  pb21::CompressiveEncoding e;
  e.mutable_fsst()->set_symbol_table(std::move(symbol_table));
  *e.mutable_fsst()->mutable_values() = std::move(inner);
  return e;
}

Result<CompressionParams> ParseCompressionParams(const std::map<std::string, std::string>& metadata,
                                                 const std::string& leaf_name) {
  CompressionParams params;
  if (auto it = metadata.find("lance-encoding:compression"); it != metadata.end()) {
    params.compression = Lower(it->second);
  }
  if (!params.compression.empty() && params.compression != "none" && params.compression != "fsst" &&
      !params.General()) {
    return Status::Invalid("leaf '", leaf_name, "': unknown lance-encoding:compression '", params.compression,
                           "' (expected none, fsst, lz4 or zstd)");
  }
  // Like the reference, numbers that do not parse leave the defaults.
  if (auto it = metadata.find("lance-encoding:rle-threshold"); it != metadata.end()) {
    try {
      params.rle_threshold = std::stod(it->second);
    } catch (...) {
    }
  }
  if (auto it = metadata.find("lance-encoding:compression-level"); it != metadata.end()) {
    try {
      params.compression_level = std::stoi(it->second);
    } catch (...) {
    }
  }
  if (auto it = metadata.find("lance-encoding:bss"); it != metadata.end()) {
    const std::string mode = Lower(it->second);
    if (mode == "off") params.bss_sensitivity = 0;
    if (mode == "on") params.bss_sensitivity = 1;
    if (mode == "auto") params.bss_sensitivity = 0.5;
  }
  if (auto it = metadata.find("lance-encoding:dict-values-compression"); it != metadata.end()) {
    params.dict_values_compression = Lower(it->second);
    const auto& c = params.dict_values_compression;
    if (c != "none" && c != "lz4" && c != "zstd") {
      return Status::Invalid("leaf '", leaf_name, "': unknown lance-encoding:dict-values-compression '", it->second,
                             "' (expected none, lz4 or zstd)");
    }
  }
  if (auto it = metadata.find("lance-encoding:dict-size-ratio"); it != metadata.end()) {
    try {
      params.dict_size_ratio = std::stod(it->second);
    } catch (...) {
    }
    if (!(params.dict_size_ratio > 0 && params.dict_size_ratio <= 1)) {
      return Status::Invalid("leaf '", leaf_name, "': lance-encoding:dict-size-ratio must be in (0, 1], got '",
                             it->second, "'");
    }
  }
  return params;
}

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

pb21::CompressiveEncoding GeneralEncoding(comp::GeneralCodec codec, std::optional<int32_t> level,
                                          pb21::CompressiveEncoding inner) {
  pb21::CompressiveEncoding e;
  auto* general = e.mutable_general();
  general->mutable_compression()->set_scheme(codec == comp::GeneralCodec::kLz4 ? pb21::COMPRESSION_ALGORITHM_LZ4
                                                                               : pb21::COMPRESSION_ALGORITHM_ZSTD);
  if (level) general->mutable_compression()->set_level(*level);
  *general->mutable_values() = std::move(inner);
  return e;
}

}  // namespace lance::file::v2_1::encode
