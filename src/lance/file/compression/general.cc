// General-purpose buffer compression framed as the reference frames it
// (rust/lance-encoding/src/encodings/physical/block.rs):
//
//   zstd: u64 LE uncompressed length, then one zstd frame produced by a
//         one-shot compression (so the frame header also carries the content
//         size). Level 0 means zstd's default level. Readers also accept the
//         legacy unprefixed form: a buffer shorter than 8 bytes, or one that
//         starts with the zstd magic number and whose frame-header reserved
//         bit is clear, is a bare zstd stream.
//   lz4:  u32 LE uncompressed length, then one LZ4 block
//         (LZ4_compress_default). The level is ignored, as in the reference.

#include "lance/file/compression/general.h"

#include <lz4.h>
#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>

namespace lance::file::compression {

namespace {

// Nothing the reference writes comes near this; a larger claim is corrupt.
constexpr uint64_t kMaxDecompressedBytes = uint64_t{2} << 30;  // 2 GiB
// Upper bounds on what one compressed byte can expand to. zstd: an RLE block
// turns 4 bytes (3 header + 1 value) into at most 128 KiB. lz4: every 0xFF
// match-length byte adds 255 output bytes (plus a small constant per block).
constexpr uint64_t kZstdMaxRatio = 32768;
constexpr uint64_t kLz4MaxRatio = 255;
constexpr uint64_t kLz4Slack = 64;

constexpr uint32_t kZstdMagic = 0xFD2FB528;

uint64_t LoadLe64(const char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}

uint32_t LoadLe32(const char* p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}

void AppendLe(std::string* out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

Result<std::shared_ptr<arrow::Buffer>> Allocate(uint64_t size, arrow::MemoryPool* pool) {
  LANCE_ASSIGN_OR_RAISE(auto buffer, arrow::AllocateBuffer(static_cast<int64_t>(size), pool));
  return std::shared_ptr<arrow::Buffer>(std::move(buffer));
}

Status CheckDeclared(const char* codec, uint64_t declared, uint64_t payload, uint64_t ratio,
                     uint64_t slack) {
  if (declared > kMaxDecompressedBytes) {
    return Status::Invalid(codec, " buffer declares ", declared,
                           " decompressed bytes, more than the 2 GiB limit");
  }
  // payload * ratio cannot overflow: payload is an in-memory size.
  if (declared > payload * ratio + slack) {
    return Status::Invalid(codec, " buffer declares ", declared, " decompressed bytes from only ",
                           payload, " compressed bytes");
  }
  return Status::OK();
}

// The reference's test for the legacy, unprefixed zstd form.
bool IsRawZstdStream(std::string_view framed) {
  if (framed.size() < 8) return true;
  if (LoadLe32(framed.data()) != kZstdMagic) return false;
  const uint8_t frame_header_descriptor = static_cast<uint8_t>(framed[4]);
  return (frame_header_descriptor & 0x10) == 0;  // reserved bit must be 0 in a real frame
}

// One zstd context per thread, reused: making one per buffer costs more
// than the work on a small buffer. Each use resets it, so results do not
// depend on what it did before.
ZSTD_CCtx* ThreadCCtx() {
  thread_local std::unique_ptr<ZSTD_CCtx, size_t (*)(ZSTD_CCtx*)> ctx(ZSTD_createCCtx(), &ZSTD_freeCCtx);
  if (ctx) ZSTD_CCtx_reset(ctx.get(), ZSTD_reset_session_and_parameters);
  return ctx.get();
}
ZSTD_DCtx* ThreadDCtx() {
  thread_local std::unique_ptr<ZSTD_DCtx, size_t (*)(ZSTD_DCtx*)> ctx(ZSTD_createDCtx(), &ZSTD_freeDCtx);
  if (ctx) ZSTD_DCtx_reset(ctx.get(), ZSTD_reset_session_and_parameters);
  return ctx.get();
}

Result<std::shared_ptr<arrow::Buffer>> ZstdDecompressPrefixed(std::string_view framed,
                                                              arrow::MemoryPool* pool) {
  const uint64_t declared = LoadLe64(framed.data());
  std::string_view frame = framed.substr(8);
  LANCE_RETURN_NOT_OK(CheckDeclared("zstd", declared, frame.size(), kZstdMaxRatio, 0));
  const unsigned long long content_size = ZSTD_getFrameContentSize(frame.data(), frame.size());
  if (content_size == ZSTD_CONTENTSIZE_ERROR) {
    return Status::Invalid("zstd buffer: the data after the length prefix is not a zstd frame");
  }
  if (content_size != ZSTD_CONTENTSIZE_UNKNOWN && content_size > declared) {
    return Status::Invalid("zstd buffer: length prefix says ", declared,
                           " bytes but the frame header says ", content_size);
  }
  LANCE_ASSIGN_OR_RAISE(auto out, Allocate(declared, pool));
  ZSTD_DCtx* dctx = ThreadDCtx();
  if (dctx == nullptr) return Status::OutOfMemory("zstd: cannot create a decompression context");
  // A one-byte scratch target keeps the pointer valid when nothing is expected.
  char scratch = 0;
  void* dst = declared > 0 ? static_cast<void*>(out->mutable_data()) : &scratch;
  const size_t got = ZSTD_decompressDCtx(dctx, dst, static_cast<size_t>(declared), frame.data(),
                                         frame.size());
  if (ZSTD_isError(got)) {
    return Status::Invalid("zstd buffer: corrupt or truncated frame (", ZSTD_getErrorName(got),
                           ")");
  }
  if (got != declared) {
    return Status::Invalid("zstd buffer: length prefix says ", declared, " bytes but the frame holds ",
                           got);
  }
  return out;
}

Result<std::shared_ptr<arrow::Buffer>> ZstdDecompressRaw(std::string_view framed,
                                                         arrow::MemoryPool* pool) {
  const uint64_t limit = std::min<uint64_t>(kMaxDecompressedBytes, framed.size() * kZstdMaxRatio);
  ZSTD_DCtx* dctx = ZSTD_createDCtx();
  if (dctx == nullptr) return Status::OutOfMemory("zstd: cannot create a decompression context");
  std::string decoded;
  std::string chunk(ZSTD_DStreamOutSize(), '\0');
  ZSTD_inBuffer input{framed.data(), framed.size(), 0};
  Status status;
  while (true) {
    ZSTD_outBuffer output{chunk.data(), chunk.size(), 0};
    const size_t rc = ZSTD_decompressStream(dctx, &output, &input);
    if (ZSTD_isError(rc)) {
      status = Status::Invalid("zstd stream: corrupt data (", ZSTD_getErrorName(rc), ")");
      break;
    }
    if (decoded.size() + output.pos > limit) {
      status = Status::Invalid("zstd stream: decompresses to more than ", limit, " bytes");
      break;
    }
    decoded.append(chunk.data(), output.pos);
    // All input consumed and the decoder did not fill the output: it is done.
    if (input.pos == input.size && output.pos < output.size) {
      if (rc != 0) status = Status::Invalid("zstd stream: truncated frame");
      break;
    }
  }
  ZSTD_freeDCtx(dctx);
  LANCE_RETURN_NOT_OK(status);
  LANCE_ASSIGN_OR_RAISE(auto out, Allocate(decoded.size(), pool));
  if (!decoded.empty()) std::memcpy(out->mutable_data(), decoded.data(), decoded.size());
  return out;
}

Result<std::shared_ptr<arrow::Buffer>> Lz4Decompress(std::string_view framed, arrow::MemoryPool* pool) {
  if (framed.size() < 4) {
    return Status::Invalid("lz4 buffer: ", framed.size(), " bytes is too short for the length prefix");
  }
  const uint32_t declared = LoadLe32(framed.data());
  std::string_view block = framed.substr(4);
  if (declared > static_cast<uint32_t>(std::numeric_limits<int32_t>::max())) {
    return Status::Invalid("lz4 buffer: negative length prefix");
  }
  LANCE_RETURN_NOT_OK(CheckDeclared("lz4", declared, block.size(), kLz4MaxRatio, kLz4Slack));
  if (block.size() > static_cast<size_t>(std::numeric_limits<int>::max())) {
    return Status::Invalid("lz4 buffer: block too large");
  }
  LANCE_ASSIGN_OR_RAISE(auto out, Allocate(declared, pool));
  char scratch = 0;
  char* dst = declared > 0 ? reinterpret_cast<char*>(out->mutable_data()) : &scratch;
  const int got = LZ4_decompress_safe(block.data(), dst, static_cast<int>(block.size()),
                                      static_cast<int>(declared));
  if (got < 0) return Status::Invalid("lz4 buffer: corrupt or truncated block");
  if (static_cast<uint32_t>(got) != declared) {
    return Status::Invalid("lz4 buffer: length prefix says ", declared, " bytes but the block holds ",
                           got);
  }
  return out;
}

}  // namespace

Result<std::shared_ptr<arrow::Buffer>> GeneralDecompress(GeneralCodec codec, std::string_view framed,
                                                         arrow::MemoryPool* pool) {
  if (pool == nullptr) pool = arrow::default_memory_pool();
  switch (codec) {
    case GeneralCodec::kZstd:
      if (framed.empty()) return Allocate(0, pool);
      if (IsRawZstdStream(framed)) return ZstdDecompressRaw(framed, pool);
      return ZstdDecompressPrefixed(framed, pool);
    case GeneralCodec::kLz4:
      return Lz4Decompress(framed, pool);
  }
  return Status::Invalid("unknown general compression codec ", static_cast<int>(codec));
}

Result<std::string> GeneralCompress(GeneralCodec codec, std::string_view raw,
                                    std::optional<int32_t> level) {
  std::string out;
  switch (codec) {
    case GeneralCodec::kZstd: {
      const size_t bound = ZSTD_compressBound(raw.size());
      if (ZSTD_isError(bound)) return Status::Invalid("zstd: input of ", raw.size(), " bytes is too large");
      out.resize(8 + bound);
      ZSTD_CCtx* cctx = ThreadCCtx();
      if (cctx == nullptr) return Status::OutOfMemory("zstd: cannot create a compression context");
      size_t rc = ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, level.value_or(0));
      size_t written = 0;
      if (!ZSTD_isError(rc)) {
        written = ZSTD_compress2(cctx, out.data() + 8, bound, raw.data(), raw.size());
        rc = written;
      }
      if (ZSTD_isError(rc)) return Status::Invalid("zstd compression failed: ", ZSTD_getErrorName(rc));
      out.resize(8 + written);
      for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((uint64_t{raw.size()} >> (8 * i)) & 0xFF);
      return out;
    }
    case GeneralCodec::kLz4: {
      if (raw.size() > static_cast<size_t>(LZ4_MAX_INPUT_SIZE)) {
        return Status::Invalid("lz4: input of ", raw.size(), " bytes is too large");
      }
      const int bound = LZ4_compressBound(static_cast<int>(raw.size()));
      AppendLe(&out, raw.size(), 4);
      out.resize(4 + static_cast<size_t>(bound));
      const int written = LZ4_compress_default(raw.data(), out.data() + 4, static_cast<int>(raw.size()), bound);
      if (written <= 0) return Status::Invalid("lz4 compression failed");
      out.resize(4 + static_cast<size_t>(written));
      return out;
    }
  }
  return Status::Invalid("unknown general compression codec ", static_cast<int>(codec));
}

}  // namespace lance::file::compression
