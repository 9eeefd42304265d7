#include "lance/file/v2_0/array_encoder.h"

#include <cstdlib>
#include <cstring>
#include <optional>
#include <unordered_map>

#include <arrow/array/builder_binary.h>
#include <arrow/array/concatenate.h>
#include <arrow/array/util.h>
#include <arrow/compute/api_vector.h>
#include <arrow/util/bit_util.h>
#include <arrow/util/bitmap_ops.h>

#include "lance/file/compression/fsst.h"
#include "lance/file/compression/general.h"

namespace lance::file::v2_0 {
namespace {

namespace enc = pb::encodings20;

constexpr const char* kCompressionKey = "lance-encoding:compression";
constexpr const char* kCompressionLevelKey = "lance-encoding:compression-level";

struct Compression {
  std::string scheme;  // "none", "zstd", "lz4"
  std::optional<int32_t> level;
};

// The page being built: buffers in index order.
struct PageBuffers {
  std::vector<std::shared_ptr<arrow::Buffer>> buffers;
  uint32_t Add(std::shared_ptr<arrow::Buffer> b) {
    buffers.push_back(std::move(b));
    return static_cast<uint32_t>(buffers.size() - 1);
  }
};

enc::ArrayEncoding Flat(uint64_t bits_per_value, uint32_t buffer_index, const std::optional<Compression>& c = {}) {
  enc::ArrayEncoding e;
  auto* flat = e.mutable_flat();
  flat->set_bits_per_value(bits_per_value);
  flat->mutable_buffer()->set_buffer_index(buffer_index);
  flat->mutable_buffer()->set_buffer_type(enc::Buffer::page);
  if (c) {
    flat->mutable_compression()->set_scheme(c->scheme);
    if (c->level) flat->mutable_compression()->set_level(*c->level);
  }
  return e;
}

enc::ArrayEncoding AllNull() {
  enc::ArrayEncoding e;
  e.mutable_nullable()->mutable_all_nulls();
  return e;
}

enc::ArrayEncoding NoNulls(enc::ArrayEncoding values) {
  enc::ArrayEncoding e;
  *e.mutable_nullable()->mutable_no_nulls()->mutable_values() = std::move(values);
  return e;
}

// The reference reads the compression knobs from the field metadata; an
// unknown scheme means none.
std::optional<Compression> FieldCompression(const Field* field) {
  if (field == nullptr) return std::nullopt;
  auto it = field->metadata.find(kCompressionKey);
  if (it == field->metadata.end()) return std::nullopt;
  const std::string& s = it->second;
  if (s != "none" && s != "zstd" && s != "lz4" && s != "fsst") return std::nullopt;
  Compression c{s, std::nullopt};
  auto lv = field->metadata.find(kCompressionLevelKey);
  if (lv != field->metadata.end()) {
    char* end = nullptr;
    long v = std::strtol(lv->second.c_str(), &end, 10);
    if (!lv->second.empty() && *end == '\0') c.level = static_cast<int32_t>(v);
  }
  return c;
}

Result<std::shared_ptr<arrow::Buffer>> Compress(const Compression& c, std::shared_ptr<arrow::Buffer> raw) {
  if (c.scheme == "none") return raw;
  const auto codec = c.scheme == "zstd" ? compression::GeneralCodec::kZstd : compression::GeneralCodec::kLz4;
  LANCE_ASSIGN_OR_RAISE(auto framed,
                        compression::GeneralCompress(codec, std::string_view(*raw), c.level));
  return arrow::Buffer::FromString(std::move(framed));
}

// `length` bits from `bits` at `offset`, re-based to bit 0 and with the
// unused bits of the last byte zero.
Result<std::shared_ptr<arrow::Buffer>> Bitmap(const uint8_t* bits, int64_t offset, int64_t length) {
  LANCE_ASSIGN_OR_RAISE(auto out, arrow::AllocateEmptyBitmap(length));
  if (length > 0) arrow::internal::CopyBitmap(bits, offset, length, out->mutable_data(), 0);
  if (length % 8 != 0) out->mutable_data()[length / 8] &= static_cast<uint8_t>((1u << (length % 8)) - 1);
  return std::shared_ptr<arrow::Buffer>(std::move(out));
}

Result<std::shared_ptr<arrow::Buffer>> AllSet(int64_t length) {
  LANCE_ASSIGN_OR_RAISE(auto out, arrow::AllocateEmptyBitmap(length));
  arrow::bit_util::SetBitsTo(out->mutable_data(), 0, length, true);
  return std::shared_ptr<arrow::Buffer>(std::move(out));
}

// Validity of `array` as a bitmap from bit 0 (the caller knows it has nulls).
Result<std::shared_ptr<arrow::Buffer>> Validity(const arrow::ArrayData& data) {
  if (data.buffers.empty() || !data.buffers[0]) return AllSet(data.length);
  return Bitmap(data.buffers[0]->data(), data.offset, data.length);
}

Result<std::shared_ptr<arrow::Buffer>> Zeros(int64_t size) {
  LANCE_ASSIGN_OR_RAISE(auto out, arrow::AllocateBuffer(size));
  if (size > 0) std::memset(out->mutable_data(), 0, static_cast<size_t>(size));
  return std::shared_ptr<arrow::Buffer>(std::move(out));
}

class Encoder {
 public:
  explicit Encoder(PageBuffers* page) : page_(page) {}

