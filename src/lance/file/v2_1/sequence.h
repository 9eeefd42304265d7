// Values described by metadata rather than stored: constants, arithmetic
// ranges (start + i * step) and deltas from a base (whose deltas are
// themselves encoded).
#pragma once

#include <cstdint>
#include <memory>

#include <arrow/buffer.h>
#include <arrow/memory_pool.h>

#include "lance/encodings_v2_1.pb.h"
#include "lance/file/v2_1/data_block.h"

namespace lance::file::v2_1 {

/// `num_values` copies of the constant, or nulls if it has no value.
Result<DataBlock> DecodeConstant(const lance::pb::encodings21::Constant& constant, uint64_t num_values,
                                 arrow::MemoryPool* pool);

/// A constant block of up to 8 bytes (zero-extended) as `bits`-bit values.
Result<DataBlock> ConstantToFixed(const DataBlock& constant, uint64_t bits, arrow::MemoryPool* pool);

Result<DataBlock> DecodeRange(const lance::pb::encodings21::Range& range, uint64_t num_values,
                              arrow::MemoryPool* pool);

/// `data` holds the encoded deltas (num_values - 1 of them).
Result<DataBlock> DecodeDelta(const lance::pb::encodings21::Delta& delta, const std::shared_ptr<arrow::Buffer>& data,
                              uint64_t num_values, arrow::MemoryPool* pool);

}  // namespace lance::file::v2_1
