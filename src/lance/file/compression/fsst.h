// FSST string compression as the reference's own port stores it: a
// serialized symbol table (kept in the encoding description) and compressed
// values addressed by offsets.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "lance/status.h"

namespace lance::file::compression {

/// Variable-width values: `offsets` has one more entry than there are values.
struct VariableValues {
  std::vector<uint64_t> offsets;
  std::string data;
};

/// Decompresses values compressed with `symbol_table`. `offsets` (n+1
/// entries) index into `data`. Corrupt tables or codes give an error, never
/// an out-of-bounds read.
Result<VariableValues> FsstDecompress(std::string_view symbol_table, std::span<const uint64_t> offsets,
                                      std::string_view data);

/// Trains a symbol table on the values and compresses them, as the reference
/// writer does. Returns the serialized symbol table and the compressed values.
Result<std::pair<std::string, VariableValues>> FsstCompress(std::span<const uint64_t> offsets,
                                                            std::string_view data);

}  // namespace lance::file::compression
