// Decoding whole fields of a 2.0 file. In 2.0 every field (struct and list
// fields too) has its own column, in pre-order; a packed struct is one column
// and its children have none; a fixed-size list has no child column.
#pragma once

#include <functional>
#include <memory>
#include <span>

#include <arrow/array.h>
#include <arrow/buffer.h>
#include <arrow/memory_pool.h>

#include "lance/file/column_data.h"
#include "lance/schema.h"
#include "lance/status.h"

namespace lance::file::v2_0 {

/// The number of columns `field` (with its descendants) occupies.
int NumColumns(const Field& field);

/// As above, but also recognizes the layout of string and binary fields
/// written before pylance 0.16: a list<uint8> offsets column plus a uint8
/// items column (2 columns), which only the columns reveal. `columns` starts
/// at the field's first column and may run on to the end of the file; only
/// the page encodings are looked at (the buffers need not be loaded).
int NumColumns(const Field& field, std::span<const ColumnData> columns);

/// Decodes all rows of `field` from its columns, which must be exactly
/// NumColumns(field, columns) columns in pre-order (NumColumns(field) unless
/// the file holds pre-0.16 list<uint8> strings). The result has the Arrow type of
/// ArrowTypeFromField(field) and `num_rows` rows. Corrupt or unsupported
/// encodings give an error naming the field and the problem.
///
/// Blob columns (ColumnEncoding.blob) keep their values outside any page, at
/// absolute file positions; this overload cannot reach them and returns
/// NotImplemented for a blob column (use the one below).
Result<std::shared_ptr<arrow::Array>> DecodeField(const Field& field,
                                                  std::span<const ColumnData> columns,
                                                  uint64_t num_rows, arrow::MemoryPool* pool);

/// Reads `size` bytes at absolute `position` of the file being decoded.
using FileRangeReader =
    std::function<Result<std::shared_ptr<arrow::Buffer>>(uint64_t position, uint64_t size)>;

/// As above; blob values (of blob columns anywhere in the field) are read
/// through `read_range`, giving the large_binary values pylance's
/// LanceFileReader returns for them.
Result<std::shared_ptr<arrow::Array>> DecodeField(const Field& field,
                                                  std::span<const ColumnData> columns,
                                                  uint64_t num_rows, arrow::MemoryPool* pool,
                                                  const FileRangeReader& read_range);

/// The blob descriptions of a blob column: struct<position: uint64, size:
/// uint64> (a null value is (1, 0), an empty one (0, 0)), `num_rows` rows.
Result<std::shared_ptr<arrow::Array>> DecodeBlobDescriptions(const Field& field,
                                                             const ColumnData& column,
                                                             uint64_t num_rows,
                                                             arrow::MemoryPool* pool);

}  // namespace lance::file::v2_0
