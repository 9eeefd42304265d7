// The values of one 2.1+ leaf page in the shapes the encodings distinguish
// (flat fixed-width under any fixed-size-list layers, or variable-width),
// the compression a field's metadata asks for, and builders of encoding
// descriptions. Shared by the page encoders (encode_*.cc).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <arrow/array.h>
#include <arrow/buffer.h>

#include "lance/encodings_v2_1.pb.h"
#include "lance/file/compression/general.h"
#include "lance/status.h"

namespace lance::file::v2_1::encode {

namespace pb21 = lance::pb::encodings21;
namespace comp = lance::file::compression;

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
  // A packed struct: the children's widths; each value is one row of them.
  std::vector<uint64_t> packed_bits;
  // A packed struct with variable-width children (kVariable, one value per
  // row): how the rows are laid out (a VariablePackedStruct).
  std::optional<pb21::CompressiveEncoding> row_encoding;
};

// What the field metadata asks of the compression.
struct CompressionParams {
  std::string compression;  // "", "none", "fsst", "lz4", "zstd"
  double rle_threshold = 0.5;
  double dict_size_ratio = 0.8;
  std::optional<int32_t> compression_level;
  double bss_sensitivity = 0.5;  // off 0, auto 0.5, on 1
  // lance-encoding:dict-values-compression: "" (the default: bitpacked or
  // lz4 in 2.2), "none", "lz4" or "zstd".
  std::string dict_values_compression;

  // lz4/zstd requested: a general compressor wraps the value compression.
  std::optional<comp::GeneralCodec> General() const {
    if (compression == "lz4") return comp::GeneralCodec::kLz4;
    if (compression == "zstd") return comp::GeneralCodec::kZstd;
    return std::nullopt;
  }
};

/// Reads lance-encoding:compression, compression-level, rle-threshold, bss
/// and dict-size-ratio; unknown schemes and out-of-range ratios are errors
/// naming the leaf.
Result<CompressionParams> ParseCompressionParams(const std::map<std::string, std::string>& metadata,
                                                 const std::string& leaf_name);

/// The values of an Arrow array (its validity is carried by def levels).
Result<PageValues> ToPageValues(const std::shared_ptr<arrow::Array>& array);

/// `length` bits of `bits` from bit `offset`, re-based at bit 0 (all set if
/// `bits` is null).
Result<std::shared_ptr<arrow::Buffer>> CopyBits(const std::shared_ptr<arrow::Buffer>& bits, int64_t offset,
                                                int64_t length);

/// The widest value in bytes (fixed-size lists: the whole list).
uint64_t MaxValueBytes(const PageValues& values);

std::string_view Bytes(const std::shared_ptr<arrow::Buffer>& b);
std::string Lower(std::string s);

pb21::CompressiveEncoding FlatEncoding(uint64_t bits);
/// Flat values under the page's fixed-size-list layers.
pb21::CompressiveEncoding FixedEncoding(const PageValues& values);
pb21::CompressiveEncoding VariableEncoding(uint32_t bits_per_offset);
pb21::CompressiveEncoding FsstEncoding(std::string symbol_table, pb21::CompressiveEncoding inner);
pb21::CompressiveEncoding GeneralEncoding(comp::GeneralCodec codec, std::optional<int32_t> level,
                                          pb21::CompressiveEncoding inner);

}  // namespace lance::file::v2_1::encode
