// ArrayEncoding trees of 2.0 pages -> Arrow data.
//
// Layouts (what the reference's 2.0 writer emits, and what older writers did):
//  * Nullable{no_nulls{values} | some_nulls{validity: Flat(1), values} | all_nulls}
//    around the values of fixed-width types and fixed-size lists.
//  * Flat{bits_per_value, buffer, compression}: n values back to back; 1 bit =
//    an LSB-first bitmap; with compression (zstd/lz4) the buffer is one
//    compressed frame of all values.
//  * Binary{indices: u64 end offsets (no leading 0), bytes: Flat(8), null_adjustment}:
//    a null value's end offset is stored plus null_adjustment.
//  * Dictionary{indices, items, num_dictionary_items}: for Arrow dictionary
//    columns indices are the keys (nulls are a null item); otherwise (utf8
//    auto-dictionary) index 0 is null and item k is index k+1.
//  * FixedSizeList{dimension, items}, PackedStruct{inner, buffer} (row-major
//    fixed-width children), FixedSizeBinary{bytes, byte_width} for variable
//    binary of one width, Fsst{binary, symbol_table}, Constant{value},
//    Bitpacked and BitpackedForNonNeg.
#include "lance/file/v2_0/array_decoder.h"
#include "lance/util/protobuf.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <string_view>
#include <type_traits>
#include <vector>

#include <arrow/array.h>
#include <arrow/array/util.h>
#include <arrow/type.h>
#include <arrow/util/bit_util.h>
#include <arrow/util/bitmap_ops.h>

#include "lance/file/compression/fsst.h"
#include "lance/file/compression/general.h"
#include "lance/file/v2_0/bitpacked.h"

