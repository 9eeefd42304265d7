// Decoding whole fields of a 2.1/2.2 file. Only leaf fields have columns
// (plus one per packed struct and per blob field); struct and list layers
// live in each leaf's repetition/definition levels.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <vector>

#include <arrow/array.h>
#include <arrow/memory_pool.h>

#include "lance/file/column_data.h"
#include "lance/file/version.h"
#include "lance/schema.h"
#include "lance/status.h"

namespace lance::file::v2_1 {

/// The number of columns `field` (with its descendants) occupies.
int NumColumns(const Field& field);

/// For each column of `field` (pre-order of the leaves), how many of its
/// page rows each row of the field spans: 1, or the product of the
/// dimensions of the fixed-size lists of structs enclosing the column, whose
/// pages count items. 0 when a row spans no fixed run (a fixed-size list of
/// structs inside a list).
std::vector<uint64_t> ItemsPerRow(const Field& field);

/// Decodes all rows of `field` from its columns, which must be exactly
/// NumColumns(field) columns in pre-order of the leaves. The result has the
/// Arrow type of ArrowTypeFromField(field) and `num_rows` rows. Corrupt or
/// unsupported encodings give an error naming the field and the problem.
Result<std::shared_ptr<arrow::Array>> DecodeField(const Field& field,
                                                  std::span<const ColumnData> columns,
                                                  uint64_t num_rows, FileVersion version,
                                                  arrow::MemoryPool* pool);

/// Reads `size` bytes at absolute file offset `position`. Blob values live
/// outside the page buffers, so decoding a blob column needs one.
using BlobReader = std::function<Result<std::shared_ptr<arrow::Buffer>>(uint64_t position, uint64_t size)>;

/// As above; `blob_reader` fetches the out-of-line values of blob columns
/// (fields with "lance-encoding:blob"). Without one, blob columns error.
Result<std::shared_ptr<arrow::Array>> DecodeField(const Field& field, std::span<const ColumnData> columns,
                                                  uint64_t num_rows, FileVersion version, arrow::MemoryPool* pool,
                                                  const BlobReader& blob_reader);

/// As above, but only the rows at `rows` (ascending, repeats allowed, each
/// < num_rows), in that order. Each decoded page keeps only those rows (their
/// values and levels) before they are unraveled, converted to Arrow,
/// dictionary-decoded and validated: a take decodes whole mini-block chunks
/// but materializes only its rows (inside fixed-size lists of structs, the
/// items of those rows). Fields with a fixed-size list of structs inside a
/// list are decoded whole and then taken.
Result<std::shared_ptr<arrow::Array>> DecodeFieldRows(const Field& field, std::span<const ColumnData> columns,
                                                      uint64_t num_rows, FileVersion version,
                                                      arrow::MemoryPool* pool, const BlobReader& blob_reader,
                                                      const std::vector<uint64_t>& rows);

}  // namespace lance::file::v2_1
