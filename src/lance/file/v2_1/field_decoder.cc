#include "lance/file/v2_1/field_decoder.h"
#include "lance/file/validate_array.h"
#include "lance/util/protobuf.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <string>

#include <arrow/array/concatenate.h>
#include <arrow/array/util.h>
#include <arrow/builder.h>
#include <arrow/compute/api.h>
#include <arrow/type.h>
#include <arrow/util/checked_cast.h>

#include "lance/encodings_v2_0.pb.h"
#include "lance/file/v2_1/bytes.h"
#include "lance/file/v2_1/page.h"
#include "lance/file/v2_1/repdef.h"

namespace lance::file::v2_1 {

namespace {

constexpr const char* kColumnEncodingTypeUrl = "/lance.encodings.ColumnEncoding";

bool MetadataIsTrue(const Field& field, const char* key) {
  auto it = field.metadata.find(key);
  if (it == field.metadata.end()) return false;
  std::string v = it->second;
  std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return std::tolower(c); });
  return v == "true";
}

bool IsPackedStruct(const Field& field) {
  return field.logical_type == "struct" &&
         (MetadataIsTrue(field, "packed") || MetadataIsTrue(field, "lance-encoding:packed"));
}

bool IsBlob(const Field& field) {
  return field.metadata.count("lance-encoding:blob") > 0 &&
         (field.logical_type == "large_binary" || field.logical_type == "binary");
}

bool IsList(const Field& field) {
  const auto& lt = field.logical_type;
  return lt == "list" || lt == "list.struct" || lt == "large_list" || lt == "large_list.struct";
}

bool IsStructFsl(const Field& field) {
  return field.logical_type.starts_with("fixed_size_list:struct:") && !field.children.empty();
}

// Fields whose values live in a single column (everything but structs,
// lists, maps and fixed-size lists of structs).
bool IsLeaf(const Field& field) {
  if (IsPackedStruct(field) || IsBlob(field)) return true;
  if (field.logical_type == "struct" || IsList(field) || field.logical_type == "map" || IsStructFsl(field)) {
    return false;
  }
  return true;
}

Status AnnotateField(const Status& st, const Field& field) {
  if (st.ok()) return st;
  return st.WithMessage("field '", field.name, "' (id ", field.id, "): ", st.message());
}

std::shared_ptr<arrow::ArrayData> WithValidity(const std::shared_ptr<arrow::ArrayData>& data,
                                               std::shared_ptr<arrow::Buffer> validity) {
  auto out = data->Copy();
  out->buffers[0] = std::move(validity);
  out->null_count = arrow::kUnknownNullCount;
  return out;
}

// The rows a page's levels describe: list starts at the outermost depth,
// or one per level/item without repetition.
uint64_t RowsInLevels(const PageLevels& levels) {
  if (levels.rep) {
    const uint16_t max_rep = MaxRep(levels.layers);
    uint64_t n = 0;
    for (uint16_t r : *levels.rep) n += r == max_rep ? 1 : 0;
    return n;
  }
  if (levels.def) return levels.def->size();
  return levels.num_items;
}

struct Decoded {
  std::shared_ptr<arrow::Array> array;
  RepDefUnraveler repdef;
};

class Assembler {
 public:
  // `rows`: when set, only these rows (ascending) of a field without
  // repetition are kept from each page.
  Assembler(std::span<const ColumnData> columns, FileVersion version, arrow::MemoryPool* pool,
            const BlobReader* blob_reader, const std::vector<uint64_t>* rows = nullptr)
      : columns_(columns), version_(version), pool_(pool), blob_reader_(blob_reader), rows_(rows) {}

  // `page_rows` is how many rows the leaf pages below hold in total: the
  // file's rows, times the dimension of each enclosing fixed-size list of
  // structs (lists do not change it: their pages count top-level rows).
  Result<Decoded> Decode(const Field& field, const std::shared_ptr<arrow::DataType>& type, uint64_t page_rows) {
    if (IsLeaf(field)) return DecodeLeaf(field, type, page_rows);
    if (field.logical_type == "struct") return DecodeStruct(field, type, page_rows);
    if (IsList(field) || field.logical_type == "map") return DecodeList(field, type, page_rows);
    if (IsStructFsl(field)) return DecodeStructFsl(field, type, page_rows);
    return Status::NotImplemented("field '", field.name, "' of type ", field.logical_type);
  }

