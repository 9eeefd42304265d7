// The 2.1/2.2 field encoder: shreds each appended array into its leaf
// columns, buffers them per column until the column's cache fills, and
// encodes what is buffered as one page. As in the reference, max_page_bytes
// only sizes 2.0 pages: a 2.1+ page is cut into chunks instead, so the cache
// alone decides where pages end.
#include <algorithm>
#include <limits>

#include <arrow/array/concatenate.h>
#include <arrow/array/util.h>
#include <arrow/util/bit_util.h>
#include <arrow/util/byte_size.h>

#include "lance/file/field_encoder.h"
#include "lance/file/v2_0/array_encoder.h"
#include "lance/file/blob_v2.h"
#include "lance/file/v2_1/encode_blob.h"
#include "lance/file/v2_1/encode_blob_v2.h"
#include "lance/file/v2_1/encode_levels.h"
#include "lance/file/v2_1/encode_page.h"

namespace lance::file {

namespace {

using v2_1::LeafPath;
using v2_1::LeafStep;

constexpr const char* kColumnEncodingTypeUrl = "/lance.encodings.ColumnEncoding";
// ColumnEncoding{values: Empty}: field 1, empty message.
constexpr char kValuesColumnEncoding[] = {0x0A, 0x00};

// The leaf field a path ends at.
const Field& LeafFieldOf(const Field& top, const LeafPath& path) {
  const Field* f = &top;
  for (const auto& step : path.steps) {
    if (step.kind == LeafStep::Kind::kStruct) {
      f = &f->children[step.child_index];
    } else if (step.kind == LeafStep::Kind::kList || step.kind == LeafStep::Kind::kFixedList) {
      f = &f->children[0];
    }
  }
  return *f;
}

bool ContainsMap(const Field& field) {
  if (field.logical_type == "map") return true;
  for (const auto& child : field.children) {
    if (ContainsMap(child)) return true;
  }
  return false;
}

// Concatenates dictionary arrays as the reference does: dictionaries are
// appended (not unified) and each array's keys shifted past the earlier
// dictionaries -- null slots too. Only when the keys would overflow are the
// dictionaries unified.
template <typename Key>
Result<std::shared_ptr<arrow::Array>> AppendDictionaries(const std::vector<std::shared_ptr<arrow::Array>>& arrays) {
  int64_t total_items = 0, total_rows = 0;
  arrow::ArrayVector dictionaries;
  for (const auto& a : arrays) {
    const auto& d = static_cast<const arrow::DictionaryArray&>(*a);
    total_items += d.dictionary()->length();
    total_rows += d.length();
    dictionaries.push_back(d.dictionary());
  }
  if (total_items > static_cast<int64_t>(std::numeric_limits<Key>::max())) return arrow::Concatenate(arrays);
  LANCE_ASSIGN_OR_RAISE(auto keys, arrow::AllocateBuffer(total_rows * static_cast<int64_t>(sizeof(Key))));
  LANCE_ASSIGN_OR_RAISE(auto validity, arrow::AllocateBitmap(total_rows));
  auto* out = reinterpret_cast<Key*>(keys->mutable_data());
  int64_t row = 0, shift = 0, nulls = 0;
  for (const auto& a : arrays) {
    const auto& d = static_cast<const arrow::DictionaryArray&>(*a);
    const auto& data = *d.indices()->data();
    const Key* in = data.GetValues<Key>(1);
    for (int64_t i = 0; i < data.length; ++i) {
      out[row + i] = static_cast<Key>(in[i] + shift);
      const bool valid = d.indices()->IsValid(i);
      arrow::bit_util::SetBitTo(validity->mutable_data(), row + i, valid);
      nulls += valid ? 0 : 1;
    }
    row += data.length;
    shift += d.dictionary()->length();
  }
  LANCE_ASSIGN_OR_RAISE(auto dictionary, arrow::Concatenate(dictionaries));
  const auto& type = arrays[0]->type();
  const auto& key_type = static_cast<const arrow::DictionaryType&>(*type).index_type();
  auto indices = arrow::ArrayData::Make(key_type, total_rows,
                                        {nulls > 0 ? std::shared_ptr<arrow::Buffer>(std::move(validity)) : nullptr,
                                         std::shared_ptr<arrow::Buffer>(std::move(keys))},
                                        nulls);
  auto out_data = indices->Copy();
  out_data->type = type;
  out_data->dictionary = dictionary->data();
  return arrow::MakeArray(out_data);
}

Result<std::shared_ptr<arrow::Array>> ConcatenateValues(const std::vector<std::shared_ptr<arrow::Array>>& arrays) {
  if (arrays.size() == 1) return arrays[0];
  if (arrays[0]->type_id() != arrow::Type::DICTIONARY) return arrow::Concatenate(arrays);
  switch (static_cast<const arrow::DictionaryType&>(*arrays[0]->type()).index_type()->id()) {
    case arrow::Type::INT8: return AppendDictionaries<int8_t>(arrays);
    case arrow::Type::UINT8: return AppendDictionaries<uint8_t>(arrays);
    case arrow::Type::INT16: return AppendDictionaries<int16_t>(arrays);
    case arrow::Type::UINT16: return AppendDictionaries<uint16_t>(arrays);
    case arrow::Type::INT32: return AppendDictionaries<int32_t>(arrays);
    case arrow::Type::UINT32: return AppendDictionaries<uint32_t>(arrays);
    case arrow::Type::INT64: return AppendDictionaries<int64_t>(arrays);
    default: return arrow::Concatenate(arrays);
  }
}

// What the reference counts against the column cache for a leaf array:
// arrow-rs's get_array_memory_size of the array with its validity taken
// out (it moves into the def levels before the array is queued).
uint64_t ReferenceMemorySize(const arrow::Array& values) {
  auto data = values.data()->Copy();
  if (!data->buffers.empty()) data->buffers[0] = nullptr;
  data->null_count = 0;
  return v2_0::ArrayMemorySize(*arrow::MakeArray(data));
}

struct LeafColumn {
  LeafPath path;
  std::map<std::string, std::string> metadata;
  std::vector<uint16_t> rep, def;
  // Def levels not yet in `def`, all 0, that come before it: a column
  // without nulls buffers a count, not two bytes a value.
  uint64_t zero_defs = 0;
  std::vector<bool> step_has_nulls;  // of the buffered rows
  std::vector<std::map<std::string, std::string>> packed_child_metadata;  // a packed struct's children
  std::vector<std::shared_ptr<arrow::Array>> values;
  // Buffered rows: top-level rows times path.items_per_row (a fixed-size
  // list of structs makes each row that many page rows, as the reference).
  uint64_t rows = 0;
  uint64_t first_row = 0;  // top-level row of the buffered rows
  uint64_t cache_bytes = 0;  // what the reference counts against the cache
  // A blob leaf hands its values to its own encoder at once (nothing above
  // is buffered for it).
  std::unique_ptr<v2_1::BlobLeafEncoder> blob;
};

class StructuralFieldEncoder : public FieldEncoder {
 public:
  StructuralFieldEncoder(std::string name, std::vector<LeafColumn> leaves, uint32_t first_column,
                         EncoderOptions options)
      : name_(std::move(name)), leaves_(std::move(leaves)), first_column_(first_column), options_(options) {}

