#include "lance/file/v2_0/take.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <string>

#include <arrow/array/concatenate.h>
#include <arrow/array/util.h>
#include <arrow/buffer.h>
#include <arrow/type.h>
#include <arrow/util/bit_util.h>
#include <arrow/util/bitmap_ops.h>

#include "lance/file/dictionary_join.h"
#include "lance/file/v2_0/array_decoder.h"
#include "lance/util/protobuf.h"

namespace lance::file::v2_0 {
namespace {

using ArrayDataPtr = std::shared_ptr<arrow::ArrayData>;
using BufferPtr = std::shared_ptr<arrow::Buffer>;
using TypePtr = std::shared_ptr<arrow::DataType>;
// (offset, size) of parts of one buffer, ascending by offset.
using Spans = std::vector<std::pair<uint64_t, uint64_t>>;

// More values than any column holds; keeps size products far from overflow.
constexpr uint64_t kMaxValues = uint64_t{1} << 40;
// Deeper encodings than any writer produces are not cut.
constexpr int kMaxDepth = 24;
// Spans of a buffer this close are read together: on a local file a read
// costs about as much as copying a few KiB.
constexpr uint64_t kGapBytes = 8 * 1024;

uint64_t Rows(const RowRanges& ranges) {
  uint64_t n = 0;
  for (const auto& [a, b] : ranges) n += b - a;
  return n;
}

// The parts of `ranges` inside [begin, end), relative to begin. `cursor`
// (the first range that may still reach past begin) moves forward.
RowRanges Intersect(const RowRanges& ranges, uint64_t begin, uint64_t end, size_t* cursor) {
  RowRanges parts;
  while (*cursor < ranges.size() && ranges[*cursor].second <= begin) ++*cursor;
  for (size_t k = *cursor; k < ranges.size() && ranges[k].first < end; ++k) {
    const uint64_t a = std::max(ranges[k].first, begin), b = std::min(ranges[k].second, end);
    if (a < b) parts.emplace_back(a - begin, b - begin);
  }
  return parts;
}

// Appends [a, b) to `ranges`, joining it to the last range when they touch.
void AppendRange(RowRanges* ranges, uint64_t a, uint64_t b) {
  if (a == b) return;
  if (!ranges->empty() && ranges->back().second == a) {
    ranges->back().second = b;
  } else {
    ranges->emplace_back(a, b);
  }
}

Result<BufferPtr> ReadExact(const FileRangeReader& read, uint64_t position, uint64_t size) {
  LANCE_ASSIGN_OR_RAISE(auto buffer, read(position, size));
  if (!buffer || static_cast<uint64_t>(buffer->size()) != size) {
    return Status::IOError("short read of ", size, " bytes at ", position);
  }
  return buffer;
}

// The bytes of `spans` (ascending offsets, possibly overlapping) of the page
// buffer `whole`, one buffer each; nearby spans share one read.
Result<std::vector<BufferPtr>> ReadSpans(const FileRangeReader& read, const BufferRange& whole, const Spans& spans) {
  std::vector<BufferPtr> out;
  out.reserve(spans.size());
  size_t k = 0;
  while (k < spans.size()) {
    const uint64_t begin = spans[k].first;
    uint64_t end = begin + spans[k].second;
    size_t j = k + 1;
    while (j < spans.size() && spans[j].first <= end + kGapBytes) {
      end = std::max(end, spans[j].first + spans[j].second);
      ++j;
    }
    if (end > whole.size) {
      return Status::Invalid("bytes [", begin, ", ", end, ") lie past the end of a ", whole.size,
                             "-byte page buffer");
    }
    LANCE_ASSIGN_OR_RAISE(auto block, ReadExact(read, whole.position + begin, end - begin));
    for (size_t m = k; m < j; ++m) {
      out.push_back(arrow::SliceBuffer(block, static_cast<int64_t>(spans[m].first - begin),
                                       static_cast<int64_t>(spans[m].second)));
    }
    k = j;
  }
  return out;
}

Result<BufferPtr> Join(const std::vector<BufferPtr>& parts, arrow::MemoryPool* pool) {
  if (parts.size() == 1) return parts[0];
  return arrow::ConcatenateBuffers(parts, pool);
}

PageData Header(const PageInfo& page) {
  PageData out;
  out.length = page.length;
  out.priority = page.priority;
  out.encoding_type_url = page.encoding_type_url;
  out.encoding = page.encoding;
  return out;
}

Result<PageData> LoadPage(const PageInfo& page, const FileRangeReader& read) {
  PageData out = Header(page);
  for (const auto& r : page.buffers) {
    LANCE_ASSIGN_OR_RAISE(auto b, ReadExact(read, r.position, r.size));
    out.buffers.push_back(std::move(b));
  }
  return out;
}

// The column's own buffers loaded, no pages.
Result<ColumnData> LoadColumnHead(const ColumnInfo& column, const FileRangeReader& read) {
  ColumnData out;
  out.encoding_type_url = column.encoding_type_url;
  out.encoding = column.encoding;
  for (const auto& r : column.buffers) {
    LANCE_ASSIGN_OR_RAISE(auto b, ReadExact(read, r.position, r.size));
    out.buffers.push_back(std::move(b));
  }
  return out;
}

Result<ColumnData> LoadColumn(const ColumnInfo& column, const FileRangeReader& read) {
  LANCE_ASSIGN_OR_RAISE(auto out, LoadColumnHead(column, read));
  for (const auto& page : column.pages) {
    LANCE_ASSIGN_OR_RAISE(auto loaded, LoadPage(page, read));
    out.pages.push_back(std::move(loaded));
  }
  return out;
}

// A column described by its metadata alone.
ColumnData Describe(const ColumnInfo& column) {
  ColumnData out;
  out.encoding_type_url = column.encoding_type_url;
  out.encoding = column.encoding;
  for (const auto& page : column.pages) out.pages.push_back(Header(page));
  return out;
}

bool IsPlainScheme(const enc::Flat& flat) {
  return !flat.has_compression() || flat.compression().scheme().empty() || flat.compression().scheme() == "none";
}

// The Flat of `bits` bits per value, uncompressed, in a page buffer, that
// `e` is (under Nullable{no_nulls}), or null.
const enc::Flat* PlainFlat(const enc::ArrayEncoding& e, uint64_t bits) {
  const enc::ArrayEncoding* node = &e;
  for (int depth = 0; depth < kMaxDepth; ++depth) {
    if (node->has_nullable() && node->nullable().has_no_nulls()) {
      node = &node->nullable().no_nulls().values();
      continue;
    }
    if (!node->has_flat()) return nullptr;
    const enc::Flat& flat = node->flat();
    if (flat.bits_per_value() != bits || !IsPlainScheme(flat) || !flat.has_buffer() ||
        flat.buffer().buffer_type() != enc::Buffer::page) {
      return nullptr;
    }
    return &flat;
  }
  return nullptr;
}

// The page buffers `e` reads, when it is an encoding whose buffers are known.
bool CollectBuffers(const enc::ArrayEncoding& e, std::vector<uint32_t>* out, int depth = 0) {
  if (depth > kMaxDepth) return false;
  auto add = [&](const enc::Buffer& b) {
    if (b.buffer_type() == enc::Buffer::page) out->push_back(b.buffer_index());
    return b.buffer_type() != enc::Buffer::file;
  };
  switch (e.array_encoding_case()) {
    case enc::ArrayEncoding::kFlat:
      return add(e.flat().buffer());
    case enc::ArrayEncoding::kBitpacked:
      return add(e.bitpacked().buffer());
    case enc::ArrayEncoding::kBitpackedForNonNeg:
      return add(e.bitpacked_for_non_neg().buffer());
    case enc::ArrayEncoding::kConstant:
      return true;
    case enc::ArrayEncoding::kNullable: {
      const auto& n = e.nullable();
      if (n.has_no_nulls()) return CollectBuffers(n.no_nulls().values(), out, depth + 1);
      if (n.has_some_nulls()) {
        return CollectBuffers(n.some_nulls().validity(), out, depth + 1) &&
               CollectBuffers(n.some_nulls().values(), out, depth + 1);
      }
      return n.has_all_nulls();
    }
    case enc::ArrayEncoding::kBinary:
      return CollectBuffers(e.binary().indices(), out, depth + 1) &&
             CollectBuffers(e.binary().bytes(), out, depth + 1);
    case enc::ArrayEncoding::kFixedSizeList:
      return CollectBuffers(e.fixed_size_list().items(), out, depth + 1);
    case enc::ArrayEncoding::kFixedSizeBinary:
      return CollectBuffers(e.fixed_size_binary().bytes(), out, depth + 1);
    case enc::ArrayEncoding::kFsst:
      return CollectBuffers(e.fsst().binary(), out, depth + 1);
    case enc::ArrayEncoding::kDictionary:
      return CollectBuffers(e.dictionary().indices(), out, depth + 1) &&
             CollectBuffers(e.dictionary().items(), out, depth + 1);
    default:
      return false;
  }
}

// Whether PageCutter can cut `e` (checked before any read).
bool Cuttable(const enc::ArrayEncoding& e, int depth = 0) {
  if (depth > kMaxDepth) return false;
  switch (e.array_encoding_case()) {
    case enc::ArrayEncoding::kFlat: {
      const auto& flat = e.flat();
      const uint64_t bits = flat.bits_per_value();
      return IsPlainScheme(flat) && flat.has_buffer() && flat.buffer().buffer_type() == enc::Buffer::page &&
             (bits == 1 || (bits % 8 == 0 && bits > 0 && bits <= (uint64_t{1} << 20)));
    }
    case enc::ArrayEncoding::kConstant:
      return true;
    case enc::ArrayEncoding::kNullable: {
      const auto& n = e.nullable();
      if (n.has_no_nulls()) return Cuttable(n.no_nulls().values(), depth + 1);
      if (n.has_some_nulls()) {
        return Cuttable(n.some_nulls().validity(), depth + 1) && Cuttable(n.some_nulls().values(), depth + 1);
      }
      return n.has_all_nulls();
    }
    case enc::ArrayEncoding::kFixedSizeList: {
      const auto& fsl = e.fixed_size_list();
      return !fsl.has_validity() && fsl.dimension() > 0 && fsl.dimension() <= (1u << 20) &&
             Cuttable(fsl.items(), depth + 1);
    }
    case enc::ArrayEncoding::kFixedSizeBinary:
      return Cuttable(e.fixed_size_binary().bytes(), depth + 1);
    case enc::ArrayEncoding::kBinary:
      return PlainFlat(e.binary().indices(), 64) != nullptr && PlainFlat(e.binary().bytes(), 8) != nullptr;
    case enc::ArrayEncoding::kFsst:
      return e.fsst().binary().has_binary() && Cuttable(e.fsst().binary(), depth + 1);
    case enc::ArrayEncoding::kDictionary: {
      std::vector<uint32_t> unused;
      return Cuttable(e.dictionary().indices(), depth + 1) && CollectBuffers(e.dictionary().items(), &unused);
    }
    case enc::ArrayEncoding::kPackedStruct:
      return e.packed_struct().has_buffer() && e.packed_struct().buffer().buffer_type() == enc::Buffer::page;
    default:
      return false;
  }
}

// Bytes of a value of `type` inside a packed struct row, or 0 when it has no
// fixed byte width.
uint64_t PackedWidth(const arrow::DataType& type) {
  if (type.id() == arrow::Type::FIXED_SIZE_LIST) {
    const auto& fsl = static_cast<const arrow::FixedSizeListType&>(type);
    const uint64_t item = PackedWidth(*fsl.value_type());
    return fsl.list_size() > 0 && item <= (uint64_t{1} << 20) ? item * static_cast<uint64_t>(fsl.list_size()) : 0;
  }
  if (type.id() == arrow::Type::BOOL || !arrow::is_fixed_width(type.id())) return 0;
  const int bits = static_cast<const arrow::FixedWidthType&>(type).bit_width();
  return bits > 0 && bits % 8 == 0 ? static_cast<uint64_t>(bits / 8) : 0;
}

// Bytes of a packed struct row of `type`, or 0.
uint64_t PackedRowBytes(const arrow::DataType& type) {
  if (type.id() != arrow::Type::STRUCT) return 0;
  uint64_t row = 0;
  for (const auto& child : type.fields()) {
    const uint64_t width = PackedWidth(*child->type());
    if (width == 0 || width > (uint64_t{1} << 30)) return 0;
    row += width;
  }
  return row;
}

// Builds the buffers of a page holding only some of its values, for the
// unchanged encoding: each node of the encoding tree reads the parts of its
// buffers that hold the values asked for (a dictionary's items are read
// whole). Values are counted in the node's own units (a fixed-size list's
// items node counts items).
class PageCutter {
 public:
  // `type`: the Arrow type of the page's values.
  PageCutter(const PageInfo& page, const arrow::DataType& type, const FileRangeReader& read,
             arrow::MemoryPool* pool)
      : buffers(page.buffers.size()), page_(page), type_(type), read_(read), pool_(pool) {}

