#include "lance/file/v2_1/encode_dictionary.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include <arrow/util/hashing.h>

#include "lance/file/v2_1/encode_chunks.h"

namespace lance::file::v2_1::encode {

// Pages with fewer values are never dictionary encoded.
constexpr uint64_t kDictMinValues = 100;

namespace {

// Fixed-width values the reference dictionary-encodes: 128-bit ones (2.1)
// and also 64-bit ones (2.2).
bool DictionaryEligibleWidth(const PageValues& values, FileVersion version) {
  if (values.kind != PageValues::Kind::kFixed || !values.fsl.empty()) return false;
  return values.bits_per_value == 128 || (values.bits_per_value == 64 && version >= FileVersion::kV2_2);
}

// Set of fixed-width values (8 or 16 bytes) by open addressing: far
// cheaper than a node-based set of string views on a page of a million
// distinct values.
class FixedWidthSet {
 public:
  FixedWidthSet(uint64_t width, uint64_t expected) : width_(width) {
    uint64_t slots = 16;
    while (slots < expected * 2) slots <<= 1;
    mask_ = slots - 1;
    slots_.assign(slots, nullptr);
  }
  /// Whether `value` (width_ bytes) was not in the set before.
  bool Insert(const char* value) {
    uint64_t h = Mix(Load(value, 0) ^ (width_ > 8 ? Mix(Load(value, 8)) : 0));
    for (uint64_t i = h & mask_;; i = (i + 1) & mask_) {
      if (slots_[i] == nullptr) {
        slots_[i] = value;
        return true;
      }
      if (std::memcmp(slots_[i], value, width_) == 0) return false;
    }
  }

 private:
  static uint64_t Load(const char* p, size_t at) {
    uint64_t v;
    std::memcpy(&v, p + at, 8);
    return v;
  }
  static uint64_t Mix(uint64_t x) {  // splitmix64's finalizer
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
  }
  uint64_t width_;
  uint64_t mask_ = 0;
  std::vector<const char*> slots_;
};

// Set of variable-width values of a page by open addressing, holding value
// indices and their hashes: no node allocation per distinct value. Each
// distinct value gets an id, in the order values first appear.
class VariableWidthSet {
 public:
  VariableWidthSet(const char* base, const std::vector<uint64_t>& offsets, uint64_t expected)
      : base_(base), offsets_(offsets) {
    uint64_t slots = 16;
    while (slots < expected * 2) slots <<= 1;
    mask_ = slots - 1;
    slots_.assign(slots, Slot{});
  }
  /// The id of value `i`, and whether it was not in the set before.
  std::pair<uint64_t, bool> Insert(uint64_t i) {
    const char* p = base_ + offsets_[i];
    const uint64_t len = offsets_[i + 1] - offsets_[i];
    const uint64_t h = static_cast<uint64_t>(arrow::internal::ComputeStringHash<0>(p, static_cast<int64_t>(len)));
    for (uint64_t s = h & mask_;; s = (s + 1) & mask_) {
      Slot& slot = slots_[s];
      if (slot.index == kEmpty) {
        slot = {h, i, size_};
        if (size_ * 2 >= mask_) Grow();
        return {size_++, true};
      }
      if (slot.hash == h && offsets_[slot.index + 1] - offsets_[slot.index] == len &&
          std::memcmp(base_ + offsets_[slot.index], p, len) == 0) {
        return {slot.id, false};
      }
    }
  }
  uint64_t size() const { return size_; }

