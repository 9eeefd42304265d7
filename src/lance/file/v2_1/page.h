// One decoded page of a leaf column: its values and its rep/def levels. The
// per-layout decoders (mini_block, full_zip, constant_layout, blob_layout)
// produce these; DecodePage dispatches on the page's PageLayout.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include <arrow/array.h>
#include <arrow/memory_pool.h>
#include <arrow/type_fwd.h>

#include "lance/encodings_v2_1.pb.h"
#include "lance/file/column_data.h"
#include "lance/file/v2_1/field_decoder.h"
#include "lance/file/v2_1/data_block.h"
#include "lance/file/v2_1/repdef.h"
#include "lance/file/version.h"
#include "lance/status.h"

namespace lance::file::v2_1 {

namespace pb21 = lance::pb::encodings21;

inline constexpr const char* kPageLayoutTypeUrl = "/lance.encodings21.PageLayout";

struct DecodedPage {
  /// The visible values (dictionary indices when `dictionary` is set).
  DataBlock values;
  /// The page dictionary, if the values are indices into it.
  std::optional<DataBlock> dictionary;
  PageLevels levels;
  /// True when the page holds only the rows ctx.kept_rows (in that order,
  /// values and levels), not all of its rows.
  bool rows_kept = false;
};

struct PageContext {
  /// The Arrow type of the leaf column's values.
  std::shared_ptr<arrow::DataType> leaf_type;
  FileVersion version = FileVersion::kV2_1;
  arrow::MemoryPool* pool = nullptr;
  const BlobReader* blob_reader = nullptr;
  /// The rows of the page (ascending) the caller keeps, or null for all:
  /// decoders may leave the values of other rows empty (blob pages do not
  /// read them).
  const std::vector<uint64_t>* kept_rows = nullptr;
};

/// Decodes one page (any layout) of a leaf column.
Result<DecodedPage> DecodePage(const PageData& page, const PageContext& ctx);

/// The page's values as an Arrow array of ctx.leaf_type (without the
/// validity the levels carry).
Result<std::shared_ptr<arrow::Array>> PageValuesToArrow(const DecodedPage& page, const PageContext& ctx);

/// Reads little-endian u16 levels from a block-decoded buffer.
Result<std::vector<uint16_t>> LevelsFromBlock(const DataBlock& block, uint64_t count);

}  // namespace lance::file::v2_1
