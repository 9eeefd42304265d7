// Run-length encoding as 2.1+ pages use it: a buffer of run values and a
// buffer of run lengths (8, 16 or 32 bits), each possibly compressed by a
// child encoding. Mini-block chunks hold the two buffers; the block form
// frames them as [u64 values size][values][run lengths].
#pragma once

#include <cstdint>
#include <memory>

#include <arrow/buffer.h>
#include <arrow/memory_pool.h>

#include "lance/encodings_v2_1.pb.h"
#include "lance/file/v2_1/data_block.h"

namespace lance::file::v2_1 {

/// The bit width of the values `rle` decodes to.
Result<uint64_t> RleValueBits(const lance::pb::encodings21::Rle& rle);

/// Decodes a mini-block chunk of `num_values` values. Runs that overshoot the
/// count are cut (older writers produced them).
Result<DataBlock> DecodeRleChunk(const lance::pb::encodings21::Rle& rle, const std::shared_ptr<arrow::Buffer>& values,
                                 const std::shared_ptr<arrow::Buffer>& run_lengths, uint64_t num_values,
                                 arrow::MemoryPool* pool);

/// Decodes the block form; the runs must hold exactly `num_values` values.
Result<DataBlock> DecodeRleBlock(const lance::pb::encodings21::Rle& rle, const std::shared_ptr<arrow::Buffer>& data,
                                 uint64_t num_values, arrow::MemoryPool* pool);

/// The number of values a block-form buffer holds (the sum of its runs).
Result<uint64_t> RleBlockValueCount(const lance::pb::encodings21::Rle& rle,
                                    const std::shared_ptr<arrow::Buffer>& data,
                                    arrow::MemoryPool* pool);

}  // namespace lance::file::v2_1
