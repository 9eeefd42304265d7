// One page of a 2.0 column: an ArrayEncoding tree (protos/encodings_v2_0.proto)
// over the page's buffers, decoded into Arrow data of a known type. Struct
// headers and list offsets are not arrays of their own: field_decoder.cc
// handles those and calls into here for the leaves and the offsets.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <arrow/array/data.h>
#include <arrow/buffer.h>
#include <arrow/memory_pool.h>
#include <arrow/type_fwd.h>

#include "lance/encodings_v2_0.pb.h"
#include "lance/file/column_data.h"
#include "lance/status.h"

namespace lance::file::v2_0 {

namespace enc = ::lance::pb::encodings20;

/// What an encoding inside one page may refer to.
struct PageContext {
  const ColumnData* column = nullptr;
  const PageData* page = nullptr;
  arrow::MemoryPool* pool = nullptr;
};

/// Parses a 2.0 page encoding (type URL "/lance.encodings.ArrayEncoding").
Result<enc::ArrayEncoding> ParsePageEncoding(const PageData& page);

/// Decodes `num_values` values of `type` described by `encoding`. Errors name
/// the problem (the caller adds the field and page).
Result<std::shared_ptr<arrow::ArrayData>> DecodeArray(const enc::ArrayEncoding& encoding,
                                                      const std::shared_ptr<arrow::DataType>& type,
                                                      uint64_t num_values, const PageContext& ctx);

/// Decodes `num_values` fixed-width values of `bits_per_value` bits (1 = an
/// LSB-first bitmap) into one buffer of exactly the needed size: Flat
/// (optionally compressed), Bitpacked, BitpackedForNonNeg, Constant, or a
/// Nullable around one of those (whose validity is ignored).
Result<std::shared_ptr<arrow::Buffer>> DecodeFixedWidth(const enc::ArrayEncoding& encoding,
                                                        uint64_t bits_per_value, uint64_t num_values,
                                                        const PageContext& ctx);

/// Builds a binary-like array of `type` (utf8, binary or their large forms)
/// from `num_values + 1` u64 offsets into `data`; errors when the bytes do not
/// fit 32-bit offsets. `validity` may be null when `null_count` is 0.
Result<std::shared_ptr<arrow::ArrayData>> MakeBinaryArray(
    const std::shared_ptr<arrow::DataType>& type, uint64_t num_values,
    const std::vector<uint64_t>& offsets, std::shared_ptr<arrow::Buffer> data,
    std::shared_ptr<arrow::Buffer> validity, int64_t null_count, arrow::MemoryPool* pool);

/// The oneof case of an encoding, for messages ("flat", "nullable", ...).
std::string EncodingName(const enc::ArrayEncoding& encoding);

}  // namespace lance::file::v2_0
