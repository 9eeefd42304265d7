#include "lance/file/v2_1/page_range.h"

#include <algorithm>
#include <limits>

#include "lance/encodings_v2_1.pb.h"
#include "lance/file/v2_1/bytes.h"
#include "lance/file/v2_1/compressive.h"
#include "lance/file/v2_1/page.h"
#include "lance/file/v2_1/repdef.h"
#include "lance/util/protobuf.h"

namespace lance::file::v2_1 {

namespace {

// Reads [offset, +size) of the page buffer `range`.
Result<BufferPtr> ReadPart(const BlobReader& read, const BufferRange& range, uint64_t offset, uint64_t size,
                           const char* what) {
  if (offset > range.size || size > range.size - offset) {
    return Corrupt(what, ": range [", offset, ", +", size, ") exceeds a ", range.size, "-byte buffer");
  }
  if (range.position > std::numeric_limits<uint64_t>::max() - range.size) {
    return Corrupt(what, ": buffer [", range.position, ", +", range.size, ") overflows");
  }
  if (!read) return Status::Invalid("no reader for page buffers");
  LANCE_ASSIGN_OR_RAISE(BufferPtr buffer, read(range.position + offset, size));
  if (!buffer || static_cast<uint64_t>(buffer->size()) != size) {
    return Status::IOError(what, ": short read at ", range.position + offset);
  }
  return buffer;
}

Result<BufferPtr> ReadWhole(const BlobReader& read, const BufferRange& range) {
  return ReadPart(read, range, 0, range.size, "page buffer");
}

Result<BufferPtr> ReadSpans(const BlobReader& read, const BufferRange& range,
                            const std::vector<std::pair<uint64_t, uint64_t>>& spans, const char* what) {
  if (spans.size() == 1) return ReadPart(read, range, spans[0].first, spans[0].second, what);
  // Spans close to each other are read together: on a local file a read
  // costs about as much as copying a few KiB, so only small gaps are worth
  // reading through.
  constexpr uint64_t kGapBytes = 8 * 1024;
  std::vector<BufferPtr> parts;
  size_t k = 0;
  while (k < spans.size()) {
    size_t j = k + 1;
    uint64_t span_end = spans[k].first + spans[k].second;
    while (j < spans.size() && spans[j].first >= span_end && spans[j].first - span_end <= kGapBytes) {
      span_end = spans[j].first + spans[j].second;
      ++j;
    }
    LANCE_ASSIGN_OR_RAISE(auto block, ReadPart(read, range, spans[k].first, span_end - spans[k].first, what));
    for (size_t m = k; m < j; ++m) {
      parts.push_back(arrow::SliceBuffer(block, static_cast<int64_t>(spans[m].first - spans[k].first),
                                         static_cast<int64_t>(spans[m].second)));
    }
    k = j;
  }
  return arrow::ConcatenateBuffers(parts);
}

PageData Header(const PageInfo& page) {
  PageData out;
  out.length = page.length;
  out.priority = page.priority;
  out.encoding_type_url = page.encoding_type_url;
  out.encoding = page.encoding;
  return out;
}

Result<PageCuts> MiniBlockCuts(const pb21::MiniBlockLayout& layout, const PageInfo& page, const BlobReader& read) {
  PageCuts cuts;
  const bool has_rep = layout.has_rep_compression();
  const uint32_t depth = layout.repetition_index_depth();
  if (page.length == 0) return cuts;
  // Without repetition items are rows. With it, the repetition index maps
  // rows to chunks (at any depth its first two words per chunk say the rows
  // that end in the chunk and whether it leaves one unfinished).
  if (!has_rep && (depth != 0 || layout.num_items() != page.length)) return cuts;
  if (has_rep && (depth < 1 || depth > 64)) return cuts;
  if (page.buffers.size() != 2 + (layout.has_dictionary() ? 1u : 0u) + (depth > 0 ? 1u : 0u)) return cuts;
  LANCE_ASSIGN_OR_RAISE(BufferPtr metadata, ReadWhole(read, page.buffers[0]));
  auto chunks = ParseChunkMetadata(AsSpan(metadata), layout.has_large_chunk(), layout.num_items(),
                                   page.buffers[1].size);
  if (!chunks.ok()) return cuts;
  BufferPtr index_words;
  // Per chunk: the rows that end in it, and whether a row continues into
  // the next chunk (then that boundary is no cut).
  std::vector<uint64_t> chunk_rows;
  std::vector<bool> continues;
  if (!has_rep) {
    for (const auto& c : *chunks) chunk_rows.push_back(c.num_values);
    continues.assign(chunks->size(), false);
  } else {
    // The repetition index holds, per chunk, depth + 1 u64 words: the rows
    // that end in the chunk, then the items (at each level) of a row it
    // leaves unfinished.
    const BufferRange& index = page.buffers.back();
    const uint64_t stride = 8 * (uint64_t{depth} + 1);
    uint64_t need;
    if (MulOverflows(chunks->size(), stride, &need) || need != index.size) return cuts;
    LANCE_ASSIGN_OR_RAISE(index_words, ReadWhole(read, index));
    for (size_t c = 0; c < chunks->size(); ++c) {
      chunk_rows.push_back(LoadLE<uint64_t>(index_words->data() + c * stride));
      continues.push_back(LoadLE<uint64_t>(index_words->data() + c * stride + 8) != 0);
    }
  }
  cuts.starts.push_back(0);
  cuts.cut_chunks.push_back(0);
  uint64_t row = 0;
  for (size_t c = 0; c < chunks->size(); ++c) {
    if (AddOverflows(row, chunk_rows[c], &row) || row > page.length) return PageCuts{};
    if (continues[c]) continue;
    // A span of chunks without rows: leave such odd pages whole.
    if (row == cuts.starts.back()) return PageCuts{};
    cuts.starts.push_back(row);
    cuts.cut_chunks.push_back(c + 1);
  }
  if (row != page.length || cuts.starts.back() != page.length || cuts.cut_chunks.back() != chunks->size()) {
    return PageCuts{};
  }
  const size_t plain_end = page.buffers.size() - (depth > 0 ? 1 : 0);
  for (size_t b = 2; b < plain_end; ++b) {
    LANCE_ASSIGN_OR_RAISE(BufferPtr whole, ReadWhole(read, page.buffers[b]));
    cuts.whole_buffers.push_back(std::move(whole));
  }
  cuts.kind = PageCuts::Kind::kChunks;
  cuts.repeated = has_rep;
  cuts.chunks = std::move(*chunks);
  cuts.metadata = std::move(metadata);
  cuts.repetition_index = std::move(index_words);
  return cuts;
}

Result<PageCuts> FullZipCuts(const pb21::FullZipLayout& layout, const PageInfo& page) {
  PageCuts cuts;
  if (page.buffers.size() == 2 && page.length > 0 && layout.bits_rep() <= 16 && layout.bits_def() <= 16) {
    // Variable-width values or repetition: the second buffer indexes rows.
    const uint64_t entries = page.length + 1;
    if (entries == 0 || page.buffers[1].size % entries != 0) return cuts;
    const uint64_t width = page.buffers[1].size / entries;
    if (width != 1 && width != 2 && width != 4 && width != 8) return cuts;
    cuts.kind = PageCuts::Kind::kIndexed;
    cuts.index_width = width;
    return cuts;
  }
  if (layout.bits_rep() != 0 || layout.bits_def() > 16) return cuts;
  if (layout.details_case() != pb21::FullZipLayout::kBitsPerValue || !layout.has_value_compression()) return cuts;
  if (page.buffers.empty() || page.buffers.size() > 2) return cuts;
  auto bits = FixedPerValueBits(layout.value_compression());
  if (!bits.ok() || *bits == 0 || *bits % 8 != 0) return cuts;
  const uint64_t control = layout.bits_def() == 0 ? 0 : layout.bits_def() <= 8 ? 1 : 2;
  const uint64_t row_bytes = control + *bits / 8;
  uint64_t need;
  if (MulOverflows(page.length, row_bytes, &need)) return cuts;
  // Without control words the decoder reads a prefix; with them, all bytes.
  const uint64_t size = page.buffers[0].size;
  if (control == 0 ? need > size : need != size) return cuts;
  cuts.kind = PageCuts::Kind::kEveryRow;
  cuts.row_bytes = row_bytes;
  return cuts;
}

// Levels of a constant page: raw u16 words, or compressed as the layout says.
Result<std::vector<uint16_t>> ConstantLevels(const BufferPtr& bytes, const pb21::CompressiveEncoding* compression,
                                             uint64_t declared) {
  if (compression) {
    if (declared > kMaxDecodedElements) return Corrupt("constant page levels of ", declared, " values");
    LANCE_ASSIGN_OR_RAISE(DataBlock block,
                          DecompressBlock(*compression, bytes, declared, arrow::default_memory_pool()));
    return LevelsFromBlock(block, declared);
  }
  if (bytes->size() % 2 != 0) return Corrupt("constant page levels of ", bytes->size(), " bytes (odd)");
  std::vector<uint16_t> levels(static_cast<size_t>(bytes->size()) / 2);
  for (size_t i = 0; i < levels.size(); ++i) levels[i] = LoadLE<uint16_t>(bytes->data() + 2 * i);
  return levels;
}

Result<PageCuts> ConstantCuts(const pb21::ConstantLayout& layout, const PageInfo& page, const BlobReader& read) {
  PageCuts cuts;
  const size_t n = page.buffers.size();
  // Without level buffers every row is the same value (or null).
  const bool no_levels = layout.has_inline_value() ? n == 0 : n <= 1;
  if (no_levels) {
    if (layout.num_rep_values() == 0 && layout.num_def_values() == 0) cuts.kind = PageCuts::Kind::kEveryRow;
    return cuts;
  }
  // With levels (buffers [scalar,] rep, def): any row is a cut once the
  // levels say where each row's levels are. They cannot be read in part
  // (compressed, or rows of varying level counts), so they are read and
  // decoded once here, as pylance caches them.
  if (n != 2 && n != 3) return cuts;
  if (layout.has_inline_value() && n != 2) return cuts;
  const size_t first_level = n - 2;
  for (size_t b = 0; b < first_level; ++b) {
    LANCE_ASSIGN_OR_RAISE(BufferPtr whole, ReadWhole(read, page.buffers[b]));
    cuts.whole_buffers.push_back(std::move(whole));
  }
  LANCE_ASSIGN_OR_RAISE(BufferPtr rep_bytes, ReadWhole(read, page.buffers[first_level]));
  LANCE_ASSIGN_OR_RAISE(BufferPtr def_bytes, ReadWhole(read, page.buffers[first_level + 1]));
  auto layers = LayersFromProto(layout.layers().data(), layout.layers_size());
  if (!layers.ok()) return PageCuts{};
  if (rep_bytes->size() > 0) {
    auto rep = ConstantLevels(rep_bytes, layout.has_rep_compression() ? &layout.rep_compression() : nullptr,
                              layout.num_rep_values());
    if (!rep.ok()) return PageCuts{};
    cuts.rep_levels = std::move(*rep);
  }
  if (def_bytes->size() > 0) {
    auto def = ConstantLevels(def_bytes, layout.has_def_compression() ? &layout.def_compression() : nullptr,
                              layout.num_def_values());
    if (!def.ok()) return PageCuts{};
    cuts.def_levels = std::move(*def);
  }
  if (rep_bytes->size() > 0) {
    if (!cuts.def_levels.empty() && cuts.def_levels.size() != cuts.rep_levels.size()) return PageCuts{};
    const uint16_t max_rep = MaxRep(*layers);
    for (size_t i = 0; i < cuts.rep_levels.size(); ++i) {
      if (cuts.rep_levels[i] == max_rep) cuts.row_levels.push_back(i);
    }
    if (cuts.row_levels.size() != page.length || (page.length > 0 && cuts.row_levels[0] != 0)) return PageCuts{};
    cuts.row_levels.push_back(cuts.rep_levels.size());
  } else if (cuts.def_levels.size() != page.length) {
    return PageCuts{};
  }
  cuts.kind = PageCuts::Kind::kEveryRow;
  cuts.constant_levels = true;
  return cuts;
}

// Levels [begin, end) of `levels` as raw u16 words appended to `out`.
void AppendLevels(const std::vector<uint16_t>& levels, uint64_t begin, uint64_t end, std::vector<uint8_t>* out) {
  for (uint64_t i = begin; i < end; ++i) {
    out->push_back(static_cast<uint8_t>(levels[i] & 0xFF));
    out->push_back(static_cast<uint8_t>(levels[i] >> 8));
  }
}

}  // namespace

uint64_t PageCuts::Down(uint64_t row) const {
  switch (kind) {
    case Kind::kEveryRow:
      return row;
    case Kind::kChunks: {
      auto it = std::upper_bound(starts.begin(), starts.end(), row);
      return it == starts.begin() ? 0 : *(it - 1);
    }
    case Kind::kIndexed:
      return row;
    case Kind::kWhole:
      break;
  }
  return 0;
}

uint64_t PageCuts::Up(uint64_t row, uint64_t length) const {
  switch (kind) {
    case Kind::kEveryRow:
    case Kind::kIndexed:
      return std::min(row, length);
    case Kind::kChunks: {
      auto it = std::lower_bound(starts.begin(), starts.end(), row);
      return it == starts.end() ? length : std::min(*it, length);
    }
    case Kind::kWhole:
      break;
  }
  return row == 0 ? 0 : length;
}

Result<PageCuts> AnalyzePageCuts(const PageInfo& page, const BlobReader& read) {
  if (page.encoding_type_url != kPageLayoutTypeUrl) return PageCuts{};
  pb21::PageLayout layout;
  if (!util::ParseMessage(page.encoding, &layout)) return PageCuts{};
  switch (layout.layout_case()) {
    case pb21::PageLayout::kMiniBlockLayout:
      return MiniBlockCuts(layout.mini_block_layout(), page, read);
    case pb21::PageLayout::kFullZipLayout:
      return FullZipCuts(layout.full_zip_layout(), page);
    case pb21::PageLayout::kConstantLayout:
      return ConstantCuts(layout.constant_layout(), page, read);
    default:
      break;
  }
  return PageCuts{};
}

Result<PageData> LoadPageRows(const PageInfo& page, const PageCuts& cuts, uint64_t begin, uint64_t end,
                              const BlobReader& read) {
  return LoadPageRowRanges(page, cuts, {{begin, end}}, read);
}

Result<PageData> LoadPageRowRanges(const PageInfo& page, const PageCuts& cuts,
                                   const std::vector<std::pair<uint64_t, uint64_t>>& ranges,
                                   const BlobReader& read) {
  PageData out = Header(page);
  if (ranges.size() == 1 && ranges[0].first == 0 && ranges[0].second == page.length) {
    for (const auto& r : page.buffers) {
      LANCE_ASSIGN_OR_RAISE(auto b, ReadWhole(read, r));
      out.buffers.push_back(std::move(b));
    }
    return out;
  }
  uint64_t rows = 0, prev_end = 0;
  for (const auto& [begin, end] : ranges) {
    if (begin >= end || begin < prev_end || end > page.length || !cuts.IsCut(begin, page.length) ||
        !cuts.IsCut(end, page.length) || cuts.kind == PageCuts::Kind::kWhole) {
      return Status::Invalid("rows [", begin, ", ", end, ") of a ", page.length,
                             "-row page are not between cuts, or not ascending");
    }
    prev_end = end;
    rows += end - begin;
  }
  if (ranges.empty()) return Status::Invalid("no rows of the page asked for");
  out.length = rows;
  out.priority = page.priority + ranges[0].first;
  pb21::PageLayout layout;
  if (!util::ParseMessage(page.encoding, &layout)) return Corrupt("the page layout protobuf does not parse");
  switch (layout.layout_case()) {
    case pb21::PageLayout::kFullZipLayout: {
      auto* fz = layout.mutable_full_zip_layout();
      if (cuts.kind == PageCuts::Kind::kIndexed && page.buffers.size() == 2) {
        // Each range's rows span the bytes between its first and its end
        // row's index entries.
        const uint64_t w = cuts.index_width;
        std::vector<std::pair<uint64_t, uint64_t>> spans;
        for (const auto& [begin, end] : ranges) {
          uint64_t bounds[2];
          if (end - begin <= 512) {
            LANCE_ASSIGN_OR_RAISE(auto entries, ReadPart(read, page.buffers[1], begin * w, (end - begin + 1) * w,
                                                         "full-zip repetition index"));
            bounds[0] = LoadUnsigned(entries->data(), static_cast<unsigned>(w));
            bounds[1] = LoadUnsigned(entries->data() + (end - begin) * w, static_cast<unsigned>(w));
          } else {
            for (int e = 0; e < 2; ++e) {
              LANCE_ASSIGN_OR_RAISE(auto entry, ReadPart(read, page.buffers[1], (e ? end : begin) * w, w,
                                                         "full-zip repetition index"));
              bounds[e] = LoadUnsigned(entry->data(), static_cast<unsigned>(w));
            }
          }
          if (bounds[0] > bounds[1] || bounds[1] > page.buffers[0].size) {
            return Corrupt("full-zip repetition index puts rows [", begin, ", ", end, ") at bytes [", bounds[0], ", ",
                           bounds[1], ") of a ", page.buffers[0].size, "-byte buffer");
          }
          if (bounds[1] > bounds[0]) spans.emplace_back(bounds[0], bounds[1] - bounds[0]);
        }
        if (spans.empty()) {
          out.buffers.push_back(std::make_shared<arrow::Buffer>(nullptr, 0));
        } else {
          LANCE_ASSIGN_OR_RAISE(auto bytes, ReadSpans(read, page.buffers[0], spans, "full-zip rows"));
          out.buffers.push_back(std::move(bytes));
        }
        // The item counts of the part are not known without decoding it;
        // zero means unchecked.
        fz->set_num_items(0);
        fz->set_num_visible_items(0);
        out.encoding = layout.SerializeAsString();
        return out;
      }
      if (cuts.kind != PageCuts::Kind::kEveryRow || page.buffers.empty()) break;
      // The products are within the buffer size, checked by FullZipCuts.
      std::vector<std::pair<uint64_t, uint64_t>> spans;
      for (const auto& [begin, end] : ranges) spans.emplace_back(begin * cuts.row_bytes, (end - begin) * cuts.row_bytes);
      LANCE_ASSIGN_OR_RAISE(auto bytes, ReadSpans(read, page.buffers[0], spans, "full-zip rows"));
      out.buffers.push_back(std::move(bytes));
      if (rows > std::numeric_limits<uint32_t>::max()) return Status::Invalid("full-zip range of ", rows, " rows");
      if (fz->num_items() != 0) fz->set_num_items(static_cast<uint32_t>(rows));
      if (fz->num_visible_items() != 0) fz->set_num_visible_items(static_cast<uint32_t>(rows));
      out.encoding = layout.SerializeAsString();
      return out;
    }
    case pb21::PageLayout::kConstantLayout: {
      if (cuts.kind != PageCuts::Kind::kEveryRow) break;
      if (cuts.constant_levels) {
        // The scalar (if not inline) and the levels of the rows asked for,
        // as raw u16 words.
        auto* constant = layout.mutable_constant_layout();
        const bool has_rep = !cuts.row_levels.empty();
        std::vector<uint8_t> rep_bytes, def_bytes;
        for (const auto& [begin, end] : ranges) {
          const uint64_t a = has_rep ? cuts.row_levels[begin] : begin;
          const uint64_t b = has_rep ? cuts.row_levels[end] : end;
          if (has_rep) AppendLevels(cuts.rep_levels, a, b, &rep_bytes);
          if (!cuts.def_levels.empty()) AppendLevels(cuts.def_levels, a, b, &def_bytes);
        }
        for (const auto& whole : cuts.whole_buffers) out.buffers.push_back(whole);
        for (auto* bytes : {&rep_bytes, &def_bytes}) {
          out.buffers.push_back(arrow::Buffer::FromVector(std::move(*bytes)));
        }
        constant->clear_rep_compression();
        constant->clear_def_compression();
        constant->set_num_rep_values(out.buffers[out.buffers.size() - 2]->size() / 2);
        constant->set_num_def_values(out.buffers.back()->size() / 2);
        out.encoding = layout.SerializeAsString();
        return out;
      }
      for (const auto& r : page.buffers) {
        LANCE_ASSIGN_OR_RAISE(auto b, ReadWhole(read, r));
        out.buffers.push_back(std::move(b));
      }
      return out;
    }
    case pb21::PageLayout::kMiniBlockLayout: {
      if (cuts.kind != PageCuts::Kind::kChunks || cuts.starts.size() != cuts.cut_chunks.size() || !cuts.metadata ||
          page.buffers.size() < 2) {
        break;
      }
      auto* mb = layout.mutable_mini_block_layout();
      const uint64_t word = mb->has_large_chunk() ? 4 : 2;
      const uint64_t meta_size = static_cast<uint64_t>(cuts.metadata->size());
      const bool has_index = mb->repetition_index_depth() > 0;
      const uint64_t stride = 8 * (uint64_t{mb->repetition_index_depth()} + 1);
      // The chunks of each range; their metadata words, bytes and
      // repetition index words, in order, make the new page.
      std::vector<std::pair<uint64_t, uint64_t>> data_spans, index_spans;
      std::vector<BufferPtr> meta_parts;
      uint64_t items = 0;
      bool ok = true;
      for (const auto& [begin, end] : ranges) {
        const size_t k0 = static_cast<size_t>(std::lower_bound(cuts.starts.begin(), cuts.starts.end(), begin) -
                                              cuts.starts.begin());
        const size_t k1 = static_cast<size_t>(std::lower_bound(cuts.starts.begin(), cuts.starts.end(), end) -
                                              cuts.starts.begin());
        if (k0 >= k1 || k1 >= cuts.cut_chunks.size()) {
          ok = false;
          break;
        }
        const size_t c0 = cuts.cut_chunks[k0], c1 = cuts.cut_chunks[k1];
        if (c0 >= c1 || c1 > cuts.chunks.size()) {
          ok = false;
          break;
        }
        if (c1 * word > meta_size) return Corrupt("mini-block chunk metadata of ", meta_size, " bytes");
        meta_parts.push_back(arrow::SliceBuffer(cuts.metadata, static_cast<int64_t>(c0 * word),
                                                static_cast<int64_t>((c1 - c0) * word)));
        const uint64_t first = cuts.chunks[c0].offset;
        const uint64_t last_end = cuts.chunks[c1 - 1].offset + cuts.chunks[c1 - 1].size;
        data_spans.emplace_back(first, last_end - first);
        index_spans.emplace_back(c0 * stride, (c1 - c0) * stride);
        for (size_t c = c0; c < c1; ++c) items += cuts.chunks[c].num_values;
      }
      if (!ok) break;
      if (meta_parts.size() == 1) {
        out.buffers.push_back(meta_parts[0]);
      } else {
        LANCE_ASSIGN_OR_RAISE(auto meta, arrow::ConcatenateBuffers(meta_parts));
        out.buffers.push_back(std::move(meta));
      }
      LANCE_ASSIGN_OR_RAISE(auto data, ReadSpans(read, page.buffers[1], data_spans, "mini-block chunks"));
      out.buffers.push_back(std::move(data));
      const size_t plain_end = page.buffers.size() - (has_index ? 1 : 0);
      if (cuts.whole_buffers.size() != plain_end - 2) break;
      for (const auto& whole : cuts.whole_buffers) out.buffers.push_back(whole);
      if (has_index) {
        // The repetition index words of the chunks kept (the decoder does
        // not use them, but the page must have the buffer).
        if (!cuts.repetition_index) break;
        const uint64_t index_size = static_cast<uint64_t>(cuts.repetition_index->size());
        std::vector<BufferPtr> index_parts;
        for (const auto& [offset, size] : index_spans) {
          if (offset > index_size || size > index_size - offset) {
            return Corrupt("mini-block repetition index of ", index_size, " bytes");
          }
          index_parts.push_back(arrow::SliceBuffer(cuts.repetition_index, static_cast<int64_t>(offset),
                                                   static_cast<int64_t>(size)));
        }
        if (index_parts.size() == 1) {
          out.buffers.push_back(index_parts[0]);
        } else {
          LANCE_ASSIGN_OR_RAISE(auto index, arrow::ConcatenateBuffers(index_parts));
          out.buffers.push_back(std::move(index));
        }
      }
      mb->set_num_items(items);
      out.encoding = layout.SerializeAsString();
      return out;
    }
    default:
      break;
  }
  return Status::Invalid("a page of layout ", static_cast<int>(layout.layout_case()), " cannot be cut at rows [",
                         ranges[0].first, ", ", ranges.back().second, ")");
}

}  // namespace lance::file::v2_1
