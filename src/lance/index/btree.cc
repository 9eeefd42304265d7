// BTREE indices as pylance 14 writes them (rust/lance-index/src/scalar/btree.rs):
//   page_lookup.lance  min, max (value type), null_count u32, page_idx u32;
//                      schema metadata batch_size, range_partitioned
//   page_data.lance    values (sorted, nulls first), ids u64 (row ids)
// index_version 0 stores the dataset's row ids (stable ids when it has
// them). pylance 14.0.2 writes index_version 1 on datasets with stable row
// ids, and its ids are then row addresses (observed: fragment 1's rows are
// listed as 1 << 32 | offset, not as their stable ids); lance-cpp reads
// version 1 only there. Searches evaluate the predicate on page_data's values, so they answer it
// exactly as a scan of the column would.
#include <algorithm>
#include <charconv>
#include <map>
#include <optional>

#include <arrow/api.h>
#include <arrow/compute/api.h>

#include "lance/file_reader.h"
#include "lance/index/scalar_index.h"

namespace lance::index {
namespace {

constexpr const char* kLookupFile = "page_lookup.lance";
constexpr const char* kPagesFile = "page_data.lance";

bool HasField(const arrow::Schema& schema, const char* name, const std::shared_ptr<arrow::DataType>& type) {
  auto f = schema.GetFieldByName(name);
  return f != nullptr && (type == nullptr || f->type()->Equals(*type));
}

// The pages of the tree a predicate may have a match in, from the lookup's
// per-page bounds: pages are consecutive runs of the sorted values (nulls
// first), so `min` is a page's first value (null when it starts with nulls)
// and `max` its last (null when it holds only nulls). Only shapes whose
// answer the bounds decide are pruned (comparisons of the column with a
// literal of its type, IN, IS NULL, and AND/OR of those); anything else
// reads every page. Floats are never pruned: their predicates compare in
// total order (NaN last), which Arrow's comparisons of the bounds do not.
class PagePruner {
 public:
  PagePruner(std::shared_ptr<arrow::Array> min, std::shared_ptr<arrow::Array> max,
             std::shared_ptr<arrow::UInt32Array> null_count)
      : min_(std::move(min)), max_(std::move(max)), null_count_(std::move(null_count)) {}

  // Pages that may match, or nullopt when the predicate is not a shape
  // the bounds decide.
  Result<std::optional<std::vector<bool>>> Pages(const arrow::compute::Expression& e) const {
    namespace cp = arrow::compute;
    const auto* call = e.call();
    if (call == nullptr) return std::nullopt;
    const std::string& f = call->function_name;
    const size_t n = static_cast<size_t>(min_->length());
    if (f == "and" || f == "and_kleene" || f == "or" || f == "or_kleene") {
      const bool conj = f == "and" || f == "and_kleene";
      std::optional<std::vector<bool>> acc;
      for (const auto& arg : call->arguments) {
        LANCE_ASSIGN_OR_RAISE(auto pages, Pages(arg));
        if (!pages) {
          if (conj) continue;  // the other sides still bound an AND
          return std::nullopt;
        }
        if (!acc) {
          acc = std::move(pages);
          continue;
        }
        for (size_t i = 0; i < n; ++i) (*acc)[i] = conj ? ((*acc)[i] && (*pages)[i]) : ((*acc)[i] || (*pages)[i]);
      }
      return acc;
    }
    if (f == "is_null" && call->arguments.size() == 1 && call->arguments[0].field_ref()) {
      std::vector<bool> out(n);
      for (size_t i = 0; i < n; ++i) out[i] = null_count_->Value(static_cast<int64_t>(i)) > 0;
      return out;
    }
    if (f == "is_in" && call->arguments.size() == 1 && call->arguments[0].field_ref() && call->options) {
      const auto& opts = static_cast<const cp::SetLookupOptions&>(*call->options);
      if (!opts.value_set.is_array()) return std::nullopt;
      auto values = opts.value_set.make_array();
      if (values->null_count() > 0 || !Prunable(*values->type()) || !values->type()->Equals(*min_->type())) {
        return std::nullopt;
      }
      std::vector<bool> out(n, false);
      for (int64_t v = 0; v < values->length(); ++v) {
        LANCE_ASSIGN_OR_RAISE(auto scalar, values->GetScalar(v));
        LANCE_ASSIGN_OR_RAISE(auto pages, Compare("equal", scalar));
        for (size_t i = 0; i < n; ++i) out[i] = out[i] || pages[i];
      }
      return out;
    }
    static const std::map<std::string, std::string> kFlipped = {
        {"equal", "equal"}, {"less", "greater"}, {"less_equal", "greater_equal"},
        {"greater", "less"}, {"greater_equal", "less_equal"}};
    auto op = kFlipped.find(f);
    if (op == kFlipped.end() || call->arguments.size() != 2) return std::nullopt;
    const auto& a = call->arguments[0];
    const auto& b = call->arguments[1];
    std::string name = f;
    const arrow::Datum* literal = nullptr;
    if (a.field_ref() && b.literal()) {
      literal = b.literal();
    } else if (a.literal() && b.field_ref()) {
      literal = a.literal();
      name = op->second;  // c < col  is  col > c
    } else {
      return std::nullopt;
    }
    if (!literal->is_scalar() || !literal->scalar()->is_valid) return std::nullopt;
    if (!Prunable(*literal->type()) || !literal->type()->Equals(*min_->type())) return std::nullopt;
    LANCE_ASSIGN_OR_RAISE(auto pages, Compare(name, literal->scalar()));
    return pages;
  }

