// Mini-block value compression of 2.1+ pages: chunking values (flat,
// fixed-size lists, variable-width) and the compressors the reference picks
// for them (inline bitpacking, RLE, byte-stream split, a general lz4/zstd
// wrapper), plus the compression of rep/def levels and block bitpacking.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <arrow/buffer.h>

#include "lance/file/v2_1/encode_values.h"
#include "lance/file/version.h"

namespace lance::file::v2_1::encode {

struct MiniChunk {
  uint8_t log_num_values = 0;  // 0 for the last chunk
  uint64_t num_values = 0;
  std::vector<uint64_t> buffer_sizes;
};

// The bytes of one value buffer: built by a compressor, or an input buffer
// taken as it is (plain fixed-width values, no copy of the page).
struct MiniBuffer {
  MiniBuffer(std::string bytes) : owned(std::move(bytes)) {}  // NOLINT: built from strings everywhere
  explicit MiniBuffer(std::shared_ptr<arrow::Buffer> bytes) : shared(std::move(bytes)) {}
  std::string_view view() const {
    if (!shared) return owned;
    return {reinterpret_cast<const char*>(shared->data()), static_cast<size_t>(shared->size())};
  }
  size_t size() const { return shared ? static_cast<size_t>(shared->size()) : owned.size(); }

  std::string owned;
  std::shared_ptr<arrow::Buffer> shared;
};

struct MiniCompressed {
  std::vector<MiniChunk> chunks;
  std::vector<MiniBuffer> buffers;  // each chunk takes its sizes from these in turn
  pb21::CompressiveEncoding encoding;
};

/// Flat values (under any fixed-size-list layers) in power-of-two chunks
/// of under 8 KiB, at most 4096 values.
Result<MiniCompressed> ChunkFixed(const PageValues& values);
/// Variable-width values in chunks of about 4 KiB of offsets and bytes.
MiniCompressed ChunkVariable(const PageValues& values);

/// Inline bitpacking, when the packed chunks come out smaller.
Result<std::optional<MiniCompressed>> TryInlineBitpacking(const PageValues& values);
/// Run-length encoding, when runs < values * threshold.
std::optional<MiniCompressed> TryRle(const PageValues& values, double threshold);
/// Byte-stream split ahead of a requested general compression.
bool UseByteStreamSplit(const PageValues& values, const CompressionParams& params);
MiniCompressed ByteStreamSplitChunks(const PageValues& values);
/// Wraps the first buffer of every chunk in lz4/zstd when that pays.
Status WrapGeneral(MiniCompressed* compressed, comp::GeneralCodec codec, std::optional<int32_t> level);

// How a page's u16 levels are compressed (one choice per page, applied to
// each chunk's slice): in 2.2+ run-length encoded when that beats both the
// raw and the bitpacked size; else raw when some 1024-level run is all zeros
// or packing cannot win, inline bitpacking for short pages, out-of-line
// otherwise.
struct LevelCompression {
  enum class Kind { kFlat, kInline, kOutOfLine, kRle } kind = Kind::kFlat;
  unsigned width = 16;

  pb21::CompressiveEncoding Encoding() const;
  Result<std::string> Compress(const uint16_t* levels, uint64_t n) const;
};

LevelCompression ChooseLevelCompression(const std::vector<uint16_t>& levels, FileVersion version);

/// Bitpacks `n` 64-bit values (inline up to 1024, else out of line) into
/// `out` when that shrinks them; false otherwise.
Result<bool> TryBitpackBlock64(const std::string& raw, uint64_t n, std::string* out, pb21::CompressiveEncoding* e);

}  // namespace lance::file::v2_1::encode
