#include "lance/file/legacy/legacy_reader.h"
#include "lance/file/validate_array.h"
#include "lance/util/protobuf.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include <arrow/array.h>
#include <arrow/array/concatenate.h>
#include <arrow/buffer.h>
#include <arrow/type.h>
#include <arrow/util/checked_cast.h>

#include "lance/file.pb.h"
#include "lance/file/legacy/legacy_decode.h"
#include "lance/file/legacy_metadata.h"
#include "lance/file/schema_proto.h"
#include "lance/table.pb.h"

namespace lance::file::legacy {
namespace {

std::string Describe(const Field& field, int batch) {
  return "field '" + field.name + "' (id " + std::to_string(field.id) + ") batch " + std::to_string(batch);
}

// Keys of a dictionary page must index its values.
template <typename T>
Status CheckKeys(const arrow::ArrayData& keys, int64_t dict_length, const Region& region, const std::string& what) {
  const T* v = keys.GetValues<T>(1);
  for (int64_t i = 0; i < keys.length; ++i) {
    if (v[i] < 0 || static_cast<uint64_t>(v[i]) >= static_cast<uint64_t>(dict_length)) {
      return Corrupt(region, what, "dictionary key ", static_cast<int64_t>(v[i]), " at row ", i,
                     " is outside the dictionary of ", dict_length, " values");
    }
  }
  return Status::OK();
}

Status CheckDictionaryKeys(const arrow::ArrayData& keys, int64_t dict_length, const Region& region,
                           const std::string& what) {
  switch (keys.type->id()) {
    case arrow::Type::INT8: return CheckKeys<int8_t>(keys, dict_length, region, what);
    case arrow::Type::INT16: return CheckKeys<int16_t>(keys, dict_length, region, what);
    case arrow::Type::INT32: return CheckKeys<int32_t>(keys, dict_length, region, what);
    case arrow::Type::INT64: return CheckKeys<int64_t>(keys, dict_length, region, what);
    case arrow::Type::UINT8: return CheckKeys<uint8_t>(keys, dict_length, region, what);
    case arrow::Type::UINT16: return CheckKeys<uint16_t>(keys, dict_length, region, what);
    case arrow::Type::UINT32: return CheckKeys<uint32_t>(keys, dict_length, region, what);
    case arrow::Type::UINT64: return CheckKeys<uint64_t>(keys, dict_length, region, what);
    default:
      return Status::NotImplemented("lance file ", *region.name, ": ", what, ": dictionary key type ",
                                    keys.type->ToString());
  }
}

void CollectIds(const Field& f, int32_t* lo, int32_t* hi) {
  if (f.id >= 0) {
    *lo = std::min(*lo, f.id);
    *hi = std::max(*hi, f.id);
  }
  for (const auto& c : f.children) CollectIds(c, lo, hi);
}

}  // namespace

// Reads the fields of one batch. A field is read over a range of values of its
// page: top-level fields (and struct children) over the batch's rows, list
// items over the range the list offsets give.
class LegacyFileReader::BatchReader {
 public:
  BatchReader(const LegacyFileReader& r, int batch) : r_(r), batch_(batch) {
    data_ = Region{r.file_.get(), &r.name_, 0, r.page_table_position_, r.pool_};
  }

