// Blob pages: an inner page of {position, size} descriptions of values
// stored out of line in the file; null/empty values keep their rep/def in
// the description (size 0, position = def << 16 | rep).
#pragma once

#include "lance/encodings_v2_1.pb.h"
#include "lance/file/v2_1/page.h"

namespace lance::file::v2_1 {

Result<DecodedPage> DecodeBlobPage(const lance::pb::encodings21::BlobLayout& layout, const PageData& page,
                                   const PageContext& ctx);

}  // namespace lance::file::v2_1