 private:
  Status CheckColumnEncoding(const ColumnData& column) {
    if (column.encoding_type_url.empty() && column.encoding.empty()) return Status::OK();
    if (column.encoding_type_url != kColumnEncodingTypeUrl) {
      return Status::NotImplemented("column encoding '", column.encoding_type_url, "'");
    }
    lance::pb::encodings20::ColumnEncoding encoding;
    if (!util::ParseMessage(column.encoding, &encoding)) return Corrupt("the column encoding protobuf does not parse");
    switch (encoding.column_encoding_case()) {
      case lance::pb::encodings20::ColumnEncoding::kValues:
      case lance::pb::encodings20::ColumnEncoding::kBlob:
      case lance::pb::encodings20::ColumnEncoding::COLUMN_ENCODING_NOT_SET:
        return Status::OK();
      default:
        return Status::NotImplemented("column encoding ", static_cast<int>(encoding.column_encoding_case()));
    }
  }

  Result<Decoded> DecodeLeaf(const Field& field, const std::shared_ptr<arrow::DataType>& type, uint64_t page_rows) {
    if (next_ >= columns_.size()) return Status::Invalid("not enough columns for field '", field.name, "'");
    const size_t column_index = next_++;
    const ColumnData& column = columns_[column_index];
    LANCE_RETURN_NOT_OK(CheckColumnEncoding(column));
    uint64_t total_rows = 0;
    for (const auto& page : column.pages) {
      if (AddOverflows(total_rows, page.length, &total_rows)) return Corrupt("page row counts overflow");
    }
    if (total_rows != page_rows) {
      return Corrupt("the pages of column ", column_index, " hold ", total_rows, " rows, expected ", page_rows);
    }
    PageContext ctx;
    ctx.leaf_type = type;
    ctx.version = version_;
    ctx.pool = pool_;
    ctx.blob_reader = blob_reader_;
    std::vector<PageLevels> levels;
    std::vector<std::shared_ptr<arrow::Array>> arrays;
    uint64_t page_start = 0;
    size_t next_row = 0;  // the first of rows_ not yet in a page
    for (size_t p = 0; p < column.pages.size(); ++p) {
      // The rows of this page to keep, relative to it.
      std::vector<uint64_t> local;
      if (rows_) {
        const uint64_t page_end = page_start + column.pages[p].length;
        for (; next_row < rows_->size() && (*rows_)[next_row] < page_end; ++next_row) {
          local.push_back((*rows_)[next_row] - page_start);
        }
        page_start = page_end;
        ctx.kept_rows = &local;
      }
      auto page = DecodePage(column.pages[p], ctx);
      uint64_t page_rows_kept = column.pages[p].length;
      if (page.ok() && rows_) {
        page = KeepRows(*page, column.pages[p].length, local);
        page_rows_kept = local.size();
      }
      Result<std::shared_ptr<arrow::Array>> array =
          page.ok() ? PageValuesToArrow(*page, ctx) : Result<std::shared_ptr<arrow::Array>>(page.status());
      if (!array.ok()) {
        return array.status().WithMessage("column ", column_index, " page ", p, ": ", array.status().message());
      }
      const uint64_t rows_in_levels = RowsInLevels(page->levels);
      if (rows_in_levels != page_rows_kept) {
        return Corrupt("column ", column_index, " page ", p, " holds ", rows_in_levels, " rows but declares ",
                       page_rows_kept);
      }
      arrays.push_back(std::move(*array));
      levels.push_back(std::move(page->levels));
    }
    std::shared_ptr<arrow::Array> values;
    if (arrays.empty()) {
      LANCE_ASSIGN_OR_RAISE(values, arrow::MakeEmptyArray(type, pool_));
    } else if (arrays.size() == 1) {
      values = arrays[0];
    } else {
      LANCE_ASSIGN_OR_RAISE(values, arrow::Concatenate(arrays, pool_));
    }
    Decoded out{std::move(values), RepDefUnraveler(std::move(levels))};
    LANCE_ASSIGN_OR_RAISE(auto validity,
                          out.repdef.UnravelValidity(static_cast<uint64_t>(out.array->length()), pool_));
    if (validity && type->id() != arrow::Type::NA) {
      out.array = arrow::MakeArray(WithValidity(out.array->data(), std::move(validity)));
    }
    return out;
  }

