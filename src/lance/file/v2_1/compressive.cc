#include "lance/file/v2_1/compressive.h"

#include <algorithm>
#include <cstring>
#include <string_view>

#include <arrow/buffer_builder.h>
#include <arrow/util/bit_util.h>
#include <arrow/util/bitmap_ops.h>

#include "lance/file/compression/byte_stream_split.h"
#include "lance/file/v2_1/bitpacking.h"
#include "lance/file/v2_1/buffer_compression.h"
#include "lance/file/v2_1/bytes.h"
#include "lance/file/v2_1/packed_struct.h"
#include "lance/file/v2_1/rle.h"
#include "lance/file/v2_1/sequence.h"
#include "lance/file/v2_1/variable.h"

namespace lance::file::v2_1 {

namespace {

using Case = pb21::CompressiveEncoding::CompressionCase;
namespace comp = lance::file::compression;

Result<uint64_t> CheckedBytes(uint64_t num_values, uint64_t bits, const char* what) {
  uint64_t total;
  if (MulOverflows(num_values, bits, &total)) return Corrupt(what, ": size overflows");
  return (total + 7) / 8;
}

// ---------------------------------------------------------------- flat / fsl

Result<DataBlock> FlatBlock(const pb21::Flat& flat, BufferPtr data, uint64_t num_values, arrow::MemoryPool* pool) {
  if (flat.has_data()) {
    LANCE_ASSIGN_OR_RAISE(data, DecompressBuffer(flat.data(), data, pool));
  }
  const uint64_t bits = flat.bits_per_value();
  if (bits == 0 && num_values > 0) return Corrupt("flat encoding of 0-bit values");
  LANCE_ASSIGN_OR_RAISE(uint64_t need, CheckedBytes(num_values, bits, "flat values"));
  const uint64_t have = data ? static_cast<uint64_t>(data->size()) : 0;
  if (have < need) {
    return Corrupt("flat buffer of ", have, " bytes for ", num_values, " values of ", bits, " bits");
  }
  if (!data) {
    LANCE_ASSIGN_OR_RAISE(data, AllocateZeroed(0, pool));
  }
  return DataBlock::FixedWidth(bits, num_values, std::move(data));
}

struct FslLayer {
  uint64_t dimension;
  bool has_validity;
};

// Walks nested FixedSizeList encodings down to their flat values.
Result<std::pair<std::vector<FslLayer>, const pb21::Flat*>> FslLayers(const pb21::FixedSizeList& fsl) {
  std::vector<FslLayer> layers;
  const pb21::FixedSizeList* cur = &fsl;
  for (int depth = 0; depth < 64; ++depth) {
    if (cur->items_per_value() == 0) return Corrupt("fixed-size list of 0 items per value");
    layers.push_back({cur->items_per_value(), cur->has_validity()});
    if (!cur->has_values()) return Corrupt("fixed-size list encoding without values");
    const auto& values = cur->values();
    if (values.compression_case() == Case::kFixedSizeList) {
      cur = &values.fixed_size_list();
      continue;
    }
    if (values.compression_case() == Case::kFlat) return std::make_pair(layers, &values.flat());
    return Status::NotImplemented("fixed-size list values encoded with ", EncodingName(values));
  }
  return Corrupt("fixed-size list encoding nested too deeply");
}

Result<uint64_t> CumulativeDimension(const std::vector<FslLayer>& layers) {
  uint64_t cum = 1;
  for (const auto& l : layers) {
    if (MulOverflows(cum, l.dimension, &cum)) return Corrupt("fixed-size list dimensions overflow");
  }
  return cum;
}

Result<DataBlock> FslMiniBlock(const pb21::FixedSizeList& fsl, std::vector<BufferPtr> buffers, uint64_t num_values,
                               arrow::MemoryPool* pool) {
  LANCE_ASSIGN_OR_RAISE(auto parsed, FslLayers(fsl));
  auto& [layers, flat] = parsed;
  uint64_t validity_count = 0;
  for (const auto& l : layers) validity_count += l.has_validity ? 1 : 0;
  if (buffers.size() != validity_count + 1) {
    return Corrupt("fixed-size list chunk has ", buffers.size(), " buffers, expected ", validity_count + 1);
  }
  LANCE_ASSIGN_OR_RAISE(uint64_t cum, CumulativeDimension(layers));
  uint64_t num_items;
  if (MulOverflows(num_values, cum, &num_items)) return Corrupt("fixed-size list item count overflows");
  LANCE_ASSIGN_OR_RAISE(DataBlock block, FlatBlock(*flat, buffers.back(), num_items, pool));
  // Validity buffers are listed outer layer first; rebuild from the inside out.
  size_t next_validity = validity_count;
  uint64_t count = num_items;
  for (size_t i = layers.size(); i-- > 0;) {
    if (layers[i].has_validity) {
      const BufferPtr& bitmap = buffers[--next_validity];
      if (static_cast<uint64_t>(bitmap->size()) < (count + 7) / 8) {
        return Corrupt("fixed-size list validity of ", bitmap->size(), " bytes for ", count, " items");
      }
      block = DataBlock::Nullable(bitmap, std::move(block));
    }
    count /= layers[i].dimension;
    block = DataBlock::Fsl(layers[i].dimension, count, std::move(block));
  }
  return block;
}

}  // namespace

std::string EncodingName(const pb21::CompressiveEncoding& encoding) {
  switch (encoding.compression_case()) {
    case Case::kFlat: return "flat";
    case Case::kVariable: return "variable";
    case Case::kConstant: return "constant";
    case Case::kOutOfLineBitpacking: return "out-of-line bitpacking";
    case Case::kInlineBitpacking: return "inline bitpacking";
    case Case::kFsst: return "fsst";
    case Case::kDictionary: return "dictionary";
    case Case::kRle: return "rle";
    case Case::kByteStreamSplit: return "byte stream split";
    case Case::kGeneral: return "general";
    case Case::kFixedSizeList: return "fixed-size list";
    case Case::kPackedStruct: return "packed struct";
    case Case::kVariablePackedStruct: return "variable packed struct";
    case Case::kRange: return "range";
    case Case::kDelta: return "delta";
    case Case::COMPRESSION_NOT_SET: return "unset";
  }
  return "unknown";
}

Result<uint64_t> MiniBlockBufferCount(const pb21::CompressiveEncoding& encoding) {
  switch (encoding.compression_case()) {
    case Case::kFlat:
    case Case::kInlineBitpacking:
    case Case::kPackedStruct:
    case Case::kByteStreamSplit:
      return 1;
    case Case::kConstant:
      return 0;
    case Case::kVariable: {
      const auto& v = encoding.variable();
      if (!v.has_offsets()) return Corrupt("variable encoding without offsets");
      if (v.offsets().compression_case() == Case::kFlat && !v.offsets().flat().has_data()) return 1;
      return IsMetadataOnly(v.offsets()) ? 1 : 2;
    }
    case Case::kFsst:
      if (!encoding.fsst().has_values()) return Corrupt("fsst encoding without values");
      return MiniBlockBufferCount(encoding.fsst().values());
    case Case::kGeneral:
      if (!encoding.general().has_values()) return Corrupt("general encoding without values");
      return MiniBlockBufferCount(encoding.general().values());
    case Case::kRle:
      return 2;
    case Case::kFixedSizeList: {
      LANCE_ASSIGN_OR_RAISE(auto parsed, FslLayers(encoding.fixed_size_list()));
      uint64_t n = 1;
      for (const auto& l : parsed.first) n += l.has_validity ? 1 : 0;
      return n;
    }
    default:
      return Status::NotImplemented("mini-block values encoded with ", EncodingName(encoding));
  }
}

Result<DataBlock> DecompressMiniBlock(const pb21::CompressiveEncoding& encoding, std::vector<BufferPtr> buffers,
                                      uint64_t num_values, arrow::MemoryPool* pool) {
  auto expect_buffers = [&](size_t n) -> Status {
    if (buffers.size() != n) {
      return Corrupt(EncodingName(encoding), " chunk has ", buffers.size(), " value buffers, expected ", n);
    }
    return Status::OK();
  };
  DataBlock out;
  switch (encoding.compression_case()) {
    case Case::kFlat: {
      LANCE_RETURN_NOT_OK(expect_buffers(1));
      LANCE_ASSIGN_OR_RAISE(out, FlatBlock(encoding.flat(), buffers[0], num_values, pool));
      break;
    }
    case Case::kInlineBitpacking: {
      LANCE_RETURN_NOT_OK(expect_buffers(1));
      BufferPtr data = buffers[0];
      if (encoding.inline_bitpacking().has_values()) {
        LANCE_ASSIGN_OR_RAISE(data, DecompressBuffer(encoding.inline_bitpacking().values(), data, pool));
      }
      LANCE_ASSIGN_OR_RAISE(out, UnpackInlineBitpacking(encoding.inline_bitpacking().uncompressed_bits_per_value(),
                                                  AsSpan(data), num_values, /*single_chunk=*/true, pool));
      break;
    }
    case Case::kVariable: {
      LANCE_ASSIGN_OR_RAISE(out, DecodeVariableChunk(encoding.variable(), std::move(buffers), num_values, pool));
      break;
    }
    case Case::kFsst: {
      if (!encoding.fsst().has_values()) return Corrupt("fsst encoding without values");
      LANCE_ASSIGN_OR_RAISE(DataBlock compressed,
                            DecompressMiniBlock(encoding.fsst().values(), std::move(buffers), num_values, pool));
      LANCE_ASSIGN_OR_RAISE(out, DecodeFsst(encoding.fsst().symbol_table(), compressed, pool));
      break;
    }
    case Case::kFixedSizeList: {
      LANCE_ASSIGN_OR_RAISE(out, FslMiniBlock(encoding.fixed_size_list(), std::move(buffers), num_values, pool));
      break;
    }
    case Case::kPackedStruct: {
      LANCE_RETURN_NOT_OK(expect_buffers(1));
      const auto& packed = encoding.packed_struct();
      if (!packed.has_values() || packed.values().compression_case() != Case::kFlat) {
        return Status::NotImplemented("packed struct values must be flat");
      }
      LANCE_ASSIGN_OR_RAISE(auto bits, PackedFieldBits(packed));
      LANCE_ASSIGN_OR_RAISE(DataBlock rows, FlatBlock(packed.values().flat(), buffers[0], num_values, pool));
      LANCE_ASSIGN_OR_RAISE(out, UnpackPackedRows(rows, bits, pool));
      break;
    }
    case Case::kRle: {
      LANCE_RETURN_NOT_OK(expect_buffers(2));
      LANCE_ASSIGN_OR_RAISE(out, DecodeRleChunk(encoding.rle(), buffers[0], buffers[1], num_values, pool));
      break;
    }
    case Case::kByteStreamSplit: {
      LANCE_RETURN_NOT_OK(expect_buffers(1));
      const auto& bss = encoding.byte_stream_split();
      if (!bss.has_values() || bss.values().compression_case() != Case::kFlat) {
        return Status::NotImplemented("byte stream split values must be flat");
      }
      const uint64_t bits = bss.values().flat().bits_per_value();
      if (bits % 8 != 0 || bits == 0) return Corrupt("byte stream split of ", bits, "-bit values");
      const uint64_t need = num_values * (bits / 8);
      if (static_cast<uint64_t>(buffers[0]->size()) != need) {
        return Corrupt("byte stream split chunk of ", buffers[0]->size(), " bytes for ", num_values, " values of ",
                       bits, " bits");
      }
      LANCE_ASSIGN_OR_RAISE(auto decoded, AllocateZeroed(need, pool));
      LANCE_RETURN_NOT_OK(comp::ByteStreamSplitDecode(AsSpan(buffers[0]), bits / 8,
                                                      std::span<uint8_t>(decoded->mutable_data(), need)));
      out = DataBlock::FixedWidth(bits, num_values, std::move(decoded));
      break;
    }
    case Case::kGeneral: {
      const auto& general = encoding.general();
      if (!general.has_compression() || !general.has_values()) {
        return Corrupt("general encoding without compression or values");
      }
      if (buffers.empty()) return Corrupt("general chunk without buffers");
      LANCE_ASSIGN_OR_RAISE(buffers[0], DecompressBuffer(general.compression(), buffers[0], pool));
      return DecompressMiniBlock(general.values(), std::move(buffers), num_values, pool);
    }
    case Case::kConstant: {
      LANCE_ASSIGN_OR_RAISE(out, DecodeConstant(encoding.constant(), num_values, pool));
      break;
    }
    default:
      return Status::NotImplemented("mini-block values encoded with ", EncodingName(encoding));
  }
  if (out.num_values != num_values) {
    return Corrupt(EncodingName(encoding), " chunk decoded ", out.num_values, " values, expected ", num_values);
  }
  LANCE_RETURN_NOT_OK(ValidateBlock(out));
  return out;
}

Result<DataBlock> DecompressBlock(const pb21::CompressiveEncoding& encoding, const BufferPtr& data_in,
                                  uint64_t num_values, arrow::MemoryPool* pool) {
  if (num_values > kMaxDecodedElements) return Corrupt("block of ", num_values, " values");
  BufferPtr data = data_in;
  if (!data) {
    LANCE_ASSIGN_OR_RAISE(data, AllocateZeroed(0, pool));
  }
  DataBlock out;
  switch (encoding.compression_case()) {
    case Case::kFlat: {
      LANCE_ASSIGN_OR_RAISE(out, FlatBlock(encoding.flat(), data, num_values, pool));
      break;
    }
    case Case::kInlineBitpacking: {
      if (encoding.inline_bitpacking().has_values()) {
        LANCE_ASSIGN_OR_RAISE(data, DecompressBuffer(encoding.inline_bitpacking().values(), data, pool));
      }
      LANCE_ASSIGN_OR_RAISE(out, UnpackInlineBitpacking(encoding.inline_bitpacking().uncompressed_bits_per_value(),
                                                  AsSpan(data), num_values, /*single_chunk=*/false, pool));
      break;
    }
    case Case::kOutOfLineBitpacking: {
      LANCE_ASSIGN_OR_RAISE(out, UnpackOutOfLineBitpacking(encoding.out_of_line_bitpacking(), AsSpan(data),
                                                           num_values, pool));
      break;
    }
    case Case::kConstant: {
      LANCE_ASSIGN_OR_RAISE(out, DecodeConstant(encoding.constant(), num_values, pool));
      break;
    }
    case Case::kVariable: {
      LANCE_ASSIGN_OR_RAISE(out, DecodeVariableBlock(data, num_values, pool));
      break;
    }
    case Case::kFixedSizeList: {
      LANCE_ASSIGN_OR_RAISE(auto parsed, FslLayers(encoding.fixed_size_list()));
      for (const auto& l : parsed.first) {
        if (l.has_validity) return Status::NotImplemented("fixed-size list block with validity");
      }
      LANCE_ASSIGN_OR_RAISE(uint64_t cum, CumulativeDimension(parsed.first));
      uint64_t items;
      if (MulOverflows(num_values, cum, &items)) return Corrupt("fixed-size list block overflows");
      LANCE_ASSIGN_OR_RAISE(out, FlatBlock(*parsed.second, data, items, pool));
      uint64_t count = items;
      for (size_t i = parsed.first.size(); i-- > 0;) {
        count /= parsed.first[i].dimension;
        out = DataBlock::Fsl(parsed.first[i].dimension, count, std::move(out));
      }
      break;
    }
    case Case::kGeneral: {
      const auto& general = encoding.general();
      if (!general.has_compression() || !general.has_values()) {
        return Corrupt("general encoding without compression or values");
      }
      LANCE_ASSIGN_OR_RAISE(auto raw, DecompressBuffer(general.compression(), data, pool));
      return DecompressBlock(general.values(), raw, num_values, pool);
    }
    case Case::kRle: {
      LANCE_ASSIGN_OR_RAISE(out, DecodeRleBlock(encoding.rle(), data, num_values, pool));
      break;
    }
    case Case::kRange: {
      LANCE_ASSIGN_OR_RAISE(out, DecodeRange(encoding.range(), num_values, pool));
      break;
    }
    case Case::kDelta: {
      LANCE_ASSIGN_OR_RAISE(out, DecodeDelta(encoding.delta(), data, num_values, pool));
      break;
    }
    default:
      return Status::NotImplemented("block values encoded with ", EncodingName(encoding));
  }
  if (out.num_values != num_values) {
    return Corrupt(EncodingName(encoding), " block decoded ", out.num_values, " values, expected ", num_values);
  }
  LANCE_RETURN_NOT_OK(ValidateBlock(out));
  return out;
}

Result<std::optional<uint64_t>> InferBlockValueCount(const pb21::CompressiveEncoding& encoding, const BufferPtr& data,
                                                     arrow::MemoryPool* pool) {
  if (encoding.compression_case() == Case::kGeneral && encoding.general().has_values() &&
      encoding.general().has_compression()) {
    LANCE_ASSIGN_OR_RAISE(auto raw, DecompressBuffer(encoding.general().compression(), data, pool));
    return InferBlockValueCount(encoding.general().values(), raw, pool);
  }
  if (encoding.compression_case() != Case::kRle || !data || data->size() == 0) return std::nullopt;
  return RleBlockValueCount(encoding.rle(), data, pool);
}

Result<uint64_t> FixedPerValueBits(const pb21::CompressiveEncoding& encoding) {
  switch (encoding.compression_case()) {
    case Case::kFlat:
      return encoding.flat().bits_per_value();
    case Case::kConstant:
      return encoding.constant().has_value() ? encoding.constant().value().size() * 8 : 0;
    case Case::kFixedSizeList: {
      LANCE_ASSIGN_OR_RAISE(auto parsed, FslLayers(encoding.fixed_size_list()));
      uint64_t cum = 1, validity_bytes = 0;
      for (const auto& l : parsed.first) {
        if (MulOverflows(cum, l.dimension, &cum)) return Corrupt("fixed-size list dimensions overflow");
        if (l.has_validity) validity_bytes += (cum + 7) / 8;
      }
      uint64_t bits;
      if (MulOverflows(parsed.second->bits_per_value(), cum,
                       &bits)) return Corrupt("fixed-size list width overflows");
      return bits + validity_bytes * 8;
    }
    default:
      return Status::NotImplemented("full-zip fixed-width values encoded with ", EncodingName(encoding));
  }
}

Result<DataBlock> DecompressFixedPerValue(const pb21::CompressiveEncoding& encoding, const BufferPtr& data,
                                          uint64_t num_values, arrow::MemoryPool* pool) {
  switch (encoding.compression_case()) {
    case Case::kFlat:
      return FlatBlock(encoding.flat(), data, num_values, pool);
    case Case::kConstant:
      return DecodeConstant(encoding.constant(), num_values, pool);
    case Case::kFixedSizeList: {
      LANCE_ASSIGN_OR_RAISE(auto parsed, FslLayers(encoding.fixed_size_list()));
      const auto& layers = parsed.first;
      const uint64_t item_bits = parsed.second->bits_per_value();
      LANCE_ASSIGN_OR_RAISE(uint64_t cum, CumulativeDimension(layers));
      uint64_t items;
      if (MulOverflows(num_values, cum, &items)) return Corrupt("fixed-size list item count overflows");
      bool any_validity = false;
      for (const auto& l : layers) any_validity |= l.has_validity;
      DataBlock block;
      std::vector<BufferPtr> bitmaps;
      if (!any_validity) {
        LANCE_ASSIGN_OR_RAISE(block, FlatBlock(*parsed.second, data, items, pool));
      } else {
        if (item_bits % 8 != 0) return Status::NotImplemented("zipped fixed-size list of ", item_bits, "-bit items");
        LANCE_ASSIGN_OR_RAISE(uint64_t row_bits, FixedPerValueBits(encoding));
        const uint64_t row_bytes = row_bits / 8;
        uint64_t need;
        if (MulOverflows(row_bytes, num_values, &need) || static_cast<uint64_t>(data->size()) < need) {
          return Corrupt("zipped fixed-size list values of ", data->size(), " bytes for ", num_values, " rows");
        }
        const uint64_t item_bytes = item_bits / 8;
        std::vector<arrow::TypedBufferBuilder<bool>> builders;
        std::vector<uint64_t> bits_per_row;
        uint64_t dim = 1;
        for (const auto& l : layers) {
          dim *= l.dimension;
          if (l.has_validity) {
            builders.emplace_back(pool);
            bits_per_row.push_back(dim);
          }
        }
        LANCE_ASSIGN_OR_RAISE(auto values, AllocateZeroed(items * item_bytes, pool));
        const uint8_t* src = data->data();
        for (uint64_t row = 0; row < num_values; ++row) {
          for (size_t b = 0; b < builders.size(); ++b) {
            LANCE_RETURN_NOT_OK(builders[b].Reserve(static_cast<int64_t>(bits_per_row[b])));
            for (uint64_t i = 0; i < bits_per_row[b]; ++i) builders[b].UnsafeAppend(arrow::bit_util::GetBit(src, i));
            src += (bits_per_row[b] + 7) / 8;
          }
          std::memcpy(values->mutable_data() + row * cum * item_bytes, src, cum * item_bytes);
          src += cum * item_bytes;
        }
        for (auto& b : builders) {
          BufferPtr bitmap;
          LANCE_RETURN_NOT_OK(b.Finish(&bitmap));
          bitmaps.push_back(std::move(bitmap));
        }
        block = DataBlock::FixedWidth(item_bits, items, std::move(values));
      }
      size_t next = bitmaps.size();
      uint64_t count = items;
      for (size_t i = layers.size(); i-- > 0;) {
        if (layers[i].has_validity) block = DataBlock::Nullable(bitmaps[--next], std::move(block));
        count /= layers[i].dimension;
        block = DataBlock::Fsl(layers[i].dimension, count, std::move(block));
      }
      LANCE_RETURN_NOT_OK(ValidateBlock(block));
      return block;
    }
    default:
      return Status::NotImplemented("full-zip fixed-width values encoded with ", EncodingName(encoding));
  }
}


Result<DataBlock> DecompressVariablePerValue(const pb21::CompressiveEncoding& encoding, DataBlock values,
                                             arrow::MemoryPool* pool) {
  if (values.kind != BlockKind::kVariableWidth) return Corrupt("per-value variable data is not variable-width");
  switch (encoding.compression_case()) {
    case Case::kVariable:
      LANCE_RETURN_NOT_OK(ValidateBlock(values));
      return values;
    case Case::kFsst:
      return DecodeFsst(encoding.fsst().symbol_table(), values, pool);
    case Case::kGeneral:
      if (!encoding.general().has_compression()) return Corrupt("general encoding without compression");
      return DecompressEachValue(encoding.general().compression(), values, pool);
    case Case::kVariablePackedStruct:
      return DecodeVariablePackedStruct(encoding.variable_packed_struct(), values, pool);
    default:
      return Status::NotImplemented("full-zip variable-width values encoded with ", EncodingName(encoding));
  }
}

}  // namespace lance::file::v2_1