  uint32_t num_columns() const override { return static_cast<uint32_t>(leaves_.size()); }

  Result<std::vector<EncodedPage>> Append(const std::shared_ptr<arrow::Array>& array) override {
    std::vector<EncodedPage> pages;
    for (size_t i = 0; i < leaves_.size(); ++i) {
      auto& leaf = leaves_[i];
      auto shredded = v2_1::ShredLeaf(leaf.path, array);
      if (!shredded.ok()) return Annotate(shredded.status());
      if (leaf.blob) {
        LANCE_RETURN_NOT_OK(AppendBlob(leaf, std::move(*shredded), &pages));
        continue;
      }
      leaf.rep.insert(leaf.rep.end(), shredded->rep.begin(), shredded->rep.end());
      if (leaf.def.empty() && std::all_of(shredded->def.begin(), shredded->def.end(), [](uint16_t d) { return d == 0; })) {
        leaf.zero_defs += shredded->def.size();
      } else {
        MaterializeZeroDefs(leaf);
        leaf.def.insert(leaf.def.end(), shredded->def.begin(), shredded->def.end());
      }
      leaf.step_has_nulls.resize(shredded->step_has_nulls.size(), false);
      for (size_t j = 0; j < shredded->step_has_nulls.size(); ++j) {
        if (shredded->step_has_nulls[j]) leaf.step_has_nulls[j] = true;
      }
      leaf.cache_bytes += ReferenceMemorySize(*shredded->values);
      leaf.values.push_back(std::move(shredded->values));
      leaf.rows += shredded->num_rows;
      if (leaf.cache_bytes > options_.cache_bytes_per_column) LANCE_RETURN_NOT_OK(FlushLeaf(i, &pages));
    }
    return pages;
  }

