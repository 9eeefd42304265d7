// The decoded-but-not-yet-Arrow form of a run of values: what compressive
// encodings produce and what page decoders concatenate. Mirrors the shapes
// the format distinguishes (fixed-width, variable-width, fixed-size list,
// nullable, packed struct, all-null, constant).
#pragma once

#include "lance/file/v2_1/bytes.h"

#include <cstdint>
#include <memory>
#include <vector>

#include <arrow/array/data.h>
#include <arrow/buffer.h>
#include <arrow/memory_pool.h>
#include <arrow/type_fwd.h>

#include "lance/status.h"

namespace lance::file::v2_1 {

enum class BlockKind {
  kAllNull,        // num_values nulls, no buffers
  kFixedWidth,     // `data` holds num_values values of bits_per_value bits
  kVariableWidth,  // `offsets` holds num_values+1 offsets (bits_per_offset) into `data`
  kFixedSizeList,  // children[0] holds num_values*dimension items
  kNullable,       // `data` is a validity bitmap over children[0]
  kStruct,         // children are the fields (packed structs)
  kConstant,       // `data` is one fixed-width value repeated num_values times
};

struct DataBlock {
  BlockKind kind = BlockKind::kAllNull;
  uint64_t num_values = 0;
  uint64_t bits_per_value = 0;
  uint32_t bits_per_offset = 0;
  uint64_t dimension = 0;
  std::shared_ptr<arrow::Buffer> data;
  std::shared_ptr<arrow::Buffer> offsets;
  std::vector<DataBlock> children;

  static DataBlock AllNull(uint64_t num_values);
  static DataBlock FixedWidth(uint64_t bits_per_value, uint64_t num_values,
                              std::shared_ptr<arrow::Buffer> data);
  static DataBlock Variable(uint32_t bits_per_offset, uint64_t num_values,
                            std::shared_ptr<arrow::Buffer> offsets, std::shared_ptr<arrow::Buffer> data);
  static DataBlock Fsl(uint64_t dimension, uint64_t num_values, DataBlock child);
  static DataBlock Nullable(std::shared_ptr<arrow::Buffer> validity, DataBlock child);
  static DataBlock Struct(uint64_t num_values, std::vector<DataBlock> children);
  static DataBlock Constant(std::shared_ptr<arrow::Buffer> scalar, uint64_t num_values);
};

/// Checks that the block's buffers hold what its sizes claim and that
/// variable-width offsets are non-decreasing and inside the data.
Status ValidateBlock(const DataBlock& block);

/// Offset `i` of a variable-width block (no bounds check; validate first).
inline uint64_t VariableOffset(const DataBlock& block, uint64_t i) {
  const uint8_t* p = block.offsets->data();
  if (block.bits_per_offset == 32) return LoadLE<uint32_t>(p + i * 4);
  return LoadLE<uint64_t>(p + i * 8);
}

/// Concatenates blocks of the same shape (as produced by the chunks of one page).
Result<DataBlock> ConcatBlocks(std::vector<DataBlock> blocks, arrow::MemoryPool* pool);

/// Rows [start, start+length) of a block (copying where needed).
Result<DataBlock> SliceBlock(const DataBlock& block, uint64_t start, uint64_t length, arrow::MemoryPool* pool);

/// Gathers the values at `indices` (each < block.num_values) into a new block.
Result<DataBlock> TakeBlock(const DataBlock& block, const std::vector<uint64_t>& indices,
                            arrow::MemoryPool* pool);

/// Converts a block into Arrow data of `type` (no top-level validity unless
/// the block is kNullable/kAllNull). Errors if the block's shape cannot
/// represent `type`.
Result<std::shared_ptr<arrow::ArrayData>> BlockToArrow(const DataBlock& block,
                                                       const std::shared_ptr<arrow::DataType>& type,
                                                       arrow::MemoryPool* pool);

/// The width in bits of one value of a fixed-width Arrow type, or 0 if the
/// type is not fixed-width.
int64_t FixedBitWidth(const arrow::DataType& type);

}  // namespace lance::file::v2_1
