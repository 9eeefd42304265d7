// Reading rows of a file: whole fields, row ranges and takes, through the
// decoder of the file's version. In 2.1+ files every page of a column is an
// independent unit covering a run of rows, so a range or a take decodes only
// the pages that hold its rows — and of the pages whose layout allows it
// (v2_1/page_range.h: full-zip rows, mini-block chunks, constant pages with
// or without levels) only the part that holds them. Columns inside
// fixed-size lists of structs count items, a fixed number per row, and are
// cut at the items of row boundaries. Where pages can be cut is found once
// per FileReader (page_cuts_cache.h). 2.0 takes read each value's bytes
// through v2_0/take.h.
#include <algorithm>
#include <map>

#include <arrow/api.h>
#include <arrow/compute/api.h>

#include "lance/file/container.h"
#include "lance/file/dictionary_join.h"
#include "lance/file/page_cuts_cache.h"
#include "lance/file/v2_0/field_decoder.h"
#include "lance/file/v2_0/page_range.h"
#include "lance/file/v2_0/take.h"
#include "lance/file/v2_1/bytes.h"
#include "lance/file/v2_1/field_decoder.h"
#include "lance/file/v2_1/page_range.h"
#include "lance/file/version.h"
#include "lance/file_reader.h"
#include "lance/util/parallel.h"

namespace lance {
namespace {

struct FieldColumns {
  size_t first = 0;
  size_t count = 0;
  // Per column: page rows per row of the field (fixed-size lists of structs
  // count items), 0 where rows map to no fixed run of them.
  std::vector<uint64_t> items_per_row;
};

// A column described from its metadata alone (no buffers loaded).
file::ColumnData Describe(const ColumnInfo& c) {
  file::ColumnData d;
  d.encoding_type_url = c.encoding_type_url;
  d.encoding = c.encoding;
  for (const auto& p : c.pages) {
    file::PageData pd;
    pd.length = p.length;
    pd.priority = p.priority;
    pd.encoding_type_url = p.encoding_type_url;
    pd.encoding = p.encoding;
    d.pages.push_back(std::move(pd));
  }
  return d;
}

// The columns each top-level field occupies.
Result<std::vector<FieldColumns>> MapColumns(const FileLayout& layout, file::FileVersion version,
                                             const std::string& name) {
  const bool v20 = version == file::FileVersion::kV2_0;
  // 2.0 files written before pylance 0.16 stored strings as two columns,
  // which only the page encodings reveal.
  std::vector<file::ColumnData> described;
  if (v20) {
    for (const auto& c : layout.columns) described.push_back(Describe(c));
  }
  std::vector<FieldColumns> out;
  size_t next = 0;
  for (const auto& f : layout.schema.fields) {
    FieldColumns fc;
    fc.first = next;
    if (v20) {
      std::span<const file::ColumnData> rest;
      if (next < described.size()) rest = std::span<const file::ColumnData>(described).subspan(next);
      fc.count = static_cast<size_t>(file::v2_0::NumColumns(f, rest));
      fc.items_per_row.assign(fc.count, 1);
    } else {
      fc.count = static_cast<size_t>(file::v2_1::NumColumns(f));
      fc.items_per_row = file::v2_1::ItemsPerRow(f);
      if (fc.items_per_row.size() != fc.count) fc.items_per_row.assign(fc.count, 0);
    }
    next += fc.count;
    out.push_back(fc);
  }
  if (next != layout.columns.size()) {
    return Status::Invalid("corrupt lance file ", name, ": the schema needs ", next, " columns but the file has ",
                           layout.columns.size());
  }
  return out;
}

Result<std::vector<size_t>> FieldIndexes(const FileLayout& layout, const std::vector<std::string>& columns,
                                         const std::string& name) {
  std::vector<size_t> wanted;
  if (columns.empty()) {
    for (size_t i = 0; i < layout.schema.fields.size(); ++i) wanted.push_back(i);
    return wanted;
  }
  for (const auto& col : columns) {
    size_t i = 0;
    while (i < layout.schema.fields.size() && layout.schema.fields[i].name != col) ++i;
    if (i == layout.schema.fields.size()) return Status::KeyError("lance file ", name, " has no field '", col, "'");
    wanted.push_back(i);
  }
  return wanted;
}

// Take: rows at most this far after a window are read with it.
constexpr uint64_t kTakeGapRows = 0;

// The first row of each page of a column, plus the end.
std::vector<uint64_t> PageStarts(const ColumnInfo& c) {
  std::vector<uint64_t> starts{0};
  for (const auto& p : c.pages) starts.push_back(starts.back() + p.length);
  return starts;
}

// Joins the pieces of a take: dictionary pieces from different pages carry
// different dictionaries.
Result<std::shared_ptr<arrow::Array>> ConcatenatePieces(const arrow::ArrayVector& pieces, arrow::MemoryPool* pool) {
  if (pieces.size() == 1) return pieces[0];
  if (pieces[0]->type_id() == arrow::Type::DICTIONARY) {
    return file::JoinDictionaryArrays(pieces, pieces[0]->type(), pool);
  }
  return arrow::Concatenate(pieces, pool);
}

// Bytes of file data a take decodes at once: windows are decoded in batches
// of about this size so a large take never holds all its pages at once.
constexpr uint64_t kTakeBatchBytes = 16 * 1024 * 1024;

}  // namespace

using file::AnyPageCuts;

// Everything one read needs, bound to this reader.
struct FileReadContext {
  const FileLayout& layout;
  arrow::io::RandomAccessFile& file;
  const std::string& name;
  arrow::MemoryPool* pool;
  file::FileVersion version;
  std::vector<FieldColumns> fields;

