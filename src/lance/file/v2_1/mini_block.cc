#include "lance/file/v2_1/mini_block.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "lance/file/v2_1/bitpacking.h"
#include "lance/file/v2_1/buffer_compression.h"
#include "lance/file/v2_1/bytes.h"
#include "lance/file/v2_1/compressive.h"
#include "lance/file/v2_1/data_block.h"
#include "lance/file/v2_1/variable.h"

namespace lance::file::v2_1 {

namespace comp = lance::file::compression;

namespace {

constexpr uint64_t kMiniBlockAlignment = 8;
// Writers put at most a few thousand values in a chunk; anything beyond
// this is a corrupt count (and would make us allocate for it).
constexpr uint64_t kMaxChunkValues = uint64_t{1} << 20;
constexpr uint64_t kMaxChunkLevels = uint64_t{1} << 24;

// Parses the chunk metadata words: ((bytes / 8 - 1) << 4) | log2(values),
// where the last chunk's log is 0 and its count is whatever remains.
}  // namespace

Result<std::vector<ChunkInfo>> ParseChunkMetadata(ByteSpan meta, bool large, uint64_t num_items, uint64_t data_size) {
  const uint64_t word = large ? 4 : 2;
  if (meta.size() % word != 0) {
    return Corrupt("mini-block chunk metadata of ", meta.size(), " bytes is not a multiple of ", word);
  }
  const uint64_t num_chunks = meta.size() / word;
  std::vector<ChunkInfo> chunks;
  chunks.reserve(num_chunks);
  uint64_t offset = 0, counted = 0;
  for (uint64_t i = 0; i < num_chunks; ++i) {
    const uint64_t w = large ? LoadLE<uint32_t>(meta.data() + i * 4) : LoadLE<uint16_t>(meta.data() + i * 2);
    const uint64_t log = w & 0xF;
    const uint64_t size = ((w >> 4) + 1) * kMiniBlockAlignment;
    uint64_t values;
    if (i + 1 < num_chunks) {
      if (log == 0) return Corrupt("mini-block chunk ", i, " of ", num_chunks, " claims 1 value (log 0)");
      values = uint64_t{1} << log;
      if (AddOverflows(counted, values, &counted) || counted > num_items) {
        return Corrupt("mini-block chunks hold more than the page's ", num_items, " items");
      }
    } else {
      values = num_items - counted;
      if (values > kMaxChunkValues) {
        return Corrupt("last mini-block chunk would hold ", values, " values (page of ", num_items, " items)");
      }
      if (log != 0 && (uint64_t{1} << log) != values) {
        return Corrupt("last mini-block chunk claims ", uint64_t{1} << log, " values but ", values, " remain");
      }
    }
    if (offset > data_size || data_size - offset < size) {
      return Corrupt("mini-block chunk ", i, " at [", offset, ", +", size, ") exceeds the ", data_size,
                     "-byte data buffer");
    }
    chunks.push_back({offset, size, values});
    offset += size;
  }
  if (num_chunks == 0 && num_items != 0) {
    return Corrupt("mini-block page of ", num_items, " items has no chunks");
  }
  return chunks;
}

namespace {

Result<std::vector<uint16_t>> DecodeChunkLevels(const pb21::CompressiveEncoding& encoding, const BufferPtr& bytes,
                                                uint64_t count, arrow::MemoryPool* pool) {
  LANCE_ASSIGN_OR_RAISE(DataBlock block, DecompressBlock(encoding, bytes, count, pool));
  return LevelsFromBlock(block, count);
}

// The values at `rows` (relative to the chunk, ascending, repeats allowed)
// of one chunk. FSST strings expand independently of each other, so only the
// kept ones are expanded; under general compression (zstd, lz4) the chunk's
// buffer is decompressed whole, and other encodings decode the chunk and keep
// the rows (a chunk is at most a few KiB and its buffers are one unit).
Result<DataBlock> DecompressChunkRows(const pb21::CompressiveEncoding& encoding, std::vector<BufferPtr> buffers,
                                      uint64_t num_values, const std::vector<uint64_t>& rows,
                                      arrow::MemoryPool* pool) {
  using Case = pb21::CompressiveEncoding::CompressionCase;
  switch (encoding.compression_case()) {
    case Case::kFsst: {
      if (!encoding.fsst().has_values()) return Corrupt("fsst encoding without values");
      LANCE_ASSIGN_OR_RAISE(DataBlock compressed, DecompressChunkRows(encoding.fsst().values(), std::move(buffers),
                                                                      num_values, rows, pool));
      return DecodeFsst(encoding.fsst().symbol_table(), compressed, pool);
    }
    case Case::kInlineBitpacking: {
      // Each value of a FastLanes block unpacks on its own.
      const auto& bitpacking = encoding.inline_bitpacking();
      if (bitpacking.has_values() || buffers.size() != 1) break;
      return UnpackInlineBitpackingRows(bitpacking.uncompressed_bits_per_value(), AsSpan(buffers[0]), num_values,
                                        rows, pool);
    }
    case Case::kGeneral: {
      const auto& general = encoding.general();
      if (!general.has_compression() || !general.has_values()) {
        return Corrupt("general encoding without compression or values");
      }
      if (buffers.empty()) return Corrupt("general chunk without buffers");
      LANCE_ASSIGN_OR_RAISE(buffers[0], DecompressBuffer(general.compression(), buffers[0], pool));
      return DecompressChunkRows(general.values(), std::move(buffers), num_values, rows, pool);
    }
    default:
      break;
  }
  LANCE_ASSIGN_OR_RAISE(DataBlock all, DecompressMiniBlock(encoding, std::move(buffers), num_values, pool));
  return TakeBlock(all, rows, pool);
}

// The FSST strings of a whole page, decoded chunk by chunk straight into
// the page's buffers: no chunk is materialized on its own and then copied,
// and the symbol table is parsed once.
class FsstPageOutput {
 public:
  static Result<FsstPageOutput> Make(const pb21::Fsst& fsst, uint64_t num_items, uint64_t page_bytes,
                                     arrow::MemoryPool* pool) {
    if (!fsst.has_values()) return Corrupt("fsst encoding without values");
    LANCE_ASSIGN_OR_RAISE(auto decoder, comp::FsstDecoder::Make(fsst.symbol_table()));
    LANCE_ASSIGN_OR_RAISE(auto offsets, Allocate((num_items + 1) * 8, pool));
    LANCE_ASSIGN_OR_RAISE(std::shared_ptr<arrow::ResizableBuffer> data, arrow::AllocateResizableBuffer(0, pool));
    // Text usually expands 2-3x under FSST; the decoder grows the buffer when it must.
    LANCE_RETURN_NOT_OK(data->Reserve(static_cast<int64_t>(std::min(3 * page_bytes, kMaxAllocationBytes))));
    reinterpret_cast<uint64_t*>(offsets->mutable_data())[0] = 0;
    return FsstPageOutput(std::move(decoder), num_items, std::move(offsets), std::move(data));
  }