  // choose_array_encoder of the reference, applied to one array (the page's
  // values or a nested part of them). `field` is set at the top level only.
  // `whole`: the array at the same level that `array` was cut from, when a
  // page is a part of a larger one (see Basic).
  Result<enc::ArrayEncoding> Encode(const std::shared_ptr<arrow::Array>& array, bool use_dict, const Field* field,
                                    const arrow::Array* whole = nullptr) {
    const auto& type = *array->type();
    switch (type.id()) {
      case arrow::Type::DICTIONARY:
        return EncodeAlreadyDictionary(array);
      case arrow::Type::STRING:
        if (use_dict) return EncodeAutoDictionary(array);
        return EncodeBinary(*array, FieldCompression(field));
      case arrow::Type::LARGE_STRING:
      case arrow::Type::BINARY:
      case arrow::Type::LARGE_BINARY:
        return EncodeBinary(*array, FieldCompression(field));
      case arrow::Type::FIXED_SIZE_LIST:
        return Basic(*array, whole, [&]() { return EncodeFsl(*array, whole); });
      case arrow::Type::STRUCT:
        return EncodePackedStruct(*array);
      case arrow::Type::NA:
        return AllNull();
      default:
        if (!arrow::is_fixed_width(type.id())) {
          return Status::NotImplemented("file version 2.0 cannot store values of type ", type.ToString());
        }
        return Basic(*array, whole, [&]() { return EncodeFlat(*array); });
    }
  }

 private:
  // BasicEncoder: the validity bitmap (if some values are null) ahead of the
  // values. A part cut from an array with nulls keeps the bitmap even when
  // its own rows have none: the reference's slices share their parent's
  // (the part of a list's items or a struct's children a batch holds, the
  // pages max_page_bytes cuts).
  template <typename ValuesFn>
  Result<enc::ArrayEncoding> Basic(const arrow::Array& array, const arrow::Array* whole, ValuesFn&& values) {
    const int64_t n = array.length();
    const int64_t nulls = array.null_count();
    if (n == 0 || nulls == n) return AllNull();
    const bool has_validity = nulls > 0 || (whole != nullptr && whole->null_count() > 0);
    if (!has_validity) {
      LANCE_ASSIGN_OR_RAISE(auto v, values());
      return NoNulls(std::move(v));
    }
    LANCE_ASSIGN_OR_RAISE(auto validity, Validity(*array.data()));
    const uint32_t validity_index = page_->Add(std::move(validity));
    LANCE_ASSIGN_OR_RAISE(auto v, values());
    enc::ArrayEncoding e;
    auto* some = e.mutable_nullable()->mutable_some_nulls();
    *some->mutable_validity() = Flat(1, validity_index);
    *some->mutable_values() = std::move(v);
    return e;
  }

