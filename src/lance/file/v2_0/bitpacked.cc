// Unpacking of the 2.0-era bit-packed encodings.
#include "lance/file/v2_0/bitpacked.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <vector>

#include "lance/file/compression/fastlanes.h"

namespace lance::file::v2_0 {
namespace {

static_assert(std::endian::native == std::endian::little, "2.0 buffers are little-endian");

// Far more values than any page holds; keeps every size product below 2^64.
constexpr uint64_t kMaxValues = uint64_t{1} << 40;

Status CheckWidths(uint64_t compressed_bits, uint64_t uncompressed_bits, uint64_t num_values) {
  if (uncompressed_bits != 8 && uncompressed_bits != 16 && uncompressed_bits != 32 &&
      uncompressed_bits != 64) {
    return Status::Invalid("bit-packed values must unpack to 8, 16, 32 or 64 bits, not ",
                           uncompressed_bits);
  }
  if (compressed_bits == 0 || compressed_bits > uncompressed_bits) {
    return Status::Invalid("bit-packed width ", compressed_bits, " is outside 1..", uncompressed_bits);
  }
  if (num_values > kMaxValues) return Status::Invalid("absurd value count ", num_values);
  return Status::OK();
}

template <typename T>
Status UnpackBlocks(std::span<const uint8_t> packed, unsigned bits, uint64_t num_values,
                    uint8_t* out) {
  const size_t block_bytes = compression::FastLanesPackedBytes(bits);
  std::vector<T> block(compression::kFastLanesValues);
  uint64_t done = 0;
  for (size_t b = 0; done < num_values; ++b) {
    LANCE_RETURN_NOT_OK(compression::FastLanesUnpack<T>(packed.subspan(b * block_bytes, block_bytes),
                                                        bits, std::span<T>(block)));
    const uint64_t take = std::min<uint64_t>(compression::kFastLanesValues, num_values - done);
    std::memcpy(out + done * sizeof(T), block.data(), take * sizeof(T));
    done += take;
  }
  return Status::OK();
}

}  // namespace

Result<std::shared_ptr<arrow::Buffer>> UnpackSequentialBits(std::span<const uint8_t> packed,
                                                            uint64_t compressed_bits,
                                                            uint64_t uncompressed_bits, bool is_signed,
                                                            uint64_t num_values,
                                                            arrow::MemoryPool* pool) {
  LANCE_RETURN_NOT_OK(CheckWidths(compressed_bits, uncompressed_bits, num_values));
  const uint64_t needed = (num_values * compressed_bits + 7) / 8;
  if (packed.size() < needed) {
    return Status::Invalid("bit-packed buffer has ", packed.size(), " bytes, ", needed, " needed for ",
                           num_values, " values of ", compressed_bits, " bits");
  }
  const uint64_t out_width = uncompressed_bits / 8;
  LANCE_ASSIGN_OR_RAISE(auto out, arrow::AllocateBuffer(static_cast<int64_t>(num_values * out_width), pool));
  uint8_t* dst = out->mutable_data();
  const unsigned cb = static_cast<unsigned>(compressed_bits);
  uint64_t bit = 0;
  for (uint64_t i = 0; i < num_values; ++i) {
    uint64_t value = 0;
    for (unsigned got = 0; got < cb;) {
      const uint64_t byte = bit >> 3;
      const unsigned offset = static_cast<unsigned>(bit & 7);
      const unsigned take = std::min(8 - offset, cb - got);
      const uint64_t part = (static_cast<uint64_t>(packed[byte]) >> offset) & ((uint64_t{1} << take) - 1);
      value |= part << got;
      got += take;
      bit += take;
    }
    if (is_signed && cb < 64 && ((value >> (cb - 1)) & 1)) value |= ~uint64_t{0} << cb;
    std::memcpy(dst + i * out_width, &value, out_width);  // low bytes: little-endian
  }
  return std::shared_ptr<arrow::Buffer>(std::move(out));
}

Result<std::shared_ptr<arrow::Buffer>> UnpackFastLanesBlocks(std::span<const uint8_t> packed,
                                                             uint64_t compressed_bits,
                                                             uint64_t uncompressed_bits,
                                                             uint64_t num_values,
                                                             arrow::MemoryPool* pool) {
  LANCE_RETURN_NOT_OK(CheckWidths(compressed_bits, uncompressed_bits, num_values));
  const unsigned bits = static_cast<unsigned>(compressed_bits);
  const uint64_t blocks = (num_values + compression::kFastLanesValues - 1) / compression::kFastLanesValues;
  const uint64_t needed = blocks * compression::FastLanesPackedBytes(bits);
  if (packed.size() < needed) {
    return Status::Invalid("FastLanes buffer has ", packed.size(), " bytes, ", needed, " needed for ",
                           blocks, " blocks of ", compressed_bits, "-bit values");
  }
  const uint64_t out_width = uncompressed_bits / 8;
  LANCE_ASSIGN_OR_RAISE(auto out, arrow::AllocateBuffer(static_cast<int64_t>(num_values * out_width), pool));
  switch (uncompressed_bits) {
    case 8: LANCE_RETURN_NOT_OK(UnpackBlocks<uint8_t>(packed, bits, num_values, out->mutable_data())); break;
    case 16: LANCE_RETURN_NOT_OK(UnpackBlocks<uint16_t>(packed, bits, num_values, out->mutable_data())); break;
    case 32: LANCE_RETURN_NOT_OK(UnpackBlocks<uint32_t>(packed, bits, num_values, out->mutable_data())); break;
    default: LANCE_RETURN_NOT_OK(UnpackBlocks<uint64_t>(packed, bits, num_values, out->mutable_data())); break;
  }
  return std::shared_ptr<arrow::Buffer>(std::move(out));
}

}  // namespace lance::file::v2_0
