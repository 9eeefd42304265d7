#include "lance/file/v2_1/variable.h"

#include <cstring>

#include "lance/file/v2_1/buffer_compression.h"
#include "lance/file/v2_1/bytes.h"
#include "lance/file/v2_1/compressive.h"

namespace lance::file::v2_1 {

namespace comp = lance::file::compression;
using Case = pb21::CompressiveEncoding::CompressionCase;


namespace {

Result<DataBlock> LegacyVariableChunk(const BufferPtr& chunk, uint64_t num_values, uint64_t bits_per_offset,
                                      arrow::MemoryPool* pool) {
  if (bits_per_offset != 32 && bits_per_offset != 64) {
    return Corrupt("variable offsets of ", bits_per_offset, " bits");
  }
  const uint64_t width = bits_per_offset / 8;
  ByteSpan bytes = AsSpan(chunk);
  uint64_t offsets_size;
  if (MulOverflows(num_values + 1, width, &offsets_size) || offsets_size > bytes.size()) {
    return Corrupt("variable chunk of ", bytes.size(), " bytes cannot hold ", num_values + 1, " offsets");
  }
  const uint64_t start = LoadUnsigned(bytes.data(), static_cast<unsigned>(width));
  LANCE_ASSIGN_OR_RAISE(auto offsets, AllocateZeroed(offsets_size, pool));
  uint64_t prev = start;
  for (uint64_t i = 0; i <= num_values; ++i) {
    const uint64_t cur = LoadUnsigned(bytes.data() + i * width, static_cast<unsigned>(width));
    if (cur < prev) return Corrupt("variable offsets decrease at index ", i);
    prev = cur;
    const uint64_t rel = cur - start;
    if (width == 4) {
      const uint32_t v = static_cast<uint32_t>(rel);
      std::memcpy(offsets->mutable_data() + i * 4, &v, 4);
    } else {
      std::memcpy(offsets->mutable_data() + i * 8, &rel, 8);
    }
  }
  const uint64_t end = prev;
  if (start < offsets_size || end > bytes.size()) {
    return Corrupt("variable chunk data range [", start, ", ", end, ") is invalid for ", bytes.size(), " bytes");
  }
  auto data = arrow::SliceBuffer(chunk, static_cast<int64_t>(start), static_cast<int64_t>(end - start));
  return DataBlock::Variable(static_cast<uint32_t>(bits_per_offset), num_values, std::move(offsets), std::move(data));
}

}  // namespace

bool IsMetadataOnly(const pb21::CompressiveEncoding& e) {
  switch (e.compression_case()) {
    case Case::kConstant:
    case Case::kRange:
      return true;
    case Case::kDelta:
      return e.delta().has_deltas() && IsMetadataOnly(e.delta().deltas());
    default:
      return false;
  }
}

namespace {

Result<DataBlock> OffsetsToVariable(const DataBlock& offsets, const BufferPtr& values, uint64_t num_values) {
  if (offsets.kind != BlockKind::kFixedWidth || (offsets.bits_per_value != 32 && offsets.bits_per_value != 64) ||
      offsets.num_values != num_values + 1) {
    return Corrupt("variable offsets decoded to ", offsets.num_values, " values of ", offsets.bits_per_value,
                   " bits, expected ", num_values + 1);
  }
  DataBlock block = DataBlock::Variable(static_cast<uint32_t>(offsets.bits_per_value), num_values, offsets.data,
                                        values);
  LANCE_RETURN_NOT_OK(ValidateBlock(block));
  if (VariableOffset(block, 0) != 0) return Corrupt("variable offsets do not start at zero");
  return block;
}

}  // namespace

Result<DataBlock> DecodeVariableChunk(const pb21::Variable& variable, std::vector<BufferPtr> buffers,
                                      uint64_t num_values,
                                    arrow::MemoryPool* pool) {
  if (!variable.has_offsets()) return Corrupt("variable encoding without offsets");
  if (variable.has_values()) {
    return Status::NotImplemented("variable encoding with compressed values in a mini-block");
  }
  const auto& offsets = variable.offsets();
  if (offsets.compression_case() == Case::kFlat && !offsets.flat().has_data()) {
    if (buffers.size() != 1) return Corrupt("variable chunk has ", buffers.size(), " buffers, expected 1");
    return LegacyVariableChunk(buffers[0], num_values, offsets.flat().bits_per_value(), pool);
  }
  const bool payload = !IsMetadataOnly(offsets);
  if (buffers.size() != (payload ? 2u : 1u)) {
    return Corrupt("variable chunk has ", buffers.size(), " buffers, expected ", payload ? 2 : 1);
  }
  BufferPtr offset_payload = payload ? buffers[0] : nullptr;
  LANCE_ASSIGN_OR_RAISE(DataBlock decoded, DecompressBlock(offsets, offset_payload, num_values + 1, pool));
  return OffsetsToVariable(decoded, buffers.back(), num_values);
}

Result<DataBlock> VariableFromValues(const comp::VariableValues& values, uint64_t num_values,
                                     arrow::MemoryPool* pool) {
  if (values.offsets.size() != num_values + 1) {
    return Corrupt("decompression produced ", values.offsets.size(), " offsets for ", num_values, " values");
  }
  LANCE_ASSIGN_OR_RAISE(auto offsets, AllocateZeroed((num_values + 1) * 8, pool));
  std::memcpy(offsets->mutable_data(), values.offsets.data(), (num_values + 1) * 8);
  LANCE_ASSIGN_OR_RAISE(auto data, AllocateZeroed(values.data.size(), pool));
  if (!values.data.empty()) std::memcpy(data->mutable_data(), values.data.data(), values.data.size());
  DataBlock block = DataBlock::Variable(64, num_values, std::move(offsets), std::move(data));
  LANCE_RETURN_NOT_OK(ValidateBlock(block));
  return block;
}

Status CheckFsstInput(const DataBlock& compressed) {
  if (compressed.kind != BlockKind::kVariableWidth) return Corrupt("FSST values are not variable-width");
  if (compressed.bits_per_offset != 32 && compressed.bits_per_offset != 64) {
    return Corrupt("FSST values with ", compressed.bits_per_offset, "-bit offsets");
  }
  const uint64_t need = (compressed.num_values + 1) * (compressed.bits_per_offset / 8);
  const uint64_t have = compressed.offsets ? static_cast<uint64_t>(compressed.offsets->size()) : 0;
  if (compressed.num_values >= kMaxDecodedElements || have < need) {
    return Corrupt("FSST values: ", compressed.num_values, " values need ", need, " offset bytes, have ", have);
  }
  return Status::OK();
}

Result<DataBlock> DecodeFsst(const std::string& symbol_table, const DataBlock& compressed, arrow::MemoryPool* pool) {
  LANCE_ASSIGN_OR_RAISE(auto decoder, comp::FsstDecoder::Make(symbol_table));
  return DecodeFsst(decoder, compressed, pool);
}

Result<DataBlock> DecodeFsst(const comp::FsstDecoder& decoder, const DataBlock& compressed,
                             arrow::MemoryPool* pool) {
  LANCE_RETURN_NOT_OK(CheckFsstInput(compressed));
  const uint64_t n = compressed.num_values;
  LANCE_ASSIGN_OR_RAISE(auto offsets, Allocate((n + 1) * 8, pool));
  auto* ends = reinterpret_cast<uint64_t*>(offsets->mutable_data());
  ends[0] = 0;
  LANCE_ASSIGN_OR_RAISE(std::shared_ptr<arrow::ResizableBuffer> data, arrow::AllocateResizableBuffer(0, pool));
  // Text usually expands 2-3x under FSST; the decoder grows the buffer when it must.
  const uint64_t compressed_bytes = compressed.data ? static_cast<uint64_t>(compressed.data->size()) : 0;
  LANCE_RETURN_NOT_OK(data->Reserve(static_cast<int64_t>(std::min(3 * compressed_bytes, kMaxAllocationBytes))));
  LANCE_RETURN_NOT_OK(decoder.DecompressAppend(compressed.offsets->data(), compressed.bits_per_offset / 8, n,
                                               AsStringView(compressed.data), data.get(), ends + 1));
  // Offsets made by the decoder start at 0 and never decrease: no second validation.
  return DataBlock::Variable(64, n, std::move(offsets), std::move(data));
}

Result<DataBlock> DecodeVariableBlock(const BufferPtr& data, uint64_t num_values, arrow::MemoryPool* pool) {
  ByteSpan bytes = AsSpan(data);
  if (bytes.size() < 4) return Corrupt("variable block of ", bytes.size(), " bytes has no header");
  uint64_t bits, bytes_start, offsets_start;
  if (bytes[1] != 0 || bytes[2] != 0 || bytes[3] != 0) {
    // Older layout: u8 width, then the value count and bytes_start in that width.
    bits = bytes[0];
    if (bits == 32) {
      LANCE_ASSIGN_OR_RAISE(uint32_t start, ReadLE<uint32_t>(bytes, 5, "variable block header"));
      bytes_start = start;
      offsets_start = 9;
    } else if (bits == 64) {
      LANCE_ASSIGN_OR_RAISE(bytes_start, ReadLE<uint64_t>(bytes, 9, "variable block header"));
      offsets_start = 17;
    } else {
      return Corrupt("variable block with ", bits, "-bit offsets");
    }
  } else {
    LANCE_ASSIGN_OR_RAISE(uint32_t width, ReadLE<uint32_t>(bytes, 0, "variable block header"));
    bits = width;
    if (bits == 32) {
      LANCE_ASSIGN_OR_RAISE(uint32_t start, ReadLE<uint32_t>(bytes, 4, "variable block header"));
      bytes_start = start;
      offsets_start = 8;
    } else if (bits == 64) {
      LANCE_ASSIGN_OR_RAISE(bytes_start, ReadLE<uint64_t>(bytes, 8, "variable block header"));
      offsets_start = 16;
    } else {
      return Corrupt("variable block with ", bits, "-bit offsets");
    }
  }
  const uint64_t width = bits / 8;
  if (bytes_start < offsets_start || bytes_start > bytes.size()) {
    return Corrupt("variable block data start ", bytes_start, " is invalid for ", bytes.size(), " bytes");
  }
  const uint64_t offset_bytes = bytes_start - offsets_start;
  if (offset_bytes != (num_values + 1) * width) {
    return Corrupt("variable block has ", offset_bytes / width, " offsets for ", num_values, " values");
  }
  auto offsets = arrow::SliceBuffer(data, static_cast<int64_t>(offsets_start), static_cast<int64_t>(offset_bytes));
  auto values = arrow::SliceBuffer(data, static_cast<int64_t>(bytes_start),
                                   static_cast<int64_t>(bytes.size() - bytes_start));
  DataBlock block = DataBlock::Variable(static_cast<uint32_t>(bits), num_values, offsets, values);
  LANCE_RETURN_NOT_OK(ValidateBlock(block));
  (void)pool;
  return block;
}

Result<DataBlock> DecompressEachValue(const pb21::BufferCompression& compression, const DataBlock& values,
                                  arrow::MemoryPool* pool) {
  LANCE_RETURN_NOT_OK(ValidateBlock(values));
  std::vector<uint64_t> offsets(values.num_values + 1, 0);
  std::string data;
  for (uint64_t i = 0; i < values.num_values; ++i) {
    const uint64_t start = VariableOffset(values, i), end = VariableOffset(values, i + 1);
    auto framed = arrow::SliceBuffer(values.data, static_cast<int64_t>(start), static_cast<int64_t>(end - start));
    LANCE_ASSIGN_OR_RAISE(auto raw, DecompressBuffer(compression, framed, pool));
    data.append(reinterpret_cast<const char*>(raw->data()), static_cast<size_t>(raw->size()));
    offsets[i + 1] = data.size();
  }
  comp::VariableValues out{std::move(offsets), std::move(data)};
  return VariableFromValues(out, values.num_values, pool);
}

}  // namespace lance::file::v2_1