  // ValueEncoder: the fixed-width values (bits for booleans), from the array's offset.
  Result<enc::ArrayEncoding> EncodeFlat(const arrow::Array& array) {
    const auto& data = *array.data();
    const int bits = array.type()->bit_width();
    std::shared_ptr<arrow::Buffer> values;
    if (bits == 1) {
      LANCE_ASSIGN_OR_RAISE(values, Bitmap(data.buffers[1]->data(), data.offset, data.length));
    } else {
      const int64_t width = bits / 8;
      values = arrow::SliceBuffer(data.buffers[1], data.offset * width, data.length * width);
    }
    return Flat(static_cast<uint64_t>(bits), page_->Add(std::move(values)));
  }

  Result<enc::ArrayEncoding> EncodeFsl(const arrow::Array& array, const arrow::Array* whole) {
    const auto& fsl = static_cast<const arrow::FixedSizeListArray&>(array);
    const int32_t dim = fsl.list_type()->list_size();
    auto items = fsl.values()->Slice(fsl.offset() * dim, fsl.length() * dim);
    std::shared_ptr<arrow::Array> whole_items;
    if (whole != nullptr) {
      const auto& w = static_cast<const arrow::FixedSizeListArray&>(*whole);
      whole_items = w.values();
    }
    LANCE_ASSIGN_OR_RAISE(auto inner, Encode(items, false, nullptr, whole_items.get()));
    enc::ArrayEncoding e;
    auto* f = e.mutable_fixed_size_list();
    f->set_dimension(static_cast<uint32_t>(dim));
    *f->mutable_items() = std::move(inner);
    f->set_has_validity(false);
    return e;
  }

  // PackedStructEncoder: the children's fixed-width values interleaved row
  // by row in one buffer; each child's encoding numbers its buffers from 0.
  Result<enc::ArrayEncoding> EncodePackedStruct(const arrow::Array& array) {
    const auto& s = static_cast<const arrow::StructArray&>(array);
    if (array.null_count() > 0) {
      return Status::NotImplemented("a packed struct with null values in file version 2.0");
    }
    enc::ArrayEncoding e;
    auto* packed = e.mutable_packed_struct();
    struct Part {
      const uint8_t* data;
      int64_t width;
    };
    std::vector<Part> parts;
    int64_t row_width = 0;
    for (int i = 0; i < s.num_fields(); ++i) {
      auto child = s.field(i);
      PageBuffers scratch;
      Encoder child_encoder(&scratch);
      LANCE_ASSIGN_OR_RAISE(*packed->add_inner(), child_encoder.Encode(child, false, nullptr));
      // Only fixed-width values without nulls pack (fixed-size lists flattened).
      std::shared_ptr<arrow::Array> leaf = child;
      int64_t count = 1;
      while (leaf->type_id() == arrow::Type::FIXED_SIZE_LIST && leaf->null_count() == 0) {
        const auto& fsl = static_cast<const arrow::FixedSizeListArray&>(*leaf);
        count *= fsl.list_type()->list_size();
        leaf = fsl.values()->Slice(fsl.offset() * fsl.list_type()->list_size(),
                                   fsl.length() * fsl.list_type()->list_size());
      }
      const int bits = arrow::is_fixed_width(leaf->type_id()) ? leaf->type()->bit_width() : 0;
      if (leaf->null_count() > 0 || bits == 0 || bits % 8 != 0 || leaf->type_id() == arrow::Type::DICTIONARY) {
        return Status::NotImplemented("packing child '", s.struct_type()->field(i)->name(), "' of type ",
                                      child->type()->ToString(), " (packed structs hold fixed-width values without nulls)");
      }
      const int64_t width = bits / 8 * count;
      parts.push_back({leaf->data()->buffers[1]->data() + leaf->offset() * (bits / 8), width});
      row_width += width;
    }
    const int64_t n = array.length();
    LANCE_ASSIGN_OR_RAISE(auto out, arrow::AllocateBuffer(n * row_width));
    uint8_t* dst = out->mutable_data();
    for (int64_t r = 0; r < n; ++r) {
      for (const auto& p : parts) {
        std::memcpy(dst, p.data + r * p.width, static_cast<size_t>(p.width));
        dst += p.width;
      }
    }
    const uint32_t index = page_->Add(std::shared_ptr<arrow::Buffer>(std::move(out)));
    packed->mutable_buffer()->set_buffer_index(index);
    packed->mutable_buffer()->set_buffer_type(enc::Buffer::page);
    return e;
  }