  // `exact`: the page must hold exactly `last` values (plus one for list
  // offsets): true where the value count is known (the batch's rows).
  Result<std::shared_ptr<arrow::Array>> Read(const Field& field, int64_t first, int64_t last, bool exact,
                                             int depth) {
    if (depth > 256) {
      return Status::Invalid("lance file ", r_.name_, ": field '", field.name, "' nests too deeply");
    }
    const std::string what = Describe(field, batch_);
    auto type_result = ArrowTypeFromField(field);
    if (!type_result.ok()) {
      return Status::Invalid("lance file ", r_.name_, ": ", what, ": ", type_result.status().message());
    }
    std::shared_ptr<arrow::DataType> type = std::move(type_result).ValueUnsafe();
    const arrow::Type::type id = type->id();
    if (id == arrow::Type::STRUCT) {
      arrow::ArrayDataVector children;
      for (const auto& child : field.children) {
        LANCE_ASSIGN_OR_RAISE(auto arr, Read(child, first, last, exact, depth + 1));
        children.push_back(arr->data());
      }
      return arrow::MakeArray(arrow::ArrayData::Make(type, last - first, {nullptr}, std::move(children), 0));
    }

    LANCE_ASSIGN_OR_RAISE(auto page, r_.Page(field, batch_));
    const bool is_list = id == arrow::Type::LIST || id == arrow::Type::LARGE_LIST;
    const int64_t expected = is_list ? last + 1 : last;
    if (page.position == 0 && page.length == 0 && expected > 0) {
      return Corrupt(data_, what, "the page table has no page for it");
    }
    if (exact && page.length != expected) {
      return Corrupt(data_, what, "the page holds ", page.length, " values, expected ", expected, " for ", last,
                     " rows");
    }

    if (id == arrow::Type::NA) {
      if (first < 0 || first > last || last > page.length) {
        return Corrupt(data_, what, "values [", first, ", ", last, ") requested from a page of ", page.length,
                       " values");
      }
      return std::static_pointer_cast<arrow::Array>(std::make_shared<arrow::NullArray>(last - first));
    }
    if (IsFixedStride(*type)) {
      return ReadPlain(data_, type, page.position, page.length, first, last, what);
    }
    switch (id) {
      case arrow::Type::STRING:
      case arrow::Type::BINARY:
      case arrow::Type::LARGE_STRING:
      case arrow::Type::LARGE_BINARY:
        return ReadVarBinary(data_, type, field.nullable, page.position, page.length, first, last, what);
      case arrow::Type::DICTIONARY: {
        const auto& dict_type = static_cast<const arrow::DictionaryType&>(*type);
        LANCE_ASSIGN_OR_RAISE(auto values, r_.Dictionary(field, dict_type.value_type()));
        LANCE_ASSIGN_OR_RAISE(auto keys, ReadPlain(data_, dict_type.index_type(), page.position, page.length,
                                                   first, last, what));
        LANCE_RETURN_NOT_OK(CheckDictionaryKeys(*keys->data(), values->length(), data_, what));
        auto data = keys->data()->Copy();
        data->type = type;
        data->dictionary = values->data();
        return arrow::MakeArray(data);
      }
      case arrow::Type::LIST:
      case arrow::Type::LARGE_LIST:
        return ReadList(field, type, page, first, last, what, depth);
      default:
        return Status::NotImplemented("lance file ", r_.name_, ": ", what, ": legacy files cannot hold ",
                                      type->ToString());
    }
  }

 private:
  Result<std::shared_ptr<arrow::Array>> ReadList(const Field& field, const std::shared_ptr<arrow::DataType>& type,
                                                 const PageInfo& page, int64_t first, int64_t last,
                                                 const std::string& what, int depth) {
    if (field.children.empty()) return Corrupt(data_, what, "the list field has no item field");
    const bool large = type->id() == arrow::Type::LARGE_LIST;
    auto offset_type = large ? arrow::int64() : arrow::int32();
    if (last == std::numeric_limits<int64_t>::max()) return Corrupt(data_, what, "too many rows");
    LANCE_ASSIGN_OR_RAISE(auto positions,
                          ReadPlain(data_, offset_type, page.position, page.length, first, last + 1, what));
    const int64_t n = last - first;
    std::vector<int64_t> pos(static_cast<size_t>(n + 1));
    for (int64_t i = 0; i <= n; ++i) {
      pos[i] = large ? positions->data()->GetValues<int64_t>(1)[i] : positions->data()->GetValues<int32_t>(1)[i];
    }
    if (pos[0] < 0) return Corrupt(data_, what, "negative list offset ", pos[0]);
    for (int64_t i = 0; i < n; ++i) {
      if (pos[i + 1] < pos[i]) {
        return Corrupt(data_, what, "list offsets decrease (", pos[i], " then ", pos[i + 1], ")");
      }
    }
    // Item pages hold the batch's items; how many is known only from the
    // list's last offset, so the item page length is checked, not required.
    LANCE_ASSIGN_OR_RAISE(auto items, Read(field.children[0], pos[0], pos[n], /*exact=*/false, depth + 1));
    const int64_t width = large ? 8 : 4;
    LANCE_ASSIGN_OR_RAISE(std::shared_ptr<arrow::Buffer> offsets, arrow::AllocateBuffer((n + 1) * width, r_.pool_));
    for (int64_t i = 0; i <= n; ++i) {
      if (large) {
        reinterpret_cast<int64_t*>(offsets->mutable_data())[i] = pos[i] - pos[0];
      } else {
        reinterpret_cast<int32_t*>(offsets->mutable_data())[i] = static_cast<int32_t>(pos[i] - pos[0]);
      }
    }
    return arrow::MakeArray(
        arrow::ArrayData::Make(type, n, {nullptr, std::move(offsets)}, {items->data()}, 0));
  }

