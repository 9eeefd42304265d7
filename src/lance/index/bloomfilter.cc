// BLOOMFILTER indices as pylance 14 writes them
// (rust/lance-index/src/scalar/bloomfilter.rs), index_version 0:
//   bloomfilter.lance  one row per zone: fragment_id, zone_start, zone_length
//                      (u64; the zone is the row addresses
//                      fragment_id << 32 | zone_start and the zone_length
//                      after it), has_null (bool), bloom_filter_data (the
//                      zone's split-block filter, bloom_filter.h); schema
//                      metadata bloomfilter_item (the filter's expected
//                      items, also the zone size), bloomfilter_probability,
//                      and null_bitmap, the global buffer of the null rows'
//                      addresses (a RowIdTreeMap; older files lack it).
// Row addresses even in datasets with stable row ids.
//
// A Bloom filter is inexact: `col = v` and IN give every row of each zone
// whose filter may hold a value, and the scan rechecks them. As in pylance
// it answers =, IN (of non-null values), IS NULL and AND/OR of those; IS
// NULL is exact from the null bitmap. Not !=, NOT, IS NOT NULL or ranges.
#include <algorithm>
#include <charconv>
#include <cmath>

#include <arrow/api.h>
#include <arrow/compute/api.h>

#include "lance/file_reader.h"
#include "lance/index/bloom_filter.h"
#include "lance/index/index_writer.h"
#include "lance/index/scalar_index.h"
#include "lance/scan/filter_functions.h"
#include "lance/schema.h"

namespace lance::index {
namespace {
namespace cp = arrow::compute;

constexpr const char* kBloomFile = "bloomfilter.lance";

class BloomFilterIndex : public ScalarIndex {
 public:
  BloomFilterIndex(std::shared_ptr<arrow::DataType> type, BloomFilterIndexData data,
                   std::vector<SplitBlockBloomFilter> filters)
      : type_(std::move(type)), data_(std::move(data)), filters_(std::move(filters)) {}

  const char* type_name() const override { return "BloomFilter"; }
  const std::shared_ptr<arrow::DataType>& value_type() const override { return type_; }
  bool stores_addresses() const override { return true; }
  bool IsExact(const cp::Expression& predicate) const override {
    return IsNullTest(predicate) && data_.null_rows.has_value();
  }
  bool CanSearch(const cp::Expression& predicate, const std::string& /*column*/) const override {
    return Searchable(predicate);
  }

  Result<RowIds> Search(const cp::Expression& predicate, const std::string& column) override {
    if (!Searchable(predicate)) return Status::Invalid("bloom filter index: cannot answer ", predicate.ToString());
    const auto* call = predicate.call();
    if (!Literals(predicate) && (IsAnd(call->function_name) || IsOr(call->function_name))) {
      return CombineAndOr(*call, [&](const cp::Expression& e) { return Search(e, column); });
    }
    if (IsNullTest(predicate)) {
      if (data_.null_rows) return *data_.null_rows;
      return Zones([&](size_t z) { return static_cast<bool>(data_.zones.has_nulls[z]); });
    }
    LANCE_ASSIGN_OR_RAISE(auto hashes, Hashes(predicate));
    return Zones([&](size_t z) {
      return std::any_of(hashes.begin(), hashes.end(), [&](uint64_t h) { return filters_[z].CheckHash(h); });
    });
  }

 private:
  static bool IsNullTest(const cp::Expression& e) {
    const auto* call = e.call();
    return call != nullptr && call->function_name == "is_null" && call->arguments.size() == 1 &&
           call->arguments[0].field_ref() != nullptr;
  }

  // Whether `e` is the column, or for a float column its total-order key
  // (the binder compares floats by those keys: filter_functions.h).
  bool IsColumn(const cp::Expression& e) const {
    if (e.field_ref() != nullptr) return !arrow::is_floating(type_->id());
    const auto* call = e.call();
    return arrow::is_floating(type_->id()) && call != nullptr &&
           call->function_name == scan::filter::kTotalOrderKeyFunction && call->arguments.size() == 1 &&
           call->arguments[0].field_ref() != nullptr;
  }

