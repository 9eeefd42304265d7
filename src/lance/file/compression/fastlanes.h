// FastLanes bit-packing: 1024 values per block in the transposed ("FL_ORDER")
// layout the reference uses for inline and out-of-line bitpacking.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "lance/status.h"

namespace lance::file::compression {

inline constexpr size_t kFastLanesValues = 1024;

/// Bytes that 1024 values of `bit_width` bits occupy when packed.
constexpr size_t FastLanesPackedBytes(unsigned bit_width) { return kFastLanesValues * bit_width / 8; }

/// Unpacks one block of 1024 values of `bit_width` bits for element type T
/// (uint8_t, uint16_t, uint32_t or uint64_t). Errors (never reads out of
/// bounds) when bit_width > 8*sizeof(T), packed is shorter than
/// FastLanesPackedBytes(bit_width), or out holds fewer than 1024 values.
template <typename T>
Status FastLanesUnpack(std::span<const uint8_t> packed, unsigned bit_width, std::span<T> out);

/// The value at `index` (< 1024) of a block packed as FastLanesUnpack reads
/// it, without unpacking the others: a take of a few rows of a block. Same
/// checks as FastLanesUnpack.
template <typename T>
Status FastLanesUnpackOne(std::span<const uint8_t> packed, unsigned bit_width, size_t index, T* out);

/// Packs 1024 values (each must fit in bit_width bits) into
/// FastLanesPackedBytes(bit_width) bytes of `out`.
template <typename T>
Status FastLanesPack(std::span<const T> in, unsigned bit_width, std::span<uint8_t> out);

}  // namespace lance::file::compression
