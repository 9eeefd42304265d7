#include "lance/file/v2_1/page.h"
#include "lance/util/protobuf.h"

#include <cstring>

#include <arrow/array/array_dict.h>
#include <arrow/type.h>
#include <arrow/util/checked_cast.h>

#include "lance/encodings_v2_1.pb.h"
#include "lance/file/v2_1/blob_layout.h"
#include "lance/file/v2_1/bytes.h"
#include "lance/file/v2_1/constant_layout.h"
#include "lance/file/v2_1/full_zip.h"
#include "lance/file/v2_1/mini_block.h"

namespace lance::file::v2_1 {

namespace pb21 = lance::pb::encodings21;

Result<std::vector<uint16_t>> LevelsFromBlock(const DataBlock& block, uint64_t count) {
  std::vector<uint16_t> levels(count);
  if (block.num_values != count) return Corrupt("levels decoded to ", block.num_values, " values, expected ", count);
  if (block.kind == BlockKind::kConstant) {
    uint16_t v = 0;
    if (block.data->size() > 2) return Corrupt("constant level of ", block.data->size(), " bytes");
    std::memcpy(&v, block.data->data(), static_cast<size_t>(block.data->size()));
    std::fill(levels.begin(), levels.end(), v);
    return levels;
  }
  if (block.kind != BlockKind::kFixedWidth || block.bits_per_value != 16) {
    return Corrupt("levels decoded to ", block.bits_per_value, "-bit values, expected 16");
  }
  LANCE_RETURN_NOT_OK(ValidateBlock(block));
  if (count > 0) std::memcpy(levels.data(), block.data->data(), count * 2);
  return levels;
}

Result<DecodedPage> DecodePage(const PageData& page, const PageContext& ctx) {
  if (page.encoding_type_url != kPageLayoutTypeUrl) {
    return Status::NotImplemented("page encoding '", page.encoding_type_url, "' is not a 2.1+ page layout");
  }
  pb21::PageLayout layout;
  if (!util::ParseMessage(page.encoding, &layout)) return Corrupt("the page layout protobuf does not parse");
  switch (layout.layout_case()) {
    case pb21::PageLayout::kMiniBlockLayout:
      return DecodeMiniBlockPage(layout.mini_block_layout(), page, ctx);
    case pb21::PageLayout::kConstantLayout:
      return DecodeConstantPage(layout.constant_layout(), page, ctx);
    case pb21::PageLayout::kFullZipLayout:
      return DecodeFullZipPage(layout.full_zip_layout(), page, ctx);
    case pb21::PageLayout::kBlobLayout:
      return DecodeBlobPage(layout.blob_layout(), page, ctx);
    case pb21::PageLayout::kSparseLayout:
      return Status::NotImplemented("the sparse page layout (file version 2.3) is not supported");
    case pb21::PageLayout::LAYOUT_NOT_SET:
      break;
  }
  return Status::NotImplemented("unknown or empty page layout (field number not supported)");
}

namespace {

Result<std::vector<uint64_t>> ReadIndices(const DataBlock& indices, uint64_t dict_size) {
  if (indices.kind != BlockKind::kFixedWidth ||
      (indices.bits_per_value != 8 && indices.bits_per_value != 16 && indices.bits_per_value != 32 &&
       indices.bits_per_value != 64)) {
    return Corrupt("dictionary indices are not 8/16/32/64-bit integers");
  }
  LANCE_RETURN_NOT_OK(ValidateBlock(indices));
  const unsigned w = static_cast<unsigned>(indices.bits_per_value / 8);
  std::vector<uint64_t> out(indices.num_values);
  for (uint64_t i = 0; i < indices.num_values; ++i) {
    out[i] = LoadUnsigned(indices.data->data() + i * w, w);
    if (out[i] >= dict_size) {
      return Corrupt("dictionary index ", out[i], " at position ", i, " is out of range for ", dict_size, " entries");
    }
  }
  return out;
}

Result<std::shared_ptr<arrow::Array>> IndicesAsKeys(const std::vector<uint64_t>& indices,
                                                    const std::shared_ptr<arrow::DataType>& key_type,
                                                    arrow::MemoryPool* pool) {
  const int64_t width = FixedBitWidth(*key_type) / 8;
  if (width <= 0) return Status::Invalid("dictionary key type ", key_type->ToString());
  LANCE_ASSIGN_OR_RAISE(auto buffer, arrow::AllocateBuffer(static_cast<int64_t>(indices.size()) * width, pool));
  const bool is_signed = arrow::is_signed_integer(key_type->id());
  const uint64_t max = width == 8 ? (is_signed ? INT64_MAX : UINT64_MAX)
                                  : ((uint64_t{1} << (width * 8 - (is_signed ? 1 : 0))) - 1);
  for (size_t i = 0; i < indices.size(); ++i) {
    if (indices[i] > max) return Corrupt("dictionary index ", indices[i], " does not fit ", key_type->ToString());
    std::memcpy(buffer->mutable_data() + i * width, &indices[i], static_cast<size_t>(width));
  }
  auto data = arrow::ArrayData::Make(key_type, static_cast<int64_t>(indices.size()),
                                     {nullptr, std::shared_ptr<arrow::Buffer>(std::move(buffer))}, 0);
  return arrow::MakeArray(data);
}

}  // namespace

Result<std::shared_ptr<arrow::Array>> PageValuesToArrow(const DecodedPage& page, const PageContext& ctx) {
  const auto& type = ctx.leaf_type;
  const bool dict_type = type->id() == arrow::Type::DICTIONARY;
  if (page.dictionary) {
    if (page.values.kind == BlockKind::kAllNull) {
      const auto n = static_cast<int64_t>(page.values.num_values);
      LANCE_ASSIGN_OR_RAISE(auto nulls, arrow::MakeArrayOfNull(type, n, ctx.pool));
      return nulls;
    }
    LANCE_ASSIGN_OR_RAISE(auto indices, ReadIndices(page.values, page.dictionary->num_values));
    if (dict_type) {
      const auto& dt = arrow::internal::checked_cast<const arrow::DictionaryType&>(*type);
      LANCE_ASSIGN_OR_RAISE(auto dict_data, BlockToArrow(*page.dictionary, dt.value_type(), ctx.pool));
      LANCE_ASSIGN_OR_RAISE(auto keys, IndicesAsKeys(indices, dt.index_type(), ctx.pool));
      return std::make_shared<arrow::DictionaryArray>(type, keys, arrow::MakeArray(dict_data));
    }
    LANCE_ASSIGN_OR_RAISE(DataBlock taken, TakeBlock(*page.dictionary, indices, ctx.pool));
    LANCE_ASSIGN_OR_RAISE(auto data, BlockToArrow(taken, type, ctx.pool));
    return arrow::MakeArray(data);
  }
  if (dict_type && page.values.kind != BlockKind::kAllNull) {
    // Dictionary-typed values stored plainly: every value its own entry.
    const auto& dt = arrow::internal::checked_cast<const arrow::DictionaryType&>(*type);
    LANCE_ASSIGN_OR_RAISE(auto dict_data, BlockToArrow(page.values, dt.value_type(), ctx.pool));
    std::vector<uint64_t> indices(page.values.num_values);
    for (uint64_t i = 0; i < indices.size(); ++i) indices[i] = i;
    LANCE_ASSIGN_OR_RAISE(auto keys, IndicesAsKeys(indices, dt.index_type(), ctx.pool));
    return std::make_shared<arrow::DictionaryArray>(type, keys, arrow::MakeArray(dict_data));
  }
  LANCE_ASSIGN_OR_RAISE(auto data, BlockToArrow(page.values, type, ctx.pool));
  return arrow::MakeArray(data);
}

}  // namespace lance::file::v2_1
