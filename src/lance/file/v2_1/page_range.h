// Row ranges inside one 2.1/2.2 page. Writers put a whole column in one page,
// so reading a few rows must not read (or decode) the whole page. For the
// layouts that allow it, a page is described by the rows where it can be cut
// (every row, or the chunk boundaries of a mini-block page), and the rows
// between two cuts are loaded as a page of their own — reading only the bytes
// they need — that the ordinary page decoders then decode.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <arrow/buffer.h>

#include "lance/file/column_data.h"
#include "lance/file/v2_1/field_decoder.h"
#include "lance/file/v2_1/mini_block.h"
#include "lance/file_reader.h"
#include "lance/status.h"

namespace lance::file::v2_1 {

/// Where a page can be cut. Row numbers are relative to the page.
struct PageCuts {
  enum class Kind {
    kWhole,     // only at the page's edges
    kEveryRow,  // anywhere: full-zip fixed-width values without repetition, constant pages
    kChunks,    // at mini-block chunk boundaries (a one-level repetition index maps rows to chunks)
    kIndexed,   // anywhere: full-zip pages with a repetition index (a byte offset per row)
  };
  Kind kind = Kind::kWhole;
  /// kEveryRow full-zip pages: bytes per row (control word + value).
  uint64_t row_bytes = 0;
  /// kIndexed: bytes per entry of the repetition index (1, 2, 4 or 8); it
  /// holds rows + 1 entries, the byte offset of each row in the data buffer.
  uint64_t index_width = 0;
  /// kChunks: the rows where the page can be cut (0 first, the page's row
  /// count last), and for each the first chunk after it (the chunk count
  /// last). Without repetition every chunk boundary is a cut; with it, those
  /// no row continues across.
  std::vector<uint64_t> starts;
  std::vector<size_t> cut_chunks;
  /// kChunks: whether the cuts come from a repetition index.
  bool repeated = false;
  std::vector<ChunkInfo> chunks;
  /// kChunks: the page's chunk metadata buffer, and the buffers every part
  /// of the page carries whole (the dictionary, if any) and its repetition
  /// index (if any): read once with the cuts, not again for each part.
  std::shared_ptr<arrow::Buffer> metadata;
  std::vector<std::shared_ptr<arrow::Buffer>> whole_buffers;
  std::shared_ptr<arrow::Buffer> repetition_index;
  /// kEveryRow constant pages with levels: their levels, decoded once, and
  /// with repetition the first level of each row (rows + 1 entries). A part
  /// of the page is the scalar with the levels of its rows.
  bool constant_levels = false;
  std::vector<uint16_t> rep_levels, def_levels;
  std::vector<uint64_t> row_levels;

  /// The largest cut <= row, and the smallest cut >= row (row <= length).
  uint64_t Down(uint64_t row) const;
  uint64_t Up(uint64_t row, uint64_t length) const;
  /// Whether `row` (<= length) is a cut.
  bool IsCut(uint64_t row, uint64_t length) const { return Down(row) == row || row == length; }
};

/// Describes where `page` can be cut; reads the chunk metadata of mini-block
/// pages through `read` (absolute file positions). Pages whose metadata
/// does not parse are kWhole: decoding them whole reports the problem.
Result<PageCuts> AnalyzePageCuts(const PageInfo& page, const BlobReader& read);

/// Rows [begin, end) of `page` (both cuts of `cuts`, relative to the page) as
/// a page of their own, reading only the bytes they need through `read`.
Result<PageData> LoadPageRows(const PageInfo& page, const PageCuts& cuts, uint64_t begin, uint64_t end,
                              const BlobReader& read);

/// The rows of several ranges of `page` (ascending, disjoint, each between
/// cuts) as one page holding them in order, reading only their bytes (nearby
/// spans in one read). Lets a take decode each page once however many rows
/// it wants from it.
Result<PageData> LoadPageRowRanges(const PageInfo& page, const PageCuts& cuts,
                                   const std::vector<std::pair<uint64_t, uint64_t>>& ranges,
                                   const BlobReader& read);

}  // namespace lance::file::v2_1