  // Literal `values` in the column's type: the float a total-order key
  // stands for.
  std::shared_ptr<arrow::Array> AsValues(std::shared_ptr<arrow::Array> values) const {
    if (!arrow::is_floating(type_->id())) return values->type()->Equals(*type_) ? values : nullptr;
    const bool single = type_->id() == arrow::Type::FLOAT;
    if (values->type_id() != (single ? arrow::Type::INT32 : arrow::Type::INT64)) return nullptr;
    return single ? FromKeys<arrow::FloatBuilder, arrow::Int32Array>(*values, &scan::filter::FloatFromTotalOrderKey)
                  : FromKeys<arrow::DoubleBuilder, arrow::Int64Array>(*values, &scan::filter::DoubleFromTotalOrderKey);
  }

  template <typename Builder, typename Keys, typename Decode>
  static std::shared_ptr<arrow::Array> FromKeys(const arrow::Array& values, Decode decode) {
    Builder b;
    const auto& keys = static_cast<const Keys&>(values);
    for (int64_t i = 0; i < keys.length(); ++i) {
      if (!b.Append(decode(keys.Value(i))).ok()) return nullptr;
    }
    auto out = b.Finish();
    return out.ok() ? *out : nullptr;
  }

  // A literal operand of `call` (a comparison of the column), if any.
  std::shared_ptr<arrow::Array> Operand(const cp::Expression::Call& call) const {
    if (call.arguments.size() != 2) return nullptr;
    const arrow::Datum* literal = nullptr;
    const auto& a = call.arguments[0];
    const auto& b = call.arguments[1];
    if (IsColumn(a) && b.literal()) literal = b.literal();
    if (a.literal() && IsColumn(b)) literal = a.literal();
    if (literal == nullptr || !literal->is_scalar() || !literal->scalar()->is_valid) return nullptr;
    auto array = arrow::MakeArrayFromScalar(*literal->scalar(), 1);
    return array.ok() ? AsValues(*array) : nullptr;
  }

  // The literal values `e` (col = v, v = col, col IN (...), and the range
  // [-0.0, 0.0] the binder makes of a float `col = 0`) asks for, when it is
  // of that shape with non-null values of the column's type.
  std::optional<std::shared_ptr<arrow::Array>> Literals(const cp::Expression& e) const {
    const auto* call = e.call();
    if (call == nullptr) return std::nullopt;
    std::shared_ptr<arrow::Array> values;
    if (call->function_name == "is_in" && call->arguments.size() == 1 && IsColumn(call->arguments[0]) &&
        call->options) {
      const auto& opts = static_cast<const cp::SetLookupOptions&>(*call->options);
      if (!opts.value_set.is_array()) return std::nullopt;
      values = opts.value_set.make_array();
      if (values->null_count() > 0) return std::nullopt;
      values = AsValues(values);
    } else if (call->function_name == "equal") {
      values = Operand(*call);
    } else if (IsAnd(call->function_name) && call->arguments.size() == 2 && arrow::is_floating(type_->id())) {
      const auto* low = call->arguments[0].call();
      const auto* high = call->arguments[1].call();
      if (low == nullptr || high == nullptr || low->function_name != "greater_equal" ||
          high->function_name != "less_equal" || !IsColumn(low->arguments[0]) || !IsColumn(high->arguments[0])) {
        return std::nullopt;
      }
      auto a = Operand(*low), b = Operand(*high);
      if (a == nullptr || b == nullptr) return std::nullopt;
      // -0.0 to 0.0 exactly: both zeros.
      const double lo = FloatAt(*a, 0), hi = FloatAt(*b, 0);
      if (!(lo == 0.0 && std::signbit(lo) && hi == 0.0 && !std::signbit(hi))) return std::nullopt;
      values = b;
    } else {
      return std::nullopt;
    }
    if (values == nullptr) return std::nullopt;
    return values;
  }