  Result<std::vector<EncodedPage>> Flush() override {
    std::vector<EncodedPage> pages;
    for (size_t i = 0; i < leaves_.size(); ++i) {
      if (leaves_[i].blob) {
        auto flushed = leaves_[i].blob->Flush();
        if (!flushed.ok()) return Annotate(flushed.status());
        for (auto& p : *flushed) pages.push_back(std::move(p));
      } else {
        LANCE_RETURN_NOT_OK(FlushLeaf(i, &pages));
      }
    }
    return pages;
  }

  Result<std::vector<EncodedColumn>> FinishColumns() override {
    std::vector<EncodedColumn> columns(leaves_.size());
    for (size_t i = 0; i < leaves_.size(); ++i) {
      if (leaves_[i].blob) {
        LANCE_ASSIGN_OR_RAISE(auto blob_columns, leaves_[i].blob->FinishColumns());
        if (blob_columns.size() != 1) return Status::Invalid("a blob leaf finished ", blob_columns.size(), " columns");
        columns[i] = std::move(blob_columns[0]);
        continue;
      }
      columns[i].encoding_type_url = kColumnEncodingTypeUrl;
      columns[i].encoding.assign(kValuesColumnEncoding, sizeof(kValuesColumnEncoding));
    }
    return columns;
  }

 private:
  // A blob leaf's levels take the layers this batch needs (the reference
  // serializes each batch's rep/def on its own).
  Status AppendBlob(LeafColumn& leaf, v2_1::ShreddedLeaf shredded, std::vector<EncodedPage>* pages) {
    if (shredded.values->type_id() != arrow::Type::LARGE_BINARY) {
      return Annotate(Status::Invalid("blob leaf '", leaf.path.name, "' takes large_binary values, got ",
                                      shredded.values->type()->ToString()));
    }
    auto levels = v2_1::CompactPageLevels(leaf.path, std::move(shredded.rep), shredded.def, shredded.step_has_nulls);
    auto ready = leaf.blob->Append(static_cast<const arrow::LargeBinaryArray&>(*shredded.values), levels.def,
                                   levels.layers, out_of_line_);
    if (!ready.ok()) return Annotate(ready.status());
    for (auto& p : *ready) pages->push_back(std::move(p));
    return Status::OK();
  }

  Status Annotate(const Status& st) const {
    return st.WithMessage("encoding field '", name_, "': ", st.message());
  }

  static void MaterializeZeroDefs(LeafColumn& leaf) {
    if (leaf.zero_defs == 0) return;
    leaf.def.insert(leaf.def.begin(), static_cast<size_t>(leaf.zero_defs), uint16_t{0});
    leaf.zero_defs = 0;
  }

