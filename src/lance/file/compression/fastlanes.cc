// FastLanes bit-packing in the reference's transposed layout.
//
// Layout (for an element type of T bits, LANES = 1024 / T):
//   * The 1024 input values are viewed as T "rows" of LANES "lanes". The value
//     that lands in (row, lane) is input[Transposed(row, lane)], where
//       Transposed(row, lane) = kOrder[row / 8] * 16 + (row % 8) * 128 + lane
//     and kOrder = {0, 4, 2, 6, 1, 5, 3, 7} (the reference's FL_ORDER).
//   * Each lane is an independent little bit-stream: row r of a lane occupies
//     bits [r * W, (r + 1) * W) of that stream, least significant bit first.
//   * Bit-stream word k of lane l is the packed word at index k * LANES + l;
//     each lane has W words, so a block is W * LANES = 1024 * W / T words, i.e.
//     1024 * W / 8 bytes. Words are stored little-endian.
// W = 0 packs to nothing (and unpacks to zeros); W = T stores each value whole.
//
// This is a plain scalar implementation; it produces exactly the reference's
// bits (checked against vectors extracted from files written by pylance).

#include "lance/file/compression/fastlanes.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <limits>
#include <type_traits>

namespace lance::file::compression {

namespace {

constexpr std::array<size_t, 8> kOrder = {0, 4, 2, 6, 1, 5, 3, 7};

constexpr size_t Transposed(size_t row, size_t lane) {
  return kOrder[row / 8] * 16 + (row % 8) * 128 + lane;
}

template <typename T>
T LoadWord(const uint8_t* p) {
  if constexpr (std::endian::native == std::endian::little) {
    T v;
    std::memcpy(&v, p, sizeof(T));
    return v;
  } else {
    T v = 0;
    for (size_t i = sizeof(T); i-- > 0;) v = static_cast<T>((v << 8) | p[i]);
    return v;
  }
}

template <typename T>
void StoreWord(uint8_t* p, T v) {
  if constexpr (std::endian::native == std::endian::little) {
    std::memcpy(p, &v, sizeof(T));
  } else {
    for (size_t i = 0; i < sizeof(T); ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
  }
}

template <typename T>
constexpr T LowMask(unsigned bits) {
  constexpr unsigned kBits = std::numeric_limits<T>::digits;
  return bits >= kBits ? std::numeric_limits<T>::max() : static_cast<T>((T{1} << bits) - 1);
}

template <typename T>
Status CheckWidth(unsigned bit_width) {
  constexpr unsigned kBits = std::numeric_limits<T>::digits;
  if (bit_width > kBits) {
    return Status::Invalid("FastLanes: bit width ", bit_width, " exceeds the ", kBits,
                           "-bit element type");
  }
  return Status::OK();
}

}  // namespace

template <typename T>
Status FastLanesUnpack(std::span<const uint8_t> packed, unsigned bit_width, std::span<T> out) {
  static_assert(std::is_unsigned_v<T>, "FastLanes works on unsigned words");
  constexpr unsigned kBits = std::numeric_limits<T>::digits;
  constexpr size_t kLanes = kFastLanesValues / kBits;
  LANCE_RETURN_NOT_OK(CheckWidth<T>(bit_width));
  const size_t need = FastLanesPackedBytes(bit_width);
  if (packed.size() < need) {
    return Status::Invalid("FastLanes: ", bit_width, "-bit block needs ", need, " bytes, have ",
                           packed.size());
  }
  if (out.size() < kFastLanesValues) {
    return Status::Invalid("FastLanes: output holds ", out.size(), " values, need ",
                           kFastLanesValues);
  }
  if (bit_width == 0) {
    std::fill(out.begin(), out.begin() + kFastLanesValues, T{0});
    return Status::OK();
  }
  const T mask = LowMask<T>(bit_width);
  const uint8_t* base = packed.data();
  auto word = [&](size_t index) { return LoadWord<T>(base + index * sizeof(T)); };
  // Row by row: a row's shift is the same in every lane, and its lanes are
  // contiguous both in the packed words and in the output, so the inner
  // loop is a plain vectorizable pass.
  for (size_t row = 0; row < kBits; ++row) {
    const size_t bit = row * bit_width;
    const size_t k = bit / kBits;
    const unsigned shift = static_cast<unsigned>(bit % kBits);
    T* dst = out.data() + Transposed(row, 0);
    if (shift + bit_width > kBits) {
      // The values continue in the lanes' next words (k + 1 < bit_width here).
      for (size_t lane = 0; lane < kLanes; ++lane) {
        const T lo = static_cast<T>(word(k * kLanes + lane) >> shift);
        const T hi = static_cast<T>(word((k + 1) * kLanes + lane) << (kBits - shift));
        dst[lane] = static_cast<T>((lo | hi) & mask);
      }
    } else {
      for (size_t lane = 0; lane < kLanes; ++lane) {
        dst[lane] = static_cast<T>(static_cast<T>(word(k * kLanes + lane) >> shift) & mask);
      }
    }
  }
  return Status::OK();
}

template <typename T>
Status FastLanesPack(std::span<const T> in, unsigned bit_width, std::span<uint8_t> out) {
  static_assert(std::is_unsigned_v<T>, "FastLanes works on unsigned words");
  constexpr unsigned kBits = std::numeric_limits<T>::digits;
  constexpr size_t kLanes = kFastLanesValues / kBits;
  LANCE_RETURN_NOT_OK(CheckWidth<T>(bit_width));
  if (in.size() < kFastLanesValues) {
    return Status::Invalid("FastLanes: input holds ", in.size(), " values, need ",
                           kFastLanesValues);
  }
  const size_t need = FastLanesPackedBytes(bit_width);
  if (out.size() < need) {
    return Status::Invalid("FastLanes: ", bit_width, "-bit block needs ", need,
                           " output bytes, have ", out.size());
  }
  const T mask = LowMask<T>(bit_width);
  for (size_t i = 0; i < kFastLanesValues; ++i) {
    if ((in[i] & ~mask) != 0) {
      return Status::Invalid("FastLanes: value at index ", i, " does not fit in ", bit_width,
                             " bits");
    }
  }
  if (bit_width == 0) return Status::OK();

  const size_t num_words = need / sizeof(T);
  // Accumulate in native words, then store little-endian.
  T words[kFastLanesValues];  // at most 1024 words (bit_width == T)
  std::fill(words, words + num_words, T{0});
  for (size_t lane = 0; lane < kLanes; ++lane) {
    for (size_t row = 0; row < kBits; ++row) {
      const T v = in[Transposed(row, lane)];
      const size_t bit = row * bit_width;
      const size_t k = bit / kBits;
      const unsigned shift = static_cast<unsigned>(bit % kBits);
      words[k * kLanes + lane] = static_cast<T>(words[k * kLanes + lane] | static_cast<T>(v << shift));
      if (shift + bit_width > kBits) {
        words[(k + 1) * kLanes + lane] =
            static_cast<T>(words[(k + 1) * kLanes + lane] | static_cast<T>(v >> (kBits - shift)));
      }
    }
  }
  for (size_t i = 0; i < num_words; ++i) StoreWord<T>(out.data() + i * sizeof(T), words[i]);
  return Status::OK();
}

template <typename T>
Status FastLanesUnpackOne(std::span<const uint8_t> packed, unsigned bit_width, size_t index, T* out) {
  static_assert(std::is_unsigned_v<T>, "FastLanes works on unsigned words");
  constexpr unsigned kBits = std::numeric_limits<T>::digits;
  constexpr size_t kLanes = kFastLanesValues / kBits;
  LANCE_RETURN_NOT_OK(CheckWidth<T>(bit_width));
  const size_t need = FastLanesPackedBytes(bit_width);
  if (packed.size() < need) {
    return Status::Invalid("FastLanes: ", bit_width, "-bit block needs ", need, " bytes, have ", packed.size());
  }
  if (index >= kFastLanesValues) return Status::Invalid("FastLanes: value ", index, " of a 1024-value block");
  if (bit_width == 0) {
    *out = T{0};
    return Status::OK();
  }
  // Inverts Transposed(): index = kOrder[row / 8] * 16 + (row % 8) * 128 + lane.
  const size_t rest = index % 128;
  size_t row = kBits, lane = 0;
  for (size_t g = 0; g < kBits / 8; ++g) {
    const size_t base = kOrder[g] * 16;
    if (rest >= base && rest < base + kLanes) {
      row = g * 8 + index / 128;
      lane = rest - base;
      break;
    }
  }
  if (row >= kBits) return Status::Invalid("FastLanes: no position for value ", index);
  const T mask = LowMask<T>(bit_width);
  const uint8_t* base = packed.data();
  auto word = [&](size_t i) { return LoadWord<T>(base + i * sizeof(T)); };
  const size_t bit = row * bit_width;
  const size_t k = bit / kBits;
  const unsigned shift = static_cast<unsigned>(bit % kBits);
  T v = static_cast<T>(word(k * kLanes + lane) >> shift);
  if (shift + bit_width > kBits) v = static_cast<T>(v | static_cast<T>(word((k + 1) * kLanes + lane) << (kBits - shift)));
  *out = static_cast<T>(v & mask);
  return Status::OK();
}

template Status FastLanesUnpackOne<uint8_t>(std::span<const uint8_t>, unsigned, size_t, uint8_t*);
template Status FastLanesUnpackOne<uint16_t>(std::span<const uint8_t>, unsigned, size_t, uint16_t*);
template Status FastLanesUnpackOne<uint32_t>(std::span<const uint8_t>, unsigned, size_t, uint32_t*);
template Status FastLanesUnpackOne<uint64_t>(std::span<const uint8_t>, unsigned, size_t, uint64_t*);

template Status FastLanesUnpack<uint8_t>(std::span<const uint8_t>, unsigned, std::span<uint8_t>);
template Status FastLanesUnpack<uint16_t>(std::span<const uint8_t>, unsigned, std::span<uint16_t>);
template Status FastLanesUnpack<uint32_t>(std::span<const uint8_t>, unsigned, std::span<uint32_t>);
template Status FastLanesUnpack<uint64_t>(std::span<const uint8_t>, unsigned, std::span<uint64_t>);

template Status FastLanesPack<uint8_t>(std::span<const uint8_t>, unsigned, std::span<uint8_t>);
template Status FastLanesPack<uint16_t>(std::span<const uint16_t>, unsigned, std::span<uint8_t>);
template Status FastLanesPack<uint32_t>(std::span<const uint32_t>, unsigned, std::span<uint8_t>);
template Status FastLanesPack<uint64_t>(std::span<const uint64_t>, unsigned, std::span<uint8_t>);

}  // namespace lance::file::compression
