// Row ranges inside one 2.0 page. A 2.0 writer fills pages of up to 32 MiB,
// so a take of one vector row must not read the whole page. Pages whose
// values are plain fixed-width bits (flat values, optionally under a validity
// bitmap, optionally grouped into fixed-size lists) hold row r at bit
// r * bits_per_row of each buffer: such a page can be cut at every 8th row
// (where each buffer is byte-aligned) and the rows between two cuts loaded as
// a page of their own that the ordinary 2.0 decoder reads.
#pragma once

#include <cstdint>
#include <vector>

#include "lance/file/column_data.h"
#include "lance/file/v2_0/field_decoder.h"
#include "lance/file_reader.h"
#include "lance/status.h"

namespace lance::file::v2_0 {

/// Where a page can be cut. Row numbers are relative to the page.
struct PageCuts {
  /// Rows between cuts of a cuttable page.
  static constexpr uint64_t kGranule = 8;
  /// One page buffer the page's values use, and its bits per row.
  struct Slice {
    uint32_t buffer = 0;
    uint64_t bits_per_row = 0;
  };
  /// False: the page can be cut only at its edges.
  bool cuttable = false;
  std::vector<Slice> slices;

  /// The largest cut <= row, and the smallest cut >= row (row <= length).
  uint64_t Down(uint64_t row) const;
  uint64_t Up(uint64_t row, uint64_t length) const;
  bool IsCut(uint64_t row, uint64_t length) const { return Down(row) == row || row == length; }
};

/// Describes where `page` can be cut, from its encoding alone. Encodings this
/// does not recognize as plain fixed-width values are not cuttable.
PageCuts AnalyzePageCuts(const PageInfo& page);

/// Rows [begin, end) of `page` (both cuts) as a page of their own, reading
/// only the bytes they need through `read` (absolute file positions).
Result<PageData> LoadPageRows(const PageInfo& page, const PageCuts& cuts, uint64_t begin, uint64_t end,
                              const FileRangeReader& read);

/// The rows of several ranges of `page` (ascending, disjoint, each between
/// cuts) as one page holding them in order.
Result<PageData> LoadPageRowRanges(const PageInfo& page, const PageCuts& cuts,
                                   const std::vector<std::pair<uint64_t, uint64_t>>& ranges,
                                   const FileRangeReader& read);

}  // namespace lance::file::v2_0
