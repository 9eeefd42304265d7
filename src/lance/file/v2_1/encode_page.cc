#include "lance/file/v2_1/encode_page.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <string_view>

#include <arrow/buffer.h>
#include <arrow/type.h>
#include <arrow/util/bitmap_ops.h>
#include <arrow/util/bit_util.h>

#include "lance/encodings_v2_1.pb.h"
#include "lance/file/compression/fastlanes.h"
#include "lance/file/compression/fsst.h"
#include "lance/file/compression/general.h"
#include "lance/file/v2_1/data_block.h"
#include "lance/file/v2_1/page.h"

namespace lance::file::v2_1 {

namespace {

namespace comp = lance::file::compression;

// Chunks of mini-block pages: at most this many values, and values sized
// to stay under this many bytes (the reference's limits).
constexpr uint64_t kMaxMiniBlockBytes = 8 * 1024 - 6;
constexpr uint64_t kMaxMiniBlockValues = 4096;
// Variable-width chunks aim for this many bytes of offsets + data.
constexpr uint64_t kAimVariableChunkBytes = 4 * 1024;
// Values this wide (bytes) or wider go to full-zip pages.
constexpr uint64_t kMiniBlockMaxValueBytes = 256;
constexpr uint64_t kMiniBlockAlignment = 8;
constexpr char kMiniBlockPad = static_cast<char>(0xFE);
constexpr char kVariablePad = static_cast<char>(0x48);

// --------------------------------------------------------------- values

// Fixed-size-list layers above the flat values, outermost first.
struct FslLayerValues {
  uint64_t dimension = 0;
  std::shared_ptr<arrow::Buffer> validity;  // bit 0 = first item; null if all valid
};

// The page's values in the shapes the encodings distinguish.
struct PageValues {
  enum class Kind { kFixed, kVariable } kind = Kind::kFixed;
  uint64_t num_values = 0;
  // kFixed: flat values (after any fsl layers) of bits_per_value bits.
  uint64_t bits_per_value = 0;
  std::vector<FslLayerValues> fsl;
  std::shared_ptr<arrow::Buffer> data;
  // kVariable: num_values + 1 offsets from 0 into data.
  uint32_t bits_per_offset = 32;
  std::vector<uint64_t> offsets;
  bool is_string = false;  // utf8 (FSST applies to strings, not binary)
};

// What the field metadata asks of the compression.
struct CompressionParams {
  std::string compression;  // "", "none", "fsst", "lz4", "zstd"
  double rle_threshold = 0.5;
  double dict_size_ratio = 0.8;
  std::optional<int32_t> compression_level;
  double bss_sensitivity = 0.5;  // off 0, auto 0.5, on 1

