// The portable (32-bit) Roaring serialization, checked before CRoaring reads it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "lance/status.h"

namespace lance::table {

/// Checks the whole structure of a portable Roaring bitmap. CRoaring 0.2's
/// "safe" deserializer checks lengths but trusts container contents (e.g. a
/// bitset's declared cardinality), so an inconsistent bitmap could later
/// overrun buffers. `context` starts the error message (e.g. the file).
Status ValidatePortableRoaring(std::string_view bytes, const std::string& context);

/// Validates and decodes a portable Roaring bitmap into its sorted values.
Result<std::vector<uint32_t>> DecodePortableRoaring(std::string_view bytes, const std::string& context);

}  // namespace lance::table
