// Dictionary encoding of 2.1+ page values: the reference's decision (by
// estimated size) and the split into indices and a block-compressed
// dictionary.
#pragma once

#include <string>

#include "lance/file/v2_1/encode_values.h"
#include "lance/file/version.h"

namespace lance::file::v2_1::encode {

// A page's values split into indices into a dictionary of distinct values
// (in first-occurrence order) and the dictionary's block-compressed buffer.
struct DictionaryPage {
  PageValues indices;
  std::string dictionary;
  pb21::CompressiveEncoding dictionary_encoding;
  uint64_t num_items = 0;
};

bool ShouldDictionaryEncode(const PageValues& values, FileVersion version, const CompressionParams& params);
/// `params.dict_values_compression` picks how 2.2+ compresses the dictionary.
Result<DictionaryPage> DictionaryEncode(const PageValues& values, FileVersion version,
                                        const CompressionParams& params);
/// An Arrow dictionary array's indices (kept at their key width) and items.
Result<DictionaryPage> DictionaryFromArrow(PageValues indices, const PageValues& items, FileVersion version,
                                           const CompressionParams& params);

}  // namespace lance::file::v2_1::encode
