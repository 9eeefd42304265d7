// FSST string compression as the reference's own port stores it: a
// serialized symbol table (kept in the encoding description) and compressed
// values addressed by offsets.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <arrow/buffer.h>

#include "lance/status.h"

namespace lance::file::compression {

/// Variable-width values: `offsets` has one more entry than there are values.
struct VariableValues {
  std::vector<uint64_t> offsets;
  std::string data;
};

/// A parsed symbol table, made once and used for every run of values
/// compressed with it (the chunks of a page share one table).
class FsstDecoder {
 public:
  /// Parses a serialized symbol table; a malformed one is an error.
  static Result<FsstDecoder> Make(std::string_view symbol_table);

  /// Decompresses `n` values whose compressed bytes are
  /// data[offset(i), offset(i+1)), offsets being n+1 little-endian unsigned
  /// integers of `offset_width` bytes (4 or 8, any alignment). The values are
  /// appended to `out` (its size grows by their bytes; no zero fill) and the
  /// end of value i, counted from the start of `out`, goes to ends[i].
  /// Bad offsets, unknown codes and a trailing escape are errors, never an
  /// out-of-bounds access; on error `out` holds a prefix of the values.
  Status DecompressAppend(const uint8_t* offsets, unsigned offset_width, uint64_t n, std::string_view data,
                          arrow::ResizableBuffer* out, uint64_t* ends) const;

 private:
  FsstDecoder() = default;
  template <typename Offset>
  Status Run(const uint8_t* offsets, uint64_t n, std::string_view data, arrow::ResizableBuffer* out,
             uint64_t* ends) const;

  bool compressed_ = false;
  uint32_t num_symbols_ = 0;
  // Code -> symbol bytes, 8 at a time; lens_[c] is 0 for codes past the table.
  std::array<uint64_t, 256> symbols_{};
  std::array<uint8_t, 256> lens_{};
};

/// Decompresses values compressed with `symbol_table` (FsstDecoder in one call). `offsets` (n+1
/// entries) index into `data`. Corrupt tables or codes give an error, never
/// an out-of-bounds read.
Result<VariableValues> FsstDecompress(std::string_view symbol_table, std::span<const uint64_t> offsets,
                                      std::string_view data);

/// Trains a symbol table on the values and compresses them, as the reference
/// writer does. Returns the serialized symbol table and the compressed values.
Result<std::pair<std::string, VariableValues>> FsstCompress(std::span<const uint64_t> offsets,
                                                            std::string_view data);

}  // namespace lance::file::compression
