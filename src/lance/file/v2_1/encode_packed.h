// Packed structs with variable-width children (file version 2.2): each row
// is its children's bytes one after another -- fixed-width values as they
// are, variable-width ones behind a 32- or 64-bit length -- stored as one
// variable-width value per row (full-zip) with a VariablePackedStruct
// encoding describing the children.
#pragma once

#include <memory>
#include <vector>

#include <arrow/array.h>

#include "lance/file/v2_1/encode_values.h"
#include "lance/status.h"

namespace lance::file::v2_1::encode {

/// True if a child of the struct type is variable-width.
bool HasVariableWidthChild(const arrow::DataType& struct_type);

/// The rows of a packed struct array (struct validity is carried by the def
/// levels; the children's is not stored, as in the reference). Each variable
/// child is FSST- or zstd-compressed value by value under the reference's
/// rules, with its own entry of `child_params` (defaults if missing). The
/// result's row_encoding holds the VariablePackedStruct.
Result<PageValues> PackVariableRows(const arrow::ArrayData& data, const std::vector<CompressionParams>& child_params);

}  // namespace lance::file::v2_1::encode
