// Taking rows of a 2.0 field, reading only the bytes they need, as the
// reference's 2.0 schedulers do: fixed-width values and validity by their
// byte (or bit) ranges; strings by their offsets first, then only the value
// bytes those offsets point at; lists by their offsets first, then the item
// ranges of the child column, taken the same way; dictionary pages by their
// indices, with the page's dictionary read once. Each read of a page buffer
// is coalesced across the rows of the take. Page encodings this does not
// know how to cut are read whole (one page at a time) and sliced.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include <arrow/array.h>
#include <arrow/memory_pool.h>

#include "lance/file/v2_0/field_decoder.h"
#include "lance/file_reader.h"
#include "lance/schema.h"
#include "lance/status.h"

namespace lance::file::v2_0 {

/// Row ranges [begin, end): ascending, disjoint, non-empty.
using RowRanges = std::vector<std::pair<uint64_t, uint64_t>>;

/// The rows of `ranges`, in order, of the top-level `field` whose columns
/// (metadata only; pre-order, starting at the field's first column and
/// possibly running on past it) are `columns`. `num_rows` is the file's row
/// count. The result has the Arrow type of ArrowTypeFromField(field) and
/// equals the same rows of DecodeField on the whole columns.
Result<std::shared_ptr<arrow::Array>> TakeFieldRanges(const Field& field, std::span<const ColumnInfo> columns,
                                                      const RowRanges& ranges, uint64_t num_rows,
                                                      arrow::MemoryPool* pool, const FileRangeReader& read);

}  // namespace lance::file::v2_0
