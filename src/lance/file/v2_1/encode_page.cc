#include "lance/file/v2_1/encode_page.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <optional>
#include <string_view>

#include <arrow/array.h>
#include <arrow/buffer.h>

#include "lance/encodings_v2_1.pb.h"
#include "lance/file/v2_1/encode_chunks.h"
#include "lance/file/v2_1/encode_dictionary.h"
#include "lance/file/v2_1/encode_packed.h"
#include "lance/file/v2_1/encode_strings.h"
#include "lance/file/v2_1/encode_values.h"
#include "lance/file/v2_1/page.h"

namespace lance::file::v2_1 {

namespace {

using namespace encode;  // NOLINT: the page encoders are the encode helpers' only users

// Values this wide (bytes) or wider go to full-zip pages.
constexpr uint64_t kMiniBlockMaxValueBytes = 256;
constexpr uint64_t kMiniBlockAlignment = 8;
constexpr char kMiniBlockPad = static_cast<char>(0xFE);

// -------------------------------------------------------------- mini-block

void PadTo8(std::string* s, char pad) {
  const size_t rem = s->size() % kMiniBlockAlignment;
  if (rem != 0) s->append(kMiniBlockAlignment - rem, pad);
}

void AppendU16(std::string* s, uint16_t v) { s->append(reinterpret_cast<const char*>(&v), 2); }
void AppendU32(std::string* s, uint32_t v) { s->append(reinterpret_cast<const char*>(&v), 4); }
void AppendU64(std::string* s, uint64_t v) { s->append(reinterpret_cast<const char*>(&v), 8); }

std::string LevelBytes(const uint16_t* levels, size_t n) {
  return std::string(reinterpret_cast<const char*>(levels), n * 2);
}

void SetLayers(const std::vector<Layer>& layers, google::protobuf::RepeatedField<int>* out) {
  for (Layer l : layers) out->Add(LayerToProto(l));
}

PageData MakePage(const pb21::PageLayout& layout, uint64_t num_rows, uint64_t first_row,
                  std::vector<std::string> buffers) {
  PageData page;
  page.length = num_rows;
  page.priority = first_row;
  page.encoding_type_url = kPageLayoutTypeUrl;
  layout.SerializeToString(&page.encoding);
  for (auto& b : buffers) page.buffers.push_back(arrow::Buffer::FromString(std::move(b)));
  return page;
}

// Whether every byte of the fixed-width values is zero.
bool AllBytesZero(const PageValues& values) {
  if (!values.data) return true;
  const uint64_t bytes = (values.num_values * values.bits_per_value + 7) / 8;
  const uint8_t* d = values.data->data();
  for (uint64_t i = 0; i < bytes; ++i) {
    if (d[i] != 0) return false;
  }
  return true;
}

Result<PageData> EncodeMiniBlock(const LeafPath& path, const CompactLevels& levels, const PageValues& values,
                                 uint64_t num_rows, uint64_t first_row, FileVersion version,
                                 const CompressionParams& params, std::optional<DictionaryPage> dictionary) {
  const bool compress = params.compression != "none";
  MiniCompressed compressed;
  if (values.kind == PageValues::Kind::kVariable) {
    if (UseFsst(values, params)) {
      LANCE_ASSIGN_OR_RAISE(auto fsst, FsstValues(values));
      compressed = ChunkVariable(fsst.second);
      compressed.encoding = FsstEncoding(std::move(fsst.first), std::move(compressed.encoding));
    } else {
      compressed = ChunkVariable(values);
    }
  } else {
    std::optional<MiniCompressed> packed;
    if (!values.packed_bits.empty()) {
      // Packed structs are stored flat, as the reference does.
      LANCE_ASSIGN_OR_RAISE(packed, ChunkFixed(values));
      pb21::CompressiveEncoding e;
      for (uint64_t b : values.packed_bits) e.mutable_packed_struct()->add_bits_per_value(b);
      *e.mutable_packed_struct()->mutable_values() = std::move(packed->encoding);
      packed->encoding = std::move(e);
    }
    if (!packed && compress && UseByteStreamSplit(values, params)) packed = ByteStreamSplitChunks(values);
    // pylance 14 never run-length encodes a page whose values are all zero
    // (bit width 0): it bitpacks it, even when the run count passes.
    if (compress && !packed && !AllBytesZero(values)) packed = TryRle(values, params.rle_threshold);
    if (compress && !packed) {
      LANCE_ASSIGN_OR_RAISE(packed, TryInlineBitpacking(values));
    }
    if (packed) {
      compressed = std::move(*packed);
    } else {
      LANCE_ASSIGN_OR_RAISE(compressed, ChunkFixed(values));
    }
  }
  if (auto codec = params.General(); codec && values.fsl.empty() && values.packed_bits.empty()) {
    LANCE_RETURN_NOT_OK(WrapGeneral(&compressed, *codec, params.compression_level));
  }
  const bool has_rep = !levels.rep.empty();
  const bool has_def = !levels.def.empty();
  const uint16_t max_rep = path.max_rep;
  // Compact def levels keep the order of the widest ones, so visibility is a
  // threshold on the compact level too.
  uint16_t max_visible = 0;
  for (Layer l : levels.layers) {
    if (IsListLayer(l)) break;
    max_visible = static_cast<uint16_t>(max_visible + DefLevelsOf(l));
  }

  // Split the levels along the value chunks: a chunk takes the levels up to
  // its last value; invisible levels after it go to the next chunk.
  const size_t num_levels = has_rep ? levels.rep.size() : levels.def.size();
  std::vector<std::pair<size_t, size_t>> level_ranges;
  size_t pos = 0;
  for (size_t c = 0; c < compressed.chunks.size(); ++c) {
    const size_t start = pos;
    if (c + 1 == compressed.chunks.size()) {
      pos = num_levels;
    } else if (has_def && max_rep > 0) {
      uint64_t taken = 0;
      while (taken < compressed.chunks[c].num_values) {
        if (levels.def[pos] <= max_visible) ++taken;
        ++pos;
      }
    } else {
      pos += compressed.chunks[c].num_values;
    }
    level_ranges.emplace_back(start, pos);
  }

  // Repetition index: rows finished in each chunk and the levels left over
  // after the last row start.
  std::vector<uint64_t> rep_index;
  if (has_rep) {
    for (size_t c = 0; c < level_ranges.size(); ++c) {
      const auto [s, e] = level_ranges[c];
      uint64_t rows = 0;
      for (size_t i = s + 1; i < e; ++i) rows += levels.rep[i] == max_rep ? 1 : 0;
      uint64_t leftovers = 0;
      if (c + 1 < level_ranges.size()) {
        leftovers = e - s;
        for (size_t i = e; i-- > s;) {
          if (levels.rep[i] == max_rep) {
            leftovers = e - i;
            break;
          }
        }
      }
      if (c != 0 && e > s && levels.rep[s] == max_rep && rep_index.back() != 0) {
        rep_index[rep_index.size() - 2] += 1;
        rep_index.back() = 0;
      }
      if (c + 1 == level_ranges.size()) rows += 1;
      rep_index.push_back(rows);
      rep_index.push_back(leftovers);
    }
  }

  // Compress each chunk's levels with one choice per page.
  LevelCompression rep_compression, def_compression;
  if (has_rep) rep_compression = ChooseLevelCompression(levels.rep, version);
  if (has_def) def_compression = ChooseLevelCompression(levels.def, version);
  std::vector<std::string> rep_chunks(level_ranges.size()), def_chunks(level_ranges.size());
  for (size_t c = 0; c < level_ranges.size(); ++c) {
    const auto [ls, le] = level_ranges[c];
    if (has_rep) {
      LANCE_ASSIGN_OR_RAISE(rep_chunks[c], rep_compression.Compress(levels.rep.data() + ls, le - ls));
    }
    if (has_def) {
      LANCE_ASSIGN_OR_RAISE(def_chunks[c], def_compression.Compress(levels.def.data() + ls, le - ls));
    }
  }

  // Serialize the chunks: u16 sizes, or u32 ones ("large chunks", 2.2)
  // when a chunk outgrows them.
  std::string data, meta_words;
  // The page's size is known up to padding: reserving it spares the
  // doubling growth (a transient of up to twice the page at every flush).
  size_t data_bound = 0;
  for (const auto& b : compressed.buffers) data_bound += b.size();
  for (size_t c = 0; c < level_ranges.size(); ++c) data_bound += rep_chunks[c].size() + def_chunks[c].size();
  data_bound += compressed.chunks.size() * (6 + 4 * compressed.buffers.size() +
                                            kMiniBlockAlignment * (3 + compressed.buffers.size()));
  auto serialize = [&](bool large) -> bool {
    data.clear();
    data.reserve(data_bound);
    meta_words.clear();
    std::vector<size_t> consumed(compressed.buffers.size(), 0);
    for (size_t c = 0; c < compressed.chunks.size(); ++c) {
      const auto& chunk = compressed.chunks[c];
      const auto [ls, le] = level_ranges[c];
      const size_t start = data.size();
      AppendU16(&data, static_cast<uint16_t>((has_rep || has_def) ? le - ls : 0));
      if (has_rep) AppendU16(&data, static_cast<uint16_t>(rep_chunks[c].size()));
      if (has_def) AppendU16(&data, static_cast<uint16_t>(def_chunks[c].size()));
      for (uint64_t size : chunk.buffer_sizes) {
        if (!large && size > 0xFFFF) return false;
        if (large) {
          AppendU32(&data, static_cast<uint32_t>(size));
        } else {
          AppendU16(&data, static_cast<uint16_t>(size));
        }
      }
      PadTo8(&data, kMiniBlockPad);
      if (has_rep) {
        data += rep_chunks[c];
        PadTo8(&data, kMiniBlockPad);
      }
      if (has_def) {
        data += def_chunks[c];
        PadTo8(&data, kMiniBlockPad);
      }
      for (size_t b = 0; b < chunk.buffer_sizes.size(); ++b) {
        data.append(compressed.buffers[b].view().substr(consumed[b], chunk.buffer_sizes[b]));
        consumed[b] += chunk.buffer_sizes[b];
        PadTo8(&data, kMiniBlockPad);
      }
      const uint64_t words = (data.size() - start) / kMiniBlockAlignment;
      const uint64_t word = ((words - 1) << 4) | chunk.log_num_values;
      if (large) {
        AppendU32(&meta_words, static_cast<uint32_t>(word));
      } else {
        if (word > 0xFFFF) return false;
        AppendU16(&meta_words, static_cast<uint16_t>(word));
      }
    }
    return true;
  };
  for (size_t c = 0; c < level_ranges.size(); ++c) {
    const size_t n = level_ranges[c].second - level_ranges[c].first;
    if ((has_rep || has_def) && n > 0x7FFF) {
      return Status::NotImplemented("leaf '", path.name, "': a mini-block chunk of ", n,
                                    " levels (more than 32767)");
    }
  }
  // 2.2 readers require the u32 form on every mini-block page.
  bool large = version >= FileVersion::kV2_2;
  if (large) {
    serialize(true);
  } else if (!serialize(false)) {
    if (version < FileVersion::kV2_2) {
      return Status::NotImplemented("leaf '", path.name, "': a mini-block chunk over 32 KiB needs file version 2.2");
    }
    large = true;
    serialize(true);
  }
  // The chunks are in `data` now.
  const size_t num_value_buffers = compressed.buffers.size();
  compressed.buffers.clear();
  compressed.buffers.shrink_to_fit();
  rep_chunks.clear();
  def_chunks.clear();

  pb21::PageLayout layout;
  auto* mb = layout.mutable_mini_block_layout();
  if (has_rep) *mb->mutable_rep_compression() = rep_compression.Encoding();
  if (has_def) *mb->mutable_def_compression() = def_compression.Encoding();
  *mb->mutable_value_compression() = compressed.encoding;
  SetLayers(levels.layers, mb->mutable_layers());
  mb->set_num_buffers(num_value_buffers);
  mb->set_repetition_index_depth(has_rep ? 1 : 0);
  mb->set_num_items(values.num_values);
  if (large) mb->set_has_large_chunk(true);
  std::vector<std::string> buffers{std::move(meta_words), std::move(data)};
  if (dictionary) {
    *mb->mutable_dictionary() = std::move(dictionary->dictionary_encoding);
    mb->set_num_dictionary_items(dictionary->num_items);
    buffers.push_back(std::move(dictionary->dictionary));
  }
  if (has_rep) {
    std::string index;
    for (uint64_t v : rep_index) AppendU64(&index, v);
    buffers.push_back(std::move(index));
  }
  return MakePage(layout, num_rows, first_row, std::move(buffers));
}

// -------------------------------------------------------------- full-zip

unsigned BitWidth(uint16_t v) { return static_cast<unsigned>(std::bit_width(v)); }

// Byte-packed offsets of each row start plus the end: 1, 2, 4 or 8 bytes
// each, wide enough for `max`.
std::string BytePacked(const std::vector<uint64_t>& values, uint64_t max) {
  const unsigned width = max <= 0xFF ? 1 : max <= 0xFFFF ? 2 : max <= 0xFFFFFFFFull ? 4 : 8;
  std::string out;
  out.reserve(values.size() * width);
  for (uint64_t v : values) out.append(reinterpret_cast<const char*>(&v), width);
  return out;
}

Result<PageData> EncodeFullZip(const LeafPath& path, const CompactLevels& levels, const PageValues& input_values,
                               uint64_t num_rows, uint64_t first_row, const CompressionParams& params) {
  // Wide strings are FSST-compressed value by value under the same rules as
  // mini-block strings.
  std::optional<std::string> symbol_table;
  bool per_value_zstd = false;
  PageValues fsst_values;
  if (input_values.row_encoding) {
    // Packed rows: their children were compressed when packed.
  } else if (UsePerValueZstd(input_values, params)) {
    LANCE_ASSIGN_OR_RAISE(fsst_values, CompressEachValue(input_values));
    per_value_zstd = true;
  } else if (UseFsst(input_values, params)) {
    LANCE_ASSIGN_OR_RAISE(auto fsst, FsstValues(input_values));
    symbol_table = std::move(fsst.first);
    fsst_values = std::move(fsst.second);
  }
  const PageValues& values = symbol_table || per_value_zstd ? fsst_values : input_values;
  const bool has_rep = !levels.rep.empty();
  const bool has_def = !levels.def.empty();
  uint16_t max_rep = 0, max_def = 0;
  for (uint16_t r : levels.rep) max_rep = std::max(max_rep, r);
  for (uint16_t d : levels.def) max_def = std::max(max_def, d);
  const unsigned bits_rep = BitWidth(max_rep), bits_def = BitWidth(max_def);
  const unsigned total_bits = bits_rep + bits_def;
  const unsigned word_bytes = total_bits == 0 ? 0 : total_bits <= 8 ? 1 : total_bits <= 16 ? 2 : 4;
  uint16_t max_visible = 0;
  for (Layer l : levels.layers) {
    if (IsListLayer(l)) break;
    max_visible = static_cast<uint16_t>(max_visible + DefLevelsOf(l));
  }
  const size_t num_levels = has_rep ? levels.rep.size() : has_def ? levels.def.size() : values.num_values;
  const uint16_t row_rep = path.max_rep;

  // Bytes of one fixed-width value: per-row validity of each fsl layer, then the items.
  uint64_t cum_dim = 1;
  for (const auto& l : values.fsl) cum_dim *= l.dimension;
  const bool fixed = values.kind == PageValues::Kind::kFixed;
  if (fixed && values.bits_per_value % 8 != 0) {
    return Status::NotImplemented("leaf '", path.name, "': full-zip values of ", values.bits_per_value, " bits");
  }
  const uint64_t item_bytes = fixed ? values.bits_per_value / 8 * cum_dim : 0;
  const uint64_t length_width = values.bits_per_offset / 8;

  uint64_t fsl_validity_bytes = 0;
  bool any_fsl_validity = false;
  {
    uint64_t dim = 1;
    for (const auto& l : values.fsl) {
      dim *= l.dimension;
      if (l.validity) {
        fsl_validity_bytes += (dim + 7) / 8;
        any_fsl_validity = true;
      }
    }
  }
  // Plain fixed-width values without levels: the zipped bytes are the
  // values themselves, so the page takes their buffer as it is.
  std::shared_ptr<arrow::Buffer> plain;
  if (fixed && !has_rep && word_bytes == 0 && !any_fsl_validity && num_levels == values.num_values &&
      values.data && values.data->size() >= static_cast<int64_t>(values.num_values * item_bytes)) {
    plain = arrow::SliceBuffer(values.data, 0, static_cast<int64_t>(values.num_values * item_bytes));
  }

  std::string zipped;
  // The exact size, so the bytes are copied once.
  zipped.reserve(plain ? 0
                 : fixed ? num_levels * word_bytes + values.num_values * (item_bytes + fsl_validity_bytes)
                         : num_levels * (word_bytes + length_width) + (values.offsets.empty() ? 0 : values.offsets.back()));
  std::vector<uint64_t> row_starts;
  uint64_t next_value = plain ? values.num_values : 0;
  for (size_t i = 0; i < num_levels && !plain; ++i) {
    const uint16_t r = has_rep ? levels.rep[i] : 0;
    const uint16_t d = has_def ? levels.def[i] : 0;
    if (!has_rep || r == row_rep) row_starts.push_back(zipped.size());
    if (word_bytes > 0) {
      const uint32_t word = (static_cast<uint32_t>(r) << bits_def) | d;
      zipped.append(reinterpret_cast<const char*>(&word), word_bytes);
    }
    if (d > max_visible) continue;
    const uint64_t v = next_value++;
    if (fixed) {
      uint64_t dim = 1;
      for (const auto& l : values.fsl) {
        dim *= l.dimension;
        if (!l.validity) continue;
        LANCE_ASSIGN_OR_RAISE(auto bits,
                              CopyBits(l.validity, static_cast<int64_t>(v * dim), static_cast<int64_t>(dim)));
        zipped.append(Bytes(bits));
      }
      zipped.append(reinterpret_cast<const char*>(values.data->data()) + v * item_bytes, item_bytes);
    } else if (d == 0) {
      const uint64_t len = values.offsets[v + 1] - values.offsets[v];
      zipped.append(reinterpret_cast<const char*>(&len), length_width);
      if (len > 0) zipped.append(reinterpret_cast<const char*>(values.data->data()) + values.offsets[v], len);
    }
  }
  if (next_value != values.num_values) {
    return Status::Invalid("leaf '", path.name, "': levels describe ", next_value, " values but the page has ",
                           values.num_values);
  }

  pb21::PageLayout layout;
  auto* fz = layout.mutable_full_zip_layout();
  fz->set_bits_rep(bits_rep);
  fz->set_bits_def(bits_def);
  if (fixed) {
    uint64_t validity_bytes = 0, dim = 1;
    for (const auto& l : values.fsl) {
      dim *= l.dimension;
      if (l.validity) validity_bytes += (dim + 7) / 8;
    }
    fz->set_bits_per_value(static_cast<uint32_t>((item_bytes + validity_bytes) * 8));
    *fz->mutable_value_compression() = FixedEncoding(values);
  } else {
    fz->set_bits_per_offset(values.bits_per_offset);
    *fz->mutable_value_compression() =
        values.row_encoding ? *values.row_encoding : VariableEncoding(values.bits_per_offset);
    if (symbol_table) {
      *fz->mutable_value_compression() = FsstEncoding(std::move(*symbol_table), fz->value_compression());
    }
    if (per_value_zstd) {
      pb21::CompressiveEncoding general;
      general.mutable_general()->mutable_compression()->set_scheme(pb21::COMPRESSION_ALGORITHM_ZSTD);
      general.mutable_general()->mutable_compression()->set_level(kPerValueZstdLevel);
      *general.mutable_general()->mutable_values() = fz->value_compression();
      *fz->mutable_value_compression() = std::move(general);
    }
  }
  fz->set_num_items(static_cast<uint32_t>(num_levels));
  fz->set_num_visible_items(static_cast<uint32_t>(values.num_values));
  SetLayers(levels.layers, fz->mutable_layers());

  std::vector<std::string> buffers;
  const uint64_t total = zipped.size();
  buffers.push_back(std::move(zipped));
  if (has_rep || !fixed) {
    // One entry per row start (every level is a row without repetition), then the end.
    std::vector<uint64_t> index = std::move(row_starts);
    index.push_back(total);
    buffers.push_back(BytePacked(index, std::max<uint64_t>(total, 1)));
  }
  PageData page = MakePage(layout, num_rows, first_row, std::move(buffers));
  if (plain) page.buffers[0] = std::move(plain);
  return page;
}

// -------------------------------------------------------------- all-null

PageData EncodeAllNull(const CompactLevels& levels, bool simple, uint64_t num_rows, uint64_t first_row) {
  pb21::PageLayout layout;
  auto* constant = layout.mutable_constant_layout();
  std::vector<std::string> buffers;
  if (simple) {
    constant->add_layers(static_cast<pb21::RepDefLayer>(LayerToProto(Layer::kNullableItem)));
  } else {
    SetLayers(levels.layers, constant->mutable_layers());
    buffers.push_back(levels.rep.empty() ? std::string() : LevelBytes(levels.rep.data(), levels.rep.size()));
    buffers.push_back(levels.def.empty() ? std::string() : LevelBytes(levels.def.data(), levels.def.size()));
  }
  return MakePage(layout, num_rows, first_row, std::move(buffers));
}

// -------------------------------------------------------------- constant

// Fixed-width scalars up to this many bytes are stored in the layout itself.
constexpr uint64_t kMaxInlineScalarBytes = 32;

// The bytes of value `k` (a bit as one 0/1 byte for booleans).
std::string_view ValueBytes(const PageValues& values, uint64_t k, char* bit) {
  const char* base = values.data && values.data->size() > 0 ? reinterpret_cast<const char*>(values.data->data()) : "";
  if (values.kind == PageValues::Kind::kVariable) {
    return {base + values.offsets[k], values.offsets[k + 1] - values.offsets[k]};
  }
  if (values.bits_per_value == 1) {
    *bit = static_cast<char>((static_cast<uint8_t>(base[k / 8]) >> (k % 8)) & 1);
    return {bit, 1};
  }
  const uint64_t width = values.bits_per_value / 8;
  return {base + k * width, width};
}

// The one value all valid values of the page share (2.2+), if they do.
// Fixed-size lists, packed structs and Arrow dictionaries never count.
std::optional<std::string> ConstantValue(const LeafPath& path, const LeafPageInput& input, const PageValues& values) {
  if (!values.fsl.empty() || !values.packed_bits.empty()) return std::nullopt;
  if (values.kind == PageValues::Kind::kFixed && values.bits_per_value != 1 && values.bits_per_value % 8 != 0) {
    return std::nullopt;
  }
  std::optional<std::string> first;
  char bit = 0;
  uint64_t k = 0;  // index of the visible value
  for (uint16_t d : input.def) {
    if (d > path.max_visible_def) continue;
    if (d == 0) {
      std::string_view v = ValueBytes(values, k, &bit);
      if (!first) {
        first.emplace(v);
      } else if (v != std::string_view(*first)) {
        return std::nullopt;
      }
    }
    ++k;
  }
  return first;
}

// A constant page: the scalar inline (fixed width up to 32 bytes) or in a
// value buffer ([count u32][length u32 each][buffers]: offsets and bytes for
// variable values), then the rep and def levels when there are any.
PageData EncodeConstant(const CompactLevels& levels, const PageValues& values, std::string scalar, uint64_t num_rows,
                        uint64_t first_row) {
  pb21::PageLayout layout;
  auto* constant = layout.mutable_constant_layout();
  SetLayers(levels.layers, constant->mutable_layers());
  std::vector<std::string> buffers;
  if (values.kind == PageValues::Kind::kFixed && scalar.size() <= kMaxInlineScalarBytes) {
    constant->set_inline_value(std::move(scalar));
  } else {
    std::string buffer;
    if (values.kind == PageValues::Kind::kVariable) {
      const uint32_t offset_bytes = values.bits_per_offset / 8;
      AppendU32(&buffer, 2);
      AppendU32(&buffer, 2 * offset_bytes);
      AppendU32(&buffer, static_cast<uint32_t>(scalar.size()));
      for (uint64_t o : {uint64_t{0}, static_cast<uint64_t>(scalar.size())}) {
        buffer.append(reinterpret_cast<const char*>(&o), offset_bytes);
      }
    } else {
      AppendU32(&buffer, 1);
      AppendU32(&buffer, static_cast<uint32_t>(scalar.size()));
    }
    buffer += scalar;
    buffers.push_back(std::move(buffer));
  }
  if (!levels.rep.empty() || !levels.def.empty()) {
    buffers.push_back(levels.rep.empty() ? std::string() : LevelBytes(levels.rep.data(), levels.rep.size()));
    buffers.push_back(levels.def.empty() ? std::string() : LevelBytes(levels.def.data(), levels.def.size()));
  }
  return MakePage(layout, num_rows, first_row, std::move(buffers));
}

}  // namespace

Result<PageData> EncodeLeafPage(const LeafPath& path, LeafPageInput input,
                                const std::map<std::string, std::string>& metadata, FileVersion version) {
  const uint64_t num_values = static_cast<uint64_t>(input.values->length());
  uint64_t valid_values = 0;
  for (uint16_t d : input.def) valid_values += d == 0 ? 1 : 0;
  CompactLevels levels = CompactPageLevels(path, std::move(input.rep), input.def, input.nullable_steps);
  if (num_values == 0 || valid_values == 0) {
    const bool simple = num_values > 0 && levels.rep.empty() && levels.layers.size() == 1;
    return EncodeAllNull(levels, simple, input.num_rows, input.first_row);
  }
  if (input.values->type_id() == arrow::Type::DICTIONARY) {
    // Already dictionary encoded: the indices go through the mini-block
    // compressors, the items into the page dictionary.
    const auto& dict = static_cast<const arrow::DictionaryArray&>(*input.values);
    LANCE_ASSIGN_OR_RAISE(CompressionParams params, ParseCompressionParams(metadata, path.name));
    LANCE_ASSIGN_OR_RAISE(PageValues indices, ToPageValues(dict.indices()));
    LANCE_ASSIGN_OR_RAISE(PageValues items, ToPageValues(dict.dictionary()));
    LANCE_ASSIGN_OR_RAISE(DictionaryPage page, DictionaryFromArrow(std::move(indices), items, version, params));
    PageValues page_indices = std::move(page.indices);
    return EncodeMiniBlock(path, levels, page_indices, input.num_rows, input.first_row, version, params,
                           std::move(page));
  }
  PageValues values;
  if (input.values->type_id() == arrow::Type::STRUCT && HasVariableWidthChild(*input.values->type())) {
    if (version < FileVersion::kV2_2) {
      return Status::NotImplemented("leaf '", path.name, "': a packed struct with variable-width children needs "
                                    "file version 2.2 or later");
    }
    const auto& type = *input.values->type();
    std::vector<CompressionParams> child_params;
    for (int c = 0; c < type.num_fields() && static_cast<size_t>(c) < input.packed_child_metadata.size(); ++c) {
      const std::string child_name = path.name + "." + type.field(c)->name();
      LANCE_ASSIGN_OR_RAISE(auto params, ParseCompressionParams(input.packed_child_metadata[c], child_name));
      child_params.push_back(std::move(params));
    }
    LANCE_ASSIGN_OR_RAISE(values, PackVariableRows(*input.values->data(), child_params));
  } else {
    LANCE_ASSIGN_OR_RAISE(values, ToPageValues(input.values));
    if (version >= FileVersion::kV2_2 && input.values->type_id() != arrow::Type::STRUCT) {
      if (auto scalar = ConstantValue(path, input, values)) {
        return EncodeConstant(levels, values, std::move(*scalar), input.num_rows, input.first_row);
      }
    }
  }
  std::string requested;
  if (auto it = metadata.find("lance-encoding:structural-encoding"); it != metadata.end()) {
    requested = Lower(it->second);
    if (requested != "miniblock" && requested != "fullzip") {
      return Status::Invalid("leaf '", path.name, "': lance-encoding:structural-encoding must be miniblock or "
                             "fullzip, got '", it->second, "'");
    }
  }
  const bool mini_block = requested.empty() ? MaxValueBytes(values) < kMiniBlockMaxValueBytes
                                            : requested == "miniblock";
  LANCE_ASSIGN_OR_RAISE(CompressionParams params, ParseCompressionParams(metadata, path.name));
  if (values.row_encoding) {
    // Packed rows with variable-width children: always full-zip.
    return EncodeFullZip(path, levels, values, input.num_rows, input.first_row, params);
  }
  if (!values.packed_bits.empty()) {
    if (!mini_block) {
      // As the reference: fixed-width packed rows are never compressed value by value.
      return Status::NotImplemented("leaf '", path.name, "': packed struct rows of ", values.bits_per_value / 8,
                                    " bytes (256 or more need full-zip, which the reference does not use for "
                                    "fixed-width-only packed structs)");
    }
    return EncodeMiniBlock(path, levels, values, input.num_rows, input.first_row, version, params, std::nullopt);
  }
  if (ShouldDictionaryEncode(values, version, params)) {
    LANCE_ASSIGN_OR_RAISE(DictionaryPage dict, DictionaryEncode(values, version, params));
    PageValues indices = std::move(dict.indices);
    return EncodeMiniBlock(path, levels, indices, input.num_rows, input.first_row, version, params,
                           std::move(dict));
  }
  if (mini_block) {
    return EncodeMiniBlock(path, levels, values, input.num_rows, input.first_row, version, params, std::nullopt);
  }
  return EncodeFullZip(path, levels, values, input.num_rows, input.first_row, params);
}

}  // namespace lance::file::v2_1