  // The page with only the values and levels of rows `local` (ascending,
  // relative to the page) of its `length` rows. Without repetition a row is
  // one level and one value; with it, a row runs from one level of the
  // outermost repetition to the next, and holds the values of its visible
  // levels.
  Result<DecodedPage> KeepRows(const DecodedPage& page, uint64_t length, const std::vector<uint64_t>& local) {
    if (page.rows_kept) {
      if (page.values.num_values != local.size() && !page.levels.rep) {
        return Corrupt("a page decoded ", page.values.num_values, " of the ", local.size(), " rows kept");
      }
      return page;
    }
    bool every_row = local.size() == length;
    for (uint64_t k = 0; every_row && k < local.size(); ++k) every_row = local[k] == k;
    if (every_row) return page;
    const auto& rep = page.levels.rep;
    const auto& def = page.levels.def;
    const uint64_t num_levels = rep ? rep->size() : def ? def->size() : page.values.num_values;
    if (def && def->size() != num_levels) {
      return Corrupt(num_levels, " repetition levels but ", def->size(), " definition levels");
    }
    std::vector<uint64_t> value_indices;
    std::vector<uint16_t> kept_rep, kept_def;
    for (uint64_t r : local) {
      if (r >= length) return Corrupt("row ", r, " of a page of ", length);
    }
    if (rep) {
      // One walk over the levels: a row runs from one level of the outermost
      // repetition to the next; the kept rows (ascending) are copied as
      // their ends are reached.
      const uint16_t max_rep = MaxRep(page.levels.layers);
      const uint16_t max_visible = MaxVisibleDef(page.levels.layers);
      if (num_levels > 0 && (*rep)[0] != max_rep) return Corrupt("a page's levels do not start a row");
      size_t k = 0;
      uint64_t row = 0, values = 0, row_level = 0, row_value = 0;
      auto finish_row = [&](uint64_t level_end, uint64_t value_end) {
        for (; k < local.size() && local[k] == row; ++k) {
          kept_rep.insert(kept_rep.end(), rep->begin() + row_level, rep->begin() + level_end);
          if (def) kept_def.insert(kept_def.end(), def->begin() + row_level, def->begin() + level_end);
          for (uint64_t v = row_value; v < value_end; ++v) value_indices.push_back(v);
        }
      };
      for (uint64_t i = 0; i < num_levels; ++i) {
        if (i > 0 && (*rep)[i] == max_rep) {
          finish_row(i, values);
          ++row;
          row_level = i;
          row_value = values;
        }
        values += !def || (*def)[i] <= max_visible ? 1 : 0;
      }
      if (num_levels > 0) finish_row(num_levels, values);
      const uint64_t rows_seen = num_levels > 0 ? row + 1 : 0;
      if (rows_seen != length || values != page.values.num_values) {
        return Corrupt("a page of ", length, " rows has levels of ", rows_seen, " rows and ", values,
                       " values where it holds ", page.values.num_values);
      }
    } else {
      if (num_levels != length || page.values.num_values != length) {
        return Corrupt("a page of ", length, " rows without repetition holds ", page.values.num_values, " values");
      }
      value_indices = local;
      if (def) {
        for (uint64_t r : local) kept_def.push_back((*def)[r]);
      }
    }
    DecodedPage out;
    LANCE_ASSIGN_OR_RAISE(out.values, TakeBlock(page.values, value_indices, pool_));
    out.dictionary = page.dictionary;
    out.levels.layers = page.levels.layers;
    if (rep) out.levels.rep = std::move(kept_rep);
    if (def) out.levels.def = std::move(kept_def);
    out.levels.num_items = value_indices.size();
    return out;
  }