  // BinaryEncoder: u64 end offsets from 0 (a null's offset raised by
  // total bytes + 1), then the bytes.
  Result<enc::ArrayEncoding> EncodeBinary(const arrow::Array& array, const std::optional<Compression>& compression) {
    const auto& data = *array.data();
    const int64_t n = data.length;
    const bool all_null = n == 0 || array.null_count() == n;
    std::vector<uint64_t> indices(static_cast<size_t>(n));
    std::shared_ptr<arrow::Buffer> bytes = std::make_shared<arrow::Buffer>(nullptr, 0);
    uint64_t null_adjustment = 0;
    if (all_null) {
      // The reference replaces an all-null block by empty strings, all null.
      if (n > 0) null_adjustment = 1;
      for (auto& i : indices) i = 1;
    } else {
      const bool large = data.type->id() == arrow::Type::LARGE_STRING || data.type->id() == arrow::Type::LARGE_BINARY;
      auto offset_at = [&](int64_t i) -> int64_t {
        return large ? data.GetValues<int64_t>(1)[i] : static_cast<int64_t>(data.GetValues<int32_t>(1)[i]);
      };
      const int64_t first = offset_at(0);
      uint64_t last = 0;
      for (int64_t i = 0; i < n; ++i) {
        last += static_cast<uint64_t>(offset_at(i + 1) - offset_at(i));
        indices[i] = last;
      }
      null_adjustment = last + 1;
      if (array.null_count() > 0) {
        for (int64_t i = 0; i < n; ++i) {
          if (array.IsNull(i)) indices[i] += null_adjustment;
        }
      }
      bytes = arrow::SliceBuffer(data.buffers[2], first, static_cast<int64_t>(last));
    }
    if (compression && compression->scheme == "fsst") {
      return EncodeFsst(array, all_null);
    }
    auto indices_buffer = arrow::Buffer::FromVector(std::move(indices));
    const uint32_t indices_index = page_->Add(std::move(indices_buffer));
    if (compression) {
      LANCE_ASSIGN_OR_RAISE(bytes, Compress(*compression, std::move(bytes)));
    }
    const uint32_t bytes_index = page_->Add(std::move(bytes));
    enc::ArrayEncoding e;
    auto* b = e.mutable_binary();
    *b->mutable_indices() = NoNulls(Flat(64, indices_index));
    *b->mutable_bytes() = Flat(8, bytes_index, compression);
    b->set_null_adjustment(null_adjustment);
    return e;
  }

  // FsstArrayEncoder (asked for by field metadata): the values compressed
  // with a trained symbol table, then stored as plain binary.
  Result<enc::ArrayEncoding> EncodeFsst(const arrow::Array& array, bool all_null) {
    const auto id = array.type_id();
    if (all_null || (id != arrow::Type::STRING && id != arrow::Type::BINARY)) {
      return Status::NotImplemented("fsst compression of ", all_null ? "all-null " : "", array.type()->ToString(),
                                    " values in file version 2.0");
    }
    const auto& data = *array.data();
    const int32_t* raw = data.GetValues<int32_t>(1);
    std::vector<uint64_t> offsets(static_cast<size_t>(data.length) + 1);
    for (int64_t i = 0; i <= data.length; ++i) offsets[i] = static_cast<uint64_t>(raw[i] - raw[0]);
    std::string_view bytes(reinterpret_cast<const char*>(data.buffers[2]->data()) + raw[0],
                           static_cast<size_t>(offsets.back()));
    LANCE_ASSIGN_OR_RAISE(auto compressed, compression::FsstCompress(offsets, bytes));
    std::vector<int32_t> new_offsets(compressed.second.offsets.begin(), compressed.second.offsets.end());
    auto values = arrow::ArrayData::Make(array.type(), data.length,
                                         {data.GetNullCount() > 0 ? data.buffers[0] : nullptr,
                                          arrow::Buffer::FromVector(std::move(new_offsets)),
                                          arrow::Buffer::FromString(std::move(compressed.second.data))},
                                         data.null_count, data.offset);
    // The copied validity keeps the array's offset; the new offsets start at 0.
    if (data.offset != 0 && values->buffers[0]) {
      LANCE_ASSIGN_OR_RAISE(values->buffers[0], Bitmap(data.buffers[0]->data(), data.offset, data.length));
    }
    values->offset = 0;
    enc::ArrayEncoding e;
    auto* fsst = e.mutable_fsst();
    LANCE_ASSIGN_OR_RAISE(*fsst->mutable_binary(), EncodeBinary(*arrow::MakeArray(values), std::nullopt));
    fsst->set_symbol_table(std::move(compressed.first));
    return e;
  }