  bool Searchable(const cp::Expression& e) const {
    const auto* call = e.call();
    if (call == nullptr) return false;
    if (Literals(e).has_value()) return true;
    if (IsAnd(call->function_name) || IsOr(call->function_name)) {
      return !call->arguments.empty() &&
             std::all_of(call->arguments.begin(), call->arguments.end(),
                         [&](const cp::Expression& a) { return Searchable(a); });
    }
    return IsNullTest(e);
  }

  // Value `i` of a float32 or float64 array.
  static double FloatAt(const arrow::Array& values, int64_t i) {
    return values.type_id() == arrow::Type::FLOAT
               ? static_cast<double>(static_cast<const arrow::FloatArray&>(values).Value(i))
               : static_cast<const arrow::DoubleArray&>(values).Value(i);
  }

  Result<std::vector<uint64_t>> Hashes(const cp::Expression& e) const {
    auto values = Literals(e);
    if (!values) return Status::Invalid("bloom filter index: cannot answer ", e.ToString());
    const arrow::Array& v = **values;
    std::vector<uint64_t> out;
    for (int64_t i = 0; i < v.length(); ++i) {
      out.push_back(*BloomHash(v, i));
      // A float zero equals its negative, whose bytes (and hash) differ.
      if (arrow::is_floating(type_->id()) && FloatAt(v, i) == 0.0) {
        const bool single = type_->id() == arrow::Type::FLOAT;
        const float f = std::signbit(FloatAt(v, i)) ? 0.0f : -0.0f;
        const double d = std::signbit(FloatAt(v, i)) ? 0.0 : -0.0;
        out.push_back(single ? BloomHashBytes(&f, sizeof f) : BloomHashBytes(&d, sizeof d));
      }
    }
    return out;
  }

