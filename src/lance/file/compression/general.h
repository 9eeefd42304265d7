// General-purpose buffer compression (zstd, lz4) framed as the reference
// frames it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <arrow/buffer.h>
#include <arrow/memory_pool.h>

#include "lance/status.h"

namespace lance::file::compression {

enum class GeneralCodec { kLz4, kZstd };

/// Decompresses one framed buffer. Errors on truncated or corrupt input and
/// on a declared size that is absurd or disagrees with the data.
Result<std::shared_ptr<arrow::Buffer>> GeneralDecompress(GeneralCodec codec, std::string_view framed,
                                                         arrow::MemoryPool* pool);

/// Compresses `raw` and frames it like the reference writer.
Result<std::string> GeneralCompress(GeneralCodec codec, std::string_view raw,
                                    std::optional<int32_t> level);

}  // namespace lance::file::compression
