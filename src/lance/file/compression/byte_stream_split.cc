// Byte-stream split as the reference's 2.1 mini-block encoder lays it out
// inside one chunk: for n values of w bytes, stream k (k = 0..w-1) holds byte
// k of every value, in value order, so byte k of value i is at k * n + i.

#include "lance/file/compression/byte_stream_split.h"

namespace lance::file::compression {

namespace {

Status CheckSizes(const char* what, size_t in_size, size_t value_width, size_t out_size) {
  if (value_width == 0) return Status::Invalid("byte stream split ", what, ": value width is 0");
  if (in_size != out_size) {
    return Status::Invalid("byte stream split ", what, ": input has ", in_size,
                           " bytes but output has ", out_size);
  }
  if (in_size % value_width != 0) {
    return Status::Invalid("byte stream split ", what, ": ", in_size,
                           " bytes is not a whole number of ", value_width, "-byte values");
  }
  return Status::OK();
}

// The transform reorders bytes, so it cannot run in place.
Status CheckDisjoint(const char* what, const uint8_t* in, const uint8_t* out, size_t size) {
  if (size != 0 && in < out + size && out < in + size) {
    return Status::Invalid("byte stream split ", what, ": input and output overlap");
  }
  return Status::OK();
}

}  // namespace

Status ByteStreamSplitDecode(std::span<const uint8_t> in, size_t value_width, std::span<uint8_t> out) {
  LANCE_RETURN_NOT_OK(CheckSizes("decode", in.size(), value_width, out.size()));
  LANCE_RETURN_NOT_OK(CheckDisjoint("decode", in.data(), out.data(), in.size()));
  const size_t n = in.size() / value_width;
  for (size_t k = 0; k < value_width; ++k) {
    const uint8_t* stream = in.data() + k * n;
    for (size_t i = 0; i < n; ++i) out[i * value_width + k] = stream[i];
  }
  return Status::OK();
}

Status ByteStreamSplitEncode(std::span<const uint8_t> in, size_t value_width, std::span<uint8_t> out) {
  LANCE_RETURN_NOT_OK(CheckSizes("encode", in.size(), value_width, out.size()));
  LANCE_RETURN_NOT_OK(CheckDisjoint("encode", in.data(), out.data(), in.size()));
  const size_t n = in.size() / value_width;
  for (size_t k = 0; k < value_width; ++k) {
    uint8_t* stream = out.data() + k * n;
    for (size_t i = 0; i < n; ++i) stream[i] = in[i * value_width + k];
  }
  return Status::OK();
}

}  // namespace lance::file::compression