  template <typename Pred>
  RowIds Zones(Pred keep) const {
    RowIds out;
    const auto& z = data_.zones;
    for (size_t k = 0; k < z.size(); ++k) {
      if (!keep(k)) continue;
      const uint64_t first = (z.fragment_ids[k] << 32) | z.starts[k];
      for (uint64_t i = 0; i < z.lengths[k]; ++i) out.push_back(first + i);
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  }

  std::shared_ptr<arrow::DataType> type_;
  BloomFilterIndexData data_;
  std::vector<SplitBlockBloomFilter> filters_;
};

// A metadata value pylance wrote with Rust's parse in mind; `fallback`
// when absent, as the reference's loader.
template <typename T>
Result<T> ParseMeta(const std::map<std::string, std::string>& meta, const std::string& key, T fallback,
                    const std::string& context) {
  auto it = meta.find(key);
  if (it == meta.end()) return fallback;
  T v{};
  const char* end = it->second.data() + it->second.size();
  auto r = std::from_chars(it->second.data(), end, v);
  if (r.ec != std::errc() || r.ptr != end) return Status::Invalid(context, ": ", key, " '", it->second, "' is not a number");
  return v;
}

}  // namespace

Result<BloomFilterIndexData> ReadBloomFilterFile(const FileReader& file, const std::string& context) {
  LANCE_ASSIGN_OR_RAISE(auto schema, file.ArrowSchema());
  for (const char* name : {"fragment_id", "zone_start", "zone_length"}) {
    auto f = schema->GetFieldByName(name);
    if (f == nullptr || !f->type()->Equals(*arrow::uint64())) {
      return Status::NotImplemented(context, ": no uint64 column ", name);
    }
  }
  auto has_null = schema->GetFieldByName("has_null");
  auto data = schema->GetFieldByName("bloom_filter_data");
  if (has_null == nullptr || !has_null->type()->Equals(*arrow::boolean()) || data == nullptr ||
      !data->type()->Equals(*arrow::binary())) {
    return Status::NotImplemented(context, ": not the bloomfilter.lance layout lance-cpp reads");
  }
  BloomFilterIndexData out;
  const auto& meta = file.schema().metadata;
  LANCE_ASSIGN_OR_RAISE(out.number_of_items, ParseMeta<uint64_t>(meta, "bloomfilter_item", kBloomFilterDefaultItems, context));
  LANCE_ASSIGN_OR_RAISE(out.probability, ParseMeta<double>(meta, "bloomfilter_probability", kBloomFilterDefaultProbability, context));
  LANCE_ASSIGN_OR_RAISE(out.null_rows, ReadRowIdBuffer(file, "null_bitmap", context));
  LANCE_ASSIGN_OR_RAISE(auto table,
                        file.ReadAll({"fragment_id", "zone_start", "zone_length", "has_null", "bloom_filter_data"}));
  LANCE_ASSIGN_OR_RAISE(auto batch, table->CombineChunksToBatch());
  auto u64 = [&](int c) { return std::static_pointer_cast<arrow::UInt64Array>(batch->column(c)); };
  auto fragment_id = u64(0), start = u64(1), length = u64(2);
  auto nulls = std::static_pointer_cast<arrow::BooleanArray>(batch->column(3));
  auto filters = std::static_pointer_cast<arrow::BinaryArray>(batch->column(4));
  for (int64_t z = 0; z < batch->num_rows(); ++z) {
    if (fragment_id->IsNull(z) || start->IsNull(z) || length->IsNull(z) || nulls->IsNull(z) ||
        fragment_id->Value(z) > 0xFFFFFFFFu || start->Value(z) > 0xFFFFFFFFu ||
        length->Value(z) > 0x100000000u - start->Value(z)) {
      return Status::Invalid(context, ": zone ", z, " has a bad bound");
    }
    out.zones.fragment_ids.push_back(fragment_id->Value(z));
    out.zones.starts.push_back(start->Value(z));
    out.zones.lengths.push_back(length->Value(z));
    out.zones.has_nulls.push_back(nulls->Value(z));
    out.zones.filters.emplace_back(filters->IsNull(z) ? std::string_view() : filters->GetView(z));
  }
  return out;
}

Result<std::unique_ptr<ScalarIndex>> OpenBloomFilterIndex(const Dataset& dataset, const IndexMetadata& metadata) {
  if (metadata.index_version.value_or(-1) != 0 || metadata.fields.size() != 1) return std::unique_ptr<ScalarIndex>();
  const Field* field = dataset.manifest().schema.FieldById(metadata.fields[0]);
  if (field == nullptr) return std::unique_ptr<ScalarIndex>();
  auto type = ArrowTypeFromField(*field);
  if (!type.ok() || !BloomFilterValueType(**type)) return std::unique_ptr<ScalarIndex>();
  LANCE_ASSIGN_OR_RAISE(auto file, OpenIndexFile(dataset, metadata, kBloomFile));
  if (file == nullptr) return std::unique_ptr<ScalarIndex>();
  const std::string context = "bloom filter index '" + metadata.name + "' (" + metadata.UuidString() + ")";
  auto data = ReadBloomFilterFile(*file, context);
  if (!data.ok() && data.status().IsNotImplemented()) return std::unique_ptr<ScalarIndex>();
  LANCE_RETURN_NOT_OK(data.status());
  std::vector<SplitBlockBloomFilter> filters;
  for (size_t z = 0; z < data->zones.size(); ++z) {
    LANCE_ASSIGN_OR_RAISE(auto f, SplitBlockBloomFilter::FromBytes(data->zones.filters[z],
                                                                   context + " zone " + std::to_string(z)));
    filters.push_back(std::move(f));
  }
  data->zones.filters.clear();  // decoded above; the bytes are not kept twice
  return std::unique_ptr<ScalarIndex>(new BloomFilterIndex(*type, std::move(*data), std::move(filters)));
}

}  // namespace lance::index