  // lz4/zstd requested: a general compressor wraps the value compression.
  std::optional<comp::GeneralCodec> General() const {
    if (compression == "lz4") return comp::GeneralCodec::kLz4;
    if (compression == "zstd") return comp::GeneralCodec::kZstd;
    return std::nullopt;
  }
};

Result<std::shared_ptr<arrow::Buffer>> CopyBits(const std::shared_ptr<arrow::Buffer>& bits, int64_t offset,
                                                int64_t length) {
  if (!bits) {
    // All set.
    LANCE_ASSIGN_OR_RAISE(auto buffer, arrow::AllocateBuffer(arrow::bit_util::BytesForBits(length)));
    if (buffer->size() > 0) std::memset(buffer->mutable_data(), 0xFF, buffer->size());
    return std::shared_ptr<arrow::Buffer>(std::move(buffer));
  }
  return arrow::internal::CopyBitmap(arrow::default_memory_pool(), bits->data(), offset, length);
}

Status FlatValues(const arrow::ArrayData& data, PageValues* out) {
  const auto& type = *data.type;
  if (type.id() == arrow::Type::BOOL) {
    out->bits_per_value = 1;
    LANCE_ASSIGN_OR_RAISE(out->data, CopyBits(data.buffers[1], data.offset, data.length));
    return Status::OK();
  }
  const int64_t bits = FixedBitWidth(type);
  if (bits <= 0 || bits % 8 != 0) return Status::NotImplemented("encoding values of type ", type.ToString());
  const int64_t width = bits / 8;
  out->bits_per_value = static_cast<uint64_t>(bits);
  if (data.length == 0) {
    out->data = std::make_shared<arrow::Buffer>(nullptr, 0);
  } else {
    out->data = arrow::SliceBuffer(data.buffers[1], data.offset * width, data.length * width);
  }
  return Status::OK();
}

Result<PageValues> ToPageValues(const std::shared_ptr<arrow::Array>& array) {
  PageValues out;
  out.num_values = static_cast<uint64_t>(array->length());
  std::shared_ptr<arrow::ArrayData> data = array->data();
  switch (data->type->id()) {
    case arrow::Type::STRING:
    case arrow::Type::BINARY:
    case arrow::Type::LARGE_STRING:
    case arrow::Type::LARGE_BINARY: {
      const bool large = data->type->id() == arrow::Type::LARGE_STRING || data->type->id() == arrow::Type::LARGE_BINARY;
      out.kind = PageValues::Kind::kVariable;
      out.bits_per_offset = large ? 64 : 32;
      out.is_string = data->type->id() == arrow::Type::STRING || data->type->id() == arrow::Type::LARGE_STRING;
      out.offsets.resize(static_cast<size_t>(data->length) + 1, 0);
      if (data->length == 0) {
        out.data = std::make_shared<arrow::Buffer>(nullptr, 0);
        return out;
      }
      auto load = [&](int64_t i) -> uint64_t {
        return large ? static_cast<uint64_t>(data->GetValues<int64_t>(1)[i])
                     : static_cast<uint64_t>(data->GetValues<int32_t>(1)[i]);
      };
      const uint64_t base = load(0);
      for (int64_t i = 0; i <= data->length; ++i) out.offsets[i] = load(i) - base;
      const auto& bytes = data->buffers[2];
      out.data = bytes ? arrow::SliceBuffer(bytes, static_cast<int64_t>(base), static_cast<int64_t>(out.offsets.back()))
                       : std::make_shared<arrow::Buffer>(nullptr, 0);
      return out;
    }
    default:
      break;
  }
  // Walk fixed-size lists down to their flat values.
  int64_t offset = data->offset, length = data->length;
  while (data->type->id() == arrow::Type::FIXED_SIZE_LIST) {
    const auto& fsl = static_cast<const arrow::FixedSizeListType&>(*data->type);
    const int64_t dim = fsl.list_size();
    const auto& child = data->child_data[0];
    offset = child->offset + offset * dim;
    length = length * dim;
    FslLayerValues layer;
    layer.dimension = static_cast<uint64_t>(dim);
    // The child's validity over the items of these rows.
    auto sliced = child->Slice(offset - child->offset, length);
    if (sliced->GetNullCount() > 0) {
      LANCE_ASSIGN_OR_RAISE(layer.validity, CopyBits(child->buffers[0], offset, length));
    }
    out.fsl.push_back(std::move(layer));
    data = child;
  }
  auto flat = data->Slice(offset - data->offset, length);
  LANCE_RETURN_NOT_OK(FlatValues(*flat, &out));
  return out;
}

// The widest value in bytes (fsl: the whole list).
uint64_t MaxValueBytes(const PageValues& values) {
  if (values.kind == PageValues::Kind::kVariable) {
    uint64_t max = 0;
    for (size_t i = 1; i < values.offsets.size(); ++i) max = std::max(max, values.offsets[i] - values.offsets[i - 1]);
    return max;
  }
  uint64_t bits = values.bits_per_value;
  for (const auto& l : values.fsl) bits *= l.dimension;
  return bits / 8;
}

pb21::CompressiveEncoding FlatEncoding(uint64_t bits) {
  pb21::CompressiveEncoding e;
  e.mutable_flat()->set_bits_per_value(bits);
  return e;
}

pb21::CompressiveEncoding FixedEncoding(const PageValues& values) {
  pb21::CompressiveEncoding e = FlatEncoding(values.bits_per_value);
  for (size_t i = values.fsl.size(); i-- > 0;) {
    pb21::CompressiveEncoding outer;
    auto* fsl = outer.mutable_fixed_size_list();
    fsl->set_items_per_value(values.fsl[i].dimension);
    fsl->set_has_validity(values.fsl[i].validity != nullptr);
    *fsl->mutable_values() = std::move(e);
    e = std::move(outer);
  }
  return e;
}

pb21::CompressiveEncoding VariableEncoding(uint32_t bits_per_offset) {
  pb21::CompressiveEncoding e;
  *e.mutable_variable()->mutable_offsets() = FlatEncoding(bits_per_offset);
  return e;
}

std::string_view Bytes(const std::shared_ptr<arrow::Buffer>& b) {
  if (!b || b->size() == 0) return {};
  return std::string_view(reinterpret_cast<const char*>(b->data()), static_cast<size_t>(b->size()));
}

// ------------------------------------------------------------ mini-block

struct MiniChunk {
  uint8_t log_num_values = 0;  // 0 for the last chunk
  uint64_t num_values = 0;
  std::vector<uint64_t> buffer_sizes;
};

struct MiniCompressed {
  std::vector<MiniChunk> chunks;
  std::vector<std::string> buffers;  // each chunk takes its sizes from these in turn
  pb21::CompressiveEncoding encoding;
};

// The largest power-of-two value count whose bytes stay under the chunk limit.
std::pair<uint8_t, uint64_t> ValuesPerChunk(uint64_t bytes_per_word, uint64_t values_per_word) {
  uint64_t size = 2 * bytes_per_word;
  uint8_t log = values_per_word == 1 ? 1 : 3;
  uint64_t num = values_per_word == 1 ? 2 : 8;
  while (2 * size < kMaxMiniBlockBytes && 2 * num <= kMaxMiniBlockValues) {
    ++log;
    size *= 2;
    num *= 2;
  }
  return {log, num};
}

Result<MiniCompressed> ChunkFixed(const PageValues& values) {
  MiniCompressed out;
  out.encoding = FixedEncoding(values);
  uint64_t cum_dim = 1, validity_bytes = 0;
  for (const auto& l : values.fsl) {
    cum_dim *= l.dimension;
    if (l.validity) validity_bytes += (cum_dim + 7) / 8;
  }
  const uint64_t row_bits = values.bits_per_value * cum_dim;
  const uint64_t bytes_per_word = row_bits % 8 == 0 ? row_bits / 8 : row_bits;
  const uint64_t values_per_word = row_bits % 8 == 0 ? 1 : 8;
  auto [log, per_chunk] = ValuesPerChunk(validity_bytes * values_per_word + bytes_per_word, values_per_word);
  const uint64_t n = values.num_values;

  std::vector<std::string> validity(values.fsl.size());
  out.buffers.emplace_back(Bytes(values.data));
  uint64_t data_used = 0;
  for (uint64_t row = 0; row < n; row += per_chunk) {
    const uint64_t rows = std::min(per_chunk, n - row);
    MiniChunk chunk;
    chunk.num_values = rows;
    chunk.log_num_values = row + rows < n ? log : 0;
    uint64_t start = row, count = rows;
    for (size_t l = 0; l < values.fsl.size(); ++l) {
      start *= values.fsl[l].dimension;
      count *= values.fsl[l].dimension;
      if (values.fsl[l].validity) {
        LANCE_ASSIGN_OR_RAISE(auto bits, CopyBits(values.fsl[l].validity, static_cast<int64_t>(start),
                                                  static_cast<int64_t>(count)));
        validity[l].append(Bytes(bits));
        chunk.buffer_sizes.push_back(static_cast<uint64_t>(bits->size()));
      }
    }
    uint64_t data_bytes = (count * values.bits_per_value + 7) / 8;
    if (row + rows >= n) data_bytes = static_cast<uint64_t>(out.buffers[0].size()) - data_used;
    data_used += data_bytes;
    chunk.buffer_sizes.push_back(data_bytes);
    out.chunks.push_back(std::move(chunk));
  }
  // Buffers in chunk order: validity (outermost first), then data.
  std::vector<std::string> ordered;
  for (size_t l = 0; l < values.fsl.size(); ++l) {
    if (values.fsl[l].validity) ordered.push_back(std::move(validity[l]));
  }
  ordered.push_back(std::move(out.buffers[0]));
  out.buffers = std::move(ordered);
  return out;
}

// ------------------------------------------------------------ bitpacking

constexpr uint64_t kPackChunk = comp::kFastLanesValues;

template <typename T>
std::vector<T> LoadValues(const uint8_t* data, uint64_t n) {
  std::vector<T> out(n);
  if (n > 0) std::memcpy(out.data(), data, n * sizeof(T));
  return out;
}

// The bit width each run of 1024 values needs (the OR of its values).
template <typename T>
std::vector<unsigned> ChunkBitWidths(const T* values, uint64_t n) {
  std::vector<unsigned> widths;
  for (uint64_t start = 0; start < n; start += kPackChunk) {
    T acc = 0;
    const uint64_t end = std::min(n, start + kPackChunk);
    for (uint64_t i = start; i < end; ++i) acc |= values[i];
    widths.push_back(static_cast<unsigned>(std::bit_width(acc)));
  }
  if (widths.empty()) widths.push_back(0);
  return widths;
}

// Packs up to 1024 values (zero-padded to 1024) at `width` bits.
template <typename T>
Status AppendPacked(const T* values, uint64_t count, unsigned width, std::string* out) {
  std::vector<T> block(kPackChunk, 0);
  std::copy(values, values + count, block.begin());
  const size_t bytes = comp::FastLanesPackedBytes(width);
  const size_t at = out->size();
  out->resize(at + bytes);
  if (width == 0) return Status::OK();
  return comp::FastLanesPack<T>(std::span<const T>(block), width,
                                std::span<uint8_t>(reinterpret_cast<uint8_t*>(out->data()) + at, bytes));
}

// Inline bitpacking: each chunk of 1024 values is a T holding its bit width
// followed by the packed values.
template <typename T>
Result<std::string> InlinePack(const T* values, uint64_t n, std::vector<uint64_t>* chunk_sizes) {
  std::string out;
  const auto widths = ChunkBitWidths(values, n);
  for (uint64_t c = 0, start = 0; start < n; ++c, start += kPackChunk) {
    const size_t at = out.size();
    const T header = static_cast<T>(widths[c]);
    out.append(reinterpret_cast<const char*>(&header), sizeof(T));
    LANCE_RETURN_NOT_OK(AppendPacked(values + start, std::min(kPackChunk, n - start), widths[c], &out));
    if (chunk_sizes) chunk_sizes->push_back(out.size() - at);
  }
  return out;
}

// Out-of-line bitpacking at one width; a short tail is stored unpacked when
// padding it to 1024 values would cost more than packing saves.
template <typename T>
Result<std::string> OutOfLinePack(const T* values, uint64_t n, unsigned width) {
  std::string out;
  const uint64_t whole = n / kPackChunk, tail = n % kPackChunk;
  for (uint64_t c = 0; c < whole; ++c) {
    LANCE_RETURN_NOT_OK(AppendPacked(values + c * kPackChunk, kPackChunk, width, &out));
  }
  if (tail > 0) {
    const uint64_t savings = (sizeof(T) * 8 - std::min<uint64_t>(width, sizeof(T) * 8)) * tail;
    const uint64_t padding = static_cast<uint64_t>(width) * (kPackChunk - tail);
    if (padding < savings) {
      LANCE_RETURN_NOT_OK(AppendPacked(values + whole * kPackChunk, tail, width, &out));
    } else {
      out.append(reinterpret_cast<const char*>(values + whole * kPackChunk), tail * sizeof(T));
    }
  }
  return out;
}

template <typename T>
Result<MiniCompressed> InlineBitpackChunksT(const PageValues& values) {
  MiniCompressed out;
  const uint64_t n = values.num_values;
  auto v = LoadValues<T>(values.data->data(), n);
  std::vector<uint64_t> sizes;
  LANCE_ASSIGN_OR_RAISE(auto packed, InlinePack<T>(v.data(), n, &sizes));
  for (size_t c = 0; c < sizes.size(); ++c) {
    MiniChunk chunk;
    chunk.num_values = std::min(kPackChunk, n - c * kPackChunk);
    chunk.log_num_values = c + 1 < sizes.size() ? 10 : 0;
    chunk.buffer_sizes.push_back(sizes[c]);
    out.chunks.push_back(std::move(chunk));
  }
  out.buffers.push_back(std::move(packed));
  auto* ib = out.encoding.mutable_inline_bitpacking();
  ib->set_uncompressed_bits_per_value(sizeof(T) * 8);
  return out;
}

// The reference bitpacks 8/16/32/64-bit values when the packed chunks (a
// width word plus 1024 values each) come out smaller than the raw values.
template <typename T>
bool WorthBitpacking(const PageValues& values) {
  auto v = LoadValues<T>(values.data->data(), values.num_values);
  const auto widths = ChunkBitWidths(v.data(), v.size());
  uint64_t words = 0;
  for (unsigned w : widths) words += 1 + kPackChunk * w / (sizeof(T) * 8);
  return words * sizeof(T) < values.num_values * sizeof(T);
}

Result<std::optional<MiniCompressed>> TryInlineBitpacking(const PageValues& values) {
  if (!values.fsl.empty() || values.num_values == 0) return std::nullopt;
  switch (values.bits_per_value) {
    case 8:
      if (WorthBitpacking<uint8_t>(values)) return InlineBitpackChunksT<uint8_t>(values);
      break;
    case 16:
      if (WorthBitpacking<uint16_t>(values)) return InlineBitpackChunksT<uint16_t>(values);
      break;
    case 32:
      if (WorthBitpacking<uint32_t>(values)) return InlineBitpackChunksT<uint32_t>(values);
      break;
    case 64:
      if (WorthBitpacking<uint64_t>(values)) return InlineBitpackChunksT<uint64_t>(values);
      break;
    default:
      break;
  }
  return std::nullopt;
}

// How a page's u16 levels are compressed (one choice per page, applied to
// each chunk's slice): raw when some 1024-level run is all zeros or packing
// cannot win, inline bitpacking for short pages, out-of-line otherwise.
struct LevelCompression {
  enum class Kind { kFlat, kInline, kOutOfLine } kind = Kind::kFlat;
  unsigned width = 16;

