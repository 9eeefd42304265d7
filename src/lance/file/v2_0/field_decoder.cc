// 2.0 fields -> Arrow arrays: the mapping of fields to columns, struct header
// columns, list offsets columns and the assembly of a column's pages.
//
//  * Every field has a column, in pre-order. A struct's column is a header of
//    SimpleStruct pages (no buffers, no validity: 2.0 stores none); a packed
//    struct is one column of PackedStruct pages and its children have none.
//  * A list's column holds List pages: u64 *end* offsets relative to the
//    page's first item, a null list stored as end + null_offset_adjustment,
//    and num_items, the items the page covers. The items are the child's
//    column(s) read as one sequence: page p's items start after the num_items
//    of all earlier pages, whatever the item pages' boundaries are.
//  * Pages with 0 values are skipped, as the reference does.
//  * A blob column (ColumnEncoding.blob) holds packed {position, size}
//    descriptions of values stored at absolute file positions.
#include "lance/file/v2_0/field_decoder.h"
#include "lance/util/protobuf.h"

#include <cctype>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <arrow/array/concatenate.h>
#include <arrow/array/util.h>
#include <arrow/type.h>
#include <arrow/util/bit_util.h>

#include "lance/file/dictionary_join.h"
#include "lance/file/v2_0/array_decoder.h"

