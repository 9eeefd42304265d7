// The array encoders of file version 2.0: one page's values -> an
// ArrayEncoding and its buffers, choosing encodings as the reference's
// "legacy" strategy does by default (plain values, validity bitmaps, binary
// with null-adjusted offsets, dictionaries for Arrow dictionary arrays and for
// low-cardinality utf8, fixed-size lists; general compression only where the
// field metadata asks for it).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <arrow/array.h>
#include <arrow/buffer.h>

#include "lance/encodings_v2_0.pb.h"
#include "lance/schema.h"
#include "lance/status.h"

namespace lance::file::v2_0 {

inline constexpr const char* kArrayEncodingTypeUrl = "/lance.encodings.ArrayEncoding";

struct EncodedValues {
  pb::encodings20::ArrayEncoding encoding;
  /// In buffer-index order (the encoding's Buffer.buffer_index).
  std::vector<std::shared_ptr<arrow::Buffer>> buffers;
};

/// Encodes the arrays a column accumulated for one page (same type, in
/// order) as one page. `field` supplies the metadata knobs (compression).
/// `whole`: the array a lone page's values were cut from (its validity
/// decides whether the page carries one).
Result<EncodedValues> EncodePageValues(const arrow::ArrayVector& arrays, const Field& field,
                                       const arrow::Array* whole = nullptr);

/// Bytes the reference counts for an array when deciding to flush a page
/// (get_array_memory_size of the array as it imports it: buffers as long as
/// offset + length need, plus the sizes of its Rust array structs). A slice
/// keeps its parent's buffers there, so callers pass the unsliced array.
uint64_t ArrayMemorySize(const arrow::Array& array);
/// The same without the structs (get_buffer_memory_size), for page splits.
uint64_t ArrayBufferSize(const arrow::Array& array);

}  // namespace lance::file::v2_0
