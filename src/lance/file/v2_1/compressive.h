// Decoding of CompressiveEncoding trees (the value/level/dictionary
// compressions of 2.1+ pages) into DataBlocks, in the four contexts the
// format uses them:
//  * mini-block: one chunk's value buffers -> the chunk's values
//  * block: one whole buffer -> values (levels, dictionaries, RLE children)
//  * fixed per-value: full-zip fixed-width values (already unzipped)
//  * variable per-value: full-zip variable-width values (already unzipped)
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <arrow/buffer.h>
#include <arrow/memory_pool.h>

#include "lance/encodings_v2_1.pb.h"
#include "lance/file/v2_1/data_block.h"
#include "lance/status.h"

namespace lance::file::v2_1 {

namespace pb21 = lance::pb::encodings21;
using BufferPtr = std::shared_ptr<arrow::Buffer>;

/// A short name for the encoding at the root of `encoding` ("flat", "rle", ...).
std::string EncodingName(const pb21::CompressiveEncoding& encoding);

/// The number of value buffers each mini-block chunk holds for `encoding`.
Result<uint64_t> MiniBlockBufferCount(const pb21::CompressiveEncoding& encoding);

/// Decodes the values of one mini-block chunk.
Result<DataBlock> DecompressMiniBlock(const pb21::CompressiveEncoding& encoding, std::vector<BufferPtr> buffers,
                                      uint64_t num_values, arrow::MemoryPool* pool);

/// Decodes a whole buffer of `num_values` values.
Result<DataBlock> DecompressBlock(const pb21::CompressiveEncoding& encoding, const BufferPtr& data,
                                  uint64_t num_values, arrow::MemoryPool* pool);

/// For block encodings whose payload records its own length (RLE): the
/// number of values `data` holds. nullopt when the encoding cannot tell.
Result<std::optional<uint64_t>> InferBlockValueCount(const pb21::CompressiveEncoding& encoding,
                                                     const BufferPtr& data, arrow::MemoryPool* pool);

/// Bits each value occupies in a full-zip fixed-width page (including any
/// zipped fixed-size-list validity).
Result<uint64_t> FixedPerValueBits(const pb21::CompressiveEncoding& encoding);

/// Decodes `num_values` contiguous full-zip fixed-width values.
Result<DataBlock> DecompressFixedPerValue(const pb21::CompressiveEncoding& encoding, const BufferPtr& data,
                                          uint64_t num_values, arrow::MemoryPool* pool);

/// Decodes full-zip variable-width values (`values` is a kVariableWidth block
/// of the stored, possibly compressed, values).
Result<DataBlock> DecompressVariablePerValue(const pb21::CompressiveEncoding& encoding, DataBlock values,
                                             arrow::MemoryPool* pool);

}  // namespace lance::file::v2_1
