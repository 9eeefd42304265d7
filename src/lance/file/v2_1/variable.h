// Variable-width values: the mini-block chunk layout (n+1 offsets, the
// first pointing past them, then the bytes; or offsets decoded by their own
// encoding), the block layout used for dictionaries, FSST, and per-value
// general compression of full-zip values.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <arrow/buffer.h>
#include <arrow/memory_pool.h>

#include "lance/encodings_v2_1.pb.h"
#include "lance/file/compression/fsst.h"
#include "lance/file/v2_1/data_block.h"

namespace lance::file::v2_1 {

/// True if an offsets encoding carries no payload of its own (constant,
/// range, or deltas that are themselves metadata-only).
bool IsMetadataOnly(const lance::pb::encodings21::CompressiveEncoding& encoding);

/// Decodes the `num_values` values of one mini-block chunk.
Result<DataBlock> DecodeVariableChunk(const lance::pb::encodings21::Variable& variable,
                                      std::vector<std::shared_ptr<arrow::Buffer>> buffers, uint64_t num_values,
                                      arrow::MemoryPool* pool);

/// Decodes the block layout: [width][bytes start][offsets][bytes], width and
/// start both u32 (32-bit offsets) or u64 (64-bit offsets).
Result<DataBlock> DecodeVariableBlock(const std::shared_ptr<arrow::Buffer>& data, uint64_t num_values,
                                      arrow::MemoryPool* pool);

/// Checks what FsstDecoder::DecompressAppend cannot: the block is
/// variable-width with enough offset bytes (the offsets themselves are
/// checked against the data while decoding).
Status CheckFsstInput(const DataBlock& compressed);

/// Decompresses FSST-compressed values.
Result<DataBlock> DecodeFsst(const std::string& symbol_table, const DataBlock& compressed, arrow::MemoryPool* pool);
/// The same with a table parsed once (the chunks of a page share it).
Result<DataBlock> DecodeFsst(const compression::FsstDecoder& decoder, const DataBlock& compressed,
                             arrow::MemoryPool* pool);

/// Decompresses each value of `values` on its own.
Result<DataBlock> DecompressEachValue(const lance::pb::encodings21::BufferCompression& compression,
                                      const DataBlock& values, arrow::MemoryPool* pool);

/// A variable-width block (64-bit offsets) holding `values`.
Result<DataBlock> VariableFromValues(const lance::file::compression::VariableValues& values, uint64_t num_values,
                                     arrow::MemoryPool* pool);

}  // namespace lance::file::v2_1
