#include "lance/file/v2_1/encode_chunks.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

#include "lance/file/compression/fastlanes.h"

namespace lance::file::v2_1::encode {

namespace {

// Chunks of mini-block pages: at most this many values, and values sized
// to stay under this many bytes (the reference's limits).
constexpr uint64_t kMaxMiniBlockBytes = 8 * 1024 - 6;
constexpr uint64_t kMaxMiniBlockValues = 4096;
// Variable-width chunks aim for this many bytes of offsets + data.
constexpr uint64_t kAimVariableChunkBytes = 4 * 1024;
constexpr char kVariablePad = static_cast<char>(0x48);

}  // namespace

// ------------------------------------------------------------ flat values

namespace {

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

}  // namespace

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
  out.buffers.emplace_back(values.data);  // the values' buffer itself, not a copy
  uint64_t data_used = 0;
  for (uint64_t row = 0; row < n; row += per_chunk) {
    const uint64_t rows = std::min(per_chunk, n - row);
    MiniChunk chunk;
    chunk.num_values = rows;
    // Full chunks say their size, the last one too; only a short last
    // chunk says 0 (its count follows from the page's).
    chunk.log_num_values = rows == per_chunk ? log : 0;
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
  std::vector<MiniBuffer> ordered;
  for (size_t l = 0; l < values.fsl.size(); ++l) {
    if (values.fsl[l].validity) ordered.emplace_back(std::move(validity[l]));
  }
  ordered.push_back(std::move(out.buffers[0]));
  out.buffers = std::move(ordered);
  return out;
}

// ------------------------------------------------------------ bitpacking

namespace {

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

}  // namespace

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

namespace {

// The block form of run-length encoding: [u64 size of the run values][run
// values][u8 run lengths].
constexpr uint64_t kRleBlockHeaderBytes = 8;

// Defined with the mini-block RLE below.
template <typename T>
uint64_t RleBytes(const T* v, uint64_t n);
template <typename T>
void AppendRuns(const T* v, uint64_t n, std::string* values, std::string* lengths);

// What bitpacking the whole page would take (one chunk inline, else out of
// line at the widest chunk's width), if that is smaller than the raw levels.
std::optional<uint64_t> BitpackedLevelBytes(uint64_t n, unsigned max_width) {
  constexpr uint64_t kChunk = 1024, kBits = 16;
  const uint64_t raw = n * 2;
  uint64_t words;
  if (n <= kChunk) {
    words = 1 + kChunk * max_width / kBits;
  } else {
    if (max_width >= kBits) return std::nullopt;
    const uint64_t chunks = (n + kChunk - 1) / kChunk;
    const uint64_t chunk_words = (kChunk * max_width + kBits - 1) / kBits;
    const uint64_t tail = n - (chunks - 1) * kChunk;
    words = (chunks - 1) * chunk_words;
    if (tail == kChunk) {
      words += chunk_words;
    } else {
      // A short last chunk is packed only when padding it costs less than
      // packing saves.
      words += max_width * (kChunk - tail) < (kBits - max_width) * tail ? chunk_words : tail;
    }
  }
  const uint64_t bytes = words * 2;
  return bytes < raw ? std::optional<uint64_t>(bytes) : std::nullopt;
}

}  // namespace

LevelCompression ChooseLevelCompression(const std::vector<uint16_t>& levels, FileVersion version) {
  LevelCompression out;
  const auto widths = ChunkBitWidths(levels.data(), levels.size());
  if (version >= FileVersion::kV2_2 && !levels.empty()) {
    const uint64_t rle = kRleBlockHeaderBytes + RleBytes(levels.data(), levels.size());
    const auto bitpacked = BitpackedLevelBytes(levels.size(), *std::max_element(widths.begin(), widths.end()));
    if (rle < levels.size() * 2 && !(bitpacked && *bitpacked < rle)) {
      out.kind = LevelCompression::Kind::kRle;
      return out;
    }
  }
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

pb21::CompressiveEncoding LevelCompression::Encoding() const {
  pb21::CompressiveEncoding e;
  switch (kind) {
    case Kind::kFlat:
      e.mutable_flat()->set_bits_per_value(16);
      break;
    case Kind::kInline:
      e.mutable_inline_bitpacking()->set_uncompressed_bits_per_value(16);
      break;
    case Kind::kRle: {
      auto* rle = e.mutable_rle();
      *rle->mutable_values() = FlatEncoding(16);
      *rle->mutable_run_lengths() = FlatEncoding(8);
      break;
    }
    case Kind::kOutOfLine: {
      auto* o = e.mutable_out_of_line_bitpacking();
      o->set_uncompressed_bits_per_value(16);
      o->mutable_values()->mutable_flat()->set_bits_per_value(width);
      break;
    }
  }
  return e;
}

Result<std::string> LevelCompression::Compress(const uint16_t* levels, uint64_t n) const {
  switch (kind) {
    case Kind::kFlat:
      return std::string(reinterpret_cast<const char*>(levels), n * 2);
    case Kind::kInline:
      return InlinePack<uint16_t>(levels, n, nullptr);
    case Kind::kOutOfLine:
      return OutOfLinePack<uint16_t>(levels, n, width);
    case Kind::kRle: {
      std::string values, lengths;
      AppendRuns(levels, n, &values, &lengths);
      const uint64_t values_size = values.size();
      std::string out(reinterpret_cast<const char*>(&values_size), 8);
      return out + values + lengths;
    }
  }
  return Status::Invalid("unknown level compression");
}

// ------------------------------------------------------------------- rle

namespace {

// RLE chunks hold at most this many values (the reference's cap).
constexpr uint64_t kMaxRleChunkValues = 4096;

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

}  // namespace

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
namespace {

constexpr uint64_t kMinGeneralBufferBytes = 4 * 1024;

}  // namespace

Status WrapGeneral(MiniCompressed* compressed, comp::GeneralCodec codec, std::optional<int32_t> level) {
  if (compressed->buffers.empty() || compressed->buffers[0].size() < kMinGeneralBufferBytes) return Status::OK();
  const std::string_view first = compressed->buffers[0].view();
  std::string out;
  std::vector<uint64_t> sizes;
  uint64_t offset = 0;
  for (const auto& chunk : compressed->chunks) {
    const uint64_t size = chunk.buffer_sizes[0];
    LANCE_ASSIGN_OR_RAISE(auto framed,
                          comp::GeneralCompress(codec, first.substr(offset, size), level));
    sizes.push_back(framed.size());
    out += framed;
    offset += size;
  }
  if (out.size() >= first.size()) return Status::OK();
  for (size_t c = 0; c < compressed->chunks.size(); ++c) compressed->chunks[c].buffer_sizes[0] = sizes[c];
  compressed->buffers[0] = std::move(out);
  compressed->encoding = GeneralEncoding(codec, level, std::move(compressed->encoding));
  return Status::OK();
}

// -------------------------------------------------------- variable width

namespace {

// The end (index into offsets) of the chunk starting at value `first`:
// the rest of the page if it fits the aim, else the largest power-of-two
// count (at least 2, at most 2048) whose offsets + bytes fit it. Only the
// last chunk may hold a single value.
size_t NextVariableChunkEnd(const std::vector<uint64_t>& offsets, size_t first, uint64_t width) {
  const size_t last = offsets.size() - 1;
  if (last - first <= 1) return last;
  uint64_t num = 2, next = 4;
  while (true) {
    if (first + next >= offsets.size()) {
      const uint64_t size = offsets[last] - offsets[first] + (offsets.size() - first) * width;
      return size <= kAimVariableChunkBytes ? last : first + num;
    }
    const uint64_t size = offsets[first + next] - offsets[first] + (next + 1) * width;
    if (size > kAimVariableChunkBytes || next * 2 > kMaxMiniBlockValues) break;
    num = next;
    next *= 2;
  }
  return first + num;
}

}  // namespace

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

// ------------------------------------------------------- block bitpacking

namespace {

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

}  // namespace

Result<bool> TryBitpackBlock64(const std::string& raw, uint64_t n, std::string* out, pb21::CompressiveEncoding* e) {
  return TryBitpackBlock<uint64_t>(raw, n, out, e);
}

}  // namespace lance::file::v2_1::encode