  pb21::CompressiveEncoding Encoding() const {
    pb21::CompressiveEncoding e;
    switch (kind) {
      case Kind::kFlat:
        e.mutable_flat()->set_bits_per_value(16);
        break;
      case Kind::kInline:
        e.mutable_inline_bitpacking()->set_uncompressed_bits_per_value(16);
        break;
      case Kind::kOutOfLine: {
        auto* o = e.mutable_out_of_line_bitpacking();
        o->set_uncompressed_bits_per_value(16);
        o->mutable_values()->mutable_flat()->set_bits_per_value(width);
        break;
      }
    }
    return e;
  }

  Result<std::string> Compress(const uint16_t* levels, uint64_t n) const {
    switch (kind) {
      case Kind::kFlat:
        return std::string(reinterpret_cast<const char*>(levels), n * 2);
      case Kind::kInline:
        return InlinePack<uint16_t>(levels, n, nullptr);
      case Kind::kOutOfLine:
        return OutOfLinePack<uint16_t>(levels, n, width);
    }
    return Status::Invalid("unknown level compression");
  }
};

LevelCompression ChooseLevelCompression(const std::vector<uint16_t>& levels) {
  LevelCompression out;
  const auto widths = ChunkBitWidths(levels.data(), levels.size());
  const bool any_zero = std::find(widths.begin(), widths.end(), 0u) != widths.end();
  const bool too_small = widths.size() == 1 && (kPackChunk * widths[0] + 7) / 8 >= levels.size() * 2;
  if (any_zero || too_small) return out;
  if (levels.size() <= kPackChunk) {
    out.kind = LevelCompression::Kind::kInline;
  } else {
    out.kind = LevelCompression::Kind::kOutOfLine;
    out.width = *std::max_element(widths.begin(), widths.end());
  }
  return out;
}

// ------------------------------------------------------------------ fsst

// FSST needs enough input to pay for its symbol table: the reference asks
// for values of 5+ bytes and 32 KiB of data (bytes plus offsets).
constexpr uint64_t kFsstMinMaxLength = 5;
constexpr uint64_t kFsstMinDataSize = 32 * 1024;

bool UseFsst(const PageValues& values, const CompressionParams& params) {
  if (values.kind != PageValues::Kind::kVariable) return false;
  if (params.compression == "fsst") return true;
  if (!params.compression.empty() || !values.is_string) return false;
  const uint64_t data_size = values.offsets.back() + values.offsets.size() * (values.bits_per_offset / 8);
  return MaxValueBytes(values) >= kFsstMinMaxLength && data_size >= kFsstMinDataSize;
}

// The values FSST-compressed (same offset width) and the symbol table.
Result<std::pair<std::string, PageValues>> FsstValues(const PageValues& values) {
  std::string_view bytes = Bytes(values.data);
  LANCE_ASSIGN_OR_RAISE(auto compressed, comp::FsstCompress(values.offsets, bytes));
  PageValues out;
  out.kind = PageValues::Kind::kVariable;
  out.num_values = values.num_values;
  out.bits_per_offset = values.bits_per_offset;
  out.offsets = std::move(compressed.second.offsets);
  out.data = arrow::Buffer::FromString(std::move(compressed.second.data));
  if (values.bits_per_offset == 32 && out.offsets.back() > 0xFFFFFFFFull) {
    return Status::CapacityError("FSST output exceeds 32-bit offsets");
  }
  return std::make_pair(std::move(compressed.first), std::move(out));
}

pb21::CompressiveEncoding FsstEncoding(std::string symbol_table, pb21::CompressiveEncoding inner) {
  pb21::CompressiveEncoding e;
  e.mutable_fsst()->set_symbol_table(std::move(symbol_table));
  *e.mutable_fsst()->mutable_values() = std::move(inner);
  return e;
}

// Full-zip values are zstd-compressed one by one when they are huge (over
// 32 KiB) or a general compression is requested, given 32 KiB+ of data; the
// reference then always uses zstd at level 0.
constexpr uint64_t kPerValueMinLength = 32 * 1024;
constexpr int32_t kPerValueZstdLevel = 0;

bool UsePerValueZstd(const PageValues& values, const CompressionParams& params) {
  if (values.kind != PageValues::Kind::kVariable || params.compression == "none") return false;
  const bool requested = !params.compression.empty() && params.compression != "fsst";
  const uint64_t data_size = values.offsets.back() + values.offsets.size() * (values.bits_per_offset / 8);
  return (MaxValueBytes(values) > kPerValueMinLength || requested) && data_size >= kFsstMinDataSize;
}

Result<PageValues> CompressEachValue(const PageValues& values) {
  PageValues out;
  out.kind = PageValues::Kind::kVariable;
  out.num_values = values.num_values;
  out.bits_per_offset = values.bits_per_offset;
  out.offsets.assign(1, 0);
  std::string data;
  const std::string_view bytes = Bytes(values.data);
  for (uint64_t i = 0; i < values.num_values; ++i) {
    LANCE_ASSIGN_OR_RAISE(auto framed,
                          comp::GeneralCompress(comp::GeneralCodec::kZstd,
                                                bytes.substr(values.offsets[i], values.offsets[i + 1] - values.offsets[i]),
                                                kPerValueZstdLevel));
    data += framed;
    out.offsets.push_back(data.size());
  }
  if (values.bits_per_offset == 32 && data.size() > 0xFFFFFFFFull) {
    return Status::CapacityError("compressed values exceed 32-bit offsets");
  }
  out.data = arrow::Buffer::FromString(std::move(data));
  return out;
}

// ------------------------------------------------------------------- rle

// RLE chunks hold at most this many values (the reference's cap).
constexpr uint64_t kMaxRleChunkValues = 2048;

template <typename T>
uint64_t CountRuns(const T* v, uint64_t n) {
  uint64_t runs = n > 0 ? 1 : 0;
  for (uint64_t i = 1; i < n; ++i) runs += v[i] != v[i - 1] ? 1 : 0;
  return runs;
}

// Bytes RLE needs for v[0, n): runs longer than 255 split into several.
template <typename T>
uint64_t RleBytes(const T* v, uint64_t n) {
  uint64_t bytes = 0;
  for (uint64_t i = 0; i < n;) {
    uint64_t j = i + 1;
    while (j < n && v[j] == v[i]) ++j;
    bytes += (j - i + 254) / 255 * (sizeof(T) + 1);
    i = j;
  }
  return bytes;
}

template <typename T>
void AppendRuns(const T* v, uint64_t n, std::string* values, std::string* lengths) {
  for (uint64_t i = 0; i < n;) {
    uint64_t j = i + 1;
    while (j < n && v[j] == v[i]) ++j;
    for (uint64_t left = j - i; left > 0;) {
      const uint64_t len = std::min<uint64_t>(left, 255);
      values->append(reinterpret_cast<const char*>(&v[i]), sizeof(T));
      lengths->push_back(static_cast<char>(len));
      left -= len;
    }
    i = j;
  }
}

// Run-length chunks: the rest of the page if it fits, else the largest
// power-of-two prefix that fits; runs are cut at chunk boundaries.
template <typename T>
MiniCompressed RleChunksT(const PageValues& values) {
  MiniCompressed out;
  const uint64_t n = values.num_values;
  auto v = LoadValues<T>(values.data->data(), n);
  std::string run_values, run_lengths;
  uint64_t pos = 0;
  while (pos < n) {
    const uint64_t rest = n - pos;
    MiniChunk chunk;
    uint64_t take;
    if (rest <= kMaxRleChunkValues && RleBytes(v.data() + pos, rest) <= kMaxMiniBlockBytes) {
      take = rest;
      chunk.log_num_values = 0;
    } else {
      take = std::bit_floor(std::min(rest, kMaxRleChunkValues));
      while (take > 1 && RleBytes(v.data() + pos, take) > kMaxMiniBlockBytes) take /= 2;
      chunk.log_num_values = static_cast<uint8_t>(std::countr_zero(take));
      if (take == rest) chunk.log_num_values = 0;
    }
    const size_t values_at = run_values.size(), lengths_at = run_lengths.size();
    AppendRuns(v.data() + pos, take, &run_values, &run_lengths);
    chunk.num_values = take;
    chunk.buffer_sizes = {run_values.size() - values_at, run_lengths.size() - lengths_at};
    out.chunks.push_back(std::move(chunk));
    pos += take;
  }
  out.buffers.push_back(std::move(run_values));
  out.buffers.push_back(std::move(run_lengths));
  auto* rle = out.encoding.mutable_rle();
  *rle->mutable_values() = FlatEncoding(sizeof(T) * 8);
  *rle->mutable_run_lengths() = FlatEncoding(8);
  return out;
}

template <typename T>
std::optional<MiniCompressed> TryRleT(const PageValues& values, double threshold) {
  auto v = LoadValues<T>(values.data->data(), values.num_values);
  const uint64_t runs = CountRuns(v.data(), v.size());
  if (static_cast<double>(runs) < static_cast<double>(values.num_values) * threshold) return RleChunksT<T>(values);
  return std::nullopt;
}

std::optional<MiniCompressed> TryRle(const PageValues& values, double threshold) {
  if (!values.fsl.empty() || values.num_values == 0) return std::nullopt;
  switch (values.bits_per_value) {
    case 8: return TryRleT<uint8_t>(values, threshold);
    case 16: return TryRleT<uint16_t>(values, threshold);
    case 32: return TryRleT<uint32_t>(values, threshold);
    case 64: return TryRleT<uint64_t>(values, threshold);
    default: return std::nullopt;
  }
}

// ------------------------------------------------------------ dictionary

// Pages with fewer values are never dictionary encoded.
constexpr uint64_t kDictMinValues = 100;

// A page's values split into indices into a dictionary of distinct values
// (in first-occurrence order) and the dictionary's block-compressed buffer.
struct DictionaryPage {
  PageValues indices;
  std::string dictionary;
  pb21::CompressiveEncoding dictionary_encoding;
  uint64_t num_items = 0;
};

// Fixed-width values the reference dictionary-encodes: 128-bit ones (2.1)
// and also 64-bit ones (2.2).
bool DictionaryEligibleWidth(const PageValues& values, FileVersion version) {
  if (values.kind != PageValues::Kind::kFixed || !values.fsl.empty()) return false;
  return values.bits_per_value == 128 || (values.bits_per_value == 64 && version >= FileVersion::kV2_2);
}

// Distinct values (exact; the reference estimates them with a HyperLogLog).
uint64_t Cardinality(const PageValues& values) {
  std::unordered_set<std::string_view> seen;
  if (values.kind == PageValues::Kind::kVariable) {
    const char* base = values.data && values.data->size() > 0 ? reinterpret_cast<const char*>(values.data->data())
                                                             : "";
    for (uint64_t i = 0; i < values.num_values; ++i) {
      seen.emplace(base + values.offsets[i], values.offsets[i + 1] - values.offsets[i]);
    }
  } else {
    const uint64_t width = values.bits_per_value / 8;
    const char* base = reinterpret_cast<const char*>(values.data->data());
    for (uint64_t i = 0; i < values.num_values; ++i) seen.emplace(base + i * width, width);
  }
  return seen.size();
}

// The reference's estimate: dictionary items plus 32-bit indices (offset-
// sized for variable values) against the raw size, below dict-size-ratio.
bool ShouldDictionaryEncode(const PageValues& values, FileVersion version, const CompressionParams& params) {
  if (values.num_values < kDictMinValues) return false;
  const bool variable = values.kind == PageValues::Kind::kVariable;
  if (!variable && !DictionaryEligibleWidth(values, version)) return false;
  const uint64_t n = values.num_values;
  const uint64_t cardinality = Cardinality(values);
  uint64_t data_size, estimate;
  if (variable) {
    const uint64_t offset_bytes = values.bits_per_offset / 8;
    data_size = values.offsets.back() + (n + 1) * offset_bytes;
    const uint64_t avg = data_size / n;
    estimate = cardinality * avg + cardinality * offset_bytes + n * offset_bytes;
  } else {
    const uint64_t width = values.bits_per_value / 8;
    data_size = n * width;
    estimate = cardinality * width + n * 4;
  }
  return data_size > 0 && static_cast<double>(estimate) / static_cast<double>(data_size) < params.dict_size_ratio;
}

template <typename Index>
void AppendIndex(std::string* out, uint64_t i) {
  const Index v = static_cast<Index>(i);
  out->append(reinterpret_cast<const char*>(&v), sizeof(Index));
}

pb21::CompressiveEncoding GeneralLz4(pb21::CompressiveEncoding inner) {
  pb21::CompressiveEncoding e;
  e.mutable_general()->mutable_compression()->set_scheme(pb21::COMPRESSION_ALGORITHM_LZ4);
  *e.mutable_general()->mutable_values() = std::move(inner);
  return e;
}

// Block compression of a fixed-width dictionary: 2.2 bitpacks it when that
// shrinks it and otherwise wraps it in lz4; 2.1 stores it flat.
template <typename T>
Result<bool> TryBitpackBlock(const std::string& raw, uint64_t n, std::string* out, pb21::CompressiveEncoding* e) {
  auto v = LoadValues<T>(reinterpret_cast<const uint8_t*>(raw.data()), n);
  const auto widths = ChunkBitWidths(v.data(), n);
  const unsigned max_width = *std::max_element(widths.begin(), widths.end());
  constexpr uint64_t bits = sizeof(T) * 8;
  uint64_t words;
  if (n <= kPackChunk) {
    words = 1 + kPackChunk * max_width / bits;
  } else {
    if (max_width >= bits) return false;
    const uint64_t per_chunk = (kPackChunk * max_width + bits - 1) / bits;
    const uint64_t whole = n / kPackChunk, tail = n % kPackChunk;
    words = whole * per_chunk;
    if (tail > 0) {
      const uint64_t padding = max_width * (kPackChunk - tail), savings = (bits - max_width) * tail;
      words += padding < savings ? per_chunk : tail;
    }
  }
  if (words * sizeof(T) >= n * sizeof(T)) return false;
  if (n <= kPackChunk) {
    LANCE_ASSIGN_OR_RAISE(*out, InlinePack<T>(v.data(), n, nullptr));
    e->mutable_inline_bitpacking()->set_uncompressed_bits_per_value(bits);
  } else {
    LANCE_ASSIGN_OR_RAISE(*out, OutOfLinePack<T>(v.data(), n, max_width));
    auto* o = e->mutable_out_of_line_bitpacking();
    o->set_uncompressed_bits_per_value(bits);
    o->mutable_values()->mutable_flat()->set_bits_per_value(max_width);
  }
  return true;
}

Result<DictionaryPage> DictionaryEncode(const PageValues& values, FileVersion version) {
  DictionaryPage out;
  const uint64_t n = values.num_values;
  std::unordered_map<std::string_view, uint64_t> ids;
  std::string indices, dictionary;
  out.indices.kind = PageValues::Kind::kFixed;
  out.indices.num_values = n;
  if (values.kind == PageValues::Kind::kVariable) {
    // Indices are 32-bit even for 64-bit offsets (as pylance 14 writes them).
    const bool wide = false;
    out.indices.bits_per_value = wide ? 64 : 32;
    const char* base = values.data && values.data->size() > 0 ? reinterpret_cast<const char*>(values.data->data())
                                                             : "";
    std::vector<uint64_t> dict_offsets{0};
    std::string dict_bytes;
    for (uint64_t i = 0; i < n; ++i) {
      std::string_view key(base + values.offsets[i], values.offsets[i + 1] - values.offsets[i]);
      auto [it, inserted] = ids.emplace(key, ids.size());
      if (inserted) {
        dict_bytes.append(key);
        dict_offsets.push_back(dict_bytes.size());
      }
      if (wide) {
        AppendIndex<int64_t>(&indices, it->second);
      } else {
        AppendIndex<int32_t>(&indices, it->second);
      }
    }
    // Block layout: [width][bytes start][offsets][bytes], u32 or u64 fields.
    const uint64_t width = values.bits_per_offset / 8;
    const uint64_t start = 2 * width + dict_offsets.size() * width;
    auto put = [&](uint64_t v) { dictionary.append(reinterpret_cast<const char*>(&v), width); };
    put(values.bits_per_offset);
    put(start);
    for (uint64_t o : dict_offsets) put(o);
    dictionary += dict_bytes;
    out.num_items = dict_offsets.size() - 1;
    *out.dictionary_encoding.mutable_variable()->mutable_offsets() = FlatEncoding(values.bits_per_offset);
  } else {
    out.indices.bits_per_value = 32;
    const uint64_t width = values.bits_per_value / 8;
    const char* base = reinterpret_cast<const char*>(values.data->data());
    for (uint64_t i = 0; i < n; ++i) {
      std::string_view key(base + i * width, width);
      auto [it, inserted] = ids.emplace(key, ids.size());
      if (inserted) dictionary.append(key);
      AppendIndex<int32_t>(&indices, it->second);
    }
    out.num_items = ids.size();
    out.dictionary_encoding = FlatEncoding(values.bits_per_value);
  }
  out.indices.data = arrow::Buffer::FromString(std::move(indices));
  if (version >= FileVersion::kV2_2) {
    bool packed = false;
    if (values.kind == PageValues::Kind::kFixed && values.bits_per_value == 64) {
      std::string bitpacked;
      pb21::CompressiveEncoding e;
      LANCE_ASSIGN_OR_RAISE(packed, TryBitpackBlock<uint64_t>(dictionary, out.num_items, &bitpacked, &e));
      if (packed) {
        out.dictionary = std::move(bitpacked);
        out.dictionary_encoding = std::move(e);
      }
    }
    if (!packed) {
      LANCE_ASSIGN_OR_RAISE(out.dictionary, comp::GeneralCompress(comp::GeneralCodec::kLz4, dictionary, std::nullopt));
      out.dictionary_encoding = GeneralLz4(std::move(out.dictionary_encoding));
    }
  } else {
    out.dictionary = std::move(dictionary);
  }
  return out;
}

// ------------------------------------------------------ byte stream split

// BSS only pays off ahead of a general compressor: used when one is
// requested and the bytes at each position of the first 64 values have low
// entropy (below 8 bits times the sensitivity).
bool UseByteStreamSplit(const PageValues& values, const CompressionParams& params) {
  if (!params.General() || !values.fsl.empty()) return false;
  if (values.bits_per_value != 32 && values.bits_per_value != 64) return false;
  if (params.bss_sensitivity <= 0) return false;
  if (params.bss_sensitivity >= 1) return true;
  const uint64_t width = values.bits_per_value / 8;
  const uint64_t sample = std::min<uint64_t>(values.num_values, 64);
  if (sample == 0) return false;
  const uint8_t* data = values.data->data();
  double total = 0;
  for (uint64_t pos = 0; pos < width; ++pos) {
    uint32_t counts[256] = {};
    for (uint64_t i = 0; i < sample; ++i) ++counts[data[i * width + pos]];
    double entropy = 0;
    for (uint32_t c : counts) {
      if (c == 0) continue;
      const double p = static_cast<double>(c) / static_cast<double>(sample);
      entropy -= p * std::log2(p);
    }
    total += std::floor(entropy * 1000.0) / 1000.0;
  }
  return total / static_cast<double>(width) < params.bss_sensitivity * 8.0;
}

// Chunks of 1024 (32-bit) or 512 (64-bit) values, each split into byte
// streams: all first bytes, then all second bytes, ...
MiniCompressed ByteStreamSplitChunks(const PageValues& values) {
  MiniCompressed out;
  const uint64_t width = values.bits_per_value / 8;
  const uint64_t per_chunk = values.bits_per_value == 32 ? 1024 : 512;
  const uint64_t n = values.num_values;
  const uint8_t* src = values.data->data();
  std::string buffer(n * width, '\0');
  for (uint64_t start = 0; start < n; start += per_chunk) {
    const uint64_t count = std::min(per_chunk, n - start);
    char* dst = buffer.data() + start * width;
    for (uint64_t i = 0; i < count; ++i) {
      for (uint64_t b = 0; b < width; ++b) dst[b * count + i] = static_cast<char>(src[(start + i) * width + b]);
    }
    MiniChunk chunk;
    chunk.num_values = count;
    chunk.log_num_values = start + count < n ? static_cast<uint8_t>(std::countr_zero(count)) : 0;
    chunk.buffer_sizes.push_back(count * width);
    out.chunks.push_back(std::move(chunk));
  }
  out.buffers.push_back(std::move(buffer));
  *out.encoding.mutable_byte_stream_split()->mutable_values() = FlatEncoding(values.bits_per_value);
  return out;
}

// ---------------------------------------------------------------- general

// Compresses each chunk's part of the first buffer on its own; kept only
// when the buffer is worth it (4 KiB+) and comes out smaller.
constexpr uint64_t kMinGeneralBufferBytes = 4 * 1024;

Status WrapGeneral(MiniCompressed* compressed, comp::GeneralCodec codec, std::optional<int32_t> level) {
  if (compressed->buffers.empty() || compressed->buffers[0].size() < kMinGeneralBufferBytes) return Status::OK();
  const std::string& first = compressed->buffers[0];
  std::string out;
  std::vector<uint64_t> sizes;
  uint64_t offset = 0;
  for (const auto& chunk : compressed->chunks) {
    const uint64_t size = chunk.buffer_sizes[0];
    LANCE_ASSIGN_OR_RAISE(auto framed, comp::GeneralCompress(codec, std::string_view(first).substr(offset, size), level));
    sizes.push_back(framed.size());
    out += framed;
    offset += size;
  }
  if (out.size() >= first.size()) return Status::OK();
  for (size_t c = 0; c < compressed->chunks.size(); ++c) compressed->chunks[c].buffer_sizes[0] = sizes[c];
  compressed->buffers[0] = std::move(out);
  pb21::CompressiveEncoding wrapped;
  auto* general = wrapped.mutable_general();
  general->mutable_compression()->set_scheme(codec == comp::GeneralCodec::kLz4 ? pb21::COMPRESSION_ALGORITHM_LZ4
                                                                               : pb21::COMPRESSION_ALGORITHM_ZSTD);
  if (level) general->mutable_compression()->set_level(*level);
  *general->mutable_values() = std::move(compressed->encoding);
  compressed->encoding = std::move(wrapped);
  return Status::OK();
}

// The end (index into offsets) of the chunk starting at value `first`:
// doubling the count while offsets + bytes stay within the aim.
size_t NextVariableChunkEnd(const std::vector<uint64_t>& offsets, size_t first, uint64_t width) {
  const size_t last = offsets.size() - 1;
  uint64_t num = 1, next = 2;
  while (true) {
    if (first + next >= offsets.size()) {
      const uint64_t size = offsets[last] - offsets[first] + (offsets.size() - first) * width;
      return size <= kAimVariableChunkBytes ? last : first + num;
    }
    const uint64_t size = offsets[first + next] - offsets[first] + (next + 1) * width;
    if (size > kAimVariableChunkBytes) break;
    num = next;
    next *= 2;
  }
  return first + next;
}

MiniCompressed ChunkVariable(const PageValues& values) {
  MiniCompressed out;
  out.encoding = VariableEncoding(values.bits_per_offset);
  const uint64_t width = values.bits_per_offset / 8;
  const auto& offsets = values.offsets;
  std::string buffer;
  const char* bytes = values.data && values.data->size() > 0 ? reinterpret_cast<const char*>(values.data->data())
                                                             : nullptr;
  size_t first = 0;
  const size_t last = offsets.size() - 1;
  while (first < last) {
    const size_t end = NextVariableChunkEnd(offsets, first, width);
    const uint64_t count = end - first;
    const uint64_t header = (count + 1) * width;
    const size_t chunk_start = buffer.size();
    for (size_t i = first; i <= end; ++i) {
      const uint64_t v = offsets[i] - offsets[first] + header;
      buffer.append(reinterpret_cast<const char*>(&v), width);  // little-endian host
    }
    if (offsets[end] > offsets[first]) buffer.append(bytes + offsets[first], offsets[end] - offsets[first]);
    const uint64_t padded = (buffer.size() - chunk_start + width - 1) / width * width;
    buffer.resize(chunk_start + padded, kVariablePad);
    MiniChunk chunk;
    chunk.num_values = count;
    chunk.log_num_values = end == last ? 0 : static_cast<uint8_t>(std::countr_zero(count));
    chunk.buffer_sizes.push_back(padded);
    out.chunks.push_back(std::move(chunk));
    first = end;
  }
  out.buffers.push_back(std::move(buffer));
  return out;
}

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
    if (compress && UseByteStreamSplit(values, params)) packed = ByteStreamSplitChunks(values);
    if (compress && !packed) packed = TryRle(values, params.rle_threshold);
    if (compress && !packed) {
      LANCE_ASSIGN_OR_RAISE(packed, TryInlineBitpacking(values));
    }
    if (packed) {
      compressed = std::move(*packed);
    } else {
      LANCE_ASSIGN_OR_RAISE(compressed, ChunkFixed(values));
    }
  }
  if (auto codec = params.General(); codec && values.fsl.empty()) {
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
  if (has_rep) rep_compression = ChooseLevelCompression(levels.rep);
  if (has_def) def_compression = ChooseLevelCompression(levels.def);
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
  auto serialize = [&](bool large) -> bool {
    data.clear();
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
        data.append(compressed.buffers[b], consumed[b], chunk.buffer_sizes[b]);
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

  pb21::PageLayout layout;
  auto* mb = layout.mutable_mini_block_layout();
  if (has_rep) *mb->mutable_rep_compression() = rep_compression.Encoding();
  if (has_def) *mb->mutable_def_compression() = def_compression.Encoding();
  *mb->mutable_value_compression() = compressed.encoding;
  SetLayers(levels.layers, mb->mutable_layers());
  mb->set_num_buffers(compressed.buffers.size());
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
  if (UsePerValueZstd(input_values, params)) {
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

  std::string zipped;
  std::vector<uint64_t> row_starts;
  uint64_t next_value = 0;
  for (size_t i = 0; i < num_levels; ++i) {
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
        LANCE_ASSIGN_OR_RAISE(auto bits, CopyBits(l.validity, static_cast<int64_t>(v * dim), static_cast<int64_t>(dim)));
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
    *fz->mutable_value_compression() = VariableEncoding(values.bits_per_offset);
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
  return MakePage(layout, num_rows, first_row, std::move(buffers));
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

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

}  // namespace

Result<PageData> EncodeLeafPage(const LeafPath& path, LeafPageInput input,
                                const std::map<std::string, std::string>& metadata, FileVersion version) {
  const uint64_t num_values = static_cast<uint64_t>(input.values->length());
  uint64_t valid_values = 0;
  for (uint16_t d : input.def) valid_values += d == 0 ? 1 : 0;
  CompactLevels levels = CompactPageLevels(path, std::move(input.rep), input.def);
  if (num_values == 0 || valid_values == 0) {
    const bool simple = num_values > 0 && levels.rep.empty() && levels.layers.size() == 1;
    return EncodeAllNull(levels, simple, input.num_rows, input.first_row);
  }
  LANCE_ASSIGN_OR_RAISE(PageValues values, ToPageValues(input.values));
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
  CompressionParams params;
  if (auto it = metadata.find("lance-encoding:compression"); it != metadata.end()) {
    params.compression = Lower(it->second);
  }
  if (auto it = metadata.find("lance-encoding:rle-threshold"); it != metadata.end()) {
    try {
      params.rle_threshold = std::stod(it->second);
    } catch (...) {
      // The reference ignores a threshold that does not parse.
    }
  }
  if (!params.compression.empty() && params.compression != "none" && params.compression != "fsst" &&
      !params.General()) {
    return Status::Invalid("leaf '", path.name, "': unknown lance-encoding:compression '", params.compression,
                           "' (expected none, fsst, lz4 or zstd)");
  }
  if (auto it = metadata.find("lance-encoding:compression-level"); it != metadata.end()) {
    try {
      params.compression_level = std::stoi(it->second);
    } catch (...) {
      // The reference ignores a level that does not parse.
    }
  }
  if (auto it = metadata.find("lance-encoding:bss"); it != metadata.end()) {
    const std::string mode = Lower(it->second);
    if (mode == "off") params.bss_sensitivity = 0;
    if (mode == "on") params.bss_sensitivity = 1;
    if (mode == "auto") params.bss_sensitivity = 0.5;
  }
  if (auto it = metadata.find("lance-encoding:dict-size-ratio"); it != metadata.end()) {
    try {
      params.dict_size_ratio = std::stod(it->second);
    } catch (...) {
    }
    if (!(params.dict_size_ratio > 0 && params.dict_size_ratio <= 1)) {
      return Status::Invalid("leaf '", path.name, "': lance-encoding:dict-size-ratio must be in (0, 1], got '",
                             it->second, "'");
    }
  }
  if (ShouldDictionaryEncode(values, version, params)) {
    LANCE_ASSIGN_OR_RAISE(DictionaryPage dict, DictionaryEncode(values, version));
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