  Result<std::shared_ptr<arrow::Buffer>> ReadBlob(uint64_t position, uint64_t size) const {
    if (position > layout.file_size || size > layout.file_size - position) {
      return Status::Invalid("corrupt lance file ", name, ": blob [", position, ", +", size,
                             ") lies outside the file");
    }
    return file.ReadAt(static_cast<int64_t>(position), static_cast<int64_t>(size));
  }

  file::v2_1::BlobReader Reader() const {
    return [this](uint64_t position, uint64_t size) { return ReadBlob(position, size); };
  }

  // Decodes `rows` rows of field `i` from loaded columns; with `select`,
  // only those of them (ascending), in order.
  Result<std::shared_ptr<arrow::Array>> DecodeData(size_t i, const std::vector<file::ColumnData>& data,
                                                   uint64_t rows, const std::vector<uint64_t>* select = nullptr) const {
    auto blob = Reader();
    const Field& field = layout.schema.fields[i];
    if (version != file::FileVersion::kV2_0) {
      if (select) return file::v2_1::DecodeFieldRows(field, data, rows, version, pool, blob, *select);
      return file::v2_1::DecodeField(field, data, rows, version, pool, blob);
    }
    LANCE_ASSIGN_OR_RAISE(auto array, file::v2_0::DecodeField(field, data, rows, pool, blob));
    if (!select) return array;
    arrow::UInt64Builder idx(pool);
    LANCE_RETURN_NOT_OK(idx.AppendValues(*select));
    std::shared_ptr<arrow::Array> indices;
    LANCE_RETURN_NOT_OK(idx.Finish(&indices));
    LANCE_ASSIGN_OR_RAISE(auto taken, arrow::compute::Take(array, indices));
    return taken.make_array();
  }

  Result<std::shared_ptr<arrow::Array>> DecodeAll(size_t i, const std::vector<uint64_t>* select = nullptr) const {
    const FieldColumns& fc = fields[i];
    std::vector<file::ColumnData> data;
    for (size_t c = fc.first; c < fc.first + fc.count; ++c) {
      LANCE_ASSIGN_OR_RAISE(auto col, file::LoadColumn(file, layout.columns[c], layout.file_size, name));
      data.push_back(std::move(col));
    }
    return DecodeData(i, data, layout.num_rows, select);
  }