  Status FlushLeaf(size_t index, std::vector<EncodedPage>* pages) {
    auto& leaf = leaves_[index];
    if (leaf.rows == 0) return Status::OK();
    MaterializeZeroDefs(leaf);
    // The cached chunks go as soon as they are joined: holding both doubled
    // the column's cache at every flush.
    std::shared_ptr<arrow::Array> values;
    {
      std::vector<std::shared_ptr<arrow::Array>> chunks = std::move(leaf.values);
      leaf.values.clear();
      LANCE_ASSIGN_OR_RAISE(values, ConcatenateValues(chunks));
    }
    const auto& path = leaf.path;
    const bool has_rep = path.max_rep > 0;
    // Level index where each row starts (plus the end).
    std::vector<size_t> row_start;
    row_start.reserve(leaf.rows + 1);
    for (size_t i = 0; i < leaf.def.size(); ++i) {
      if (!has_rep || leaf.rep[i] == path.max_rep) row_start.push_back(i);
    }
    row_start.push_back(leaf.def.size());
    if (row_start.size() != leaf.rows + 1) {
      return Annotate(Status::Invalid("leaf '", path.name, "' shredded into ", row_start.size() - 1, " rows, expected ",
                                      leaf.rows));
    }
    const uint64_t rows_per_page = std::max<uint64_t>(leaf.rows, 1);
    uint64_t value_pos = 0;
    for (uint64_t row = 0; row < leaf.rows; row += rows_per_page) {
      const uint64_t rows = std::min(rows_per_page, leaf.rows - row);
      const size_t ls = row_start[row], le = row_start[row + rows];
      v2_1::LeafPageInput input;
      // A page of all the buffered rows takes the levels (no copy).
      if (ls == 0 && le == leaf.def.size()) {
        if (has_rep) input.rep = std::move(leaf.rep);
        input.def = std::move(leaf.def);
      } else {
        if (has_rep) input.rep.assign(leaf.rep.begin() + ls, leaf.rep.begin() + le);
        input.def.assign(leaf.def.begin() + ls, leaf.def.begin() + le);
      }
      uint64_t visible = 0;
      for (uint16_t d : input.def) visible += d <= path.max_visible_def ? 1 : 0;
      input.values = values->Slice(static_cast<int64_t>(value_pos), static_cast<int64_t>(visible));
      value_pos += visible;
      input.num_rows = rows;
      input.nullable_steps = leaf.step_has_nulls;
      input.packed_child_metadata = leaf.packed_child_metadata;
      input.first_row = leaf.first_row + row / path.items_per_row;
      auto page = v2_1::EncodeLeafPage(path, std::move(input), leaf.metadata, options_.version);
      if (!page.ok()) return Annotate(page.status());
      pages->push_back({first_column_ + static_cast<uint32_t>(index), std::move(*page)});
    }
    if (value_pos != static_cast<uint64_t>(values->length())) {
      return Annotate(Status::Invalid("leaf '", path.name, "' has ", values->length(), " values but its levels show ",
                                      value_pos));
    }
    leaf.first_row += leaf.rows / path.items_per_row;  // top-level rows, as the reference counts them
    leaf.rows = 0;
    leaf.cache_bytes = 0;
    leaf.rep.clear();
    leaf.def.clear();
    leaf.zero_defs = 0;
    leaf.step_has_nulls.clear();
    leaf.values.clear();
    return Status::OK();
  }

  std::string name_;
  std::vector<LeafColumn> leaves_;
  uint32_t first_column_;
  EncoderOptions options_;
};

}  // namespace

Result<std::unique_ptr<FieldEncoder>> MakeFieldEncoderV2_1(const Field& field, uint32_t first_column,
                                                           const EncoderOptions& options) {
  if (options.version != FileVersion::kV2_1 && options.version != FileVersion::kV2_2) {
    return Status::Invalid("the 2.1 encoders cannot write file version ", FileVersionToString(options.version));
  }
  if (IsBlobV2Field(field)) return v2_1::MakeBlobV2Encoder(field, first_column, options);
  // As the reference: maps arrived with file version 2.2.
  if (options.version == FileVersion::kV2_1 && ContainsMap(field)) {
    return Status::NotImplemented("field '", field.name, "': the map type needs file version 2.2 or later");
  }
  auto paths = v2_1::LeafPathsOf(field, options.version);
  if (!paths.ok()) return paths.status().WithMessage("field '", field.name, "': ", paths.status().message());
  std::vector<LeafColumn> leaves;
  for (auto& path : *paths) {
    LeafColumn leaf;
    if (path.blob) {
      const uint32_t column = first_column + static_cast<uint32_t>(leaves.size());
      LANCE_ASSIGN_OR_RAISE(leaf.blob, v2_1::BlobLeafEncoder::Make(path.name, LeafFieldOf(field, path).nullable,
                                                                   column, options));
    }
    leaf.metadata = field.metadata;
    const Field& leaf_field = LeafFieldOf(field, path);
    for (const auto& [k, v] : leaf_field.metadata) leaf.metadata[k] = v;
    if (leaf_field.logical_type == "struct") {  // packed
      for (const auto& child : leaf_field.children) leaf.packed_child_metadata.push_back(child.metadata);
    }
    leaf.path = std::move(path);
    leaves.push_back(std::move(leaf));
  }
  return std::unique_ptr<FieldEncoder>(
      new StructuralFieldEncoder(field.name, std::move(leaves), first_column, options));
}

}  // namespace lance::file