  // Cuts the values `ranges` of the `total` values of node `e` (Cuttable).
  Status Cut(const enc::ArrayEncoding& e, const RowRanges& ranges, uint64_t total) {
    switch (e.array_encoding_case()) {
      case enc::ArrayEncoding::kFlat:
        return CutFlat(e.flat(), ranges, total);
      case enc::ArrayEncoding::kConstant:
        return Status::OK();
      case enc::ArrayEncoding::kNullable: {
        const auto& n = e.nullable();
        if (n.has_no_nulls()) return Cut(n.no_nulls().values(), ranges, total);
        if (n.has_some_nulls()) {
          LANCE_RETURN_NOT_OK(Cut(n.some_nulls().validity(), ranges, total));
          return Cut(n.some_nulls().values(), ranges, total);
        }
        return Status::OK();
      }
      case enc::ArrayEncoding::kFixedSizeList: {
        const uint64_t d = e.fixed_size_list().dimension();
        RowRanges items;
        for (const auto& [a, b] : ranges) items.emplace_back(a * d, b * d);
        return Cut(e.fixed_size_list().items(), items, total * d);
      }
      case enc::ArrayEncoding::kFixedSizeBinary:
        return Cut(e.fixed_size_binary().bytes(), ranges, total);
      case enc::ArrayEncoding::kFsst:
        return Cut(e.fsst().binary(), ranges, total);
      case enc::ArrayEncoding::kBinary:
        return CutBinary(e.binary(), ranges, total);
      case enc::ArrayEncoding::kPackedStruct: {
        // Rows of the children's fixed-width values side by side.
        const uint64_t row_bytes = PackedRowBytes(type_);
        if (row_bytes == 0) return Status::Invalid("PackedStruct in a column of type ", type_.ToString());
        LANCE_ASSIGN_OR_RAISE(const BufferRange* whole, Claim(e.packed_struct().buffer().buffer_index()));
        if (total > kMaxValues || whole->size / row_bytes < total) {
          return Status::Invalid("PackedStruct buffer has ", whole->size, " bytes, too few for ", total,
                                 " rows of ", row_bytes, " bytes");
        }
        Spans spans;
        for (const auto& [a, b] : ranges) spans.emplace_back(a * row_bytes, (b - a) * row_bytes);
        LANCE_ASSIGN_OR_RAISE(auto parts, ReadSpans(read_, *whole, spans));
        LANCE_ASSIGN_OR_RAISE(buffers[e.packed_struct().buffer().buffer_index()], Join(parts, pool_));
        return Status::OK();
      }
      case enc::ArrayEncoding::kDictionary: {
        LANCE_RETURN_NOT_OK(Cut(e.dictionary().indices(), ranges, total));
        std::vector<uint32_t> items;
        CollectBuffers(e.dictionary().items(), &items);
        for (uint32_t index : items) {
          LANCE_ASSIGN_OR_RAISE(const BufferRange* whole, Claim(index));
          LANCE_ASSIGN_OR_RAISE(buffers[index], ReadExact(read_, whole->position, whole->size));
        }
        return Status::OK();
      }
      default:
        return Status::Invalid("a ", EncodingName(e), " encoding cannot be read in part");
    }
  }

