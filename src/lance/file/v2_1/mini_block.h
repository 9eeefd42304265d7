// Mini-block pages: values (and their rep/def levels) compressed in chunks of
// a few KiB. Buffers: [0] chunk metadata (u16 words, u32 with
// has_large_chunk), [1] chunk data, [2] dictionary (if any), [last]
// repetition index (if repetition_index_depth > 0).
#pragma once

#include "lance/encodings_v2_1.pb.h"
#include "lance/file/v2_1/page.h"

namespace lance::file::v2_1 {

/// One chunk of a mini-block page, from the chunk metadata buffer.
struct ChunkInfo {
  uint64_t offset;      // byte offset in the data buffer
  uint64_t size;        // bytes
  uint64_t num_values;  // values in the chunk
};

/// Parses the chunk metadata words (u32 if `large`, else u16) of a page of
/// `num_items` items whose data buffer has `data_size` bytes; every chunk is
/// checked to lie inside the data buffer.
Result<std::vector<ChunkInfo>> ParseChunkMetadata(std::span<const uint8_t> meta, bool large, uint64_t num_items,
                                                  uint64_t data_size);

Result<DecodedPage> DecodeMiniBlockPage(const lance::pb::encodings21::MiniBlockLayout& layout, const PageData& page,
                                        const PageContext& ctx);

}  // namespace lance::file::v2_1