  Result<Decoded> DecodeStruct(const Field& field, const std::shared_ptr<arrow::DataType>& type, uint64_t page_rows) {
    if (field.children.empty()) {
      return Status::NotImplemented("struct field '", field.name, "' without children inside another field");
    }
    if (type->num_fields() != static_cast<int>(field.children.size())) {
      return Status::Invalid("struct field '", field.name, "' type does not match its children");
    }
    std::vector<std::shared_ptr<arrow::ArrayData>> children;
    std::optional<Decoded> first;
    for (size_t i = 0; i < field.children.size(); ++i) {
      auto child = Decode(field.children[i], type->field(static_cast<int>(i))->type(), page_rows);
      if (!child.ok()) return AnnotateField(child.status(), field.children[i]);
      if (first && child->array->length() != first->array->length()) {
        return Corrupt("struct field '", field.name, "' children have ", first->array->length(), " and ",
                       child->array->length(), " values");
      }
      children.push_back(child->array->data());
      if (!first) first = std::move(*child);
    }
    const int64_t length = first->array->length();
    LANCE_ASSIGN_OR_RAISE(auto validity, first->repdef.UnravelValidity(static_cast<uint64_t>(length), pool_));
    auto data = arrow::ArrayData::Make(type, length, {std::move(validity)}, std::move(children),
                                       arrow::kUnknownNullCount);
    return Decoded{arrow::MakeArray(data), std::move(first->repdef)};
  }

  Result<Decoded> DecodeList(const Field& field, const std::shared_ptr<arrow::DataType>& type, uint64_t page_rows) {
    if (field.children.size() != 1) {
      return Status::Invalid("list field '", field.name, "' has ", field.children.size(), " children");
    }
    auto child_type = type->field(0)->type();
    auto child = Decode(field.children[0], child_type, page_rows);
    if (!child.ok()) return AnnotateField(child.status(), field.children[0]);
    LANCE_ASSIGN_OR_RAISE(auto layer, child->repdef.UnravelOffsets(pool_));
    const int64_t num_lists = static_cast<int64_t>(layer.offsets.size()) - 1;
    const int64_t child_length = child->array->length();
    if (layer.offsets.back() != child_length) {
      return Corrupt("list field '", field.name, "' offsets end at ", layer.offsets.back(), " but it has ",
                     child_length, " items");
    }
    std::shared_ptr<arrow::Buffer> offsets;
    if (type->id() == arrow::Type::LARGE_LIST) {
      LANCE_ASSIGN_OR_RAISE(offsets, arrow::AllocateBuffer((num_lists + 1) * 8, pool_));
      std::memcpy(offsets->mutable_data(), layer.offsets.data(), (num_lists + 1) * 8);
    } else {
      if (child_length > std::numeric_limits<int32_t>::max()) {
        return Status::CapacityError("list field '", field.name, "' has more than 2^31 items; use a large list");
      }
      LANCE_ASSIGN_OR_RAISE(offsets, arrow::AllocateBuffer((num_lists + 1) * 4, pool_));
      auto* dst = reinterpret_cast<int32_t*>(offsets->mutable_data());
      for (int64_t i = 0; i <= num_lists; ++i) dst[i] = static_cast<int32_t>(layer.offsets[i]);
    }
    auto child_data = child->array->data();
    if (type->id() == arrow::Type::MAP && child_data->null_count != 0) {
      // Map entries are never null; a null map is a null list.
      if (child_data->GetNullCount() > 0) return Corrupt("map field '", field.name, "' has null entries");
      child_data = child_data->Copy();
      child_data->buffers[0] = nullptr;
      child_data->null_count = 0;
    }
    auto data = arrow::ArrayData::Make(type, num_lists, {std::move(layer.validity), std::move(offsets)},
                                       {std::move(child_data)}, arrow::kUnknownNullCount);
    return Decoded{arrow::MakeArray(data), std::move(child->repdef)};
  }

