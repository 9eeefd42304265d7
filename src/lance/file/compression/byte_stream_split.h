// Byte-stream split: byte k of every value stored together, for k = 0..w-1.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "lance/status.h"

namespace lance::file::compression {

/// in: w streams of n bytes; out: n values of w bytes. Sizes must agree.
Status ByteStreamSplitDecode(std::span<const uint8_t> in, size_t value_width, std::span<uint8_t> out);
/// The inverse.
Status ByteStreamSplitEncode(std::span<const uint8_t> in, size_t value_width, std::span<uint8_t> out);

}  // namespace lance::file::compression