 private:
  static bool Prunable(const arrow::DataType& t) { return !arrow::is_floating(t.id()) && t.id() != arrow::Type::DICTIONARY; }

  // Pages that may hold a value v with `v op c`.
  Result<std::vector<bool>> Compare(const std::string& op, const std::shared_ptr<arrow::Scalar>& c) const {
    namespace cp = arrow::compute;
    const size_t n = static_cast<size_t>(min_->length());
    std::vector<bool> out(n, true);
    // A page whose max is null holds only nulls: no comparison is true there.
    for (size_t i = 0; i < n; ++i) out[i] = max_->IsValid(static_cast<int64_t>(i));
    auto narrow = [&](const std::shared_ptr<arrow::Array>& bound, const char* fn) -> Status {
      LANCE_ASSIGN_OR_RAISE(auto r, cp::CallFunction(fn, {bound, arrow::Datum(c)}));
      auto mask = std::static_pointer_cast<arrow::BooleanArray>(r.make_array());
      // A null min: the page starts with nulls and its least value is unknown.
      for (size_t i = 0; i < n; ++i) {
        const auto k = static_cast<int64_t>(i);
        if (mask->IsValid(k) && !mask->Value(k)) out[i] = false;
      }
      return Status::OK();
    };
    if (op == "equal") {
      LANCE_RETURN_NOT_OK(narrow(min_, "less_equal"));
      LANCE_RETURN_NOT_OK(narrow(max_, "greater_equal"));
    } else if (op == "less") {
      LANCE_RETURN_NOT_OK(narrow(min_, "less"));
    } else if (op == "less_equal") {
      LANCE_RETURN_NOT_OK(narrow(min_, "less_equal"));
    } else if (op == "greater") {
      LANCE_RETURN_NOT_OK(narrow(max_, "greater"));
    } else if (op == "greater_equal") {
      LANCE_RETURN_NOT_OK(narrow(max_, "greater_equal"));
    }
    return out;
  }

  std::shared_ptr<arrow::Array> min_, max_;
  std::shared_ptr<arrow::UInt32Array> null_count_;
};

class BTreeIndex : public ScalarIndex {
 public:
  BTreeIndex(std::shared_ptr<FileReader> pages, std::shared_ptr<arrow::DataType> type, bool addresses,
             PagePruner pruner, std::vector<uint32_t> page_idx, uint64_t batch_size)
      : pages_(std::move(pages)), type_(std::move(type)), addresses_(addresses), pruner_(std::move(pruner)),
        page_idx_(std::move(page_idx)), batch_size_(batch_size) {}
  const char* type_name() const override { return "BTree"; }
  const std::shared_ptr<arrow::DataType>& value_type() const override { return type_; }
  bool stores_addresses() const override { return addresses_; }

