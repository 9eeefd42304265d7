// ZONEMAP indices as pylance 14 writes them (rust/lance-index/src/scalar/zonemap.rs),
// index_version 0:
//   zonemap.lance  one row per zone: min, max (the value type; null when the
//                  zone holds only nulls), null_count u32, nan_count u32,
//                  fragment_id u64, zone_start u64, zone_length u64 (the zone
//                  is the row addresses fragment_id << 32 | zone_start, and the
//                  zone_length after it); schema metadata rows_per_zone and
//                  null_bitmap, the global buffer holding the row addresses of
//                  the null values (a RowIdTreeMap).
// Row addresses even in datasets with stable row ids (the index trains on them).
//
// A zone map is inexact: a predicate gives every row of each zone its bounds
// cannot rule out, and the scan rechecks them (IndexedFilter::needs_refine).
// IS NULL and IS NOT NULL alone are exact, from the null bitmap. As in pylance,
// only what the bounds decide is asked of it (comparisons with a literal, IN,
// IS NULL, and AND/OR of those, negations pushed down to flipped comparisons;
// not !=, NOT = or NOT IN); float columns' comparisons are not (their total
// order is not what the bounds compare).
#include <algorithm>
#include <map>
#include <optional>
#include <string_view>

#include <arrow/api.h>
#include <arrow/compute/api.h>

#include "lance/file_reader.h"
#include "lance/index/bounds_pruner.h"
#include "lance/index/scalar_index.h"

namespace lance::index {
namespace {
namespace cp = arrow::compute;

constexpr const char* kZoneFile = "zonemap.lance";
constexpr const char* kNullBitmapKey = "null_bitmap";

struct Zone {
  uint64_t fragment_id, start, length;
};

// is_null(col): +1; is_valid(col) or invert(is_null(col)): -1; else 0.
int NullTest(const cp::Expression& e) {
  const auto* call = e.call();
  if (call == nullptr || call->arguments.size() != 1) return 0;
  if (call->function_name == "is_null" && call->arguments[0].field_ref()) return 1;
  if (call->function_name == "is_valid" && call->arguments[0].field_ref()) return -1;
  if (call->function_name == "invert" && NullTest(call->arguments[0]) == 1) return -1;
  return 0;
}

// `e` with its negations pushed down to the comparisons and flipped there, as
// DataFusion simplifies a filter before pylance plans it (NOT (i < 5) is
// i >= 5, also in three-valued logic); nullopt when a negation stays (NOT of
// =, IN or anything else), which a zone's bounds do not decide.
std::optional<cp::Expression> PushNot(const cp::Expression& e, bool negate) {
  const auto* call = e.call();
  if (call == nullptr) return negate ? std::nullopt : std::optional<cp::Expression>(e);
  const std::string& f = call->function_name;
  if (f == "invert" && call->arguments.size() == 1) return PushNot(call->arguments[0], !negate);
  if (f == "not_equal") return std::nullopt;
  const bool is_and = f == "and" || f == "and_kleene", is_or = f == "or" || f == "or_kleene";
  if (is_and || is_or) {
    std::vector<cp::Expression> args;
    for (const auto& a : call->arguments) {
      auto pushed = PushNot(a, negate);
      if (!pushed) return std::nullopt;
      args.push_back(std::move(*pushed));
    }
    const bool conj = is_and != negate;
    return cp::call(conj ? "and_kleene" : "or_kleene", std::move(args));
  }
  if (!negate) {
    for (const auto& a : call->arguments) {
      if (a.call() && !PushNot(a, false)) return std::nullopt;
    }
    return e;
  }
  static const std::map<std::string, std::string> kNegated = {
      {"less", "greater_equal"}, {"less_equal", "greater"}, {"greater", "less_equal"}, {"greater_equal", "less"},
      {"is_null", "is_valid"}, {"is_valid", "is_null"}};
  auto it = kNegated.find(f);
  if (it == kNegated.end()) return std::nullopt;
  return cp::call(it->second, call->arguments, call->options);
}

class ZoneMapIndex : public ScalarIndex {
 public:
  ZoneMapIndex(std::shared_ptr<arrow::DataType> type, BoundsPruner pruner, std::vector<Zone> zones,
               RowIds null_rows)
      : type_(std::move(type)), pruner_(std::move(pruner)), zones_(std::move(zones)),
        null_rows_(std::move(null_rows)) {}

  const char* type_name() const override { return "ZoneMap"; }
  const std::shared_ptr<arrow::DataType>& value_type() const override { return type_; }
  bool stores_addresses() const override { return true; }
  bool IsExact(const cp::Expression& predicate) const override {
    auto pushed = PushNot(predicate, false);
    return pushed && NullTest(*pushed) != 0;
  }

  bool CanSearch(const cp::Expression& predicate, const std::string& /*column*/) const override {
    auto pushed = PushNot(predicate, false);
    if (!pushed) return false;
    if (NullTest(*pushed) != 0) return true;
    auto zones = pruner_.Pages(*pushed);
    return zones.ok() && zones->has_value();
  }