  // Where page `p` of column `c` can be cut, cached per reader.
  Result<const AnyPageCuts*> Cuts(size_t c, size_t p) const {
    auto found = cuts.Find(c, p);
    if (!found) {
      auto fresh = std::make_shared<AnyPageCuts>();
      fresh->v20 = version == file::FileVersion::kV2_0;
      if (fresh->v20) {
        fresh->cuts20 = file::v2_0::AnalyzePageCuts(layout.columns[c].pages[p]);
      } else {
        LANCE_ASSIGN_OR_RAISE(fresh->cuts21, file::v2_1::AnalyzePageCuts(layout.columns[c].pages[p], Reader()));
      }
      found = cuts.Insert(c, p, std::move(fresh));
    }
    // Entries live as long as the reader, which outlives this context.
    return found.get();
  }

  // The rows of `ranges` (relative, between cuts) of page `p` of column
  // `c` as one page.
  Result<file::PageData> LoadParts(size_t c, size_t p,
                                   const std::vector<std::pair<uint64_t, uint64_t>>& ranges) const {
    LANCE_ASSIGN_OR_RAISE(auto page_cuts, Cuts(c, p));
    const PageInfo& page = layout.columns[c].pages[p];
    if (page_cuts->v20) return file::v2_0::LoadPageRowRanges(page, page_cuts->cuts20, ranges, Reader());
    return file::v2_1::LoadPageRowRanges(page, page_cuts->cuts21, ranges, Reader());
  }

  // The largest row <= `row` where column `c` (page starts `starts`) can be
  // cut, and the smallest row >= `row`.
  Result<uint64_t> CutDown(size_t c, const std::vector<uint64_t>& starts, uint64_t row) const {
    auto b = std::upper_bound(starts.begin(), starts.end(), row) - 1;
    const size_t p = static_cast<size_t>(b - starts.begin());
    if (*b == row || p >= layout.columns[c].pages.size()) return *b;
    LANCE_ASSIGN_OR_RAISE(auto page_cuts, Cuts(c, p));
    return starts[p] + page_cuts->Down(row - starts[p]);
  }
  Result<uint64_t> CutUp(size_t c, const std::vector<uint64_t>& starts, uint64_t row) const {
    auto e = std::lower_bound(starts.begin(), starts.end(), row);
    if (e == starts.end()) return starts.back();
    if (*e == row || e == starts.begin()) return *e;
    const size_t p = static_cast<size_t>(e - starts.begin()) - 1;
    LANCE_ASSIGN_OR_RAISE(auto page_cuts, Cuts(c, p));
    return starts[p] + page_cuts->Up(row - starts[p], layout.columns[c].pages[p].length);
  }

  // The smallest window [lo, hi) containing [start, end) whose edges are
  // cuts of every column of field `i` (page boundaries, or rows inside pages
  // whose layout can be read in part), so each column decodes the same rows.
  Result<std::pair<uint64_t, uint64_t>> Window(size_t i, uint64_t start, uint64_t end) const {
    const FieldColumns& fc = fields[i];
    uint64_t lo = start, hi = end;
    while (true) {
      uint64_t new_lo = lo, new_hi = hi;
      for (size_t c = fc.first; c < fc.first + fc.count; ++c) {
        auto starts = PageStarts(layout.columns[c]);
        // Columns inside fixed-size lists of structs count items, `n` per
        // row: a cut between items is a cut between rows only at multiples
        // of n. A field whose rows map to no fixed run is read whole.
        const uint64_t n = fc.items_per_row[c - fc.first];
        uint64_t total;
        if (n == 0 || file::v2_1::MulOverflows(layout.num_rows, n, &total) || starts.back() != total) {
          return std::make_pair(uint64_t{0}, layout.num_rows);
        }
        LANCE_ASSIGN_OR_RAISE(uint64_t down, CutDown(c, starts, lo * n));
        LANCE_ASSIGN_OR_RAISE(uint64_t up, CutUp(c, starts, hi * n));
        new_lo = std::min(new_lo, down / n);
        new_hi = std::max(new_hi, (up + n - 1) / n);
      }
      if (new_lo == lo && new_hi == hi) return std::make_pair(lo, hi);
      lo = new_lo;
      hi = new_hi;
    }
  }

