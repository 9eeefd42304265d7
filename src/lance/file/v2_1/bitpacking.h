// FastLanes bitpacking as 2.1+ pages use it: inline (each chunk of 1024
// values starts with a word holding its bit width) and out of line (one bit
// width for the whole buffer; a short tail may be stored unpacked).
#pragma once

#include <cstdint>

#include <arrow/memory_pool.h>

#include "lance/encodings_v2_1.pb.h"
#include "lance/file/v2_1/bytes.h"
#include "lance/file/v2_1/data_block.h"

namespace lance::file::v2_1 {

/// Unpacks `num_values` inline-bitpacked values of `bits` (8/16/32/64) bits.
/// `single_chunk` requires exactly one chunk (a mini-block chunk).
Result<DataBlock> UnpackInlineBitpacking(uint64_t bits, ByteSpan data, uint64_t num_values, bool single_chunk,
                                         arrow::MemoryPool* pool);

/// The values at `rows` (each < num_values, any order, repeats allowed) of
/// one inline-bitpacked mini-block chunk of `num_values` values, unpacking
/// only those: a take keeps a few values of each chunk it reads.
Result<DataBlock> UnpackInlineBitpackingRows(uint64_t bits, ByteSpan data, uint64_t num_values,
                                             const std::vector<uint64_t>& rows, arrow::MemoryPool* pool);

/// Unpacks `num_values` out-of-line bitpacked values.
Result<DataBlock> UnpackOutOfLineBitpacking(const lance::pb::encodings21::OutOfLineBitpacking& desc, ByteSpan data,
                                            uint64_t num_values, arrow::MemoryPool* pool);

}  // namespace lance::file::v2_1