  Result<Decoded> DecodeStructFsl(const Field& field, const std::shared_ptr<arrow::DataType>& type,
                                  uint64_t page_rows) {
    const auto& fsl = arrow::internal::checked_cast<const arrow::FixedSizeListType&>(*type);
    const int64_t dim = fsl.list_size();
    uint64_t child_rows;
    if (dim <= 0 || MulOverflows(page_rows, static_cast<uint64_t>(dim), &child_rows)) {
      return Corrupt("fixed-size list field '", field.name, "' of dimension ", dim);
    }
    // Keeping rows: the child keeps the items of those rows, `dim` per row.
    std::vector<uint64_t> items;
    const std::vector<uint64_t>* kept_rows = rows_;
    if (kept_rows) {
      items.reserve(kept_rows->size() * static_cast<uint64_t>(dim));
      for (uint64_t r : *kept_rows) {
        for (int64_t j = 0; j < dim; ++j) items.push_back(r * static_cast<uint64_t>(dim) + static_cast<uint64_t>(j));
      }
      rows_ = &items;
    }
    auto child = Decode(field.children[0], fsl.value_type(), child_rows);
    rows_ = kept_rows;
    if (!child.ok()) return AnnotateField(child.status(), field.children[0]);
    if (dim <= 0 || child->array->length() % dim != 0) {
      return Corrupt("fixed-size list field '", field.name, "' has ", child->array->length(),
                     " items, not a multiple of ", dim);
    }
    const int64_t length = child->array->length() / dim;
    LANCE_RETURN_NOT_OK(child->repdef.Decimate(static_cast<uint64_t>(dim)));
    LANCE_ASSIGN_OR_RAISE(auto validity, child->repdef.UnravelValidity(static_cast<uint64_t>(length), pool_));
    auto data = arrow::ArrayData::Make(type, length, {std::move(validity)}, {child->array->data()},
                                       arrow::kUnknownNullCount);
    return Decoded{arrow::MakeArray(data), std::move(child->repdef)};
  }

  std::span<const ColumnData> columns_;
  size_t next_ = 0;
  FileVersion version_;
  arrow::MemoryPool* pool_;
  const BlobReader* blob_reader_;
  const std::vector<uint64_t>* rows_;
};

// Appends ItemsPerRow() of `field`, whose rows each span `scale` items of
// its parent's pages; `in_list` when a list encloses it.
void CollectItemsPerRow(const Field& field, uint64_t scale, bool in_list, std::vector<uint64_t>* out) {
  if (IsLeaf(field)) {
    out->push_back(scale);
    return;
  }
  if (IsStructFsl(field)) {
    // Inside a list the items of a fixed-size list are not a fixed run of
    // the top-level rows.
    const auto colon = field.logical_type.rfind(':');
    int64_t dim = 0;
    for (size_t k = colon + 1; k < field.logical_type.size() && dim < (int64_t{1} << 31); ++k) {
      const char ch = field.logical_type[k];
      if (ch < '0' || ch > '9') {
        dim = 0;
        break;
      }
      dim = dim * 10 + (ch - '0');
    }
    if (in_list || dim <= 0 || MulOverflows(scale, static_cast<uint64_t>(dim), &scale)) scale = 0;
  }
  const bool list = IsList(field) || field.logical_type == "map";
  for (const auto& child : field.children) CollectItemsPerRow(child, scale, in_list || list, out);
}

// Whether each row of `field` maps to a fixed run of items in every one of
// its columns, so that a take can keep just those items of each page.
bool RowsSelectable(const Field& field) {
  std::vector<uint64_t> items;
  CollectItemsPerRow(field, 1, false, &items);
  return std::all_of(items.begin(), items.end(), [](uint64_t n) { return n > 0; });
}

}  // namespace

int NumColumns(const Field& field) {
  if (IsLeaf(field)) return 1;
  int n = 0;
  for (const auto& child : field.children) n += NumColumns(child);
  return n;
}

std::vector<uint64_t> ItemsPerRow(const Field& field) {
  std::vector<uint64_t> out;
  CollectItemsPerRow(field, 1, false, &out);
  return out;
}