  // DictionaryEncoder: utf8 with few distinct values -> u8 indices (0 = null,
  // then values in order of first appearance) and the distinct values.
  Result<enc::ArrayEncoding> EncodeAutoDictionary(const std::shared_ptr<arrow::Array>& array) {
    const auto& strings = static_cast<const arrow::StringArray&>(*array);
    std::unordered_map<std::string_view, uint8_t> seen;
    std::vector<uint8_t> indices;
    indices.reserve(static_cast<size_t>(strings.length()));
    arrow::StringBuilder items;
    for (int64_t i = 0; i < strings.length(); ++i) {
      if (strings.IsNull(i)) {
        indices.push_back(0);
        continue;
      }
      auto v = strings.GetView(i);
      auto [it, inserted] = seen.emplace(v, static_cast<uint8_t>(seen.size() + 1));
      if (inserted) LANCE_RETURN_NOT_OK(items.Append(v));
      indices.push_back(it->second);
    }
    if (seen.empty()) LANCE_RETURN_NOT_OK(items.AppendNull());
    std::shared_ptr<arrow::Array> item_array;
    LANCE_RETURN_NOT_OK(items.Finish(&item_array));
    const uint32_t index_buffer = page_->Add(arrow::Buffer::FromVector(std::move(indices)));
    enc::ArrayEncoding e;
    auto* d = e.mutable_dictionary();
    *d->mutable_indices() = NoNulls(Flat(8, index_buffer));
    LANCE_ASSIGN_OR_RAISE(*d->mutable_items(), EncodeBinary(*item_array, std::nullopt));
    d->set_num_dictionary_items(static_cast<uint32_t>(item_array->length()));
    return e;
  }

  // AlreadyDictionaryEncoder: the keys (nulls pointing at a null value,
  // appended if the dictionary has none) and the dictionary values.
  Result<enc::ArrayEncoding> EncodeAlreadyDictionary(const std::shared_ptr<arrow::Array>& array) {
    const auto& dict = static_cast<const arrow::DictionaryArray&>(*array);
    const auto& dict_type = static_cast<const arrow::DictionaryType&>(*array->type());
    auto keys = dict.indices();
    std::shared_ptr<arrow::Array> values = dict.dictionary();
    const int64_t n = keys->length();
    int key_width = dict_type.index_type()->bit_width() / 8;

    // Logical validity: a key that is null or points at a null value.
    std::vector<bool> valid(static_cast<size_t>(n), true);
    int64_t num_null = 0;
    for (int64_t i = 0; i < n; ++i) {
      bool ok = keys->IsValid(i);
      if (ok && values->null_count() > 0) ok = values->IsValid(dict.GetValueIndex(i));
      valid[i] = ok;
      num_null += ok ? 0 : 1;
    }

    std::shared_ptr<arrow::Buffer> key_bytes;
    if (n == 0 || num_null == n) {
      LANCE_ASSIGN_OR_RAISE(key_bytes, Zeros(n * key_width));
      LANCE_ASSIGN_OR_RAISE(values, arrow::MakeArrayOfNull(dict_type.value_type(), 1));
    } else if (num_null == 0) {
      key_bytes = arrow::SliceBuffer(keys->data()->buffers[1], keys->offset() * key_width, n * key_width);
    } else {
      int64_t null_index = -1;
      for (int64_t j = 0; j < values->length() && null_index < 0; ++j) {
        if (values->IsNull(j)) null_index = j;
      }
      if (null_index < 0) {
        LANCE_ASSIGN_OR_RAISE(auto one_null, arrow::MakeArrayOfNull(dict_type.value_type(), 1));
        LANCE_ASSIGN_OR_RAISE(values, arrow::Concatenate({values, one_null}));
        null_index = values->length() - 1;
      }
      const int max_bits = dict_type.index_type()->bit_width() - (arrow::is_signed_integer(dict_type.index_type()->id()) ? 1 : 0);
      const bool widen = max_bits < 63 && static_cast<uint64_t>(null_index) > ((uint64_t{1} << max_bits) - 1);
      const int out_width = widen ? 4 : key_width;
      LANCE_ASSIGN_OR_RAISE(auto out, arrow::AllocateBuffer(n * out_width));
      uint8_t* dst = out->mutable_data();
      const uint8_t* src = keys->data()->buffers[1]->data() + keys->offset() * key_width;
      for (int64_t i = 0; i < n; ++i) {
        uint64_t k = valid[i] ? static_cast<uint64_t>(dict.GetValueIndex(i)) : static_cast<uint64_t>(null_index);
        if (!widen && valid[i]) {
          std::memcpy(dst + i * out_width, src + i * key_width, key_width);
        } else {
          std::memcpy(dst + i * out_width, &k, out_width);  // little-endian
        }
      }
      key_width = out_width;
      key_bytes = std::shared_ptr<arrow::Buffer>(std::move(out));
    }
    const uint32_t keys_index = page_->Add(std::move(key_bytes));
    enc::ArrayEncoding e;
    auto* d = e.mutable_dictionary();
    *d->mutable_indices() = NoNulls(Flat(static_cast<uint64_t>(key_width) * 8, keys_index));
    LANCE_ASSIGN_OR_RAISE(*d->mutable_items(), Encode(values, false, nullptr));
    d->set_num_dictionary_items(static_cast<uint32_t>(values->length()));
    return e;
  }