  Result<RowIds> Search(const cp::Expression& original, const std::string& column) override {
    if (!CanSearch(original, column)) return Status::Invalid("zone map index: cannot answer ", original.ToString());
    const cp::Expression predicate = *PushNot(original, false);
    const int null_test = NullTest(predicate);
    if (null_test == 1) return null_rows_;
    RowIds out;
    LANCE_ASSIGN_OR_RAISE(auto keep, pruner_.Pages(predicate));
    for (size_t z = 0; z < zones_.size(); ++z) {
      if (null_test == 0 && !(*keep)[z]) continue;
      const uint64_t first = (zones_[z].fragment_id << 32) | zones_[z].start;
      for (uint64_t k = 0; k < zones_[z].length; ++k) out.push_back(first + k);
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    if (null_test == -1) {
      RowIds valid;
      std::set_difference(out.begin(), out.end(), null_rows_.begin(), null_rows_.end(), std::back_inserter(valid));
      return valid;
    }
    return out;
  }

 private:
  std::shared_ptr<arrow::DataType> type_;
  BoundsPruner pruner_;
  std::vector<Zone> zones_;
  RowIds null_rows_;
};

}  // namespace

Result<std::unique_ptr<ScalarIndex>> OpenZoneMapIndex(const Dataset& dataset, const IndexMetadata& metadata) {
  if (metadata.index_version.value_or(-1) != 0) return std::unique_ptr<ScalarIndex>();
  LANCE_ASSIGN_OR_RAISE(auto file, OpenIndexFile(dataset, metadata, kZoneFile));
  if (file == nullptr) return std::unique_ptr<ScalarIndex>();
  LANCE_ASSIGN_OR_RAISE(auto schema, file->ArrowSchema());
  auto min = schema->GetFieldByName("min");
  auto max = schema->GetFieldByName("max");
  if (min == nullptr || max == nullptr || !max->type()->Equals(*min->type())) return std::unique_ptr<ScalarIndex>();
  for (const char* name : {"null_count", "nan_count"}) {
    auto f = schema->GetFieldByName(name);
    if (f == nullptr || !f->type()->Equals(*arrow::uint32())) return std::unique_ptr<ScalarIndex>();
  }
  for (const char* name : {"fragment_id", "zone_start", "zone_length"}) {
    auto f = schema->GetFieldByName(name);
    if (f == nullptr || !f->type()->Equals(*arrow::uint64())) return std::unique_ptr<ScalarIndex>();
  }
  // The null bitmap's global buffer (never 0, the schema's). Without it
  // (older writers) the index would not know the null rows: not used.
  const auto& meta = file->schema().metadata;
  auto it = meta.find(kNullBitmapKey);
  if (it == meta.end() || it->second.empty() || it->second.size() > 6) return std::unique_ptr<ScalarIndex>();
  size_t buffer = 0;
  for (char c : it->second) {
    if (c < '0' || c > '9') return std::unique_ptr<ScalarIndex>();
    buffer = buffer * 10 + static_cast<size_t>(c - '0');
  }
  if (buffer == 0 || buffer >= file->layout().global_buffers.size()) return std::unique_ptr<ScalarIndex>();
  std::string name = "zone map index '" + metadata.name + "' (" + metadata.UuidString() + ")";
  LANCE_ASSIGN_OR_RAISE(auto bytes, file->ReadGlobalBuffer(buffer));
  auto null_rows = DecodeRowIdTreeMap(
      std::string_view(reinterpret_cast<const char*>(bytes->data()), static_cast<size_t>(bytes->size())),
      name + " null bitmap");
  // A whole-fragment entry is a form this reader does not decode: not used.
  if (!null_rows.ok() && null_rows.status().IsNotImplemented()) return std::unique_ptr<ScalarIndex>();
  LANCE_RETURN_NOT_OK(null_rows.status());
  LANCE_ASSIGN_OR_RAISE(auto table,
                        file->ReadAll({"min", "max", "null_count", "fragment_id", "zone_start", "zone_length"}));
  LANCE_ASSIGN_OR_RAISE(auto batch, table->CombineChunksToBatch());
  auto col = [&](const char* n) { return std::static_pointer_cast<arrow::UInt64Array>(batch->GetColumnByName(n)); };
  auto fragment_id = col("fragment_id"), start = col("zone_start"), length = col("zone_length");
  std::vector<Zone> zones;
  for (int64_t z = 0; z < batch->num_rows(); ++z) {
    if (fragment_id->IsNull(z) || start->IsNull(z) || length->IsNull(z) || fragment_id->Value(z) > 0xFFFFFFFFu ||
        start->Value(z) > 0xFFFFFFFFu || length->Value(z) > 0x100000000u - start->Value(z)) {
      return Status::Invalid(name, ": zone ", z, " has a bad bound");
    }
    zones.push_back({fragment_id->Value(z), start->Value(z), length->Value(z)});
  }
  BoundsPruner pruner(batch->GetColumnByName("min"), batch->GetColumnByName("max"),
                      std::static_pointer_cast<arrow::UInt32Array>(batch->GetColumnByName("null_count")));
  return std::unique_ptr<ScalarIndex>(new ZoneMapIndex(min->type(), std::move(pruner), std::move(zones),
                                                       std::move(*null_rows)));
}

}  // namespace lance::index