  const LegacyFileReader& r_;
  int batch_;
  Region data_;
};

LegacyFileReader::~LegacyFileReader() = default;

Result<std::unique_ptr<LegacyFileReader>> LegacyFileReader::Open(std::shared_ptr<arrow::io::RandomAccessFile> file,
                                                                 std::string name, arrow::MemoryPool* pool) {
  return Open(std::move(file), std::move(name), pool, LegacyOpenOptions{});
}

Result<std::unique_ptr<LegacyFileReader>> LegacyFileReader::Open(std::shared_ptr<arrow::io::RandomAccessFile> file,
                                                                 std::string name, arrow::MemoryPool* pool,
                                                                 const LegacyOpenOptions& options) {
  if (file == nullptr) return Status::Invalid("lance file ", name, ": no file to read");
  std::unique_ptr<LegacyFileReader> r(new LegacyFileReader());
  r->file_ = std::move(file);
  r->name_ = std::move(name);
  r->pool_ = pool != nullptr ? pool : arrow::default_memory_pool();
  r->given_dictionaries_ = options.dictionaries;
  const std::string& nm = r->name_;

  auto io = [&](auto result, const char* what) -> decltype(result) {
    if (!result.ok()) {
      return Status::IOError("reading lance file ", nm, ": ", what, ": ", result.status().message());
    }
    return result;
  };
  LANCE_ASSIGN_OR_RAISE(int64_t size, io(r->file_->GetSize(), "size"));
  if (size < static_cast<int64_t>(kLegacyFooterSize)) {
    return Status::Invalid("corrupt lance file ", nm, ": ", size, " bytes is too short for the footer");
  }
  r->file_size_ = static_cast<uint64_t>(size);
  LANCE_ASSIGN_OR_RAISE(auto footer, io(r->file_->ReadAt(size - kLegacyFooterSize, kLegacyFooterSize), "footer"));
  if (footer->size() != static_cast<int64_t>(kLegacyFooterSize)) {
    return Status::Invalid("corrupt lance file ", nm, ": short read of the footer");
  }
  std::memcpy(&r->major_, footer->data() + 8, 2);
  std::memcpy(&r->minor_, footer->data() + 10, 2);
  const std::string footer_bytes = footer->ToString();
  if (footer_bytes.substr(12) == "LANC" && (r->major_ != 0 || r->minor_ > 2)) {
    return Status::Invalid("lance file ", nm, " has footer version (", r->major_, ",", r->minor_,
                           "): not a legacy (0.1) file");
  }
  LANCE_ASSIGN_OR_RAISE(r->metadata_position_, LegacyMetadataPosition(footer_bytes, r->file_size_, nm));
  const uint64_t meta_pos = r->metadata_position_;
  LANCE_ASSIGN_OR_RAISE(auto meta_bytes, io(r->file_->ReadAt(meta_pos, r->file_size_ - kLegacyFooterSize - meta_pos),
                                            "metadata"));
  LANCE_ASSIGN_OR_RAISE(auto meta, ParseLegacyMetadata(meta_bytes->ToString(), nm));
  r->batch_offsets_ = meta.batch_offsets;
  r->page_table_position_ = meta.page_table_position;
  if (r->page_table_position_ > meta_pos) {
    return Status::Invalid("corrupt lance file ", nm, ": page table position ", r->page_table_position_,
                           " is past the metadata at ", meta_pos);
  }

  // The embedded manifest: the file's schema, and where its dictionaries are.
  Status embedded_status = Status::OK();
  if (meta.manifest_position != 0) {
    const uint64_t mpos = meta.manifest_position;
    auto parse = [&]() -> Result<Schema> {
      if (mpos < r->page_table_position_ || mpos > meta_pos || meta_pos - mpos < 4) {
        return Status::Invalid("corrupt lance file ", nm, ": manifest position ", mpos,
                               " is outside [page table, metadata)");
      }
      LANCE_ASSIGN_OR_RAISE(auto len_bytes, io(r->file_->ReadAt(mpos, 4), "manifest"));
      if (len_bytes->size() != 4) return Status::Invalid("corrupt lance file ", nm, ": short read of the manifest");
      uint32_t len;
      std::memcpy(&len, len_bytes->data(), 4);
      if (len > meta_pos - mpos - 4) {
        return Status::Invalid("corrupt lance file ", nm, ": manifest of ", len, " bytes runs past the metadata");
      }
      LANCE_ASSIGN_OR_RAISE(auto body, io(r->file_->ReadAt(mpos + 4, len), "manifest"));
      pb::table::Manifest proto;
      if (body->size() != len || !util::ParseMessage(std::string_view(reinterpret_cast<const char*>(body->data()), static_cast<size_t>(len)), &proto)) {
        return Status::Invalid("corrupt lance file ", nm, ": the embedded manifest is not a valid protobuf message");
      }
      return SchemaFromProtoFields(proto.fields(), proto.schema_metadata(), "lance file " + nm);
    };
    auto schema = parse();
    if (schema.ok()) {
      r->embedded_schema_ = std::move(schema).ValueUnsafe();
    } else {
      embedded_status = schema.status();
    }
  }

  // The page table's field-id range.
  std::optional<int32_t> lo = options.min_field_id, hi = options.max_field_id;
  if ((!lo || !hi) && r->embedded_schema_) {
    int32_t elo = std::numeric_limits<int32_t>::max(), ehi = -1;
    for (const auto& f : r->embedded_schema_->fields) CollectIds(f, &elo, &ehi);
    if (ehi >= 0) {
      if (!lo) lo = elo;
      if (!hi) hi = ehi;
    }
  }
  if (!lo || !hi) {
    if (!embedded_status.ok()) return embedded_status;
    return Status::Invalid("lance file ", nm,
                           ": cannot tell which field ids its page table covers (it embeds no schema and "
                           "none were given)");
  }
  if (*lo < 0 || *hi < *lo) {
    return Status::Invalid("lance file ", nm, ": bad field id range ", *lo, "..", *hi, " for its page table");
  }
  r->min_field_id_ = *lo;
  r->max_field_id_ = *hi;
  const int64_t num_batches = r->num_batches();
  const uint64_t num_fields = static_cast<uint64_t>(*hi) - static_cast<uint64_t>(*lo) + 1;
  // Both factors are below 2^32, so the entry count fits; compare the bytes
  // against the room before the metadata without overflowing.
  const uint64_t entries = num_fields * static_cast<uint64_t>(num_batches);
  const uint64_t room = meta_pos - r->page_table_position_;
  if (entries > room / 16) {
    return Status::Invalid("corrupt lance file ", nm, ": a page table of ", num_fields, " fields x ", num_batches,
                           " batches at ", r->page_table_position_, " runs past the metadata at ", meta_pos);
  }
  if (entries > 0) {
    LANCE_ASSIGN_OR_RAISE(auto table, io(r->file_->ReadAt(r->page_table_position_, entries * 16), "page table"));
    if (static_cast<uint64_t>(table->size()) != entries * 16) {
      return Status::Invalid("corrupt lance file ", nm, ": short read of the page table");
    }
    r->page_table_.resize(entries);
    for (uint64_t i = 0; i < entries; ++i) {
      std::memcpy(&r->page_table_[i].position, table->data() + i * 16, 8);
      std::memcpy(&r->page_table_[i].length, table->data() + i * 16 + 8, 8);
    }
  }
  return r;
}

uint64_t LegacyFileReader::num_rows() const {
  if (batch_offsets_.size() < 2) return 0;
  return static_cast<uint64_t>(batch_offsets_.back()) - static_cast<uint64_t>(batch_offsets_.front());
}

int LegacyFileReader::num_batches() const {
  return batch_offsets_.size() < 2 ? 0 : static_cast<int>(batch_offsets_.size() - 1);
}

uint64_t LegacyFileReader::batch_rows(int batch) const {
  if (batch < 0 || batch >= num_batches()) return 0;
  return static_cast<uint64_t>(batch_offsets_[batch + 1]) - static_cast<uint64_t>(batch_offsets_[batch]);
}

Result<LegacyFileReader::PageInfo> LegacyFileReader::Page(const Field& field, int batch) const {
  if (field.id < min_field_id_ || field.id > max_field_id_) {
    return Status::Invalid("lance file ", name_, ": field '", field.name, "' (id ", field.id,
                           ") is not in this file (its page table covers field ids ", min_field_id_, "..",
                           max_field_id_, ")");
  }
  const size_t idx = static_cast<size_t>(field.id - min_field_id_) * num_batches() + batch;
  const PageInfo& p = page_table_[idx];
  if (p.position < 0 || p.length < 0) {
    return Status::Invalid("corrupt lance file ", name_, ": ", Describe(field, batch), ": page table entry (",
                           p.position, ", ", p.length, ") is negative");
  }
  return p;
}

Result<std::shared_ptr<arrow::Array>> LegacyFileReader::Dictionary(
    const Field& field, const std::shared_ptr<arrow::DataType>& value_type) const {
  std::lock_guard<std::mutex> lock(dictionaries_mu_);
  std::shared_ptr<arrow::Array> values;
  if (auto it = given_dictionaries_.find(field.id); it != given_dictionaries_.end()) {
    values = it->second;
  } else if (auto it = loaded_dictionaries_.find(field.id); it != loaded_dictionaries_.end()) {
    values = it->second;
  } else {
    const Field* own = embedded_schema_ ? embedded_schema_->FieldById(field.id) : nullptr;
    if (own == nullptr || !own->dictionary_offset || !own->dictionary_length) {
      return Status::Invalid("lance file ", name_, ": dictionary field '", field.name, "' (id ", field.id,
                             ") has no dictionary values: ",
                             own == nullptr ? "the file embeds no schema with that field"
                                            : "the file's schema does not locate them");
    }
    LANCE_ASSIGN_OR_RAISE(values, ReadLegacyDictionary(file_.get(), name_, value_type, *own->dictionary_offset,
                                                       *own->dictionary_length, pool_));
    loaded_dictionaries_[field.id] = values;
  }
  if (values == nullptr || !values->type()->Equals(*value_type)) {
    return Status::Invalid("lance file ", name_, ": dictionary of field '", field.name, "' (id ", field.id,
                           ") has type ", values ? values->type()->ToString() : "none", ", expected ",
                           value_type->ToString());
  }
  return values;
}

Result<std::shared_ptr<arrow::Schema>> LegacyFileReader::ArrowSchemaOf(const Schema& projection) const {
  auto schema = projection.ToArrow();
  if (!schema.ok()) {
    return Status::Invalid("lance file ", name_, ": cannot read the projection: ", schema.status().message());
  }
  return schema;
}

Result<std::shared_ptr<arrow::RecordBatch>> LegacyFileReader::ReadBatch(int batch, const Schema& projection) const {
  if (batch < 0 || batch >= num_batches()) {
    return Status::IndexError("lance file ", name_, " has ", num_batches(), " batches; batch ", batch,
                              " does not exist");
  }
  LANCE_ASSIGN_OR_RAISE(auto schema, ArrowSchemaOf(projection));
  const int64_t rows = static_cast<int64_t>(batch_rows(batch));
  BatchReader reader(*this, batch);
  arrow::ArrayVector columns;
  for (const auto& field : projection.fields) {
    LANCE_ASSIGN_OR_RAISE(auto arr, reader.Read(field, 0, rows, /*exact=*/true, 0));
    auto st = ValidateDecodedArray(*arr);
    if (!st.ok()) {
      return Status::Invalid("corrupt lance file ", name_, ": ", Describe(field, batch), ": ", st.message());
    }
    columns.push_back(std::move(arr));
  }
  return arrow::RecordBatch::Make(std::move(schema), rows, std::move(columns));
}

Result<std::shared_ptr<arrow::RecordBatch>> LegacyFileReader::ReadAll(const Schema& projection) const {
  LANCE_ASSIGN_OR_RAISE(auto schema, ArrowSchemaOf(projection));
  const int n = num_batches();
  if (n == 1) return ReadBatch(0, projection);
  std::vector<arrow::ArrayVector> chunks(projection.fields.size());
  for (int b = 0; b < n; ++b) {
    LANCE_ASSIGN_OR_RAISE(auto batch, ReadBatch(b, projection));
    for (int c = 0; c < batch->num_columns(); ++c) chunks[c].push_back(batch->column(c));
  }
  arrow::ArrayVector columns;
  for (size_t c = 0; c < chunks.size(); ++c) {
    if (chunks[c].empty()) {
      LANCE_ASSIGN_OR_RAISE(auto empty, arrow::MakeEmptyArray(schema->field(static_cast<int>(c))->type(), pool_));
      columns.push_back(std::move(empty));
    } else {
      LANCE_ASSIGN_OR_RAISE(auto whole, arrow::Concatenate(chunks[c], pool_));
      columns.push_back(std::move(whole));
    }
  }
  return arrow::RecordBatch::Make(std::move(schema), static_cast<int64_t>(num_rows()), std::move(columns));
}

Result<std::shared_ptr<arrow::Array>> ReadLegacyDictionary(arrow::io::RandomAccessFile* file,
                                                           const std::string& name,
                                                           const std::shared_ptr<arrow::DataType>& value_type,
                                                           int64_t offset, int64_t length,
                                                           arrow::MemoryPool* pool) {
  if (file == nullptr) return Status::Invalid("lance file ", name, ": no file to read");
  auto size = file->GetSize();
  if (!size.ok()) return Status::IOError("reading lance file ", name, ": size: ", size.status().message());
  if (*size < static_cast<int64_t>(kLegacyFooterSize)) {
    return Status::Invalid("corrupt lance file ", name, ": too short for a dictionary");
  }
  Region region{file, &name, 0, static_cast<uint64_t>(*size) - kLegacyFooterSize,
                pool != nullptr ? pool : arrow::default_memory_pool()};
  const std::string what = "dictionary at " + std::to_string(offset);
  switch (value_type->id()) {
    case arrow::Type::STRING:
    case arrow::Type::BINARY:
    case arrow::Type::LARGE_STRING:
    case arrow::Type::LARGE_BINARY:
      // The reference reads dictionary strings as nullable: empty is null.
      return ReadVarBinary(region, value_type, /*nullable=*/true, offset, length, 0, length, what);
    default:
      if (arrow::is_integer(value_type->id())) {
        return ReadPlain(region, value_type, offset, length, 0, length, what);
      }
      return Status::NotImplemented("lance file ", name, ": ", value_type->ToString(),
                                    " dictionary values are not supported by legacy files");
  }
}

}  // namespace lance::file::legacy