  Result<RowIds> Search(const arrow::compute::Expression& predicate, const std::string& column) override {
    LANCE_ASSIGN_OR_RAISE(auto keep, pruner_.Pages(predicate));
    // Page k of the lookup is rows [page_idx * batch_size, +batch_size) of
    // page_data; read runs of consecutive pages at once.
    std::vector<uint32_t> wanted;
    for (size_t k = 0; k < page_idx_.size(); ++k) {
      if (!keep || (*keep)[k]) wanted.push_back(page_idx_[k]);
    }
    std::sort(wanted.begin(), wanted.end());
    RowIds out;
    const uint64_t rows = pages_->num_rows();
    for (size_t i = 0; i < wanted.size();) {
      size_t j = i + 1;
      while (j < wanted.size() && wanted[j] == wanted[j - 1] + 1) ++j;
      const uint64_t begin = uint64_t{wanted[i]} * batch_size_;
      const uint64_t end = std::min(rows, uint64_t{wanted[j - 1] + 1} * batch_size_);
      i = j;
      if (begin >= end) continue;
      LANCE_ASSIGN_OR_RAISE(auto table, pages_->ReadRange({"values", "ids"}, begin, end - begin));
      LANCE_ASSIGN_OR_RAISE(auto combined, table->CombineChunksToBatch());
      auto ids = std::static_pointer_cast<arrow::UInt64Array>(combined->GetColumnByName("ids"));
      if (ids->null_count() > 0) return Status::Invalid("BTREE page data has null row ids");
      LANCE_ASSIGN_OR_RAISE(auto hits, EvaluateOn(predicate, column, combined->GetColumnByName("values")));
      for (size_t r = 0; r < hits.size(); ++r) {
        if (hits[r]) out.push_back(ids->Value(static_cast<int64_t>(r)));
      }
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  }

 private:
  std::shared_ptr<FileReader> pages_;
  std::shared_ptr<arrow::DataType> type_;
  bool addresses_ = false;
  PagePruner pruner_;
  std::vector<uint32_t> page_idx_;
  uint64_t batch_size_ = 4096;
};

}  // namespace

Result<std::unique_ptr<ScalarIndex>> OpenBTreeIndex(const Dataset& dataset, const IndexMetadata& metadata) {
  const int32_t version = metadata.index_version.value_or(0);
  const bool stable = dataset.manifest().UsesStableRowIds();
  if (version != 0 && !(version == 1 && stable)) return std::unique_ptr<ScalarIndex>();
  LANCE_ASSIGN_OR_RAISE(auto lookup, OpenIndexFile(dataset, metadata, kLookupFile));
  if (lookup == nullptr) return std::unique_ptr<ScalarIndex>();
  LANCE_ASSIGN_OR_RAISE(auto lookup_schema, lookup->ArrowSchema());
  // Range-partitioned trees keep one lookup per partition: another layout.
  const auto& meta = lookup->schema().metadata;
  auto part = meta.find("range_partitioned");
  if (part != meta.end() && part->second != "false") return std::unique_ptr<ScalarIndex>();
  auto min = lookup_schema->GetFieldByName("min");
  if (min == nullptr || !HasField(*lookup_schema, "max", min->type()) ||
      !HasField(*lookup_schema, "null_count", arrow::uint32()) ||
      !HasField(*lookup_schema, "page_idx", arrow::uint32())) {
    return std::unique_ptr<ScalarIndex>();
  }
  LANCE_ASSIGN_OR_RAISE(auto pages, OpenIndexFile(dataset, metadata, kPagesFile));
  if (pages == nullptr) return std::unique_ptr<ScalarIndex>();
  LANCE_ASSIGN_OR_RAISE(auto pages_schema, pages->ArrowSchema());
  if (!HasField(*pages_schema, "values", min->type()) || !HasField(*pages_schema, "ids", arrow::uint64())) {
    return std::unique_ptr<ScalarIndex>();
  }
  // The lookup: one row per page, each page a whole batch_size run of
  // page_data but the last. Anything else is a layout this reader does not know.
  uint64_t batch_size = 4096;
  auto bs = meta.find("batch_size");
  if (bs != meta.end()) {
    auto [ptr, ec] = std::from_chars(bs->second.data(), bs->second.data() + bs->second.size(), batch_size);
    if (ec != std::errc() || ptr != bs->second.data() + bs->second.size() || batch_size == 0) {
      return std::unique_ptr<ScalarIndex>();
    }
  }
  LANCE_ASSIGN_OR_RAISE(auto lookup_table, lookup->ReadAll({"min", "max", "null_count", "page_idx"}));
  LANCE_ASSIGN_OR_RAISE(auto bounds, lookup_table->CombineChunksToBatch());
  auto page_idx_array = std::static_pointer_cast<arrow::UInt32Array>(bounds->GetColumnByName("page_idx"));
  std::vector<uint32_t> page_idx;
  for (int64_t k = 0; k < page_idx_array->length(); ++k) page_idx.push_back(page_idx_array->Value(k));
  std::vector<uint32_t> sorted = page_idx;
  std::sort(sorted.begin(), sorted.end());
  const uint64_t pages_needed = (pages->num_rows() + batch_size - 1) / batch_size;
  for (size_t k = 0; k < sorted.size(); ++k) {
    if (sorted[k] != k) return std::unique_ptr<ScalarIndex>();
  }
  if (sorted.size() != pages_needed) return std::unique_ptr<ScalarIndex>();
  PagePruner pruner(bounds->GetColumnByName("min"), bounds->GetColumnByName("max"),
                    std::static_pointer_cast<arrow::UInt32Array>(bounds->GetColumnByName("null_count")));
  return std::unique_ptr<ScalarIndex>(new BTreeIndex(std::move(pages), min->type(), /*addresses=*/!stable || version == 1,
                                                     std::move(pruner), std::move(page_idx), batch_size));
}

}  // namespace lance::index