  Status Append(const pb21::Fsst& fsst, std::vector<BufferPtr> buffers, uint64_t num_values, arrow::MemoryPool* pool) {
    if (num_values > num_items_ - count_) {
      return Corrupt("mini-block chunks hold more than the page's ", num_items_, " items");
    }
    LANCE_ASSIGN_OR_RAISE(DataBlock compressed, DecompressMiniBlock(fsst.values(), std::move(buffers), num_values, pool));
    // The decoder checks each offset against the data as it goes; only the
    // offsets buffer's size is left to check here.
    LANCE_RETURN_NOT_OK(CheckFsstInput(compressed));
    if (compressed.num_values != num_values) {
      return Corrupt("FSST chunk decoded ", compressed.num_values, " values, expected ", num_values);
    }
    auto* ends = reinterpret_cast<uint64_t*>(offsets_->mutable_data()) + 1 + count_;
    LANCE_RETURN_NOT_OK(decoder_.DecompressAppend(compressed.offsets->data(), compressed.bits_per_offset / 8,
                                                  num_values, AsStringView(compressed.data), data_.get(), ends));
    count_ += num_values;
    return Status::OK();
  }

  // REQUIRES: every chunk appended.
  DataBlock Finish() && {
    return DataBlock::Variable(64, count_, arrow::SliceBuffer(offsets_, 0, static_cast<int64_t>((count_ + 1) * 8)),
                               std::move(data_));
  }

 private:
  FsstPageOutput(comp::FsstDecoder decoder, uint64_t num_items, BufferPtr offsets,
                 std::shared_ptr<arrow::ResizableBuffer> data)
      : decoder_(std::move(decoder)), num_items_(num_items), offsets_(std::move(offsets)), data_(std::move(data)) {}