 private:
  static constexpr uint64_t kEmpty = ~uint64_t{0};
  struct Slot {
    uint64_t hash = 0;
    uint64_t index = kEmpty;
    uint64_t id = 0;
  };
  void Grow() {
    std::vector<Slot> old = std::move(slots_);
    mask_ = mask_ * 2 + 1;
    slots_.assign(mask_ + 1, Slot{});
    for (const Slot& slot : old) {
      if (slot.index == kEmpty) continue;
      uint64_t s = slot.hash & mask_;
      while (slots_[s].index != kEmpty) s = (s + 1) & mask_;
      slots_[s] = slot;
    }
  }
  const char* base_;
  const std::vector<uint64_t>& offsets_;
  uint64_t mask_ = 0;
  uint64_t size_ = 0;
  std::vector<Slot> slots_;
};

// Distinct values (exact; the reference estimates them with a HyperLogLog),
// counted only up to `limit` + 1: past that the answer no longer matters.
uint64_t Cardinality(const PageValues& values, uint64_t limit) {
  uint64_t count = 0;
  if (values.kind == PageValues::Kind::kVariable) {
    const char* base = values.data && values.data->size() > 0 ? reinterpret_cast<const char*>(values.data->data())
                                                             : "";
    VariableWidthSet seen(base, values.offsets, std::min<uint64_t>(limit + 1, values.num_values));
    for (uint64_t i = 0; i < values.num_values && count <= limit; ++i) {
      if (seen.Insert(i).second) ++count;
    }
    return count;
  }
  const uint64_t width = values.bits_per_value / 8;
  const char* base = reinterpret_cast<const char*>(values.data->data());
  FixedWidthSet seen(width, std::min<uint64_t>(limit + 1, values.num_values));
  for (uint64_t i = 0; i < values.num_values && count <= limit; ++i) {
    if (seen.Insert(base + i * width)) ++count;
  }
  return count;
}

// The reference's estimate: dictionary items plus 32-bit indices (offset-
// sized for variable values) against the raw size, below dict-size-ratio.
}  // namespace

bool ShouldDictionaryEncode(const PageValues& values, FileVersion version, const CompressionParams& params) {
  if (values.num_values < kDictMinValues) return false;
  const bool variable = values.kind == PageValues::Kind::kVariable;
  if (!variable && !DictionaryEligibleWidth(values, version)) return false;
  const uint64_t n = values.num_values;
  double data_size;
  std::function<double(uint64_t)> estimate;
  if (variable) {
    // As pylance 14 decides it (measured against its writer): the raw size
    // counts one offset per value, the average value length is the bytes
    // alone (not rounded), and the indices are 32-bit whatever the offset width.
    const double offset_bytes = static_cast<double>(values.bits_per_offset / 8);
    const double bytes = static_cast<double>(values.offsets.back());
    data_size = bytes + static_cast<double>(n) * offset_bytes;
    const double avg = bytes / static_cast<double>(n);
    estimate = [=](uint64_t cardinality) {
      const double c = static_cast<double>(cardinality);
      return c * avg + c * offset_bytes + static_cast<double>(n) * 4.0;
    };
  } else {
    const uint64_t width = values.bits_per_value / 8;
    data_size = static_cast<double>(n * width);
    estimate = [=](uint64_t cardinality) { return static_cast<double>(cardinality * width + n * 4); };
  }
  auto passes = [&](uint64_t cardinality) {
    return data_size > 0 && estimate(cardinality) / data_size < params.dict_size_ratio;
  };
  // The estimate grows with the cardinality: find the most distinct values
  // that still pass, and count only that far.
  if (!passes(1)) return false;
  uint64_t lo = 1, hi = n;  // passes(lo); the answer is in [lo, hi]
  while (lo < hi) {
    const uint64_t mid = lo + (hi - lo + 1) / 2;
    if (passes(mid)) lo = mid; else hi = mid - 1;
  }
  return passes(Cardinality(values, lo));
}

namespace {

template <typename Index>
void AppendIndex(std::string* out, uint64_t i) {
  const Index v = static_cast<Index>(i);
  out->append(reinterpret_cast<const char*>(&v), sizeof(Index));
}

}  // namespace

namespace {

// The dictionary buffer as the reference compresses it: flat/variable in
// 2.1; in 2.2 bitpacked (64-bit values) when that shrinks it, else lz4,
// unless lance-encoding:dict-values-compression says none or zstd.
Status CompressDictionary(std::string dictionary, const PageValues& values, FileVersion version,
                          const CompressionParams& params, DictionaryPage* out) {
  if (version >= FileVersion::kV2_2 && params.dict_values_compression == "none") {
    out->dictionary = std::move(dictionary);
  } else if (version >= FileVersion::kV2_2 && params.dict_values_compression == "zstd") {
    LANCE_ASSIGN_OR_RAISE(out->dictionary, comp::GeneralCompress(comp::GeneralCodec::kZstd, dictionary, std::nullopt));
    out->dictionary_encoding =
        GeneralEncoding(comp::GeneralCodec::kZstd, std::nullopt, std::move(out->dictionary_encoding));
  } else if (version >= FileVersion::kV2_2) {
    bool packed = false;
    if (values.kind == PageValues::Kind::kFixed && values.bits_per_value == 64) {
      std::string bitpacked;
      pb21::CompressiveEncoding e;
      LANCE_ASSIGN_OR_RAISE(packed, TryBitpackBlock64(dictionary, out->num_items, &bitpacked, &e));
      if (packed) {
        out->dictionary = std::move(bitpacked);
        out->dictionary_encoding = std::move(e);
      }
    }
    if (!packed) {
      LANCE_ASSIGN_OR_RAISE(out->dictionary, comp::GeneralCompress(comp::GeneralCodec::kLz4, dictionary, std::nullopt));
      out->dictionary_encoding =
          GeneralEncoding(comp::GeneralCodec::kLz4, std::nullopt, std::move(out->dictionary_encoding));
    }
  } else {
    out->dictionary = std::move(dictionary);
  }
  return Status::OK();
}

// The block layout of variable-width dictionary items: [width][bytes
// start][offsets][bytes], u32 or u64 fields.
std::string VariableDictionary(const PageValues& items) {
  std::string out;
  const uint64_t width = items.bits_per_offset / 8;
  auto put = [&](uint64_t v) { out.append(reinterpret_cast<const char*>(&v), width); };
  put(items.bits_per_offset);
  put(2 * width + items.offsets.size() * width);
  for (uint64_t o : items.offsets) put(o);
  out.append(Bytes(items.data).substr(0, items.offsets.back()));
  return out;
}

}  // namespace

Result<DictionaryPage> DictionaryFromArrow(PageValues indices, const PageValues& items, FileVersion version,
                                           const CompressionParams& params) {
  if (!items.fsl.empty()) return Status::NotImplemented("dictionaries of fixed-size lists");
  DictionaryPage out;
  out.indices = std::move(indices);
  out.num_items = items.num_values;
  std::string dictionary;
  if (items.kind == PageValues::Kind::kVariable) {
    dictionary = VariableDictionary(items);
    *out.dictionary_encoding.mutable_variable()->mutable_offsets() = FlatEncoding(items.bits_per_offset);
  } else {
    dictionary = std::string(Bytes(items.data).substr(0, (items.num_values * items.bits_per_value + 7) / 8));
    out.dictionary_encoding = FlatEncoding(items.bits_per_value);
  }
  LANCE_RETURN_NOT_OK(CompressDictionary(std::move(dictionary), items, version, params, &out));
  return out;
}

Result<DictionaryPage> DictionaryEncode(const PageValues& values, FileVersion version,
                                        const CompressionParams& params) {
  DictionaryPage out;
  const uint64_t n = values.num_values;
  std::unordered_map<std::string_view, uint64_t> ids;
  std::string indices, dictionary;
  out.indices.kind = PageValues::Kind::kFixed;
  out.indices.num_values = n;
  if (values.kind == PageValues::Kind::kVariable) {
    // Indices are 32-bit even for 64-bit offsets (as pylance 14 writes them).
    const bool wide = false;
    out.indices.bits_per_value = wide ? 64 : 32;
    const char* base = values.data && values.data->size() > 0 ? reinterpret_cast<const char*>(values.data->data())
                                                             : "";
    std::vector<uint64_t> dict_offsets{0};
    std::string dict_bytes;
    VariableWidthSet set(base, values.offsets, 1024);
    indices.reserve(n * (wide ? 8 : 4));
    for (uint64_t i = 0; i < n; ++i) {
      auto [id, inserted] = set.Insert(i);
      if (inserted) {
        dict_bytes.append(base + values.offsets[i], values.offsets[i + 1] - values.offsets[i]);
        dict_offsets.push_back(dict_bytes.size());
      }
      if (wide) {
        AppendIndex<int64_t>(&indices, id);
      } else {
        AppendIndex<int32_t>(&indices, id);
      }
    }
    // Block layout: [width][bytes start][offsets][bytes], u32 or u64 fields.
    const uint64_t width = values.bits_per_offset / 8;
    const uint64_t start = 2 * width + dict_offsets.size() * width;
    auto put = [&](uint64_t v) { dictionary.append(reinterpret_cast<const char*>(&v), width); };
    put(values.bits_per_offset);
    put(start);
    for (uint64_t o : dict_offsets) put(o);
    dictionary += dict_bytes;
    out.num_items = dict_offsets.size() - 1;
    *out.dictionary_encoding.mutable_variable()->mutable_offsets() = FlatEncoding(values.bits_per_offset);
  } else {
    out.indices.bits_per_value = 32;
    const uint64_t width = values.bits_per_value / 8;
    const char* base = reinterpret_cast<const char*>(values.data->data());
    for (uint64_t i = 0; i < n; ++i) {
      std::string_view key(base + i * width, width);
      auto [it, inserted] = ids.emplace(key, ids.size());
      if (inserted) dictionary.append(key);
      AppendIndex<int32_t>(&indices, it->second);
    }
    out.num_items = ids.size();
    out.dictionary_encoding = FlatEncoding(values.bits_per_value);
  }
  out.indices.data = arrow::Buffer::FromString(std::move(indices));
  LANCE_RETURN_NOT_OK(CompressDictionary(std::move(dictionary), values, version, params, &out));
  return out;
}

}  // namespace lance::file::v2_1::encode