  std::vector<BufferPtr> buffers;

 private:
  // The page buffer `index`, which no other node of the page may use.
  Result<const BufferRange*> Claim(uint32_t index) {
    if (index >= page_.buffers.size()) {
      return Status::Invalid("page buffer ", index, " does not exist (the page has ", page_.buffers.size(),
                             " buffers)");
    }
    if (buffers[index]) return Status::Invalid("page buffer ", index, " is used twice");
    return &page_.buffers[index];
  }

  Status CutFlat(const enc::Flat& flat, const RowRanges& ranges, uint64_t total) {
    const uint64_t bits = flat.bits_per_value();
    LANCE_ASSIGN_OR_RAISE(const BufferRange* whole, Claim(flat.buffer().buffer_index()));
    if (total > kMaxValues) return Status::Invalid("absurd value count ", total);
    const uint64_t needed = bits == 1 ? (total + 7) / 8 : total * (bits / 8);
    if (whole->size < needed) {
      return Status::Invalid("Flat buffer has ", whole->size, " bytes, ", needed, " needed for ", total,
                             " values of ", bits, " bits");
    }
    Spans spans;
    for (const auto& [a, b] : ranges) {
      if (bits == 1) {
        spans.emplace_back(a / 8, (b + 7) / 8 - a / 8);
      } else {
        spans.emplace_back(a * (bits / 8), (b - a) * (bits / 8));
      }
    }
    LANCE_ASSIGN_OR_RAISE(auto parts, ReadSpans(read_, *whole, spans));
    const uint32_t index = flat.buffer().buffer_index();
    if (bits != 1) {
      LANCE_ASSIGN_OR_RAISE(buffers[index], Join(parts, pool_));
      return Status::OK();
    }
    // Bits of a range start anywhere in their first byte: shift them in place.
    const uint64_t rows = Rows(ranges);
    LANCE_ASSIGN_OR_RAISE(auto bitmap, arrow::AllocateBuffer(static_cast<int64_t>((rows + 7) / 8), pool_));
    if (bitmap->size() > 0) std::memset(bitmap->mutable_data(), 0, static_cast<size_t>(bitmap->size()));
    uint64_t at = 0;
    for (size_t k = 0; k < ranges.size(); ++k) {
      const auto [a, b] = ranges[k];
      arrow::internal::CopyBitmap(parts[k]->data(), static_cast<int64_t>(a % 8), static_cast<int64_t>(b - a),
                                  bitmap->mutable_data(), static_cast<int64_t>(at));
      at += b - a;
    }
    buffers[index] = std::move(bitmap);
    return Status::OK();
  }

