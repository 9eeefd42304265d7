// General-purpose compression (lz4, zstd) of whole buffers as 2.1+
// encodings describe it (BufferCompression): maps the scheme to the codec.
#pragma once

#include <memory>

#include <arrow/buffer.h>
#include <arrow/memory_pool.h>

#include "lance/encodings_v2_1.pb.h"
#include "lance/status.h"

namespace lance::file::v2_1 {

/// Decompresses one framed buffer (an empty buffer stays empty).
Result<std::shared_ptr<arrow::Buffer>> DecompressBuffer(const lance::pb::encodings21::BufferCompression& compression,
                                                        const std::shared_ptr<arrow::Buffer>& framed,
                                                        arrow::MemoryPool* pool);

}  // namespace lance::file::v2_1