namespace lance::file::v2_0 {
namespace {

constexpr std::string_view kPackedLegacyKey = "packed";
constexpr std::string_view kPackedKey = "lance-encoding:packed";
constexpr uint64_t kMaxValues = uint64_t{1} << 40;

using ArrayDataPtr = std::shared_ptr<arrow::ArrayData>;
using TypePtr = std::shared_ptr<arrow::DataType>;

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

// As the writer decides (pinned pylance): the legacy key "packed", when
// present, must say "true" (any case); otherwise "lance-encoding:packed"
// being present is enough.
bool IsPackedStruct(const Field& field) {
  if (auto it = field.metadata.find(std::string(kPackedLegacyKey)); it != field.metadata.end()) {
    return EqualsIgnoreCase(it->second, "true");
  }
  return field.metadata.contains(std::string(kPackedKey));
}

bool IsListType(const std::string& lt) {
  return lt == "list" || lt == "list.struct" || lt == "large_list" || lt == "large_list.struct";
}

bool IsBinaryLogicalType(const std::string& lt) {
  return lt == "string" || lt == "binary" || lt == "large_string" || lt == "large_binary" || lt == "json";
}

// Before 0.16, 2.0 writers stored strings and binaries as list<uint8>: a
// column of List offsets pages followed by a column of uint8 items.
bool IsLegacyListString(const Field& field, std::span<const ColumnData> columns) {
  if (!IsBinaryLogicalType(field.logical_type) || columns.size() < 2) return false;
  for (const auto& page : columns[0].pages) {
    if (page.length == 0) continue;
    auto encoding = ParsePageEncoding(page);
    return encoding.ok() && encoding->array_encoding_case() == enc::ArrayEncoding::kList;
  }
  return false;
}

// The columns `field` occupies at the start of `columns` (which may run on
// past the field).
size_t CountColumns(const Field& field, std::span<const ColumnData> columns) {
  const std::string& lt = field.logical_type;
  if (lt == "struct" && !IsPackedStruct(field)) {
    size_t n = 1;
    for (const auto& child : field.children) {
      n += CountColumns(child, columns.size() > n ? columns.subspan(n) : std::span<const ColumnData>());
    }
    return n;
  }
  if (IsListType(lt) || lt == "map") {
    size_t n = 1;
    for (const auto& child : field.children) {
      n += CountColumns(child, columns.size() > n ? columns.subspan(n) : std::span<const ColumnData>());
    }
    return n;
  }
  return IsLegacyListString(field, columns) ? 2 : 1;
}

struct Context {
  arrow::MemoryPool* pool;
  const FileRangeReader* read_range;  // null: blob values cannot be read
};

std::string Where(const Field& field, const std::string& path) {
  return "field '" + path + "' (id " + std::to_string(field.id) + ")";
}

Status Wrap(const Status& st, const std::string& where) {
  if (st.ok()) return st;
  return st.WithMessage(where, ": ", st.message());
}

#define LANCE_WRAP_ASSIGN(lhs, rexpr, where)                                  \
  auto&& lhs##_result = (rexpr);                                             \
  if (!lhs##_result.ok()) return Wrap(lhs##_result.status(), (where));       \
  lhs = std::move(lhs##_result).ValueUnsafe();

enum class ColumnKind { kValues, kBlob };

Result<ColumnKind> GetColumnKind(const ColumnData& column) {
  if (column.encoding_type_url.empty() && column.encoding.empty()) return ColumnKind::kValues;
  constexpr std::string_view kName = "lance.encodings.ColumnEncoding";
  std::string_view url = column.encoding_type_url;
  const size_t slash = url.find_last_of('/');
  if (url.substr(slash == std::string_view::npos ? 0 : slash + 1) != kName) {
    return Status::Invalid("column encoding has type '", url, "', expected '/", kName, "'");
  }
  enc::ColumnEncoding encoding;
  if (!util::ParseMessage(column.encoding, &encoding)) {
    return Status::Invalid("column encoding is not a valid ColumnEncoding message");
  }
  switch (encoding.column_encoding_case()) {
    case enc::ColumnEncoding::kValues:
      return ColumnKind::kValues;
    case enc::ColumnEncoding::kBlob: {
      const auto& blob = encoding.blob();
      if (blob.has_inner() && blob.inner().column_encoding_case() != enc::ColumnEncoding::kValues) {
        return Status::NotImplemented("blob column whose inner column encoding is not plain values");
      }
      return ColumnKind::kBlob;
    }
    case enc::ColumnEncoding::kZoneIndex:
      return Status::NotImplemented("zone-indexed columns are not supported");
    default:
      return Status::Invalid("column encoding is empty or of an unknown kind");
  }
}

Result<ArrayDataPtr> ConcatDictionaries(const std::vector<ArrayDataPtr>& pieces, const TypePtr& type,
                                        arrow::MemoryPool* pool);

// Joins the pages of one column.
Result<ArrayDataPtr> Concat(const std::vector<ArrayDataPtr>& pieces, const TypePtr& type,
                            arrow::MemoryPool* pool) {
  if (pieces.empty()) {
    LANCE_ASSIGN_OR_RAISE(auto empty, arrow::MakeEmptyArray(type, pool));
    return empty->data();
  }
  if (pieces.size() == 1) return pieces[0];
  if (type->id() == arrow::Type::DICTIONARY) return ConcatDictionaries(pieces, type, pool);
  arrow::ArrayVector arrays;
  for (const auto& piece : pieces) arrays.push_back(arrow::MakeArray(piece));
  LANCE_ASSIGN_OR_RAISE(auto joined, arrow::Concatenate(arrays, pool));
  return joined->data();
}

// Each 2.0 page has its own dictionary.
Result<ArrayDataPtr> ConcatDictionaries(const std::vector<ArrayDataPtr>& pieces, const TypePtr& type,
                                        arrow::MemoryPool* pool) {
  arrow::ArrayVector arrays;
  for (const auto& piece : pieces) arrays.push_back(arrow::MakeArray(piece));
  LANCE_ASSIGN_OR_RAISE(auto joined, JoinDictionaryArrays(arrays, type, pool));
  return joined->data();
}

class FieldDecoder {
 public:
  explicit FieldDecoder(Context ctx) : ctx_(ctx) {}

  Result<ArrayDataPtr> Decode(const Field& field, const TypePtr& type, std::span<const ColumnData> columns,
                              uint64_t num_rows, const std::string& path) {
    const std::string where = Where(field, path);
    if (num_rows > kMaxValues) return Status::Invalid(where, ": absurd row count ", num_rows);
    const size_t needed = CountColumns(field, columns);
    if (columns.size() != needed) {
      return Status::Invalid(where, ": needs ", needed, " columns, got ", columns.size());
    }
    const std::string& lt = field.logical_type;
    if (needed == 2 && IsBinaryLogicalType(lt)) return DecodeLegacyString(field, type, columns, num_rows, path, where);
    if (lt == "struct") {
      if (IsPackedStruct(field)) return DecodeLeaf(field, type, columns[0], num_rows, where);
      return DecodeStruct(field, type, columns, num_rows, path, where);
    }
    if (IsListType(lt)) return DecodeList(field, type, columns, num_rows, path, where);
    if (lt == "map") return Status::NotImplemented(where, ": map columns do not exist in 2.0 files");
    return DecodeLeaf(field, type, columns[0], num_rows, where);
  }

  Result<ArrayDataPtr> DecodeDescriptions(const ColumnData& column, uint64_t num_rows,
                                          const std::string& where) {
    static const TypePtr kType = arrow::struct_(
        {arrow::field("position", arrow::uint64()), arrow::field("size", arrow::uint64())});
    return DecodePages(kType, column, num_rows, where);
  }

 private:
  Result<ArrayDataPtr> DecodePages(const TypePtr& type, const ColumnData& column, uint64_t num_rows,
                                   const std::string& where) {
    // The page lengths must add up before anything is allocated for them.
    uint64_t claimed = 0;
    for (const auto& page : column.pages) {
      if (page.length > kMaxValues || claimed + page.length > kMaxValues) {
        return Status::Invalid(where, ": absurd value count ", page.length);
      }
      claimed += page.length;
    }
    if (claimed != num_rows) {
      return Status::Invalid(where, ": the column's pages hold ", claimed, " values but ", num_rows,
                             " are expected");
    }
    std::vector<ArrayDataPtr> pieces;
    uint64_t total = 0;
    for (size_t p = 0; p < column.pages.size(); ++p) {
      const PageData& page = column.pages[p];
      if (page.length == 0) continue;
      const std::string page_where = where + ", page " + std::to_string(p);
      if (page.length > kMaxValues || total + page.length > kMaxValues) {
        return Status::Invalid(page_where, ": absurd value count ", page.length);
      }
      enc::ArrayEncoding encoding;
      LANCE_WRAP_ASSIGN(encoding, ParsePageEncoding(page), page_where);
      PageContext page_ctx{&column, &page, ctx_.pool};
      ArrayDataPtr data;
      LANCE_WRAP_ASSIGN(data, DecodeArray(encoding, type, page.length, page_ctx), page_where);
      pieces.push_back(std::move(data));
      total += page.length;
    }
    if (total != num_rows) {
      return Status::Invalid(where, ": the column's pages hold ", total, " values but ", num_rows,
                             " are expected");
    }
    ArrayDataPtr out;
    LANCE_WRAP_ASSIGN(out, Concat(pieces, type, ctx_.pool), where);
    return out;
  }

  Result<ArrayDataPtr> DecodeLeaf(const Field& field, const TypePtr& type, const ColumnData& column,
                                  uint64_t num_rows, const std::string& where) {
    ColumnKind kind;
    LANCE_WRAP_ASSIGN(kind, GetColumnKind(column), where);
    if (kind == ColumnKind::kBlob) return DecodeBlob(type, column, num_rows, where);
    return DecodePages(type, column, num_rows, where);
  }

  Result<ArrayDataPtr> DecodeBlob(const TypePtr& type, const ColumnData& column, uint64_t num_rows,
                                  const std::string& where) {
    const auto id = type->id();
    if (id != arrow::Type::LARGE_BINARY && id != arrow::Type::BINARY && id != arrow::Type::STRING &&
        id != arrow::Type::LARGE_STRING) {
      return Status::Invalid(where, ": blob column of non-binary type ", type->ToString());
    }
    if (ctx_.read_range == nullptr || !*ctx_.read_range) {
      return Status::NotImplemented(where, ": blob values live outside the column's pages; decoding "
                                           "them needs a FileRangeReader");
    }
    LANCE_ASSIGN_OR_RAISE(auto descriptions, DecodeDescriptions(column, num_rows, where));
    const auto& positions = *descriptions->child_data[0];
    const auto& sizes = *descriptions->child_data[1];
    std::vector<uint64_t> offsets(num_rows + 1, 0);
    LANCE_ASSIGN_OR_RAISE(auto validity, arrow::AllocateBuffer((num_rows + 7) / 8, ctx_.pool));
    arrow::bit_util::SetBitsTo(validity->mutable_data(), 0, static_cast<int64_t>(num_rows), true);
    int64_t null_count = 0;
    std::vector<std::shared_ptr<arrow::Buffer>> values(num_rows);
    for (uint64_t i = 0; i < num_rows; ++i) {
      const uint64_t position = positions.GetValues<uint64_t>(1)[i];
      const uint64_t size = sizes.GetValues<uint64_t>(1)[i];
      if (size == 0) {
        if (position == 1) {
          arrow::bit_util::ClearBit(validity->mutable_data(), static_cast<int64_t>(i));
          ++null_count;
        }
      } else {
        if (size > kMaxValues || offsets[i] + size > kMaxValues) {
          return Status::Invalid(where, ": blob ", i, " has an absurd size ", size);
        }
        auto read = (*ctx_.read_range)(position, size);
        if (!read.ok()) return Wrap(read.status(), where + ", blob " + std::to_string(i));
        values[i] = *read;
        if (!values[i] || static_cast<uint64_t>(values[i]->size()) != size) {
          return Status::Invalid(where, ": blob ", i, " at ", position, " should have ", size,
                                 " bytes but ", values[i] ? values[i]->size() : 0, " were read");
        }
      }
      offsets[i + 1] = offsets[i] + size;
    }
    LANCE_ASSIGN_OR_RAISE(auto data, arrow::AllocateBuffer(static_cast<int64_t>(offsets[num_rows]), ctx_.pool));
    for (uint64_t i = 0; i < num_rows; ++i) {
      if (values[i]) std::memcpy(data->mutable_data() + offsets[i], values[i]->data(), values[i]->size());
    }
    ArrayDataPtr out;
    LANCE_WRAP_ASSIGN(out,
                      MakeBinaryArray(type, num_rows, offsets, std::move(data), std::move(validity),
                                      null_count, ctx_.pool),
                      where);
    return out;
  }

  Result<ArrayDataPtr> DecodeStruct(const Field& field, const TypePtr& type,
                                    std::span<const ColumnData> columns, uint64_t num_rows,
                                    const std::string& path, const std::string& where) {
    if (type->id() != arrow::Type::STRUCT || type->num_fields() != static_cast<int>(field.children.size())) {
      return Status::Invalid(where, ": type ", type->ToString(), " does not match the struct field");
    }
    const ColumnData& header = columns[0];
    ColumnKind kind;
    LANCE_WRAP_ASSIGN(kind, GetColumnKind(header), where);
    if (kind != ColumnKind::kValues) return Status::Invalid(where, ": a struct header column cannot be a blob");
    // Writers since 0.17 emit one header page covering every row. 0.16 wrote
    // one page per flush, each counting all rows seen so far: accept both.
    uint64_t total = 0;
    uint64_t last = 0;
    for (size_t p = 0; p < header.pages.size(); ++p) {
      const PageData& page = header.pages[p];
      if (page.length == 0) continue;
      const std::string page_where = where + ", header page " + std::to_string(p);
      enc::ArrayEncoding encoding;
      LANCE_WRAP_ASSIGN(encoding, ParsePageEncoding(page), page_where);
      if (encoding.array_encoding_case() == enc::ArrayEncoding::kPackedStruct) {
        return Status::Invalid(page_where, ": the column is a packed struct but the field's metadata "
                                           "does not mark it packed");
      }
      if (encoding.array_encoding_case() != enc::ArrayEncoding::kStruct) {
        return Status::Invalid(page_where, ": expected a struct header page, found a ",
                               EncodingName(encoding), " encoding");
      }
      if (page.length > kMaxValues) return Status::Invalid(page_where, ": absurd row count ", page.length);
      total += page.length;
      last = page.length;
    }
    if (total != num_rows && last != num_rows) {
      return Status::Invalid(where, ": the struct header holds ", total, " rows but ", num_rows,
                             " are expected");
    }
    std::vector<ArrayDataPtr> children;
    size_t next = 1;
    for (size_t c = 0; c < field.children.size(); ++c) {
      const Field& child = field.children[c];
      const size_t n = CountColumns(child, columns.subspan(std::min(next, columns.size())));
      if (next + n > columns.size()) return Status::Invalid(where, ": too few columns for its children");
      LANCE_ASSIGN_OR_RAISE(auto data, Decode(child, type->field(static_cast<int>(c))->type(),
                                              columns.subspan(next, n), num_rows, path + "." + child.name));
      children.push_back(std::move(data));
      next += n;
    }
    return arrow::ArrayData::Make(type, static_cast<int64_t>(num_rows), {nullptr}, children, 0);
  }

  // The pre-0.16 list<uint8> form of a string or binary field.
  Result<ArrayDataPtr> DecodeLegacyString(const Field& field, const TypePtr& type,
                                          std::span<const ColumnData> columns, uint64_t num_rows,
                                          const std::string& path, const std::string& where) {
    Field list = field;
    list.logical_type = "large_list";
    Field item;
    item.name = "item";
    item.id = field.id;
    item.logical_type = "uint8";
    item.nullable = false;
    list.children = {item};
    auto list_type = arrow::large_list(arrow::field("item", arrow::uint8(), false));
    LANCE_ASSIGN_OR_RAISE(auto data, DecodeList(list, list_type, columns, num_rows, path, where));
    const auto& items = *data->child_data[0];
    std::vector<uint64_t> offsets(num_rows + 1);
    const int64_t* list_offsets = data->GetValues<int64_t>(1);
    for (uint64_t i = 0; i <= num_rows; ++i) offsets[i] = static_cast<uint64_t>(list_offsets[i]);
    auto bytes = arrow::SliceBuffer(items.buffers[1], items.offset, items.length);
    ArrayDataPtr out;
    LANCE_WRAP_ASSIGN(out,
                      MakeBinaryArray(type, num_rows, offsets, std::move(bytes), data->buffers[0],
                                      data->buffers[0] ? data->GetNullCount() : 0, ctx_.pool),
                      where);
    return out;
  }

  Result<ArrayDataPtr> DecodeList(const Field& field, const TypePtr& type, std::span<const ColumnData> columns,
                                  uint64_t num_rows, const std::string& path, const std::string& where) {
    const bool large = type->id() == arrow::Type::LARGE_LIST;
    if ((type->id() != arrow::Type::LIST && !large) || field.children.size() != 1) {
      return Status::Invalid(where, ": type ", type->ToString(), " does not match the list field");
    }
    const ColumnData& column = columns[0];
    ColumnKind kind;
    LANCE_WRAP_ASSIGN(kind, GetColumnKind(column), where);
    if (kind != ColumnKind::kValues) return Status::Invalid(where, ": a list offsets column cannot be a blob");

    uint64_t rows_in_pages = 0;
    for (const auto& page : column.pages) {
      if (page.length > kMaxValues || rows_in_pages + page.length > kMaxValues) {
        return Status::Invalid(where, ": absurd list count ", page.length);
      }
      rows_in_pages += page.length;
    }
    if (rows_in_pages != num_rows) {
      return Status::Invalid(where, ": the list column's pages hold ", rows_in_pages, " lists but ",
                             num_rows, " are expected");
    }

    // Offsets are u64 here and narrowed at the end; pages fill them in turn
    // (each bounded by its own buffer), so nothing is touched for lengths
    // that no buffer backs.
    LANCE_ASSIGN_OR_RAISE(auto offsets_buffer, arrow::AllocateBuffer((num_rows + 1) * 8, ctx_.pool));
    uint64_t* offsets = reinterpret_cast<uint64_t*>(offsets_buffer->mutable_data());
    offsets[0] = 0;
    LANCE_ASSIGN_OR_RAISE(auto validity, arrow::AllocateBuffer((num_rows + 7) / 8, ctx_.pool));
    int64_t null_count = 0;
    // Items of the child column that pages reference: [start, start + length).
    std::vector<std::pair<uint64_t, uint64_t>> kept;
    uint64_t items_base = 0;  // first item of the current page in the child column
    uint64_t kept_base = 0;   // first item of the current page in the output
    uint64_t row = 0;
    for (size_t p = 0; p < column.pages.size(); ++p) {
      const PageData& page = column.pages[p];
      if (page.length == 0) continue;
      const std::string page_where = where + ", offsets page " + std::to_string(p);
      enc::ArrayEncoding encoding;
      LANCE_WRAP_ASSIGN(encoding, ParsePageEncoding(page), page_where);
      if (encoding.array_encoding_case() != enc::ArrayEncoding::kList) {
        return Status::Invalid(page_where, ": expected a list offsets page, found a ",
                               EncodingName(encoding), " encoding");
      }
      const enc::List& list = encoding.list();
      if (!list.has_offsets()) return Status::Invalid(page_where, ": List has no offsets");
      const uint64_t adjustment = list.null_offset_adjustment();
      const uint64_t num_items = list.num_items();
      if (adjustment == 0) return Status::Invalid(page_where, ": List null_offset_adjustment is 0");
      if (num_items > kMaxValues || items_base + num_items > kMaxValues) {
        return Status::Invalid(page_where, ": absurd item count ", num_items);
      }
      PageContext page_ctx{&column, &page, ctx_.pool};
      std::shared_ptr<arrow::Buffer> raw;
      LANCE_WRAP_ASSIGN(raw, DecodeFixedWidth(list.offsets(), 64, page.length, page_ctx), page_where);
      arrow::bit_util::SetBitsTo(validity->mutable_data(), static_cast<int64_t>(row),
                                 static_cast<int64_t>(page.length), true);
      uint64_t prev = 0;
      for (uint64_t i = 0; i < page.length; ++i, ++row) {
        uint64_t end;
        std::memcpy(&end, raw->data() + i * 8, 8);
        if (end >= adjustment) {
          end -= adjustment;
          if (end >= adjustment) {
            return Status::Invalid(page_where, ": list offset ", end + adjustment, " of list ", i,
                                   " is past twice the null offset adjustment ", adjustment);
          }
          arrow::bit_util::ClearBit(validity->mutable_data(), static_cast<int64_t>(row));
          ++null_count;
        }
        if (end < prev) {
          return Status::Invalid(page_where, ": list offsets decrease at list ", i, " (", prev, " then ",
                                 end, ")");
        }
        if (end > num_items) {
          return Status::Invalid(page_where, ": list offset ", end, " of list ", i,
                                 " is past the page's ", num_items, " items");
        }
        offsets[row + 1] = kept_base + end;
        prev = end;
      }
      if (prev > 0) kept.emplace_back(items_base, prev);
      kept_base += prev;
      items_base += num_items;
    }

    const Field& child = field.children[0];
    const auto& child_type = static_cast<const arrow::BaseListType&>(*type).value_type();
    LANCE_ASSIGN_OR_RAISE(auto items, Decode(child, child_type, columns.subspan(1), items_base,
                                             path + "." + child.name));
    if (kept_base != items_base) {
      // Some page covers items its offsets do not reach: keep only those used.
      auto all = arrow::MakeArray(items);
      arrow::ArrayVector slices;
      for (const auto& [start, length] : kept) {
        slices.push_back(all->Slice(static_cast<int64_t>(start), static_cast<int64_t>(length)));
      }
      if (slices.empty()) {
        LANCE_ASSIGN_OR_RAISE(auto empty, arrow::MakeEmptyArray(child_type, ctx_.pool));
        items = empty->data();
      } else {
        LANCE_ASSIGN_OR_RAISE(auto joined, arrow::Concatenate(slices, ctx_.pool));
        items = joined->data();
      }
    }
    if (!large && kept_base > static_cast<uint64_t>(std::numeric_limits<int32_t>::max())) {
      return Status::Invalid(where, ": ", kept_base, " items do not fit the 32-bit offsets of a list");
    }
    const int width = large ? 8 : 4;
    LANCE_ASSIGN_OR_RAISE(auto out_offsets, arrow::AllocateBuffer((num_rows + 1) * width, ctx_.pool));
    for (uint64_t i = 0; i <= num_rows; ++i) {
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
    return arrow::ArrayData::Make(type, static_cast<int64_t>(num_rows), {bitmap, std::move(out_offsets)},
                                  {items}, null_count);
  }

  Context ctx_;
};

Result<std::shared_ptr<arrow::Array>> DecodeTop(const Field& field, std::span<const ColumnData> columns,
                                                uint64_t num_rows, arrow::MemoryPool* pool,
                                                const FileRangeReader* read_range) {
  const std::string where = Where(field, field.name);
  std::shared_ptr<arrow::DataType> type;
  LANCE_WRAP_ASSIGN(type, ArrowTypeFromField(field), where);
  FieldDecoder decoder(Context{pool, read_range});
  LANCE_ASSIGN_OR_RAISE(auto data, decoder.Decode(field, type, columns, num_rows, field.name));
  auto array = arrow::MakeArray(data);
  LANCE_RETURN_NOT_OK(Wrap(array->Validate(), where + ": decoded data is inconsistent"));
  return array;
}

}  // namespace

int NumColumns(const Field& field, std::span<const ColumnData> columns) {
  return static_cast<int>(CountColumns(field, columns));
}

int NumColumns(const Field& field) {
  const std::string& lt = field.logical_type;
  if (lt == "struct") {
    if (IsPackedStruct(field)) return 1;
    int n = 1;
    for (const auto& child : field.children) n += NumColumns(child);
    return n;
  }
  if (IsListType(lt) || lt == "map") {
    int n = 1;
    for (const auto& child : field.children) n += NumColumns(child);
    return n;
  }
  return 1;
}

Result<std::shared_ptr<arrow::Array>> DecodeField(const Field& field, std::span<const ColumnData> columns,
                                                  uint64_t num_rows, arrow::MemoryPool* pool) {
  return DecodeTop(field, columns, num_rows, pool, nullptr);
}

Result<std::shared_ptr<arrow::Array>> DecodeField(const Field& field, std::span<const ColumnData> columns,
                                                  uint64_t num_rows, arrow::MemoryPool* pool,
                                                  const FileRangeReader& read_range) {
  return DecodeTop(field, columns, num_rows, pool, &read_range);
}

Result<std::shared_ptr<arrow::Array>> DecodeBlobDescriptions(const Field& field, const ColumnData& column,
                                                             uint64_t num_rows, arrow::MemoryPool* pool) {
  const std::string where = Where(field, field.name);
  ColumnKind kind;
  LANCE_WRAP_ASSIGN(kind, GetColumnKind(column), where);
  if (kind != ColumnKind::kBlob) return Status::Invalid(where, ": not a blob column");
  FieldDecoder decoder(Context{pool, nullptr});
  LANCE_ASSIGN_OR_RAISE(auto data, decoder.DecodeDescriptions(column, num_rows, where));
  return arrow::MakeArray(data);
}

}  // namespace lance::file::v2_0
