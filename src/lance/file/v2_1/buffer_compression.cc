#include "lance/file/v2_1/buffer_compression.h"

#include "lance/file/compression/general.h"
#include "lance/file/v2_1/bytes.h"

namespace lance::file::v2_1 {

namespace pb21 = lance::pb::encodings21;
namespace comp = lance::file::compression;

Result<std::shared_ptr<arrow::Buffer>> DecompressBuffer(const pb21::BufferCompression& compression,
                                                        const std::shared_ptr<arrow::Buffer>& framed,
                                                        arrow::MemoryPool* pool) {
  comp::GeneralCodec codec;
  switch (compression.scheme()) {
    case pb21::COMPRESSION_ALGORITHM_LZ4:
      codec = comp::GeneralCodec::kLz4;
      break;
    case pb21::COMPRESSION_ALGORITHM_ZSTD:
      codec = comp::GeneralCodec::kZstd;
      break;
    default:
      return Status::NotImplemented("unsupported general compression scheme ",
                                    static_cast<int>(compression.scheme()));
  }
  if (!framed || framed->size() == 0) return AllocateZeroed(0, pool);
  return comp::GeneralDecompress(codec, AsStringView(framed), pool);
}

}  // namespace lance::file::v2_1
