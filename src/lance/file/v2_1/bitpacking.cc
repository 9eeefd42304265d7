#include "lance/file/v2_1/bitpacking.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <vector>

#include "lance/file/compression/fastlanes.h"

namespace lance::file::v2_1 {

namespace pb21 = lance::pb::encodings21;
namespace comp = lance::file::compression;
using Case = pb21::CompressiveEncoding::CompressionCase;

namespace {

constexpr uint64_t kFastLanesChunk = comp::kFastLanesValues;


// Unpacks one inline-bitpacked chunk (a T header holding the bit width, then
// 1024 packed values) into `count` values at `out` (every one written).
// Returns the chunk's size.
template <typename T>
Result<uint64_t> UnpackInlineChunk(ByteSpan chunk, uint64_t count, T* out) {
  constexpr uint64_t kBits = sizeof(T) * 8;
  LANCE_ASSIGN_OR_RAISE(T header, ReadLE<T>(chunk, 0, "inline bitpacking chunk header"));
  const uint64_t bit_width = static_cast<uint64_t>(header);
  if (bit_width > kBits) {
    return Corrupt("inline bitpacking bit width ", bit_width, " exceeds the ", kBits, "-bit values");
  }
  const uint64_t body = comp::FastLanesPackedBytes(static_cast<unsigned>(bit_width));
  LANCE_ASSIGN_OR_RAISE(ByteSpan packed, SubSpan(chunk, sizeof(T), body, "inline bitpacking chunk"));
  if (count > kFastLanesChunk) return Corrupt("inline bitpacking chunk of ", count, " values");
  if (count == kFastLanesChunk) {
    // A whole chunk unpacks in place: no copy, no allocation per chunk.
    LANCE_RETURN_NOT_OK(
        comp::FastLanesUnpack<T>(packed, static_cast<unsigned>(bit_width), std::span<T>(out, kFastLanesChunk)));
  } else {
    std::array<T, kFastLanesChunk> values;
    LANCE_RETURN_NOT_OK(comp::FastLanesUnpack<T>(packed, static_cast<unsigned>(bit_width), std::span<T>(values)));
    std::memcpy(out, values.data(), count * sizeof(T));
  }
  return sizeof(T) + body;
}

template <typename T>
Result<DataBlock> InlineBitpackingImpl(ByteSpan data, uint64_t num_values, bool single_chunk,
                                       arrow::MemoryPool* pool) {
  if (single_chunk && num_values > kFastLanesChunk) {
    return Corrupt("an inline bitpacking chunk holds ", num_values, " values (at most 1024)");
  }
  // Every chunk of 1024 values has at least its header.
  if ((num_values + kFastLanesChunk - 1) / kFastLanesChunk > data.size() / sizeof(T)) {
    return Corrupt("inline bitpacked buffer of ", data.size(), " bytes cannot hold ", num_values, " values");
  }
  // Every value is written below, chunk by chunk.
  LANCE_ASSIGN_OR_RAISE(auto out, Allocate(num_values * sizeof(T), pool));
  T* values = reinterpret_cast<T*>(out->mutable_data());
  uint64_t pos = 0, done = 0;
  while (done < num_values) {
    const uint64_t count = std::min<uint64_t>(kFastLanesChunk, num_values - done);
    LANCE_ASSIGN_OR_RAISE(ByteSpan rest, SubSpan(data, pos, data.size() - pos, "inline bitpacking"));
    LANCE_ASSIGN_OR_RAISE(uint64_t used, UnpackInlineChunk<T>(rest, count, values + done));
    pos += used;
    done += count;
  }
  if (single_chunk && num_values > 0 && pos != data.size()) {
    return Corrupt("inline bitpacking chunk of ", data.size(), " bytes holds ", pos, " bytes of packed values");
  }
  return DataBlock::FixedWidth(sizeof(T) * 8, num_values, std::move(out));
}

template <typename T>
Result<DataBlock> InlineBitpackingRowsImpl(ByteSpan data, uint64_t num_values, const std::vector<uint64_t>& rows,
                                           arrow::MemoryPool* pool) {
  constexpr uint64_t kBits = sizeof(T) * 8;
  if (num_values > kFastLanesChunk) {
    return Corrupt("an inline bitpacking chunk holds ", num_values, " values (at most 1024)");
  }
  LANCE_ASSIGN_OR_RAISE(T header, ReadLE<T>(data, 0, "inline bitpacking chunk header"));
  const uint64_t bit_width = static_cast<uint64_t>(header);
  if (bit_width > kBits) {
    return Corrupt("inline bitpacking bit width ", bit_width, " exceeds the ", kBits, "-bit values");
  }
  const uint64_t body = comp::FastLanesPackedBytes(static_cast<unsigned>(bit_width));
  LANCE_ASSIGN_OR_RAISE(ByteSpan packed, SubSpan(data, sizeof(T), body, "inline bitpacking chunk"));
  if (num_values > 0 && sizeof(T) + body != data.size()) {
    return Corrupt("inline bitpacking chunk of ", data.size(), " bytes holds ", sizeof(T) + body,
                   " bytes of packed values");
  }
  LANCE_ASSIGN_OR_RAISE(auto out, AllocateZeroed(rows.size() * sizeof(T), pool));
  T* dst = reinterpret_cast<T*>(out->mutable_data());
  for (size_t i = 0; i < rows.size(); ++i) {
    if (rows[i] >= num_values) return Corrupt("value ", rows[i], " of an inline bitpacking chunk of ", num_values);
    LANCE_RETURN_NOT_OK(comp::FastLanesUnpackOne<T>(packed, static_cast<unsigned>(bit_width), rows[i], dst + i));
  }
  return DataBlock::FixedWidth(kBits, rows.size(), std::move(out));
}

}  // namespace

Result<DataBlock> UnpackInlineBitpackingRows(uint64_t bits, ByteSpan data, uint64_t num_values,
                                             const std::vector<uint64_t>& rows, arrow::MemoryPool* pool) {
  switch (bits) {
    case 8: return InlineBitpackingRowsImpl<uint8_t>(data, num_values, rows, pool);
    case 16: return InlineBitpackingRowsImpl<uint16_t>(data, num_values, rows, pool);
    case 32: return InlineBitpackingRowsImpl<uint32_t>(data, num_values, rows, pool);
    case 64: return InlineBitpackingRowsImpl<uint64_t>(data, num_values, rows, pool);
    default:
      return Status::NotImplemented("inline bitpacking of ", bits, "-bit values");
  }
}

Result<DataBlock> UnpackInlineBitpacking(uint64_t bits, ByteSpan data, uint64_t num_values, bool single_chunk,
                                   arrow::MemoryPool* pool) {
  switch (bits) {
    case 8: return InlineBitpackingImpl<uint8_t>(data, num_values, single_chunk, pool);
    case 16: return InlineBitpackingImpl<uint16_t>(data, num_values, single_chunk, pool);
    case 32: return InlineBitpackingImpl<uint32_t>(data, num_values, single_chunk, pool);
    case 64: return InlineBitpackingImpl<uint64_t>(data, num_values, single_chunk, pool);
    default:
      return Status::NotImplemented("inline bitpacking of ", bits, "-bit values");
  }
}

namespace {

template <typename T>
Result<DataBlock> OutOfLineImpl(ByteSpan data, uint64_t num_values, uint64_t bit_width, arrow::MemoryPool* pool) {
  constexpr uint64_t kBits = sizeof(T) * 8;
  if (bit_width > kBits) {
    return Corrupt("out-of-line bitpacking width ", bit_width, " exceeds the ", kBits, "-bit values");
  }
  if (data.size() % sizeof(T) != 0) {
    return Corrupt("out-of-line bitpacked buffer of ", data.size(), " bytes is not a multiple of ", sizeof(T));
  }
  const uint64_t chunk_bytes = comp::FastLanesPackedBytes(static_cast<unsigned>(bit_width));
  const uint64_t whole = num_values / kFastLanesChunk;
  const uint64_t tail = num_values % kFastLanesChunk;
  uint64_t full_bytes;
  if (MulOverflows(whole, chunk_bytes, &full_bytes)) return Corrupt("out-of-line bitpacking size overflows");
  const bool tail_raw = tail > 0 && data.size() == full_bytes + tail * sizeof(T);
  const uint64_t need = full_bytes + (tail == 0 ? 0 : (tail_raw ? tail * sizeof(T) : chunk_bytes));
  if (data.size() < need) {
    return Corrupt("out-of-line bitpacked buffer of ", data.size(), " bytes for ", num_values, " values of ",
                   bit_width, " bits (need ", need, ")");
  }
  LANCE_ASSIGN_OR_RAISE(auto out, AllocateZeroed(num_values * sizeof(T), pool));
  T* dst = reinterpret_cast<T*>(out->mutable_data());
  std::vector<T> scratch(kFastLanesChunk, 0);
  const uint64_t packed_chunks = whole + (tail > 0 && !tail_raw ? 1 : 0);
  for (uint64_t c = 0; c < packed_chunks; ++c) {
    const uint64_t count = c < whole ? kFastLanesChunk : tail;
    std::fill(scratch.begin(), scratch.end(), T{0});
    if (bit_width > 0) {
      LANCE_RETURN_NOT_OK(comp::FastLanesUnpack<T>(data.subspan(c * chunk_bytes, chunk_bytes),
                                                   static_cast<unsigned>(bit_width), std::span<T>(scratch)));
    }
    std::memcpy(dst + c * kFastLanesChunk, scratch.data(), count * sizeof(T));
  }
  if (tail_raw) std::memcpy(dst + whole * kFastLanesChunk, data.data() + full_bytes, tail * sizeof(T));
  return DataBlock::FixedWidth(kBits, num_values, std::move(out));
}

}  // namespace

Result<DataBlock> UnpackOutOfLineBitpacking(const pb21::OutOfLineBitpacking& desc, ByteSpan data, uint64_t num_values,
                                      arrow::MemoryPool* pool) {
  if (!desc.has_values() || desc.values().compression_case() != Case::kFlat) {
    return Corrupt("out-of-line bitpacking values must be flat");
  }
  const uint64_t bit_width = desc.values().flat().bits_per_value();
  switch (desc.uncompressed_bits_per_value()) {
    case 8: return OutOfLineImpl<uint8_t>(data, num_values, bit_width, pool);
    case 16: return OutOfLineImpl<uint16_t>(data, num_values, bit_width, pool);
    case 32: return OutOfLineImpl<uint32_t>(data, num_values, bit_width, pool);
    case 64: return OutOfLineImpl<uint64_t>(data, num_values, bit_width, pool);
    default:
      return Status::NotImplemented("out-of-line bitpacking of ", desc.uncompressed_bits_per_value(),
                                    "-bit values");
  }
}

}  // namespace lance::file::v2_1
