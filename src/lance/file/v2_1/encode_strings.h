// Whole-value transforms of variable-width page values: FSST for strings
// (mini-block and full-zip) and per-value zstd for wide full-zip values,
// chosen by the reference's rules.
#pragma once

#include <string>
#include <utility>

#include "lance/file/v2_1/encode_values.h"

namespace lance::file::v2_1::encode {

/// Level of the per-value zstd the reference always uses.
inline constexpr int32_t kPerValueZstdLevel = 0;

/// FSST when requested, or by default for strings (not binary) of 5+ bytes
/// with 32 KiB+ of data (bytes plus offsets).
bool UseFsst(const PageValues& values, const CompressionParams& params);
/// The values FSST-compressed (same offset width) and the symbol table.
Result<std::pair<std::string, PageValues>> FsstValues(const PageValues& values);

/// Full-zip values are zstd-compressed one by one when one is over 32 KiB
/// or a general compression is requested, given 32 KiB+ of data.
bool UsePerValueZstd(const PageValues& values, const CompressionParams& params);
Result<PageValues> CompressEachValue(const PageValues& values);

}  // namespace lance::file::v2_1::encode