  comp::FsstDecoder decoder_;
  uint64_t num_items_;
  uint64_t count_ = 0;
  BufferPtr offsets_;
  std::shared_ptr<arrow::ResizableBuffer> data_;
};

}  // namespace

Result<DecodedPage> DecodeMiniBlockPage(const pb21::MiniBlockLayout& layout, const PageData& page,
                                        const PageContext& ctx) {
  arrow::MemoryPool* pool = ctx.pool;
  DecodedPage out;
  LANCE_ASSIGN_OR_RAISE(out.levels.layers, LayersFromProto(layout.layers().data(), layout.layers_size()));
  if (!layout.has_value_compression()) return Corrupt("mini-block layout without a value compression");
  const bool has_rep = layout.has_rep_compression();
  const bool has_def = layout.has_def_compression();
  const bool has_dict = layout.has_dictionary();
  const bool has_rep_index = layout.repetition_index_depth() > 0;
  const size_t expected_buffers = 2 + (has_dict ? 1 : 0) + (has_rep_index ? 1 : 0);
  if (page.buffers.size() != expected_buffers) {
    return Corrupt("mini-block page has ", page.buffers.size(), " buffers, expected ", expected_buffers);
  }
  for (const auto& b : page.buffers) {
    if (!b) return Corrupt("mini-block page buffer missing");
  }
  LANCE_ASSIGN_OR_RAISE(uint64_t buffers_per_chunk, MiniBlockBufferCount(layout.value_compression()));
  if (layout.num_buffers() != buffers_per_chunk) {
    return Corrupt("mini-block layout declares ", layout.num_buffers(), " buffers per chunk but its ",
                   EncodingName(layout.value_compression()), " values use ", buffers_per_chunk);
  }
  if (buffers_per_chunk > 64) return Corrupt("mini-block chunks with ", buffers_per_chunk, " buffers");
  const uint64_t num_items = layout.num_items();
  if (num_items > kMaxDecodedElements) return Corrupt("mini-block page of ", num_items, " items");

  const BufferPtr& data = page.buffers[1];
  LANCE_ASSIGN_OR_RAISE(auto chunks, ParseChunkMetadata(AsSpan(page.buffers[0]), layout.has_large_chunk(), num_items,
                                                         static_cast<uint64_t>(data->size())));

  std::vector<DataBlock> values;
  std::vector<uint16_t> rep, def;
  values.reserve(chunks.size());
  // Reading every row of FSST strings (the common string page): one output for the page.
  std::optional<FsstPageOutput> fsst_out;
  if (ctx.kept_rows == nullptr && layout.value_compression().compression_case() ==
                                      pb21::CompressiveEncoding::CompressionCase::kFsst) {
    LANCE_ASSIGN_OR_RAISE(fsst_out, FsstPageOutput::Make(layout.value_compression().fsst(), num_items,
                                                         static_cast<uint64_t>(data->size()), pool));
  }
  // Without repetition a chunk's values are rows: keep only those the caller
  // wants, chunk by chunk, so the page is never materialized whole.
  const bool keep = ctx.kept_rows != nullptr && !has_rep;
  size_t next_kept = 0;
  uint64_t chunk_start = 0, kept = 0;
  for (size_t c = 0; c < chunks.size(); ++c) {
    const auto& chunk = chunks[c];
    std::vector<uint64_t> local;  // kept rows of the chunk, relative to it
    if (keep) {
      const auto& rows = *ctx.kept_rows;
      for (; next_kept < rows.size() && rows[next_kept] < chunk_start + chunk.num_values; ++next_kept) {
        if (rows[next_kept] < chunk_start) return Corrupt("kept rows are not ascending");
        local.push_back(rows[next_kept] - chunk_start);
      }
      chunk_start += chunk.num_values;
      kept += local.size();
    }
    LANCE_ASSIGN_OR_RAISE(BufferPtr bytes, SliceChecked(data, chunk.offset, chunk.size, "mini-block chunk"));
    ByteSpan span = AsSpan(bytes);
    uint64_t pos = 0;
    LANCE_ASSIGN_OR_RAISE(uint16_t declared_levels, ReadLE<uint16_t>(span, pos, "mini-block chunk header"));
    pos += 2;
    uint64_t rep_size = 0, def_size = 0;
    if (has_rep) {
      LANCE_ASSIGN_OR_RAISE(uint16_t v, ReadLE<uint16_t>(span, pos, "mini-block chunk header"));
      rep_size = v;
      pos += 2;
    }
    if (has_def) {
      LANCE_ASSIGN_OR_RAISE(uint16_t v, ReadLE<uint16_t>(span, pos, "mini-block chunk header"));
      def_size = v;
      pos += 2;
    }
    std::vector<uint64_t> sizes(buffers_per_chunk);
    for (auto& size : sizes) {
      if (layout.has_large_chunk()) {
        LANCE_ASSIGN_OR_RAISE(uint32_t v, ReadLE<uint32_t>(span, pos, "mini-block chunk header"));
        size = v;
        pos += 4;
      } else {
        LANCE_ASSIGN_OR_RAISE(uint16_t v, ReadLE<uint16_t>(span, pos, "mini-block chunk header"));
        size = v;
        pos += 2;
      }
    }
    pos = PadTo(pos, kMiniBlockAlignment);
    BufferPtr rep_bytes, def_bytes;
    if (has_rep) {
      LANCE_ASSIGN_OR_RAISE(rep_bytes, SliceChecked(bytes, pos, rep_size, "mini-block repetition levels"));
      pos = PadTo(pos + rep_size, kMiniBlockAlignment);
    }
    if (has_def) {
      LANCE_ASSIGN_OR_RAISE(def_bytes, SliceChecked(bytes, pos, def_size, "mini-block definition levels"));
      pos = PadTo(pos + def_size, kMiniBlockAlignment);
    }
    std::vector<BufferPtr> buffers;
    for (uint64_t size : sizes) {
      LANCE_ASSIGN_OR_RAISE(auto b, SliceChecked(bytes, pos, size, "mini-block value buffer"));
      buffers.push_back(std::move(b));
      pos = PadTo(pos + size, kMiniBlockAlignment);
    }
    if (fsst_out) {
      auto st = fsst_out->Append(layout.value_compression().fsst(), std::move(buffers), chunk.num_values, pool);
      if (!st.ok()) return st.WithMessage("mini-block chunk ", c, ": ", st.message());
    } else {
      auto chunk_values =
          keep ? DecompressChunkRows(layout.value_compression(), std::move(buffers), chunk.num_values, local, pool)
               : DecompressMiniBlock(layout.value_compression(), std::move(buffers), chunk.num_values, pool);
      if (!chunk_values.ok()) {
        return chunk_values.status().WithMessage("mini-block chunk ", c, ": ", chunk_values.status().message());
      }
      values.push_back(std::move(*chunk_values));
    }

    // The u16 level count wraps for chunks of 65536+ levels; RLE payloads
    // know their true length.
    uint64_t num_levels = declared_levels;
    for (const auto& [enc, lb] : {std::make_pair(has_rep ? &layout.rep_compression() : nullptr, rep_bytes),
                                  std::make_pair(has_def ? &layout.def_compression() : nullptr, def_bytes)}) {
      if (!enc) continue;
      LANCE_ASSIGN_OR_RAISE(auto inferred, InferBlockValueCount(*enc, lb, pool));
      if (inferred && *inferred != num_levels) {
        if (*inferred < num_levels || *inferred % 65536 != declared_levels || *inferred > kMaxChunkLevels) {
          return Corrupt("mini-block chunk ", c, " declares ", declared_levels, " levels but its levels hold ",
                         *inferred);
        }
        num_levels = *inferred;
      }
    }
    if (has_rep) {
      LANCE_ASSIGN_OR_RAISE(auto levels, DecodeChunkLevels(layout.rep_compression(), rep_bytes, num_levels, pool));
      rep.insert(rep.end(), levels.begin(), levels.end());
    }
    if (has_def) {
      LANCE_ASSIGN_OR_RAISE(auto levels, DecodeChunkLevels(layout.def_compression(), def_bytes, num_levels, pool));
      if (keep) {
        for (uint64_t r : local) {
          if (r >= levels.size()) return Corrupt("mini-block chunk ", c, " has ", levels.size(), " levels");
          def.push_back(levels[r]);
        }
      } else {
        def.insert(def.end(), levels.begin(), levels.end());
      }
    }
  }
  if (keep && chunk_start != num_items) {
    return Corrupt("mini-block chunks hold ", chunk_start, " items, expected ", num_items);
  }
  if (fsst_out) {
    out.values = std::move(*fsst_out).Finish();
  } else {
    LANCE_ASSIGN_OR_RAISE(out.values, ConcatBlocks(std::move(values), pool));
  }
  const uint64_t expected_values = keep ? kept : num_items;
  if (out.values.num_values != expected_values) {
    return Corrupt("mini-block page decoded ", out.values.num_values, " items, expected ", expected_values);
  }
  out.rows_kept = keep;
  if (has_dict) {
    if (layout.num_dictionary_items() > (uint64_t{1} << 28)) {
      return Corrupt("dictionary of ", layout.num_dictionary_items(), " items");
    }
    auto dict = DecompressBlock(layout.dictionary(), page.buffers[2], layout.num_dictionary_items(), pool);
    if (!dict.ok()) return dict.status().WithMessage("mini-block dictionary: ", dict.status().message());
    out.dictionary = std::move(*dict);
  }
  if (has_rep) out.levels.rep = std::move(rep);
  if (has_def) out.levels.def = std::move(def);
  out.levels.num_items = out.values.num_values;
  LANCE_RETURN_NOT_OK(ValidatePageLevels(out.levels));
  return out;
}

}  // namespace lance::file::v2_1