  // Decodes rows [lo, hi) of field `i`, a window from Window() (with
  // `select`, only those rows of it).
  Result<std::shared_ptr<arrow::Array>> DecodeWindow(size_t i, uint64_t lo, uint64_t hi,
                                                     const std::vector<uint64_t>* select = nullptr) const {
    if (lo == 0 && hi == layout.num_rows) return DecodeAll(i, select);
    return DecodeWindows(i, {{lo, hi}}, select);
  }

  // Decodes the rows of several windows of field `i` (ascending, disjoint,
  // each from Window()) as one array holding them in order: pages inside a
  // window are read whole, pages the windows cut only in the parts they
  // cover, and each page once, so its dictionary decodes once too.
  Result<std::shared_ptr<arrow::Array>> DecodeWindows(size_t i,
                                                      const std::vector<std::pair<uint64_t, uint64_t>>& row_windows,
                                                      const std::vector<uint64_t>* select = nullptr) const {
    const FieldColumns& fc = fields[i];
    uint64_t rows = 0;
    for (const auto& [lo, hi] : row_windows) rows += hi - lo;
    std::vector<file::ColumnData> data;
    for (size_t c = fc.first; c < fc.first + fc.count; ++c) {
      const ColumnInfo& info = layout.columns[c];
      // The windows in this column's page rows (Window() checked the scale).
      const uint64_t n = fc.items_per_row[c - fc.first];
      std::vector<std::pair<uint64_t, uint64_t>> windows;
      for (const auto& [lo, hi] : row_windows) windows.emplace_back(lo * n, hi * n);
      // The column's encoding and own buffers, not its pages (a column may
      // have thousands, and a window needs only the few it cuts).
      ColumnInfo head;
      head.encoding_type_url = info.encoding_type_url;
      head.encoding = info.encoding;
      head.buffers = info.buffers;
      LANCE_ASSIGN_OR_RAISE(auto column, file::LoadColumn(file, head, layout.file_size, name));
      uint64_t row = 0;
      size_t w = 0;
      for (size_t p = 0; p < info.pages.size(); ++p) {
        const PageInfo& page = info.pages[p];
        const uint64_t page_start = row, page_end = row + page.length;
        row = page_end;
        // The parts of the windows inside this page, relative to it.
        std::vector<std::pair<uint64_t, uint64_t>> parts;
        while (w < windows.size() && windows[w].second <= page_start) ++w;
        for (size_t v = w; v < windows.size() && windows[v].first < page_end; ++v) {
          const uint64_t a = std::max(windows[v].first, page_start), b = std::min(windows[v].second, page_end);
          if (a < b) parts.emplace_back(a - page_start, b - page_start);
        }
        if (parts.empty()) continue;
        if (parts.size() == 1 && parts[0].first == 0 && parts[0].second == page.length) {
          ColumnInfo one;
          one.pages.push_back(page);
          LANCE_ASSIGN_OR_RAISE(auto loaded, file::LoadColumn(file, one, layout.file_size, name));
          column.pages.push_back(std::move(loaded.pages[0]));
        } else {
          LANCE_ASSIGN_OR_RAISE(auto part, LoadParts(c, p, parts));
          column.pages.push_back(std::move(part));
        }
      }
      data.push_back(std::move(column));
    }
    return DecodeData(i, data, rows, select);
  }

