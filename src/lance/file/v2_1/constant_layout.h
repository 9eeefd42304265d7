// Constant pages: every visible value is one scalar (2.2; inline or in a
// value buffer) or null (2.1's AllNullLayout), with optional rep/def levels.
#pragma once

#include "lance/encodings_v2_1.pb.h"
#include "lance/file/v2_1/page.h"

namespace lance::file::v2_1 {

Result<DecodedPage> DecodeConstantPage(const lance::pb::encodings21::ConstantLayout& layout, const PageData& page,
                                       const PageContext& ctx);

}  // namespace lance::file::v2_1
