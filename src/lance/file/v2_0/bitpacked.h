// The bit-packed integer encodings older 2.0 writers could emit: Bitpacked
// (values packed back to back, LSB first, optionally sign-extended) and
// BitpackedForNonNeg (FastLanes blocks of 1024 values).
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include <arrow/buffer.h>
#include <arrow/memory_pool.h>

#include "lance/status.h"

namespace lance::file::v2_0 {

/// Unpacks `num_values` values of `compressed_bits` bits stored back to back
/// (value i at bit i*compressed_bits, least significant bit first) into
/// little-endian values of `uncompressed_bits` (8, 16, 32 or 64). With
/// `is_signed`, the top stored bit is a sign bit and is extended.
Result<std::shared_ptr<arrow::Buffer>> UnpackSequentialBits(std::span<const uint8_t> packed,
                                                            uint64_t compressed_bits,
                                                            uint64_t uncompressed_bits, bool is_signed,
                                                            uint64_t num_values,
                                                            arrow::MemoryPool* pool);

/// Unpacks `num_values` values from consecutive FastLanes blocks, each of
/// 1024 values at `compressed_bits` bits (the last block zero padded), into
/// little-endian values of `uncompressed_bits` (8, 16, 32 or 64).
Result<std::shared_ptr<arrow::Buffer>> UnpackFastLanesBlocks(std::span<const uint8_t> packed,
                                                             uint64_t compressed_bits,
                                                             uint64_t uncompressed_bits,
                                                             uint64_t num_values,
                                                             arrow::MemoryPool* pool);

}  // namespace lance::file::v2_0
