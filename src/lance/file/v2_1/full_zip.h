// Full-zip pages: each item's rep/def control word zipped with its value.
// Buffers: [0] zipped data, [1] repetition index (lists or variable width).
#pragma once

#include "lance/encodings_v2_1.pb.h"
#include "lance/file/v2_1/page.h"

namespace lance::file::v2_1 {

Result<DecodedPage> DecodeFullZipPage(const lance::pb::encodings21::FullZipLayout& layout, const PageData& page,
                                      const PageContext& ctx);

}  // namespace lance::file::v2_1
