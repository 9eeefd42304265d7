// Packed structs: all fields of a row stored together. Fixed-width packed
// structs are rows of concatenated field values (mini-block); variable
// packed structs (2.2, full-zip) hold per row each fixed field's bytes and
// each variable field's length-prefixed bytes.
#pragma once

#include <cstdint>
#include <vector>

#include <arrow/memory_pool.h>

#include "lance/encodings_v2_1.pb.h"
#include "lance/file/v2_1/data_block.h"

namespace lance::file::v2_1 {

/// The fields' bit widths.
Result<std::vector<uint64_t>> PackedFieldBits(const lance::pb::encodings21::PackedStruct& packed);

/// Splits fixed-width rows into one block per field.
Result<DataBlock> UnpackPackedRows(const DataBlock& rows, const std::vector<uint64_t>& field_bits,
                                   arrow::MemoryPool* pool);

/// Splits variable-width rows into one block per field, each decoded by its
/// field's encoding.
Result<DataBlock> DecodeVariablePackedStruct(const lance::pb::encodings21::VariablePackedStruct& desc,
                                             const DataBlock& rows, arrow::MemoryPool* pool);

}  // namespace lance::file::v2_1