  // Offsets first (each range with the end of the value before it), then the
  // bytes they point at; the page's offsets are rewritten for the values kept.
  Status CutBinary(const enc::Binary& binary, const RowRanges& ranges, uint64_t total) {
    const enc::Flat* indices_flat = PlainFlat(binary.indices(), 64);
    const enc::Flat* bytes_flat = PlainFlat(binary.bytes(), 8);
    LANCE_ASSIGN_OR_RAISE(const BufferRange* indices_whole, Claim(indices_flat->buffer().buffer_index()));
    if (total > kMaxValues || indices_whole->size < total * 8) {
      return Status::Invalid("Binary offsets buffer has ", indices_whole->size, " bytes, ", total * 8,
                             " needed for ", total, " values");
    }
    Spans spans;
    for (const auto& [a, b] : ranges) {
      const uint64_t from = a > 0 ? a - 1 : 0;
      spans.emplace_back(from * 8, (b - from) * 8);
    }
    LANCE_ASSIGN_OR_RAISE(auto parts, ReadSpans(read_, *indices_whole, spans));
    const uint64_t adjustment = binary.null_adjustment();
    // As the decoder reads them: an end at or past the adjustment is a null's.
    auto strip = [&](uint64_t end) -> Result<uint64_t> {
      if (end < adjustment) return end;
      end -= adjustment;
      if (adjustment > 0 && end >= adjustment) {
        return Status::Invalid("Binary offset ", end + adjustment, " is past twice the null adjustment ",
                               adjustment);
      }
      return end;
    };
    const uint64_t rows = Rows(ranges);
    LANCE_ASSIGN_OR_RAISE(auto indices, arrow::AllocateBuffer(static_cast<int64_t>(rows * 8), pool_));
    uint8_t* out = indices->mutable_data();
    Spans byte_spans;
    uint64_t kept = 0;  // bytes of the values so far
    for (size_t k = 0; k < ranges.size(); ++k) {
      const auto [a, b] = ranges[k];
      const uint8_t* in = parts[k]->data();
      uint64_t prev = 0;
      if (a > 0) {
        uint64_t raw;
        std::memcpy(&raw, in, 8);
        LANCE_ASSIGN_OR_RAISE(prev, strip(raw));
        in += 8;
      }
      const uint64_t first = prev;
      for (uint64_t i = a; i < b; ++i, in += 8, out += 8) {
        uint64_t raw;
        std::memcpy(&raw, in, 8);
        LANCE_ASSIGN_OR_RAISE(const uint64_t end, strip(raw));
        if (end < prev) {
          return Status::Invalid("Binary offsets decrease at value ", i, " (", prev, " then ", end, ")");
        }
        kept += end - prev;
        const uint64_t stored = raw >= adjustment ? kept + adjustment : kept;
        std::memcpy(out, &stored, 8);
        prev = end;
      }
      if (prev > first) byte_spans.emplace_back(first, prev - first);
    }
    buffers[indices_flat->buffer().buffer_index()] = std::move(indices);
    const uint32_t bytes_index = bytes_flat->buffer().buffer_index();
    LANCE_ASSIGN_OR_RAISE(const BufferRange* bytes_whole, Claim(bytes_index));
    if (byte_spans.empty()) {
      LANCE_ASSIGN_OR_RAISE(buffers[bytes_index], arrow::AllocateBuffer(0, pool_));
      return Status::OK();
    }
    LANCE_ASSIGN_OR_RAISE(auto bytes, ReadSpans(read_, *bytes_whole, byte_spans));
    LANCE_ASSIGN_OR_RAISE(buffers[bytes_index], Join(bytes, pool_));
    return Status::OK();
  }

