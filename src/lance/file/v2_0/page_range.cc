#include "lance/file/v2_0/page_range.h"

#include <algorithm>
#include <limits>

#include <arrow/buffer.h>

#include "lance/encodings_v2_0.pb.h"
#include "lance/util/protobuf.h"

namespace lance::file::v2_0 {
namespace {

namespace enc = lance::pb::encodings20;

constexpr const char* kArrayEncodingTypeUrl = "/lance.encodings.ArrayEncoding";

// Collects the page buffers of `e` with their bits per row (`values_per_row`
// values of `e` make one row). False when `e` is anything but plain
// fixed-width values.
bool CollectSlices(const enc::ArrayEncoding& e, uint64_t values_per_row, std::vector<PageCuts::Slice>* out) {
  switch (e.array_encoding_case()) {
    case enc::ArrayEncoding::kFlat: {
      const auto& flat = e.flat();
      if (!flat.compression().scheme().empty()) return false;
      if (flat.buffer().buffer_type() != enc::Buffer::page) return false;
      const uint64_t bits = flat.bits_per_value();
      if (bits == 0 || bits > 4096 || values_per_row > (uint64_t{1} << 32)) return false;
      out->push_back({flat.buffer().buffer_index(), bits * values_per_row});
      return true;
    }
    case enc::ArrayEncoding::kNullable: {
      const auto& n = e.nullable();
      switch (n.nullability_case()) {
        case enc::Nullable::kNoNulls:
          return CollectSlices(n.no_nulls().values(), values_per_row, out);
        case enc::Nullable::kSomeNulls:
          return CollectSlices(n.some_nulls().validity(), values_per_row, out) &&
                 CollectSlices(n.some_nulls().values(), values_per_row, out);
        case enc::Nullable::kAllNulls:
          return true;
        default:
          return false;
      }
    }
    case enc::ArrayEncoding::kFixedSizeList: {
      const auto& fsl = e.fixed_size_list();
      if (fsl.has_validity() || fsl.dimension() == 0 || fsl.dimension() > (1u << 20)) return false;
      return CollectSlices(fsl.items(), values_per_row * fsl.dimension(), out);
    }
    default:
      return false;
  }
}

}  // namespace

uint64_t PageCuts::Down(uint64_t row) const { return cuttable ? row / kGranule * kGranule : 0; }

uint64_t PageCuts::Up(uint64_t row, uint64_t length) const {
  if (!cuttable) return row == 0 ? 0 : length;
  return std::min(length, (row + kGranule - 1) / kGranule * kGranule);
}

PageCuts AnalyzePageCuts(const PageInfo& page) {
  PageCuts cuts;
  if (page.encoding_type_url != kArrayEncodingTypeUrl) return cuts;
  enc::ArrayEncoding e;
  if (!util::ParseMessage(page.encoding, &e)) return cuts;
  std::vector<PageCuts::Slice> slices;
  if (!CollectSlices(e, 1, &slices)) return cuts;
  // Every buffer must exist and be used once, and hold exactly the page's
  // rows: then a slice of it is the same values' bits.
  std::vector<bool> used(page.buffers.size(), false);
  for (const auto& s : slices) {
    if (s.buffer >= page.buffers.size() || used[s.buffer]) return cuts;
    used[s.buffer] = true;
    if (page.length > std::numeric_limits<uint64_t>::max() / s.bits_per_row) return cuts;
    if (page.buffers[s.buffer].size < (page.length * s.bits_per_row + 7) / 8) return cuts;
  }
  cuts.cuttable = true;
  cuts.slices = std::move(slices);
  return cuts;
}

Result<PageData> LoadPageRows(const PageInfo& page, const PageCuts& cuts, uint64_t begin, uint64_t end,
                              const FileRangeReader& read) {
  return LoadPageRowRanges(page, cuts, {{begin, end}}, read);
}

Result<PageData> LoadPageRowRanges(const PageInfo& page, const PageCuts& cuts,
                                   const std::vector<std::pair<uint64_t, uint64_t>>& ranges,
                                   const FileRangeReader& read) {
  uint64_t rows = 0, prev_end = 0;
  for (const auto& [begin, end] : ranges) {
    if (!cuts.cuttable || begin >= end || begin < prev_end || end > page.length || !cuts.IsCut(begin, page.length) ||
        !cuts.IsCut(end, page.length)) {
      return Status::Invalid("rows [", begin, ", ", end, ") of a ", page.length,
                             "-row page are not between cuts, or not ascending");
    }
    prev_end = end;
    rows += end - begin;
  }
  if (ranges.empty()) return Status::Invalid("no rows of the page asked for");
  PageData out;
  out.length = rows;
  out.priority = page.priority;
  out.encoding_type_url = page.encoding_type_url;
  out.encoding = page.encoding;
  out.buffers.resize(page.buffers.size());
  for (auto& b : out.buffers) b = std::make_shared<arrow::Buffer>(nullptr, 0);
  for (const auto& s : cuts.slices) {
    // Every range but the last starts and ends on a multiple of 8 rows, so
    // its bits are whole bytes and the ranges' bytes simply follow each
    // other; the last may end at the page's end, mid-byte.
    std::vector<std::shared_ptr<arrow::Buffer>> parts;
    const BufferRange& whole = page.buffers[s.buffer];
    for (const auto& [begin, end] : ranges) {
      const uint64_t from = begin * s.bits_per_row / 8;
      const uint64_t to = (end * s.bits_per_row + 7) / 8;
      LANCE_ASSIGN_OR_RAISE(auto part, read(whole.position + from, to - from));
      if (part->size() != static_cast<int64_t>(to - from)) {
        return Status::IOError("short read of a page buffer at ", whole.position + from);
      }
      parts.push_back(std::move(part));
    }
    if (parts.size() == 1) {
      out.buffers[s.buffer] = std::move(parts[0]);
    } else {
      LANCE_ASSIGN_OR_RAISE(out.buffers[s.buffer], arrow::ConcatenateBuffers(parts));
    }
  }
  return out;
}

}  // namespace lance::file::v2_0