  // The rows at `offsets` (ascending, repeats allowed) of field `i` of a
  // 2.0 file: each distinct row read once, only the bytes it needs.
  Result<std::shared_ptr<arrow::Array>> Take20(size_t i, const std::vector<uint64_t>& offsets) const {
    file::v2_0::RowRanges ranges;
    std::vector<uint64_t> positions;  // of each offset among the distinct rows
    uint64_t distinct = 0;
    bool repeats = false;
    for (uint64_t row : offsets) {
      if (!ranges.empty() && ranges.back().second > row) {
        repeats = true;
      } else {
        if (!ranges.empty() && ranges.back().second == row) {
          ++ranges.back().second;
        } else {
          ranges.emplace_back(row, row + 1);
        }
        ++distinct;
      }
      positions.push_back(distinct - 1);
    }
    auto columns = std::span<const ColumnInfo>(layout.columns).subspan(fields[i].first);
    LANCE_ASSIGN_OR_RAISE(auto array, file::v2_0::TakeFieldRanges(layout.schema.fields[i], columns, ranges,
                                                                  layout.num_rows, pool, Reader()));
    if (!repeats) return array;
    arrow::UInt64Builder idx(pool);
    LANCE_RETURN_NOT_OK(idx.AppendValues(positions));
    std::shared_ptr<arrow::Array> indices;
    LANCE_RETURN_NOT_OK(idx.Finish(&indices));
    LANCE_ASSIGN_OR_RAISE(auto taken, arrow::compute::Take(array, indices));
    return taken.make_array();
  }