namespace {

// DecodeField, or with `rows` DecodeFieldRows.
Result<std::shared_ptr<arrow::Array>> Decode(const Field& field, std::span<const ColumnData> columns,
                                             uint64_t num_rows, FileVersion version, arrow::MemoryPool* pool,
                                             const BlobReader& blob_reader, const std::vector<uint64_t>* rows) {
  if (version != FileVersion::kV2_1 && version != FileVersion::kV2_2) {
    return Status::Invalid("the 2.1 field decoder cannot read file version ", FileVersionToString(version));
  }
  if (pool == nullptr) pool = arrow::default_memory_pool();
  auto result = [&]() -> Result<std::shared_ptr<arrow::Array>> {
    LANCE_ASSIGN_OR_RAISE(auto type, ArrowTypeFromField(field));
    const int expected = NumColumns(field);
    if (columns.size() != static_cast<size_t>(expected)) {
      return Status::Invalid("expected ", expected, " columns, got ", columns.size());
    }
    if (num_rows > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return Status::Invalid("too many rows: ", num_rows);
    }
    const uint64_t out_rows = rows ? rows->size() : num_rows;
    if (expected == 0) {
      if (field.logical_type != "struct") return Status::Invalid("a non-struct field without columns");
      auto data = arrow::ArrayData::Make(type, static_cast<int64_t>(out_rows), {nullptr}, {}, 0);
      return arrow::MakeArray(data);
    }
    Assembler assembler(columns, version, pool, &blob_reader, rows);
    LANCE_ASSIGN_OR_RAISE(Decoded decoded, assembler.Decode(field, type, num_rows));
    LANCE_RETURN_NOT_OK(decoded.repdef.CheckExhausted());
    if (static_cast<uint64_t>(decoded.array->length()) != out_rows) {
      return Corrupt("decoded ", decoded.array->length(), " rows, expected ", out_rows);
    }
    LANCE_RETURN_NOT_OK(ValidateDecodedArray(*decoded.array));
    return decoded.array;
  }();
  if (!result.ok()) return AnnotateField(result.status(), field);
  return result;
}

}  // namespace

Result<std::shared_ptr<arrow::Array>> DecodeField(const Field& field, std::span<const ColumnData> columns,
                                                  uint64_t num_rows, FileVersion version, arrow::MemoryPool* pool,
                                                  const BlobReader& blob_reader) {
  return Decode(field, columns, num_rows, version, pool, blob_reader, nullptr);
}

Result<std::shared_ptr<arrow::Array>> DecodeFieldRows(const Field& field, std::span<const ColumnData> columns,
                                                      uint64_t num_rows, FileVersion version,
                                                      arrow::MemoryPool* pool, const BlobReader& blob_reader,
                                                      const std::vector<uint64_t>& rows) {
  for (size_t k = 0; k < rows.size(); ++k) {
    if (rows[k] >= num_rows || (k > 0 && rows[k] < rows[k - 1])) {
      return Status::Invalid("field '", field.name, "': rows to decode must be ascending and below ", num_rows);
    }
  }
  if (RowsSelectable(field)) return Decode(field, columns, num_rows, version, pool, blob_reader, &rows);
  LANCE_ASSIGN_OR_RAISE(auto all, Decode(field, columns, num_rows, version, pool, blob_reader, nullptr));
  arrow::UInt64Builder indices(pool);
  LANCE_RETURN_NOT_OK(indices.AppendValues(rows));
  std::shared_ptr<arrow::Array> index_array;
  LANCE_RETURN_NOT_OK(indices.Finish(&index_array));
  LANCE_ASSIGN_OR_RAISE(auto taken, arrow::compute::Take(all, index_array));
  return taken.make_array();
}

Result<std::shared_ptr<arrow::Array>> DecodeField(const Field& field, std::span<const ColumnData> columns,
                                                  uint64_t num_rows, FileVersion version, arrow::MemoryPool* pool) {
  return DecodeField(field, columns, num_rows, version, pool, BlobReader());
}

}  // namespace lance::file::v2_1
