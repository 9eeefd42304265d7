// Mini-block pages: values (and their rep/def levels) compressed in chunks of
// a few KiB. Buffers: [0] chunk metadata (u16 words, u32 with
// has_large_chunk), [1] chunk data, [2] dictionary (if any), [last]
// repetition index (if repetition_index_depth > 0).
#pragma once

#include "lance/encodings_v2_1.pb.h"
#include "lance/file/v2_1/page.h"

namespace lance::file::v2_1 {

Result<DecodedPage> DecodeMiniBlockPage(const lance::pb::encodings21::MiniBlockLayout& layout, const PageData& page,
                                        const PageContext& ctx);

}  // namespace lance::file::v2_1