  const PageInfo& page_;
  const arrow::DataType& type_;
  const FileRangeReader& read_;
  arrow::MemoryPool* pool_;
};

bool IsListType(const std::string& lt) {
  return lt == "list" || lt == "list.struct" || lt == "large_list" || lt == "large_list.struct";
}

bool IsBinaryLogicalType(const std::string& lt) {
  return lt == "string" || lt == "binary" || lt == "large_string" || lt == "large_binary" || lt == "json";
}

enum class ColumnKind { kValues, kBlob, kOther };

ColumnKind KindOf(const ColumnInfo& column) {
  if (column.encoding_type_url.empty() && column.encoding.empty()) return ColumnKind::kValues;
  enc::ColumnEncoding encoding;
  if (!util::ParseMessage(column.encoding, &encoding)) return ColumnKind::kOther;
  if (encoding.has_values()) return ColumnKind::kValues;
  if (encoding.has_blob()) return ColumnKind::kBlob;
  return ColumnKind::kOther;
}

Result<ArrayDataPtr> JoinPieces(const std::vector<ArrayDataPtr>& pieces, const TypePtr& type,
                                arrow::MemoryPool* pool) {
  if (pieces.empty()) {
    LANCE_ASSIGN_OR_RAISE(auto empty, arrow::MakeEmptyArray(type, pool));
    return empty->data();
  }
  if (pieces.size() == 1) return pieces[0];
  arrow::ArrayVector arrays;
  for (const auto& piece : pieces) arrays.push_back(arrow::MakeArray(piece));
  std::shared_ptr<arrow::Array> joined;
  if (type->id() == arrow::Type::DICTIONARY) {
    LANCE_ASSIGN_OR_RAISE(joined, JoinDictionaryArrays(arrays, type, pool));
  } else {
    LANCE_ASSIGN_OR_RAISE(joined, arrow::Concatenate(arrays, pool));
  }
  return joined->data();
}

// The rows of `ranges` (relative to it) of a decoded array, in order.
Result<ArrayDataPtr> SliceRanges(const std::shared_ptr<arrow::Array>& array, const RowRanges& ranges,
                                 arrow::MemoryPool* pool) {
  if (ranges.size() == 1 && ranges[0].first == 0 && ranges[0].second == static_cast<uint64_t>(array->length())) {
    return array->data();
  }
  if (ranges.empty()) {
    LANCE_ASSIGN_OR_RAISE(auto empty, arrow::MakeEmptyArray(array->type(), pool));
    return empty->data();
  }
  arrow::ArrayVector slices;
  for (const auto& [a, b] : ranges) {
    slices.push_back(array->Slice(static_cast<int64_t>(a), static_cast<int64_t>(b - a)));
  }
  if (slices.size() == 1) return slices[0]->data();
  LANCE_ASSIGN_OR_RAISE(auto joined, arrow::Concatenate(slices, pool));
  return joined->data();
}

std::string Where(const Field& field, const std::string& path) {
  return "field '" + path + "' (id " + std::to_string(field.id) + ")";
}

Status Wrap(const Status& st, const std::string& where) {
  if (st.ok()) return st;
  return st.WithMessage(where, ": ", st.message());
}

// Assigns the value of `rexpr` to `lhs`, or returns its error prefixed with `where`.
#define LANCE_WRAP(lhs, rexpr, where)                                   \
  auto&& lhs##_result = (rexpr);                                        \
  if (!lhs##_result.ok()) return Wrap(lhs##_result.status(), (where)); \
  lhs = std::move(lhs##_result).ValueUnsafe();

class FieldTaker {
 public:
  FieldTaker(std::span<const ColumnData> described, arrow::MemoryPool* pool, const FileRangeReader& read)
      : described_(described), pool_(pool), read_(read) {}

  // Values `ranges` of the `total` values of `field`, whose columns start at
  // `first` of the file's (described) columns.
  Result<ArrayDataPtr> Take(const Field& field, const TypePtr& type, std::span<const ColumnInfo> columns,
                            size_t first, const RowRanges& ranges, uint64_t total, const std::string& path) {
    const std::string where = Where(field, path);
    if (!ranges.empty() && ranges.back().second > total) {
      return Status::Invalid(where, ": rows up to ", ranges.back().second, " asked of ", total);
    }
    const size_t n = static_cast<size_t>(NumColumns(field, described_.subspan(std::min(first, described_.size()))));
    if (n > columns.size()) {
      return Status::Invalid(where, ": needs ", n, " columns, the file has ", columns.size(), " left");
    }
    columns = columns.subspan(0, n);
    const std::string& lt = field.logical_type;
    if (n == 2 && IsBinaryLogicalType(lt)) return Whole(field, columns, ranges, total, where);
    if (lt == "struct" && n > 1) return TakeStruct(field, type, columns, first, ranges, total, path, where);
    if (lt == "struct" && field.children.empty()) return Whole(field, columns, ranges, total, where);
    if (IsListType(lt)) return TakeList(field, type, columns, first, ranges, path, where);
    switch (KindOf(columns[0])) {
      case ColumnKind::kValues:
        return TakeLeaf(type, columns[0], ranges, where);
      case ColumnKind::kBlob:
        return TakeBlob(type, columns[0], ranges, where);
      default:
        return Whole(field, columns, ranges, total, where);
    }
  }

 private:
  // Reads the field's columns whole and slices the rows out.
  Result<ArrayDataPtr> Whole(const Field& field, std::span<const ColumnInfo> columns, const RowRanges& ranges,
                             uint64_t total, const std::string& where) {
    std::vector<ColumnData> data;
    for (const auto& column : columns) {
      ColumnData loaded;
      LANCE_WRAP(loaded, LoadColumn(column, read_), where);
      data.push_back(std::move(loaded));
    }
    LANCE_ASSIGN_OR_RAISE(auto array, DecodeField(field, data, total, pool_, read_));
    return SliceRanges(array, ranges, pool_);
  }

  Result<ArrayDataPtr> TakeStruct(const Field& field, const TypePtr& type, std::span<const ColumnInfo> columns,
                                  size_t first, const RowRanges& ranges, uint64_t total, const std::string& path,
                                  const std::string& where) {
    if (type->id() != arrow::Type::STRUCT || type->num_fields() != static_cast<int>(field.children.size())) {
      return Status::Invalid(where, ": type ", type->ToString(), " does not match the struct field");
    }
    std::vector<ArrayDataPtr> children;
    size_t next = 1;
    for (size_t c = 0; c < field.children.size(); ++c) {
      const Field& child = field.children[c];
      if (next >= columns.size()) return Status::Invalid(where, ": too few columns for its children");
      LANCE_ASSIGN_OR_RAISE(auto data, Take(child, type->field(static_cast<int>(c))->type(), columns.subspan(next),
                                            first + next, ranges, total, path + "." + child.name));
      children.push_back(std::move(data));
      next += static_cast<size_t>(NumColumns(child, described_.subspan(std::min(first + next, described_.size()))));
    }
    return arrow::ArrayData::Make(type, static_cast<int64_t>(Rows(ranges)), {nullptr}, children, 0);
  }

  // The u64 entries [from, b) of a fixed-width encoding of page `page` for
  // each range (a, b), from = a - 1 (or 0): only those bytes when they are
  // plain, else the page decoded whole.
  Result<std::vector<BufferPtr>> PageEntries(const PageInfo& page, const ColumnData& head,
                                             const enc::ArrayEncoding& e, const RowRanges& ranges) {
    Spans spans;
    for (const auto& [a, b] : ranges) {
      const uint64_t from = a > 0 ? a - 1 : 0;
      spans.emplace_back(from * 8, (b - from) * 8);
    }
    if (const enc::Flat* flat = PlainFlat(e, 64)) {
      const uint32_t index = flat->buffer().buffer_index();
      if (index >= page.buffers.size()) return Status::Invalid("page buffer ", index, " does not exist");
      if (page.buffers[index].size < page.length * 8) {
        return Status::Invalid("offsets buffer has ", page.buffers[index].size, " bytes, ", page.length * 8,
                               " needed for ", page.length, " values");
      }
      return ReadSpans(read_, page.buffers[index], spans);
    }
    LANCE_ASSIGN_OR_RAISE(auto loaded, LoadPage(page, read_));
    PageContext ctx{&head, &loaded, pool_};
    LANCE_ASSIGN_OR_RAISE(auto all, DecodeFixedWidth(e, 64, page.length, ctx));
    std::vector<BufferPtr> out;
    for (const auto& [offset, size] : spans) {
      out.push_back(arrow::SliceBuffer(all, static_cast<int64_t>(offset), static_cast<int64_t>(size)));
    }
    return out;
  }

  Result<ArrayDataPtr> TakeList(const Field& field, const TypePtr& type, std::span<const ColumnInfo> columns,
                                size_t first, const RowRanges& ranges, const std::string& path,
                                const std::string& where) {
    const bool large = type->id() == arrow::Type::LARGE_LIST;
    if ((type->id() != arrow::Type::LIST && !large) || field.children.size() != 1 || columns.size() < 2) {
      return Status::Invalid(where, ": type ", type->ToString(), " does not match the list field");
    }
    const ColumnInfo& column = columns[0];
    if (KindOf(column) != ColumnKind::kValues) {
      return Status::Invalid(where, ": a list offsets column must hold plain values");
    }
    LANCE_ASSIGN_OR_RAISE(auto head, LoadColumnHead(column, read_));
    const uint64_t rows = Rows(ranges);
    std::vector<uint64_t> offsets{0};
    offsets.reserve(rows + 1);
    LANCE_ASSIGN_OR_RAISE(auto validity, arrow::AllocateBuffer(static_cast<int64_t>((rows + 7) / 8), pool_));
    arrow::bit_util::SetBitsTo(validity->mutable_data(), 0, static_cast<int64_t>(rows), true);
    int64_t null_count = 0;
    RowRanges items;         // of the child column
    uint64_t items_base = 0;  // first item of the current page in the child column
    uint64_t page_start = 0;
    size_t cursor = 0;
    for (size_t p = 0; p < column.pages.size(); ++p) {
      const PageInfo& page = column.pages[p];
      const uint64_t page_end = page_start + page.length;
      if (page.length == 0) continue;
      const std::string page_where = where + ", offsets page " + std::to_string(p);
      enc::ArrayEncoding encoding;
      LANCE_WRAP(encoding, ParsePageEncoding(Header(page)), page_where);
      if (encoding.array_encoding_case() != enc::ArrayEncoding::kList) {
        return Status::Invalid(page_where, ": expected a list offsets page, found a ", EncodingName(encoding),
                               " encoding");
      }
      const enc::List& list = encoding.list();
      const uint64_t adjustment = list.null_offset_adjustment();
      const uint64_t num_items = list.num_items();
      if (adjustment == 0) return Status::Invalid(page_where, ": List null_offset_adjustment is 0");
      if (num_items > kMaxValues || items_base + num_items > kMaxValues) {
        return Status::Invalid(page_where, ": absurd item count ", num_items);
      }
      const RowRanges parts = Intersect(ranges, page_start, page_end, &cursor);
      if (!parts.empty()) {
        std::vector<BufferPtr> entries;
        LANCE_WRAP(entries, PageEntries(page, head, list.offsets(), parts), page_where);
        auto strip = [&](uint64_t end) -> Result<uint64_t> {
          if (end < adjustment) return end;
          end -= adjustment;
          if (end >= adjustment) {
            return Status::Invalid(page_where, ": list offset ", end + adjustment,
                                   " is past twice the null offset adjustment ", adjustment);
          }
          return end;
        };
        for (size_t k = 0; k < parts.size(); ++k) {
          const auto [a, b] = parts[k];
          const uint8_t* in = entries[k]->data();
          uint64_t prev = 0;
          if (a > 0) {
            uint64_t raw;
            std::memcpy(&raw, in, 8);
            LANCE_ASSIGN_OR_RAISE(prev, strip(raw));
            in += 8;
          }
          const uint64_t start = prev;
          for (uint64_t i = a; i < b; ++i, in += 8) {
            uint64_t raw;
            std::memcpy(&raw, in, 8);
            LANCE_ASSIGN_OR_RAISE(const uint64_t end, strip(raw));
            if (raw >= adjustment) {
              arrow::bit_util::ClearBit(validity->mutable_data(), static_cast<int64_t>(offsets.size() - 1));
              ++null_count;
            }
            if (end < prev) {
              return Status::Invalid(page_where, ": list offsets decrease at list ", i, " (", prev, " then ", end,
                                     ")");
            }
            if (end > num_items) {
              return Status::Invalid(page_where, ": list offset ", end, " of list ", i, " is past the page's ",
                                     num_items, " items");
            }
            offsets.push_back(offsets.back() + (end - prev));
            prev = end;
          }
          AppendRange(&items, items_base + start, items_base + prev);
        }
      }
      page_start = page_end;
      items_base += num_items;
    }
    if (offsets.size() != rows + 1) {
      return Status::Invalid(where, ": the list column's pages hold ", page_start, " lists, fewer than asked");
    }
    const Field& child = field.children[0];
    const auto& child_type = static_cast<const arrow::BaseListType&>(*type).value_type();
    LANCE_ASSIGN_OR_RAISE(auto child_data, Take(child, child_type, columns.subspan(1), first + 1, items, items_base,
                                                 path + "." + child.name));
    const uint64_t kept = offsets.back();
    if (static_cast<uint64_t>(child_data->length) != kept) {
      return Status::Invalid(where, ": ", child_data->length, " items decoded, ", kept, " expected");
    }
    if (!large && kept > static_cast<uint64_t>(std::numeric_limits<int32_t>::max())) {
      return Status::Invalid(where, ": ", kept, " items do not fit the 32-bit offsets of a list");
    }
    const int width = large ? 8 : 4;
    LANCE_ASSIGN_OR_RAISE(auto out_offsets, arrow::AllocateBuffer(static_cast<int64_t>((rows + 1) * width), pool_));
    for (uint64_t i = 0; i <= rows; ++i) {
      if (large) {
        const int64_t o = static_cast<int64_t>(offsets[i]);
        std::memcpy(out_offsets->mutable_data() + i * 8, &o, 8);
      } else {
        const int32_t o = static_cast<int32_t>(offsets[i]);
        std::memcpy(out_offsets->mutable_data() + i * 4, &o, 4);
      }
    }
    std::shared_ptr<arrow::Buffer> bitmap;
    if (null_count > 0) bitmap = std::move(validity);
    return arrow::ArrayData::Make(type, static_cast<int64_t>(rows), {bitmap, std::move(out_offsets)},
                                  {child_data}, null_count);
  }

  // Each page the ranges touch: cut to the values asked for when its
  // encoding allows, else decoded whole and sliced.
  Result<ArrayDataPtr> TakeLeaf(const TypePtr& type, const ColumnInfo& column, const RowRanges& ranges,
                                const std::string& where) {
    LANCE_ASSIGN_OR_RAISE(auto head, LoadColumnHead(column, read_));
    std::vector<ArrayDataPtr> pieces;
    uint64_t page_start = 0;
    size_t cursor = 0;
    for (size_t p = 0; p < column.pages.size(); ++p) {
      const PageInfo& page = column.pages[p];
      const uint64_t page_end = page_start + page.length;
      if (page.length == 0) continue;
      const RowRanges parts = Intersect(ranges, page_start, page_end, &cursor);
      page_start = page_end;
      if (parts.empty()) continue;
      const std::string page_where = where + ", page " + std::to_string(p);
      if (page.length > kMaxValues) return Status::Invalid(page_where, ": absurd value count ", page.length);
      enc::ArrayEncoding encoding;
      LANCE_WRAP(encoding, ParsePageEncoding(Header(page)), page_where);
      const bool whole = parts.size() == 1 && parts[0].first == 0 && parts[0].second == page.length;
      ArrayDataPtr piece;
      if (!whole && Cuttable(encoding)) {
        PageCutter cutter(page, *type, read_, pool_);
        LANCE_RETURN_NOT_OK(Wrap(cutter.Cut(encoding, parts, page.length), page_where));
        PageData part = Header(page);
        part.length = Rows(parts);
        part.buffers = std::move(cutter.buffers);
        PageContext ctx{&head, &part, pool_};
        LANCE_WRAP(piece, DecodeArray(encoding, type, part.length, ctx), page_where);
      } else {
        PageData loaded;
        LANCE_WRAP(loaded, LoadPage(page, read_), page_where);
        PageContext ctx{&head, &loaded, pool_};
        LANCE_WRAP(piece, DecodeArray(encoding, type, page.length, ctx), page_where);
        if (!whole) {
          LANCE_ASSIGN_OR_RAISE(piece, SliceRanges(arrow::MakeArray(piece), parts, pool_));
        }
      }
      pieces.push_back(std::move(piece));
    }
    ArrayDataPtr out;
    LANCE_WRAP(out, JoinPieces(pieces, type, pool_), where);
    if (static_cast<uint64_t>(out->length) != Rows(ranges)) {
      return Status::Invalid(where, ": the column's pages hold fewer values than asked");
    }
    return out;
  }

  // The descriptions of the rows asked for ({position, size} each, taken as
  // a leaf column), then their values.
  Result<ArrayDataPtr> TakeBlob(const TypePtr& type, const ColumnInfo& column, const RowRanges& ranges,
                                const std::string& where) {
    const auto id = type->id();
    if (id != arrow::Type::LARGE_BINARY && id != arrow::Type::BINARY && id != arrow::Type::STRING &&
        id != arrow::Type::LARGE_STRING) {
      return Status::Invalid(where, ": blob column of non-binary type ", type->ToString());
    }
    static const TypePtr kDescription =
        arrow::struct_({arrow::field("position", arrow::uint64()), arrow::field("size", arrow::uint64())});
    LANCE_ASSIGN_OR_RAISE(auto data, TakeLeaf(kDescription, column, ranges, where + " (blob descriptions)"));
    arrow::StructArray descriptions(data);
    const uint64_t* positions = static_cast<const arrow::UInt64Array&>(*descriptions.field(0)).raw_values();
    const uint64_t* sizes = static_cast<const arrow::UInt64Array&>(*descriptions.field(1)).raw_values();
    const uint64_t rows = Rows(ranges);
    std::vector<uint64_t> offsets{0};
    LANCE_ASSIGN_OR_RAISE(auto validity, arrow::AllocateBuffer(static_cast<int64_t>((rows + 7) / 8), pool_));
    arrow::bit_util::SetBitsTo(validity->mutable_data(), 0, static_cast<int64_t>(rows), true);
    int64_t null_count = 0;
    std::vector<BufferPtr> values;
    for (uint64_t i = 0; i < rows; ++i) {
      // A null is (1, 0), an empty value (0, 0).
      if (sizes[i] == 0) {
        if (positions[i] == 1) {
          arrow::bit_util::ClearBit(validity->mutable_data(), static_cast<int64_t>(i));
          ++null_count;
        }
      } else {
        if (sizes[i] > kMaxValues || offsets.back() + sizes[i] > kMaxValues) {
          return Status::Invalid(where, ": blob ", i, " has an absurd size ", sizes[i]);
        }
        BufferPtr value;
        LANCE_WRAP(value, ReadExact(read_, positions[i], sizes[i]), where + ", blob " + std::to_string(i));
        values.push_back(std::move(value));
      }
      offsets.push_back(offsets.back() + sizes[i]);
    }
    BufferPtr bytes;
    if (values.empty()) {
      LANCE_ASSIGN_OR_RAISE(bytes, arrow::AllocateBuffer(0, pool_));
    } else {
      LANCE_ASSIGN_OR_RAISE(bytes, Join(values, pool_));
    }
    ArrayDataPtr out;
    LANCE_WRAP(out, MakeBinaryArray(type, rows, offsets, bytes, std::move(validity), null_count, pool_), where);
    return out;
  }

  std::span<const ColumnData> described_;
  arrow::MemoryPool* pool_;
  const FileRangeReader& read_;
};

}  // namespace

Result<std::shared_ptr<arrow::Array>> TakeFieldRanges(const Field& field, std::span<const ColumnInfo> columns,
                                                      const RowRanges& ranges, uint64_t num_rows,
                                                      arrow::MemoryPool* pool, const FileRangeReader& read) {
  const std::string where = Where(field, field.name);
  std::shared_ptr<arrow::DataType> type;
  LANCE_WRAP(type, ArrowTypeFromField(field), where);
  uint64_t prev = 0;
  for (const auto& [a, b] : ranges) {
    if (a >= b || a < prev || b > num_rows) {
      return Status::Invalid(where, ": rows [", a, ", ", b, ") of ", num_rows,
                             " are empty, out of order or past the end");
    }
    prev = b;
  }
  std::vector<ColumnData> described;
  for (const auto& c : columns) described.push_back(Describe(c));
  FieldTaker taker(described, pool, read);
  LANCE_ASSIGN_OR_RAISE(auto data, taker.Take(field, type, columns, 0, ranges, num_rows, field.name));
  auto array = arrow::MakeArray(data);
  LANCE_RETURN_NOT_OK(Wrap(array->Validate(), where + ": taken data is inconsistent"));
  return array;
}

}  // namespace lance::file::v2_0