namespace lance::file::v2_0 {
namespace {

static_assert(std::endian::native == std::endian::little, "2.0 buffers are little-endian");

// More values than any page holds; keeps size products far from overflow.
constexpr uint64_t kMaxValues = uint64_t{1} << 40;
// Deeper encodings than any writer produces are treated as corrupt.
constexpr int kMaxDepth = 24;

using ArrayDataPtr = std::shared_ptr<arrow::ArrayData>;
using BufferPtr = std::shared_ptr<arrow::Buffer>;
using TypePtr = std::shared_ptr<arrow::DataType>;

template <typename T>
T LoadAt(const uint8_t* base, uint64_t index) {
  T value;
  std::memcpy(&value, base + index * sizeof(T), sizeof(T));
  return value;
}

bool IsBinaryLike(arrow::Type::type id) {
  return id == arrow::Type::STRING || id == arrow::Type::BINARY || id == arrow::Type::LARGE_STRING ||
         id == arrow::Type::LARGE_BINARY;
}

bool IsLargeBinaryLike(arrow::Type::type id) {
  return id == arrow::Type::LARGE_STRING || id == arrow::Type::LARGE_BINARY;
}

// Bits per value of a type stored as one fixed-width buffer, or 0.
uint64_t FixedWidthBits(const arrow::DataType& type) {
  switch (type.id()) {
    case arrow::Type::BOOL:
      return 1;
    case arrow::Type::INT8:
    case arrow::Type::UINT8:
    case arrow::Type::INT16:
    case arrow::Type::UINT16:
    case arrow::Type::INT32:
    case arrow::Type::UINT32:
    case arrow::Type::INT64:
    case arrow::Type::UINT64:
    case arrow::Type::HALF_FLOAT:
    case arrow::Type::FLOAT:
    case arrow::Type::DOUBLE:
    case arrow::Type::DATE32:
    case arrow::Type::DATE64:
    case arrow::Type::TIME32:
    case arrow::Type::TIME64:
    case arrow::Type::TIMESTAMP:
    case arrow::Type::DURATION:
    case arrow::Type::INTERVAL_MONTHS:
    case arrow::Type::INTERVAL_DAY_TIME:
    case arrow::Type::INTERVAL_MONTH_DAY_NANO:
    case arrow::Type::DECIMAL32:
    case arrow::Type::DECIMAL64:
    case arrow::Type::DECIMAL128:
    case arrow::Type::DECIMAL256:
    case arrow::Type::FIXED_SIZE_BINARY:
      return static_cast<uint64_t>(static_cast<const arrow::FixedWidthType&>(type).bit_width());
    default:
      return 0;
  }
}

// a * b, or an error when the product does not fit (corrupt sizes).
Result<uint64_t> Mul(uint64_t a, uint64_t b) {
  uint64_t product;
  if (__builtin_mul_overflow(a, b, &product) || product > (uint64_t{1} << 62)) {
    return Status::Invalid("size ", a, " x ", b, " is absurd");
  }
  return product;
}

// Bytes of `num_values` values of `bits` bits (1 = a bitmap).
Result<uint64_t> ValueBytes(uint64_t bits, uint64_t num_values) {
  if (bits == 1) return (num_values + 7) / 8;
  return Mul(num_values, bits / 8);
}

// Byte width of a type packed into a PackedStruct row, or 0 if it cannot be.
uint64_t PackedByteWidth(const arrow::DataType& type) {
  if (type.id() == arrow::Type::FIXED_SIZE_LIST) {
    const auto& fsl = static_cast<const arrow::FixedSizeListType&>(type);
    auto width = Mul(PackedByteWidth(*fsl.value_type()), static_cast<uint64_t>(fsl.list_size()));
    return width.ok() ? *width : 0;
  }
  const uint64_t bits = FixedWidthBits(type);
  return bits % 8 == 0 ? bits / 8 : 0;
}

Status CheckCount(uint64_t num_values) {
  if (num_values > kMaxValues) return Status::Invalid("absurd value count ", num_values);
  return Status::OK();
}

Result<BufferPtr> Allocate(uint64_t bytes, arrow::MemoryPool* pool, bool zero = false) {
  LANCE_ASSIGN_OR_RAISE(auto buffer, arrow::AllocateBuffer(static_cast<int64_t>(bytes), pool));
  if (zero && bytes > 0) std::memset(buffer->mutable_data(), 0, bytes);
  return BufferPtr(std::move(buffer));
}

Result<BufferPtr> GetBuffer(const enc::Buffer& desc, const PageContext& ctx) {
  const uint32_t index = desc.buffer_index();
  switch (desc.buffer_type()) {
    case enc::Buffer::page: {
      const auto& buffers = ctx.page->buffers;
      if (index >= buffers.size()) {
        return Status::Invalid("page buffer ", index, " does not exist (the page has ", buffers.size(),
                               " buffers)");
      }
      if (!buffers[index]) return Status::Invalid("page buffer ", index, " was not loaded");
      return buffers[index];
    }
    case enc::Buffer::column: {
      const auto& buffers = ctx.column->buffers;
      if (index >= buffers.size()) {
        return Status::Invalid("column buffer ", index, " does not exist (the column has ",
                               buffers.size(), " buffers)");
      }
      if (!buffers[index]) return Status::Invalid("column buffer ", index, " was not loaded");
      return buffers[index];
    }
    case enc::Buffer::file:
      return Status::NotImplemented("file-level buffers (buffer ", index,
                                    " of type file) are not supported in 2.0 pages");
    default:
      return Status::Invalid("unknown buffer type ", static_cast<int>(desc.buffer_type()));
  }
}

// A zero-copy slice when the bytes are aligned for their values, else a copy.
Result<BufferPtr> SliceAligned(const BufferPtr& buffer, uint64_t bytes, uint64_t value_bytes,
                               arrow::MemoryPool* pool) {
  const uint64_t align = std::min<uint64_t>(std::max<uint64_t>(value_bytes, 1), 8);
  if (reinterpret_cast<uintptr_t>(buffer->data()) % align == 0) {
    return arrow::SliceBuffer(buffer, 0, static_cast<int64_t>(bytes));
  }
  LANCE_ASSIGN_OR_RAISE(auto copy, Allocate(bytes, pool));
  if (bytes > 0) std::memcpy(copy->mutable_data(), buffer->data(), bytes);
  return copy;
}

Result<BufferPtr> DecodeFlat(const enc::Flat& flat, uint64_t bits, uint64_t num_values,
                             const PageContext& ctx) {
  if (flat.bits_per_value() != bits) {
    return Status::Invalid("Flat has ", flat.bits_per_value(), " bits per value where ", bits,
                           " are expected");
  }
  if (!flat.has_buffer()) return Status::Invalid("Flat has no buffer");
  LANCE_ASSIGN_OR_RAISE(auto buffer, GetBuffer(flat.buffer(), ctx));
  LANCE_ASSIGN_OR_RAISE(const uint64_t needed, ValueBytes(bits, num_values));
  std::string_view scheme = flat.has_compression() ? std::string_view(flat.compression().scheme())
                                                   : std::string_view();
  if (!scheme.empty() && scheme != "none") {
    compression::GeneralCodec codec;
    if (scheme == "zstd") {
      codec = compression::GeneralCodec::kZstd;
    } else if (scheme == "lz4") {
      codec = compression::GeneralCodec::kLz4;
    } else {
      return Status::Invalid("unknown compression scheme '", scheme, "' in Flat");
    }
    if (needed == 0) return Allocate(0, ctx.pool);
    LANCE_ASSIGN_OR_RAISE(
        buffer, compression::GeneralDecompress(
                    codec,
                    std::string_view(reinterpret_cast<const char*>(buffer->data()),
                                     static_cast<size_t>(buffer->size())),
                    ctx.pool));
    if (static_cast<uint64_t>(buffer->size()) < needed) {
      return Status::Invalid(scheme, " Flat buffer decompresses to ", buffer->size(), " bytes, ",
                             needed, " needed for ", num_values, " values of ", bits, " bits");
    }
  } else if (static_cast<uint64_t>(buffer->size()) < needed) {
    return Status::Invalid("Flat buffer has ", buffer->size(), " bytes, ", needed, " needed for ",
                           num_values, " values of ", bits, " bits");
  }
  return SliceAligned(buffer, needed, bits / 8, ctx.pool);
}

Result<BufferPtr> DecodeConstant(const enc::Constant& constant, uint64_t bits, uint64_t num_values,
                                 arrow::MemoryPool* pool) {
  const std::string& value = constant.value();
  if (bits == 1) {
    if (value.size() != 1) return Status::Invalid("Constant boolean has ", value.size(), " bytes");
    const uint64_t bytes = (num_values + 7) / 8;
    LANCE_ASSIGN_OR_RAISE(auto out, Allocate(bytes, pool));
    if (bytes > 0) std::memset(out->mutable_data(), value[0] != 0 ? 0xFF : 0x00, bytes);
    return out;
  }
  if (value.size() * 8 != bits) {
    return Status::Invalid("Constant value has ", value.size(), " bytes where ", bits / 8,
                           " are expected");
  }
  LANCE_ASSIGN_OR_RAISE(const uint64_t bytes, Mul(num_values, value.size()));
  LANCE_ASSIGN_OR_RAISE(auto out, Allocate(bytes, pool));
  for (uint64_t i = 0; i < num_values; ++i) {
    std::memcpy(out->mutable_data() + i * value.size(), value.data(), value.size());
  }
  return out;
}

// The width in bits of the values an encoding holds, when it says so.
uint64_t EncodedBits(const enc::ArrayEncoding& encoding, int depth = 0) {
  if (depth > kMaxDepth) return 0;
  switch (encoding.array_encoding_case()) {
    case enc::ArrayEncoding::kFlat:
      return encoding.flat().bits_per_value();
    case enc::ArrayEncoding::kBitpacked:
      return encoding.bitpacked().uncompressed_bits_per_value();
    case enc::ArrayEncoding::kBitpackedForNonNeg:
      return encoding.bitpacked_for_non_neg().uncompressed_bits_per_value();
    case enc::ArrayEncoding::kConstant:
      return encoding.constant().value().size() * 8;
    case enc::ArrayEncoding::kNullable: {
      const auto& nullable = encoding.nullable();
      if (nullable.has_no_nulls()) return EncodedBits(nullable.no_nulls().values(), depth + 1);
      if (nullable.has_some_nulls()) return EncodedBits(nullable.some_nulls().values(), depth + 1);
      return 0;
    }
    default:
      return 0;
  }
}

Result<BufferPtr> DecodeFixedWidthImpl(const enc::ArrayEncoding& encoding, uint64_t bits,
                                       uint64_t num_values, const PageContext& ctx, int depth) {
  if (depth > kMaxDepth) return Status::Invalid("encoding nested deeper than ", kMaxDepth);
  LANCE_RETURN_NOT_OK(CheckCount(num_values));
  if (bits == 0 || (bits != 1 && bits % 8 != 0)) {
    return Status::Invalid("fixed-width values of ", bits, " bits are not supported");
  }
  switch (encoding.array_encoding_case()) {
    case enc::ArrayEncoding::kFlat:
      return DecodeFlat(encoding.flat(), bits, num_values, ctx);
    case enc::ArrayEncoding::kConstant:
      return DecodeConstant(encoding.constant(), bits, num_values, ctx.pool);
    case enc::ArrayEncoding::kBitpacked: {
      const auto& bp = encoding.bitpacked();
      if (bp.uncompressed_bits_per_value() != bits) {
        return Status::Invalid("Bitpacked unpacks to ", bp.uncompressed_bits_per_value(),
                               " bits per value where ", bits, " are expected");
      }
      if (!bp.has_buffer()) return Status::Invalid("Bitpacked has no buffer");
      LANCE_ASSIGN_OR_RAISE(auto buffer, GetBuffer(bp.buffer(), ctx));
      return UnpackSequentialBits(std::span<const uint8_t>(buffer->data(), buffer->size()),
                                  bp.compressed_bits_per_value(), bits, bp.signed_(), num_values,
                                  ctx.pool);
    }
    case enc::ArrayEncoding::kBitpackedForNonNeg: {
      const auto& bp = encoding.bitpacked_for_non_neg();
      if (bp.uncompressed_bits_per_value() != bits) {
        return Status::Invalid("BitpackedForNonNeg unpacks to ", bp.uncompressed_bits_per_value(),
                               " bits per value where ", bits, " are expected");
      }
      if (!bp.has_buffer()) return Status::Invalid("BitpackedForNonNeg has no buffer");
      LANCE_ASSIGN_OR_RAISE(auto buffer, GetBuffer(bp.buffer(), ctx));
      return UnpackFastLanesBlocks(std::span<const uint8_t>(buffer->data(), buffer->size()),
                                   bp.compressed_bits_per_value(), bits, num_values, ctx.pool);
    }
    case enc::ArrayEncoding::kNullable: {
      const auto& nullable = encoding.nullable();
      if (nullable.has_no_nulls()) {
        return DecodeFixedWidthImpl(nullable.no_nulls().values(), bits, num_values, ctx, depth + 1);
      }
      if (nullable.has_some_nulls()) {
        return DecodeFixedWidthImpl(nullable.some_nulls().values(), bits, num_values, ctx, depth + 1);
      }
      if (nullable.has_all_nulls()) {
        LANCE_ASSIGN_OR_RAISE(const uint64_t bytes, ValueBytes(bits, num_values));
        return Allocate(bytes, ctx.pool, /*zero=*/true);
      }
      return Status::Invalid("Nullable has no nullability case");
    }
    case enc::ArrayEncoding::ARRAY_ENCODING_NOT_SET:
      return Status::Invalid("encoding is empty or of an unknown kind");
    default:
      return Status::Invalid("expected a fixed-width encoding (flat, bitpacked, constant) but found ",
                             EncodingName(encoding));
  }
}

// ---------------------------------------------------------------- validity

// ANDs `validity` (num_values bits at offset 0) into the array's own validity.
Status ApplyValidity(const BufferPtr& validity, uint64_t num_values, ArrayDataPtr* data,
                     arrow::MemoryPool* pool) {
  auto& out = **data;
  if (out.type->id() == arrow::Type::NA) return Status::OK();
  BufferPtr merged = validity;
  if (!out.buffers.empty() && out.buffers[0]) {
    LANCE_ASSIGN_OR_RAISE(merged, arrow::internal::BitmapAnd(pool, validity->data(), 0,
                                                             out.buffers[0]->data(), out.offset,
                                                             static_cast<int64_t>(num_values), 0));
  }
  if (out.buffers.empty()) out.buffers.resize(1);
  const int64_t valid = arrow::internal::CountSetBits(merged->data(), 0, static_cast<int64_t>(num_values));
  out.null_count = static_cast<int64_t>(num_values) - valid;
  out.buffers[0] = out.null_count == 0 ? nullptr : merged;
  out.offset = 0;
  return Status::OK();
}

// ------------------------------------------------------------ variable width

// Reads the offsets of a binary-like ArrayData (offset 0) as u64.
std::vector<uint64_t> ReadOffsets(const arrow::ArrayData& data) {
  std::vector<uint64_t> out(static_cast<size_t>(data.length) + 1);
  const uint8_t* base = data.buffers[1]->data();
  const bool large = IsLargeBinaryLike(data.type->id());
  for (size_t i = 0; i < out.size(); ++i) {
    out[i] = large ? static_cast<uint64_t>(LoadAt<int64_t>(base, data.offset + i))
                   : static_cast<uint64_t>(LoadAt<int32_t>(base, data.offset + i));
  }
  return out;
}

Result<ArrayDataPtr> DecodeBinary(const enc::Binary& binary, const TypePtr& type, uint64_t num_values,
                                  const PageContext& ctx, int depth) {
  if (!binary.has_indices()) return Status::Invalid("Binary has no indices");
  if (!binary.has_bytes()) return Status::Invalid("Binary has no bytes");
  LANCE_ASSIGN_OR_RAISE(auto indices,
                        DecodeFixedWidthImpl(binary.indices(), 64, num_values, ctx, depth + 1));
  const uint64_t adjustment = binary.null_adjustment();
  std::vector<uint64_t> offsets(num_values + 1, 0);
  BufferPtr validity;
  int64_t null_count = 0;
  for (uint64_t i = 0; i < num_values; ++i) {
    uint64_t end = LoadAt<uint64_t>(indices->data(), i);
    if (end >= adjustment) {
      end -= adjustment;
      if (adjustment > 0 && end >= adjustment) {
        return Status::Invalid("Binary offset ", end + adjustment, " of value ", i,
                               " is past twice the null adjustment ", adjustment);
      }
      if (!validity) {
        LANCE_ASSIGN_OR_RAISE(validity, Allocate((num_values + 7) / 8, ctx.pool));
        arrow::bit_util::SetBitsTo(validity->mutable_data(), 0, static_cast<int64_t>(num_values), true);
      }
      arrow::bit_util::ClearBit(validity->mutable_data(), static_cast<int64_t>(i));
      ++null_count;
    }
    if (end < offsets[i]) {
      return Status::Invalid("Binary offsets decrease at value ", i, " (", offsets[i], " then ", end,
                             ")");
    }
    offsets[i + 1] = end;
  }
  const uint64_t total = offsets[num_values];
  BufferPtr bytes;
  if (total > 0) {
    LANCE_ASSIGN_OR_RAISE(bytes, DecodeFixedWidthImpl(binary.bytes(), 8, total, ctx, depth + 1));
  }
  return MakeBinaryArray(type, num_values, offsets, bytes, validity, null_count, ctx.pool);
}

Result<ArrayDataPtr> DecodeFsst(const enc::Fsst& fsst, const TypePtr& type, uint64_t num_values,
                                const PageContext& ctx, int depth);
Result<ArrayDataPtr> DecodeImpl(const enc::ArrayEncoding& encoding, const TypePtr& type,
                                uint64_t num_values, const PageContext& ctx, int depth);

Result<ArrayDataPtr> DecodeFsst(const enc::Fsst& fsst, const TypePtr& type, uint64_t num_values,
                                const PageContext& ctx, int depth) {
  if (!fsst.has_binary()) return Status::Invalid("Fsst has no inner binary encoding");
  LANCE_ASSIGN_OR_RAISE(auto inner, DecodeImpl(fsst.binary(), type, num_values, ctx, depth + 1));
  const std::vector<uint64_t> offsets = ReadOffsets(*inner);
  const auto& data = inner->buffers[2];
  std::string_view bytes = data ? std::string_view(reinterpret_cast<const char*>(data->data()),
                                                   static_cast<size_t>(data->size()))
                                : std::string_view();
  if (offsets.size() != num_values + 1) {
    return Status::Invalid("FSST values have ", offsets.size(), " offsets for ", num_values, " values");
  }
  // Decoded straight into the output buffer; the decoder's ends never
  // decrease and stay inside it, so they need no second check.
  LANCE_ASSIGN_OR_RAISE(auto decoder, compression::FsstDecoder::Make(fsst.symbol_table()));
  LANCE_ASSIGN_OR_RAISE(std::shared_ptr<arrow::ResizableBuffer> out_bytes,
                        arrow::AllocateResizableBuffer(0, ctx.pool));
  std::vector<uint64_t> plain(num_values + 1, 0);
  LANCE_RETURN_NOT_OK(decoder.DecompressAppend(reinterpret_cast<const uint8_t*>(offsets.data()), 8, num_values,
                                               bytes, out_bytes.get(), plain.data() + 1));
  return MakeBinaryArray(type, num_values, plain, std::move(out_bytes), inner->buffers[0],
                         inner->buffers[0] ? inner->GetNullCount() : 0, ctx.pool);
}

Result<ArrayDataPtr> DecodeFixedSizeBinary(const enc::FixedSizeBinary& fsb, const TypePtr& type,
                                           uint64_t num_values, const PageContext& ctx, int depth) {
  if (!fsb.has_bytes()) return Status::Invalid("FixedSizeBinary has no bytes");
  const uint64_t width = fsb.byte_width();
  if (width == 0 || width > (uint64_t{1} << 24)) {
    return Status::Invalid("FixedSizeBinary byte width ", width, " is not supported");
  }
  LANCE_ASSIGN_OR_RAISE(auto bytes, DecodeFixedWidthImpl(fsb.bytes(), width * 8, num_values, ctx, depth + 1));
  std::vector<uint64_t> offsets(num_values + 1);
  for (uint64_t i = 0; i <= num_values; ++i) offsets[i] = i * width;
  return MakeBinaryArray(type, num_values, offsets, bytes, nullptr, 0, ctx.pool);
}

// ------------------------------------------------------------- dictionaries

// Utf8 auto-dictionary: index 0 is null, index k is item k-1.
Result<ArrayDataPtr> DecodeAutoDictionary(const enc::Dictionary& dict, const TypePtr& type,
                                          uint64_t num_values, const PageContext& ctx, int depth) {
  if (!dict.has_indices()) return Status::Invalid("Dictionary has no indices");
  if (!dict.has_items()) return Status::Invalid("Dictionary has no items");
  const uint64_t num_items = dict.num_dictionary_items();
  LANCE_ASSIGN_OR_RAISE(auto items, DecodeImpl(dict.items(), type, num_items, ctx, depth + 1));
  const uint64_t bits = EncodedBits(dict.indices());
  if (bits != 8 && bits != 16 && bits != 32 && bits != 64) {
    return Status::Invalid("Dictionary indices of ", bits, " bits are not supported");
  }
  const TypePtr index_type = bits == 8 ? arrow::uint8() : bits == 16 ? arrow::uint16()
                            : bits == 32 ? arrow::uint32() : arrow::uint64();
  // A null index (should the indices carry validity) is a null value too.
  LANCE_ASSIGN_OR_RAISE(auto index_data, DecodeImpl(dict.indices(), index_type, num_values, ctx, depth + 1));
  const auto& indices = index_data->buffers[1];
  const uint8_t* index_validity = index_data->buffers[0] ? index_data->buffers[0]->data() : nullptr;
  const std::vector<uint64_t> item_offsets = ReadOffsets(*items);
  const uint8_t* item_validity = items->buffers[0] ? items->buffers[0]->data() : nullptr;
  const uint8_t* item_bytes = items->buffers[2] ? items->buffers[2]->data() : nullptr;

  auto index_at = [&](uint64_t i) -> uint64_t {
    switch (bits) {
      case 8: return LoadAt<uint8_t>(indices->data(), i);
      case 16: return LoadAt<uint16_t>(indices->data(), i);
      case 32: return LoadAt<uint32_t>(indices->data(), i);
      default: return LoadAt<uint64_t>(indices->data(), i);
    }
  };
  std::vector<uint64_t> offsets(num_values + 1, 0);
  LANCE_ASSIGN_OR_RAISE(auto validity, Allocate((num_values + 7) / 8, ctx.pool));
  arrow::bit_util::SetBitsTo(validity->mutable_data(), 0, static_cast<int64_t>(num_values), true);
  int64_t null_count = 0;
  for (uint64_t i = 0; i < num_values; ++i) {
    const bool index_valid = !index_validity || arrow::bit_util::GetBit(index_validity, static_cast<int64_t>(i));
    const uint64_t index = index_valid ? index_at(i) : 0;
    uint64_t length = 0;
    if (index > num_items) {
      return Status::Invalid("dictionary index ", index, " of value ", i, " is out of range (",
                             num_items, " items; index 0 is null)");
    }
    if (index == 0 || (item_validity && !arrow::bit_util::GetBit(item_validity, index - 1))) {
      arrow::bit_util::ClearBit(validity->mutable_data(), static_cast<int64_t>(i));
      ++null_count;
    } else {
      length = item_offsets[index] - item_offsets[index - 1];
    }
    offsets[i + 1] = offsets[i] + length;
  }
  LANCE_ASSIGN_OR_RAISE(auto bytes, Allocate(offsets[num_values], ctx.pool));
  for (uint64_t i = 0; i < num_values; ++i) {
    const uint64_t length = offsets[i + 1] - offsets[i];
    if (length > 0) {
      const uint64_t index = index_at(i);  // valid: only valid values have bytes
      std::memcpy(bytes->mutable_data() + offsets[i], item_bytes + item_offsets[index - 1], length);
    }
  }
  return MakeBinaryArray(type, num_values, offsets, bytes, validity, null_count, ctx.pool);
}

template <typename Index>
Status CheckKeys(const arrow::ArrayData& keys, uint64_t num_items, const uint8_t* item_validity,
                 uint8_t* logical_validity, int64_t* null_count) {
  const uint8_t* values = keys.buffers[1]->data();
  const uint8_t* validity = keys.buffers[0] ? keys.buffers[0]->data() : nullptr;
  for (int64_t i = 0; i < keys.length; ++i) {
    if (validity && !arrow::bit_util::GetBit(validity, keys.offset + i)) {
      arrow::bit_util::ClearBit(logical_validity, i);
      ++*null_count;
      continue;
    }
    const Index key = LoadAt<Index>(values, keys.offset + i);
    if constexpr (std::is_signed_v<Index>) {
      if (key < 0) {
        return Status::Invalid("dictionary key ", static_cast<int64_t>(key), " of value ", i, " is negative");
      }
    }
    if (static_cast<uint64_t>(key) >= num_items) {
      return Status::Invalid("dictionary key ", static_cast<uint64_t>(key), " of value ", i,
                             " is out of range (", num_items, " items)");
    }
    if (item_validity && !arrow::bit_util::GetBit(item_validity, static_cast<int64_t>(key))) {
      arrow::bit_util::ClearBit(logical_validity, i);
      ++*null_count;
    }
  }
  return Status::OK();
}

// An Arrow dictionary column: keys and items as written; nulls live among the
// items and are copied into the keys' validity, as the reference reads them.
Result<ArrayDataPtr> DecodeArrowDictionary(const enc::Dictionary& dict, const TypePtr& type,
                                           uint64_t num_values, const PageContext& ctx, int depth) {
  if (!dict.has_indices()) return Status::Invalid("Dictionary has no indices");
  if (!dict.has_items()) return Status::Invalid("Dictionary has no items");
  const auto& dict_type = static_cast<const arrow::DictionaryType&>(*type);
  const uint64_t num_items = dict.num_dictionary_items();
  LANCE_ASSIGN_OR_RAISE(auto items, DecodeImpl(dict.items(), dict_type.value_type(), num_items, ctx, depth + 1));
  LANCE_ASSIGN_OR_RAISE(auto keys, DecodeImpl(dict.indices(), dict_type.index_type(), num_values, ctx, depth + 1));
  const uint8_t* item_validity = items->buffers.empty() || !items->buffers[0] ? nullptr : items->buffers[0]->data();
  LANCE_ASSIGN_OR_RAISE(auto validity, Allocate((num_values + 7) / 8, ctx.pool));
  arrow::bit_util::SetBitsTo(validity->mutable_data(), 0, static_cast<int64_t>(num_values), true);
  int64_t null_count = 0;
  uint8_t* v = validity->mutable_data();
  Status st;
  switch (dict_type.index_type()->id()) {
    case arrow::Type::INT8: st = CheckKeys<int8_t>(*keys, num_items, item_validity, v, &null_count); break;
    case arrow::Type::UINT8: st = CheckKeys<uint8_t>(*keys, num_items, item_validity, v, &null_count); break;
    case arrow::Type::INT16: st = CheckKeys<int16_t>(*keys, num_items, item_validity, v, &null_count); break;
    case arrow::Type::UINT16: st = CheckKeys<uint16_t>(*keys, num_items, item_validity, v, &null_count); break;
    case arrow::Type::INT32: st = CheckKeys<int32_t>(*keys, num_items, item_validity, v, &null_count); break;
    case arrow::Type::UINT32: st = CheckKeys<uint32_t>(*keys, num_items, item_validity, v, &null_count); break;
    case arrow::Type::INT64: st = CheckKeys<int64_t>(*keys, num_items, item_validity, v, &null_count); break;
    case arrow::Type::UINT64: st = CheckKeys<uint64_t>(*keys, num_items, item_validity, v, &null_count); break;
    default:
      return Status::Invalid("dictionary index type ", dict_type.index_type()->ToString(),
                             " is not an integer");
  }
  LANCE_RETURN_NOT_OK(st);
  auto out = arrow::ArrayData::Make(type, static_cast<int64_t>(num_values),
                                    {null_count > 0 ? validity : nullptr, keys->buffers[1]}, null_count,
                                    keys->offset);
  out->dictionary = items;
  return out;
}

// --------------------------------------------------------------- structures

// A fixed-width or fixed-size-list array of `type` over `bytes` (row-major).
Result<ArrayDataPtr> MakeFixedArray(const TypePtr& type, uint64_t num_values, BufferPtr bytes) {
  if (type->id() == arrow::Type::FIXED_SIZE_LIST) {
    const auto& fsl = static_cast<const arrow::FixedSizeListType&>(*type);
    LANCE_ASSIGN_OR_RAISE(const uint64_t num_items, Mul(num_values, static_cast<uint64_t>(fsl.list_size())));
    LANCE_ASSIGN_OR_RAISE(auto child, MakeFixedArray(fsl.value_type(), num_items, std::move(bytes)));
    return arrow::ArrayData::Make(type, static_cast<int64_t>(num_values), {nullptr}, {child}, 0);
  }
  return arrow::ArrayData::Make(type, static_cast<int64_t>(num_values), {nullptr, std::move(bytes)}, 0);
}

Result<ArrayDataPtr> DecodePackedStruct(const enc::PackedStruct& packed, const TypePtr& type,
                                        uint64_t num_values, const PageContext& ctx) {
  if (type->id() != arrow::Type::STRUCT) {
    return Status::Invalid("PackedStruct in a column of type ", type->ToString());
  }
  std::vector<uint64_t> widths;
  uint64_t row_bytes = 0;
  for (const auto& child : type->fields()) {
    const uint64_t width = PackedByteWidth(*child->type());
    if (width == 0) {
      return Status::NotImplemented("packed struct child '", child->name(), "' of type ",
                                    child->type()->ToString(), " has no fixed byte width");
    }
    widths.push_back(width);
    row_bytes += width;
    if (row_bytes > (uint64_t{1} << 40)) return Status::Invalid("packed struct rows of absurd width");
  }
  if (!packed.has_buffer()) return Status::Invalid("PackedStruct has no buffer");
  LANCE_ASSIGN_OR_RAISE(auto buffer, GetBuffer(packed.buffer(), ctx));
  LANCE_ASSIGN_OR_RAISE(const uint64_t needed, Mul(row_bytes, num_values));
  if (static_cast<uint64_t>(buffer->size()) < needed) {
    return Status::Invalid("PackedStruct buffer has ", buffer->size(), " bytes, ", needed, " needed for ",
                           num_values, " rows of ", row_bytes, " bytes");
  }
  std::vector<ArrayDataPtr> children;
  uint64_t column_start = 0;
  for (int c = 0; c < type->num_fields(); ++c) {
    const uint64_t width = widths[c];
    LANCE_ASSIGN_OR_RAISE(auto bytes, Allocate(width * num_values, ctx.pool));
    for (uint64_t r = 0; r < num_values; ++r) {
      std::memcpy(bytes->mutable_data() + r * width, buffer->data() + r * row_bytes + column_start, width);
    }
    LANCE_ASSIGN_OR_RAISE(auto child, MakeFixedArray(type->field(c)->type(), num_values, bytes));
    children.push_back(std::move(child));
    column_start += width;
  }
  return arrow::ArrayData::Make(type, static_cast<int64_t>(num_values), {nullptr}, children, 0);
}

Result<ArrayDataPtr> DecodeFixedSizeList(const enc::FixedSizeList& fsl, const TypePtr& type,
                                         uint64_t num_values, const PageContext& ctx, int depth) {
  if (type->id() != arrow::Type::FIXED_SIZE_LIST) {
    return Status::Invalid("FixedSizeList in a column of type ", type->ToString());
  }
  const auto& list_type = static_cast<const arrow::FixedSizeListType&>(*type);
  if (fsl.dimension() != static_cast<uint32_t>(list_type.list_size())) {
    return Status::Invalid("FixedSizeList dimension ", fsl.dimension(), " but the type has ",
                           list_type.list_size());
  }
  if (!fsl.has_items()) return Status::Invalid("FixedSizeList has no items");
  LANCE_ASSIGN_OR_RAISE(const uint64_t num_items, Mul(num_values, fsl.dimension()));
  LANCE_ASSIGN_OR_RAISE(auto items, DecodeImpl(fsl.items(), list_type.value_type(), num_items, ctx, depth + 1));
  return arrow::ArrayData::Make(type, static_cast<int64_t>(num_values), {nullptr}, {items}, 0);
}

// ------------------------------------------------------------------ dispatch

Result<ArrayDataPtr> DecodeNullable(const enc::Nullable& nullable, const TypePtr& type,
                                    uint64_t num_values, const PageContext& ctx, int depth) {
  switch (nullable.nullability_case()) {
    case enc::Nullable::kNoNulls:
      if (!nullable.no_nulls().has_values()) return Status::Invalid("Nullable.no_nulls has no values");
      return DecodeImpl(nullable.no_nulls().values(), type, num_values, ctx, depth + 1);
    case enc::Nullable::kSomeNulls: {
      const auto& some = nullable.some_nulls();
      if (!some.has_validity()) return Status::Invalid("Nullable.some_nulls has no validity");
      if (!some.has_values()) return Status::Invalid("Nullable.some_nulls has no values");
      LANCE_ASSIGN_OR_RAISE(auto validity, DecodeFixedWidthImpl(some.validity(), 1, num_values, ctx, depth + 1));
      LANCE_ASSIGN_OR_RAISE(auto values, DecodeImpl(some.values(), type, num_values, ctx, depth + 1));
      LANCE_RETURN_NOT_OK(ApplyValidity(validity, num_values, &values, ctx.pool));
      return values;
    }
    case enc::Nullable::kAllNulls: {
      LANCE_ASSIGN_OR_RAISE(auto nulls, arrow::MakeArrayOfNull(type, static_cast<int64_t>(num_values), ctx.pool));
      return nulls->data();
    }
    default:
      return Status::Invalid("Nullable has no nullability case");
  }
}

Result<ArrayDataPtr> DecodeImpl(const enc::ArrayEncoding& encoding, const TypePtr& type,
                                uint64_t num_values, const PageContext& ctx, int depth) {
  if (depth > kMaxDepth) return Status::Invalid("encoding nested deeper than ", kMaxDepth);
  LANCE_RETURN_NOT_OK(CheckCount(num_values));
  const auto id = type->id();
  switch (encoding.array_encoding_case()) {
    case enc::ArrayEncoding::kNullable:
      return DecodeNullable(encoding.nullable(), type, num_values, ctx, depth);
    case enc::ArrayEncoding::kFlat:
    case enc::ArrayEncoding::kBitpacked:
    case enc::ArrayEncoding::kBitpackedForNonNeg:
    case enc::ArrayEncoding::kConstant: {
      const uint64_t bits = FixedWidthBits(*type);
      if (bits == 0) {
        return Status::Invalid(EncodingName(encoding), " encoding in a column of type ", type->ToString());
      }
      LANCE_ASSIGN_OR_RAISE(auto values, DecodeFixedWidthImpl(encoding, bits, num_values, ctx, depth));
      return arrow::ArrayData::Make(type, static_cast<int64_t>(num_values), {nullptr, values}, 0);
    }
    case enc::ArrayEncoding::kFixedSizeList:
      return DecodeFixedSizeList(encoding.fixed_size_list(), type, num_values, ctx, depth);
    case enc::ArrayEncoding::kBinary:
      if (!IsBinaryLike(id)) {
        return Status::Invalid("Binary encoding in a column of type ", type->ToString());
      }
      return DecodeBinary(encoding.binary(), type, num_values, ctx, depth);
    case enc::ArrayEncoding::kDictionary:
      if (id == arrow::Type::DICTIONARY) {
        return DecodeArrowDictionary(encoding.dictionary(), type, num_values, ctx, depth);
      }
      if (!IsBinaryLike(id)) {
        return Status::Invalid("Dictionary encoding in a column of type ", type->ToString());
      }
      return DecodeAutoDictionary(encoding.dictionary(), type, num_values, ctx, depth);
    case enc::ArrayEncoding::kFsst:
      if (!IsBinaryLike(id)) return Status::Invalid("Fsst encoding in a column of type ", type->ToString());
      return DecodeFsst(encoding.fsst(), type, num_values, ctx, depth);
    case enc::ArrayEncoding::kFixedSizeBinary:
      if (!IsBinaryLike(id)) {
        return Status::Invalid("FixedSizeBinary encoding in a column of type ", type->ToString());
      }
      return DecodeFixedSizeBinary(encoding.fixed_size_binary(), type, num_values, ctx, depth);
    case enc::ArrayEncoding::kPackedStruct:
      return DecodePackedStruct(encoding.packed_struct(), type, num_values, ctx);
    case enc::ArrayEncoding::kList:
    case enc::ArrayEncoding::kStruct:
      return Status::Invalid(EncodingName(encoding), " encoding in a column of type ", type->ToString());
    case enc::ArrayEncoding::ARRAY_ENCODING_NOT_SET:
      return Status::Invalid("encoding is empty or of an unknown kind");
    default:
      return Status::Invalid(EncodingName(encoding), " is not a 2.0 page encoding");
  }
}

}  // namespace

Result<ArrayDataPtr> MakeBinaryArray(const TypePtr& type, uint64_t num_values,
                                     const std::vector<uint64_t>& offsets, BufferPtr data,
                                     BufferPtr validity, int64_t null_count, arrow::MemoryPool* pool) {
  const uint64_t total = offsets.empty() ? 0 : offsets.back();
  const bool large = IsLargeBinaryLike(type->id());
  if (!large && total > static_cast<uint64_t>(std::numeric_limits<int32_t>::max())) {
    return Status::Invalid(total, " bytes of values do not fit the 32-bit offsets of ",
                           type->ToString(), " (use a large type)");
  }
  const uint64_t width = large ? 8 : 4;
  LANCE_ASSIGN_OR_RAISE(auto out_offsets, Allocate((num_values + 1) * width, pool));
  for (uint64_t i = 0; i <= num_values; ++i) {
    const uint64_t v = offsets.empty() ? 0 : offsets[i];
    if (large) {
      const int64_t o = static_cast<int64_t>(v);
      std::memcpy(out_offsets->mutable_data() + i * 8, &o, 8);
    } else {
      const int32_t o = static_cast<int32_t>(v);
      std::memcpy(out_offsets->mutable_data() + i * 4, &o, 4);
    }
  }
  if (!data) {
    LANCE_ASSIGN_OR_RAISE(data, Allocate(0, pool));
  }
  return arrow::ArrayData::Make(type, static_cast<int64_t>(num_values),
                                {null_count > 0 ? validity : nullptr, out_offsets, data}, null_count);
}

std::string EncodingName(const enc::ArrayEncoding& encoding) {
  switch (encoding.array_encoding_case()) {
    case enc::ArrayEncoding::kFlat: return "flat";
    case enc::ArrayEncoding::kNullable: return "nullable";
    case enc::ArrayEncoding::kFixedSizeList: return "fixed_size_list";
    case enc::ArrayEncoding::kList: return "list";
    case enc::ArrayEncoding::kStruct: return "struct";
    case enc::ArrayEncoding::kBinary: return "binary";
    case enc::ArrayEncoding::kDictionary: return "dictionary";
    case enc::ArrayEncoding::kFsst: return "fsst";
    case enc::ArrayEncoding::kPackedStruct: return "packed_struct";
    case enc::ArrayEncoding::kBitpacked: return "bitpacked";
    case enc::ArrayEncoding::kFixedSizeBinary: return "fixed_size_binary";
    case enc::ArrayEncoding::kBitpackedForNonNeg: return "bitpacked_for_non_neg";
    case enc::ArrayEncoding::kConstant: return "constant";
    case enc::ArrayEncoding::kInlineBitpacking: return "inline_bitpacking";
    case enc::ArrayEncoding::kOutOfLineBitpacking: return "out_of_line_bitpacking";
    case enc::ArrayEncoding::kVariable: return "variable";
    case enc::ArrayEncoding::kPackedStructFixedWidthMiniBlock: return "packed_struct_fixed_width_mini_block";
    case enc::ArrayEncoding::kBlock: return "block";
    case enc::ArrayEncoding::kRle: return "rle";
    case enc::ArrayEncoding::kGeneralMiniBlock: return "general_mini_block";
    case enc::ArrayEncoding::kByteStreamSplit: return "byte_stream_split";
    case enc::ArrayEncoding::ARRAY_ENCODING_NOT_SET: return "(none)";
  }
  return "(unknown)";
}

Result<enc::ArrayEncoding> ParsePageEncoding(const PageData& page) {
  constexpr std::string_view kName = "lance.encodings.ArrayEncoding";
  std::string_view url = page.encoding_type_url;
  std::string_view name = url.substr(url.find_last_of('/') == std::string_view::npos ? 0 : url.find_last_of('/') + 1);
  if (name != kName) {
    return Status::Invalid("page encoding has type '", url, "', expected '/", kName, "'");
  }
  enc::ArrayEncoding encoding;
  if (!util::ParseMessage(page.encoding, &encoding)) {
    return Status::Invalid("page encoding is not a valid ArrayEncoding message");
  }
  return encoding;
}

Result<std::shared_ptr<arrow::ArrayData>> DecodeArray(const enc::ArrayEncoding& encoding,
                                                      const std::shared_ptr<arrow::DataType>& type,
                                                      uint64_t num_values, const PageContext& ctx) {
  LANCE_ASSIGN_OR_RAISE(auto data, DecodeImpl(encoding, type, num_values, ctx, 0));
  if (data->length != static_cast<int64_t>(num_values)) {
    return Status::Invalid("decoded ", data->length, " values where ", num_values, " are expected");
  }
  return data;
}

Result<std::shared_ptr<arrow::Buffer>> DecodeFixedWidth(const enc::ArrayEncoding& encoding,
                                                        uint64_t bits_per_value, uint64_t num_values,
                                                        const PageContext& ctx) {
  return DecodeFixedWidthImpl(encoding, bits_per_value, num_values, ctx, 0);
}

}  // namespace lance::file::v2_0