  file::PageCutsCache& cuts;
};

namespace {

// An error of a read names the file it is about.
Status NameFile(const Status& st, const std::string& name) {
  if (st.ok() || name.empty() || st.message().find(name) != std::string::npos) return st;
  return st.WithMessage(name, ": ", st.message());
}

}  // namespace

Result<std::vector<uint64_t>> FileReader::ReadWindows(const std::vector<std::string>& columns,
                                                      uint64_t target_rows) const {
  std::vector<uint64_t> bounds{0};
  if (layout_.num_rows == 0) return bounds;
  if (!ReadsPagesSelectively()) {
    bounds.push_back(layout_.num_rows);
    return bounds;
  }
  LANCE_ASSIGN_OR_RAISE(auto version, file::FileVersionFromPair(layout_.major_version, layout_.minor_version));
  LANCE_ASSIGN_OR_RAISE(auto fields, MapColumns(layout_, version, name_));
  FileReadContext ctx{layout_, *file_, name_, pool_, version, std::move(fields), *cuts_};
  LANCE_ASSIGN_OR_RAISE(auto wanted, FieldIndexes(layout_, columns, name_));
  const uint64_t target = std::max<uint64_t>(target_rows, 1);
  uint64_t lo = 0;
  while (lo < layout_.num_rows) {
    uint64_t hi = lo + std::min(target, layout_.num_rows - lo);
    // Grow hi until it is a cut of every wanted field.
    bool moved = true;
    while (moved) {
      moved = false;
      for (size_t i : wanted) {
        LANCE_ASSIGN_OR_RAISE(auto window, ctx.Window(i, lo, hi));
        if (window.second > hi) {
          hi = window.second;
          moved = true;
        }
      }
    }
    bounds.push_back(hi);
    lo = hi;
  }
  return bounds;
}

bool FileReader::ReadsPagesSelectively() const {
  // Every v2 file; legacy files are read by their own reader.
  return layout_.major_version == 2 || (layout_.major_version == 0 && layout_.minor_version == 3);
}

Result<std::shared_ptr<arrow::Table>> FileReader::ReadAll(const std::vector<std::string>& columns) const {
  return ReadRange(columns, 0, layout_.num_rows);
}

Result<std::shared_ptr<arrow::Table>> FileReader::ReadRange(const std::vector<std::string>& columns, uint64_t offset,
                                                            uint64_t count) const {
  // Decoders name the field and page; the file is named here, once.
  auto result = [&]() -> Result<std::shared_ptr<arrow::Table>> {
    if (offset > layout_.num_rows || count > layout_.num_rows - offset) {
      return Status::IndexError("rows [", offset, ", +", count, ") are past the end of ", name_, " (",
                                layout_.num_rows, " rows)");
    }
    LANCE_ASSIGN_OR_RAISE(auto version, file::FileVersionFromPair(layout_.major_version, layout_.minor_version));
    LANCE_ASSIGN_OR_RAISE(auto fields, MapColumns(layout_, version, name_));
    FileReadContext ctx{layout_, *file_, name_, pool_, version, std::move(fields), *cuts_};
    LANCE_ASSIGN_OR_RAISE(auto wanted, FieldIndexes(layout_, columns, name_));
    LANCE_ASSIGN_OR_RAISE(auto full_schema, layout_.schema.ToArrow());
    arrow::FieldVector out_fields;
    arrow::ArrayVector out_arrays;
    for (size_t i : wanted) {
      std::shared_ptr<arrow::Array> array;
      if (!ReadsPagesSelectively()) {
        LANCE_ASSIGN_OR_RAISE(array, ctx.DecodeAll(i));
        array = array->Slice(static_cast<int64_t>(offset), static_cast<int64_t>(count));
      } else {
        LANCE_ASSIGN_OR_RAISE(auto window, ctx.Window(i, offset, offset + count));
        LANCE_ASSIGN_OR_RAISE(array, ctx.DecodeWindow(i, window.first, window.second));
        array = array->Slice(static_cast<int64_t>(offset - window.first), static_cast<int64_t>(count));
      }
      out_fields.push_back(full_schema->field(static_cast<int>(i)));
      out_arrays.push_back(std::move(array));
    }
    return arrow::Table::Make(arrow::schema(out_fields, full_schema->metadata()), out_arrays,
                              static_cast<int64_t>(count));
  }();
  if (!result.ok()) return NameFile(result.status(), name_);
  return result;
}

Result<std::pair<uint64_t, std::shared_ptr<arrow::Array>>> FileReader::ReadFieldWindow(const std::string& column,
                                                                                        uint64_t offset,
                                                                                        uint64_t count) const {
  // Decoders name the field and page; the file is named here, once.
  auto result = [&]() -> Result<std::pair<uint64_t, std::shared_ptr<arrow::Array>>> {
    if (offset > layout_.num_rows || count > layout_.num_rows - offset) {
      return Status::IndexError("rows [", offset, ", +", count, ") are past the end of ", name_, " (",
                                layout_.num_rows, " rows)");
    }
    LANCE_ASSIGN_OR_RAISE(auto version, file::FileVersionFromPair(layout_.major_version, layout_.minor_version));
    LANCE_ASSIGN_OR_RAISE(auto fields, MapColumns(layout_, version, name_));
    FileReadContext ctx{layout_, *file_, name_, pool_, version, std::move(fields), *cuts_};
    LANCE_ASSIGN_OR_RAISE(auto wanted, FieldIndexes(layout_, {column}, name_));
    const size_t i = wanted.front();
    if (!ReadsPagesSelectively()) {
      LANCE_ASSIGN_OR_RAISE(auto array, ctx.DecodeAll(i));
      return std::make_pair(uint64_t{0}, array);
    }
    LANCE_ASSIGN_OR_RAISE(auto window, ctx.Window(i, offset, offset + count));
    LANCE_ASSIGN_OR_RAISE(auto array, ctx.DecodeWindow(i, window.first, window.second));
    return std::make_pair(window.first, array);
  }();
  if (!result.ok()) return NameFile(result.status(), name_);
  return result;
}

Result<std::shared_ptr<arrow::Table>> FileReader::Take(const std::vector<std::string>& columns,
                                                       const std::vector<uint64_t>& offsets) const {
  // Decoders name the field and page; the file is named here, once.
  auto result = [&]() -> Result<std::shared_ptr<arrow::Table>> {
    for (size_t k = 0; k < offsets.size(); ++k) {
      if (offsets[k] >= layout_.num_rows) {
        return Status::IndexError("row ", offsets[k], " is past the end of ", name_, " (", layout_.num_rows, " rows)");
      }
      if (k > 0 && offsets[k] < offsets[k - 1]) return Status::Invalid("FileReader::Take needs ascending offsets");
    }
    LANCE_ASSIGN_OR_RAISE(auto version, file::FileVersionFromPair(layout_.major_version, layout_.minor_version));
    LANCE_ASSIGN_OR_RAISE(auto fields, MapColumns(layout_, version, name_));
    LANCE_ASSIGN_OR_RAISE(auto wanted, FieldIndexes(layout_, columns, name_));
    LANCE_ASSIGN_OR_RAISE(auto full_schema, layout_.schema.ToArrow());
    arrow::FieldVector out_fields;
    arrow::ArrayVector out_arrays(wanted.size());
    // Fields are taken on all cores, each with its own read context (the
    // page-cut cache is not shared).
    LANCE_RETURN_NOT_OK(util::ParallelFor(wanted.size(), [&](size_t f) -> Status {
      const size_t i = wanted[f];
      FileReadContext ctx{layout_, *file_, name_, pool_, version, fields, *cuts_};
      if (version == file::FileVersion::kV2_0) {
        LANCE_ASSIGN_OR_RAISE(out_arrays[f], ctx.Take20(i, offsets));
        return Status::OK();
      }
      // The windows holding the rows, then one decode of all of them.
      std::vector<std::pair<uint64_t, uint64_t>> windows;
      size_t k = 0;
      while (k < offsets.size()) {
        LANCE_ASSIGN_OR_RAISE(auto window, ctx.Window(i, offsets[k], offsets[k] + 1));
        // Rows shortly after the window join it: reading the gap costs less
        // than another window.
        while (true) {
          while (k < offsets.size() && offsets[k] < window.second) ++k;
          if (k == offsets.size() || offsets[k] - window.second > kTakeGapRows) break;
          LANCE_ASSIGN_OR_RAISE(window, ctx.Window(i, window.first, offsets[k] + 1));
        }
        windows.push_back(window);
      }
      // File bytes per row of the field, to size the batches.
      uint64_t field_bytes = 0;
      for (size_t c = ctx.fields[i].first; c < ctx.fields[i].first + ctx.fields[i].count; ++c) {
        for (const auto& page : layout_.columns[c].pages) {
          for (const auto& b : page.buffers) field_bytes += b.size;
        }
      }
      const uint64_t bytes_per_row = std::max<uint64_t>(1, field_bytes / std::max<uint64_t>(1, layout_.num_rows));
      const uint64_t batch_rows = std::max<uint64_t>(1, kTakeBatchBytes / bytes_per_row);
      arrow::ArrayVector pieces;
      size_t w = 0, next = 0;
      while (w < windows.size()) {
        std::vector<std::pair<uint64_t, uint64_t>> batch{windows[w++]};
        uint64_t batch_rows_now = batch[0].second - batch[0].first;
        while (w < windows.size() && batch_rows_now + (windows[w].second - windows[w].first) <= batch_rows) {
          batch_rows_now += windows[w].second - windows[w].first;
          batch.push_back(windows[w++]);
        }
        // The rows of the batch's windows to keep, counted across them.
        std::vector<uint64_t> select;
        uint64_t base = 0;
        size_t v = 0;
        for (; next < offsets.size() && offsets[next] < batch.back().second; ++next) {
          while (offsets[next] >= batch[v].second) base += batch[v].second - batch[v].first, ++v;
          select.push_back(base + offsets[next] - batch[v].first);
        }
        std::shared_ptr<arrow::Array> array;
        if (batch.size() == 1) {
          LANCE_ASSIGN_OR_RAISE(array, ctx.DecodeWindow(i, batch[0].first, batch[0].second, &select));
        } else {
          LANCE_ASSIGN_OR_RAISE(array, ctx.DecodeWindows(i, batch, &select));
        }
        pieces.push_back(std::move(array));
      }
      std::shared_ptr<arrow::Array> column;
      if (pieces.empty()) {
        LANCE_ASSIGN_OR_RAISE(auto type, ArrowTypeFromField(layout_.schema.fields[i]));
        LANCE_ASSIGN_OR_RAISE(column, arrow::MakeEmptyArray(type, pool_));
      } else {
        LANCE_ASSIGN_OR_RAISE(column, ConcatenatePieces(pieces, pool_));
      }
      out_arrays[f] = std::move(column);
      return Status::OK();
    }));
    for (size_t i : wanted) out_fields.push_back(full_schema->field(static_cast<int>(i)));
    return arrow::Table::Make(arrow::schema(out_fields, full_schema->metadata()), out_arrays,
                              static_cast<int64_t>(offsets.size()));
  }();
  if (!result.ok()) return NameFile(result.status(), name_);
  return result;
}

}  // namespace lance