  PageBuffers* page_;
};

uint64_t DictThreshold() {
  const char* env = std::getenv("LANCE_DICT_ENCODING_THRESHOLD");
  if (env != nullptr && *env != '\0') {
    char* end = nullptr;
    unsigned long long v = std::strtoull(env, &end, 10);
    if (*end == '\0' && env[0] != '-') return v;
  }
  return 100;
}

// Whether the reference would dictionary-encode these utf8 values: enough
// rows and fewer distinct values than the threshold (it estimates the count
// with HyperLogLog, exact at these sizes).
bool UseDictionary(const arrow::Array& array) {
  if (array.type_id() != arrow::Type::STRING) return false;
  const uint64_t threshold = DictThreshold();
  if (static_cast<uint64_t>(array.length()) < threshold) return false;
  const auto& strings = static_cast<const arrow::StringArray&>(array);
  std::unordered_map<std::string_view, bool> distinct;
  for (int64_t i = 0; i < strings.length(); ++i) {
    if (strings.IsNull(i)) continue;
    distinct.emplace(strings.GetView(i), true);
    // u8 indices (0 is null) hold at most 255 values, whatever the threshold.
    if (distinct.size() >= threshold || distinct.size() >= 255) return false;
  }
  return true;
}

// Dictionary arrays of several batches as the reference concatenates them:
// the dictionaries one after the other (not deduplicated) with the keys
// shifted, widened to u32 if needed. (It would keep a dictionary the arrays
// share, but it deep-copies the arrays it buffers, so none is shared.)
Result<std::shared_ptr<arrow::Array>> ConcatenateDictionaries(const arrow::ArrayVector& arrays) {
  const auto& type = static_cast<const arrow::DictionaryType&>(*arrays[0]->type());
  arrow::ArrayVector keys, dictionaries;
  for (const auto& a : arrays) {
    const auto& d = static_cast<const arrow::DictionaryArray&>(*a);
    keys.push_back(d.indices());
    dictionaries.push_back(d.dictionary());
  }
  LANCE_ASSIGN_OR_RAISE(auto dictionary, arrow::Concatenate(dictionaries));
  int64_t total = 0;
  for (const auto& k : keys) total += k->length();
  const auto& index_type = type.index_type();
  const int max_bits = index_type->bit_width() - (arrow::is_signed_integer(index_type->id()) ? 1 : 0);
  const uint64_t max_key = max_bits >= 63 ? ~uint64_t{0} : (uint64_t{1} << max_bits) - 1;
  const auto value_id = type.value_type()->id();
  const bool mergeable = value_id == arrow::Type::STRING || value_id == arrow::Type::BINARY ||
                         value_id == arrow::Type::LARGE_STRING || value_id == arrow::Type::LARGE_BINARY;
  // Each array's keys map into the concatenated dictionary: by an offset, or
  // (when merged) through a table.
  std::vector<std::vector<int64_t>> remap(arrays.size());
  if (mergeable && (static_cast<uint64_t>(dictionary->length()) > max_key || dictionary->length() >= total)) {
    // Binary-like values are merged instead: the values some valid key
    // uses, deduplicated, in order of the dictionaries and their positions.
    auto view = [&](const arrow::Array& values, int64_t i) -> std::string_view {
      if (value_id == arrow::Type::LARGE_STRING || value_id == arrow::Type::LARGE_BINARY) {
        return static_cast<const arrow::LargeBinaryArray&>(values).GetView(i);
      }
      return static_cast<const arrow::BinaryArray&>(values).GetView(i);
    };
    std::unordered_map<std::string_view, int64_t> interned;
    int64_t null_index = -1;
    std::vector<int64_t> take;
    int64_t base = 0;
    for (size_t i = 0; i < arrays.size(); ++i) {
      const auto& d = static_cast<const arrow::DictionaryArray&>(*arrays[i]);
      const auto& values = *dictionaries[i];
      std::vector<bool> used(static_cast<size_t>(values.length()), false);
      for (int64_t j = 0; j < d.length(); ++j) {
        if (d.IsValid(j)) used[d.GetValueIndex(j)] = true;
      }
      remap[i].assign(static_cast<size_t>(values.length()), 0);
      for (int64_t v = 0; v < values.length(); ++v) {
        if (!used[v]) continue;
        int64_t* slot;
        if (values.IsNull(v)) {
          slot = &null_index;
        } else {
          slot = &interned.emplace(view(values, v), -1).first->second;
        }
        if (*slot < 0) {
          *slot = static_cast<int64_t>(take.size());
          take.push_back(base + v);
        }
        remap[i][v] = *slot;
      }
      base += values.length();
    }
    LANCE_ASSIGN_OR_RAISE(auto merged, arrow::compute::Take(*dictionary, *arrow::Int64Array(
                                           static_cast<int64_t>(take.size()), arrow::Buffer::FromVector(take)).Slice(0)));
    dictionary = merged;
  } else {
    int64_t base = 0;
    for (size_t i = 0; i < arrays.size(); ++i) {
      remap[i].resize(static_cast<size_t>(dictionaries[i]->length()));
      for (int64_t v = 0; v < dictionaries[i]->length(); ++v) remap[i][v] = base + v;
      base += dictionaries[i]->length();
    }
  }
  const bool widen = static_cast<uint64_t>(std::max<int64_t>(dictionary->length(), 1) - 1) > max_key;
  auto out_index_type = widen ? arrow::uint32() : index_type;
  const int width = out_index_type->bit_width() / 8;
  LANCE_ASSIGN_OR_RAISE(auto key_bytes, arrow::AllocateBuffer(total * width));
  LANCE_ASSIGN_OR_RAISE(auto validity, arrow::AllocateEmptyBitmap(total));
  int64_t row = 0, nulls = 0;
  for (size_t i = 0; i < arrays.size(); ++i) {
    const auto& d = static_cast<const arrow::DictionaryArray&>(*arrays[i]);
    for (int64_t j = 0; j < d.length(); ++j, ++row) {
      const bool valid = d.IsValid(j);
      arrow::bit_util::SetBitTo(validity->mutable_data(), row, valid);
      nulls += valid ? 0 : 1;
      const uint64_t k = valid ? static_cast<uint64_t>(remap[i][d.GetValueIndex(j)]) : 0;
      std::memcpy(key_bytes->mutable_data() + row * width, &k, width);  // little-endian
    }
  }
  auto key_data = arrow::ArrayData::Make(out_index_type, total,
                                         {nulls > 0 ? std::shared_ptr<arrow::Buffer>(std::move(validity)) : nullptr,
                                          std::shared_ptr<arrow::Buffer>(std::move(key_bytes))},
                                         nulls);
  return std::make_shared<arrow::DictionaryArray>(arrow::dictionary(out_index_type, type.value_type()),
                                                  arrow::MakeArray(key_data), dictionary);
}

// The size of the Rust array struct the reference adds to its buffers'
// capacities (64-bit arrow-rs layouts).
uint64_t ArrayStructSize(const arrow::DataType& type) {
  switch (type.id()) {
    case arrow::Type::NA: return 8;
    case arrow::Type::BOOL: return 112;
    case arrow::Type::STRING:
    case arrow::Type::LARGE_STRING:
    case arrow::Type::BINARY:
    case arrow::Type::LARGE_BINARY: return 120;
    case arrow::Type::FIXED_SIZE_BINARY: return 112;
    case arrow::Type::FIXED_SIZE_LIST: return 104;
    case arrow::Type::LIST:
    case arrow::Type::LARGE_LIST: return 112;
    case arrow::Type::STRUCT: return 104;
    // Its keys count as buffers alone.
    case arrow::Type::DICTIONARY: return 144;
    // 16-byte aligned native types make the array struct 112 bytes.
    case arrow::Type::DECIMAL128:
    case arrow::Type::DECIMAL256: return 112;
    default: return 96;
  }
}

// What the reference's get_array_memory_size says of an array it imported
// through the C data interface: each buffer as long as the array's offset +
// length need (validity only when there are nulls), children and dictionary
// included, plus the Rust array structs when `with_structs`.
uint64_t DataMemorySize(const arrow::ArrayData& data, bool with_structs) {
  uint64_t size = with_structs ? ArrayStructSize(*data.type) : 0;
  const uint64_t extent = static_cast<uint64_t>(data.offset + data.length);
  auto buffer = [&](size_t i) { return i < data.buffers.size() && data.buffers[i] != nullptr; };
  if (data.type->id() != arrow::Type::NA && buffer(0) && data.GetNullCount() > 0) size += (extent + 7) / 8;
  switch (data.type->id()) {
    case arrow::Type::NA:
    case arrow::Type::STRUCT:
    case arrow::Type::FIXED_SIZE_LIST:
      break;
    case arrow::Type::BOOL:
      size += (extent + 7) / 8;
      break;
    case arrow::Type::STRING:
    case arrow::Type::BINARY:
      size += (extent + 1) * 4;
      if (buffer(1)) size += static_cast<uint64_t>(data.buffers[1]->data_as<int32_t>()[extent]);
      break;
    case arrow::Type::LARGE_STRING:
    case arrow::Type::LARGE_BINARY:
      size += (extent + 1) * 8;
      if (buffer(1)) size += static_cast<uint64_t>(data.buffers[1]->data_as<int64_t>()[extent]);
      break;
    case arrow::Type::LIST:
      size += (extent + 1) * 4;
      break;
    case arrow::Type::LARGE_LIST:
      size += (extent + 1) * 8;
      break;
    case arrow::Type::DICTIONARY:
      size += extent * static_cast<uint64_t>(
                           static_cast<const arrow::DictionaryType&>(*data.type).index_type()->bit_width() / 8);
      break;
    default:
      size += extent * static_cast<uint64_t>(data.type->bit_width() / 8);
      break;
  }
  for (const auto& child : data.child_data) size += DataMemorySize(*child, with_structs);
  if (data.dictionary) size += DataMemorySize(*data.dictionary, with_structs);
  return size;
}

}  // namespace

uint64_t ArrayMemorySize(const arrow::Array& array) { return DataMemorySize(*array.data(), true); }
uint64_t ArrayBufferSize(const arrow::Array& array) { return DataMemorySize(*array.data(), false); }

Result<EncodedValues> EncodePageValues(const arrow::ArrayVector& arrays, const Field& field,
                                       const arrow::Array* whole) {
  if (arrays.empty()) return Status::Invalid("no values to encode for field '", field.name, "'");
  std::shared_ptr<arrow::Array> values;
  if (arrays.size() == 1) {
    values = arrays[0];
  } else if (arrays[0]->type_id() == arrow::Type::DICTIONARY) {
    LANCE_ASSIGN_OR_RAISE(values, ConcatenateDictionaries(arrays));
  } else {
    LANCE_ASSIGN_OR_RAISE(values, arrow::Concatenate(arrays));
  }
  PageBuffers page;
  Encoder encoder(&page);
  EncodedValues out;
  LANCE_ASSIGN_OR_RAISE(out.encoding, encoder.Encode(values, UseDictionary(*values), &field, whole));
  out.buffers = std::move(page.buffers);
  return out;
}

}  // namespace lance::file::v2_0
