#include "lance/index/filter_plan.h"

#include <algorithm>
#include <functional>
#include <set>
#include <unordered_map>

#include <arrow/api.h>

#include "lance/dataset_internal.h"
#include "lance/index/frag_reuse.h"
#include "lance/index/scalar_index.h"
#include "lance/scan/filter_functions.h"

namespace lance::index {
namespace cp = arrow::compute;

// The indices of one column that a query uses: every segment of one index
// name (delta indices share a name), and the fragments they cover together.
struct ColumnIndex {
  std::string column;
  std::string name;
  std::string type_name;
  std::vector<std::unique_ptr<ScalarIndex>> segments;
  std::set<uint64_t> fragments;
  // Whether every segment records its index_version. Writers before it
  // (pylance < 0.21) may not have indexed null values: a predicate true for
  // null is not asked of such an index.
  bool nulls_indexed = true;
};

struct QueryNode {
  enum class Kind { kLeaf, kAnd, kOr } kind = Kind::kLeaf;
  // kLeaf: a predicate on one indexed column, evaluated on its values.
  cp::Expression predicate;
  std::shared_ptr<ColumnIndex> index;
  // kAnd, kOr
  std::vector<std::unique_ptr<QueryNode>> children;
};

namespace {

// Index system entries, never a column's index.
bool IsSystemIndex(const IndexMetadata& m) { return m.name.rfind("__lance", 0) == 0; }

// Scalar functions of a value alone, which the index can evaluate on its
// keys as the scan would on the column: comparisons with literals, IN,
// IS NULL, list membership with a constant needle, text search with a
// constant needle (contains, starts_with, LIKE), and their boolean
// combinations (pylance's scalar-index queries). Each index says which of
// them it answers (ScalarIndex::CanSearch).
bool IsIndexableFunction(const std::string& name) {
  static const std::set<std::string> kNames = {
      "equal",    "not_equal", "less",   "less_equal", "greater",    "greater_equal",
      "is_in",    "is_null",   "is_valid", "invert",   "and_kleene", "or_kleene",
      "and",      "or",        "cast",     scan::filter::kTotalOrderKeyFunction,
      "match_substring", "starts_with", "match_like",
      scan::filter::kArrayHasFunction, scan::filter::kArrayHasAnyFunction, scan::filter::kArrayHasAllFunction};
  return kNames.count(name) > 0;
}

// The one plain column `expr` refers to when it is made of indexable
// functions only; empty otherwise.
bool SingleColumn(const cp::Expression& expr, std::string* column) {
  if (expr.literal() != nullptr) return true;
  if (const auto* ref = expr.field_ref()) {
    if (!ref->IsName()) return false;  // nested paths: no index
    if (!column->empty() && *column != *ref->name()) return false;
    *column = *ref->name();
    return true;
  }
  const auto* call = expr.call();
  if (call == nullptr || !IsIndexableFunction(call->function_name)) return false;
  for (const auto& arg : call->arguments) {
    if (!SingleColumn(arg, column)) return false;
  }
  return true;
}

class Planner {
 public:
  Planner(std::shared_ptr<const Dataset> dataset) : dataset_(std::move(dataset)) {}

  // The query answering `expr` (negated when `negate`), or null. `exact`
  // is cleared when the query returns a superset of the rows.
  Result<std::unique_ptr<QueryNode>> Build(const cp::Expression& expr, bool negate, bool* exact) {
    std::string column;
    if (SingleColumn(expr, &column) && !column.empty()) {
      LANCE_ASSIGN_OR_RAISE(auto index, IndexOf(column));
      if (index == nullptr) return nullptr;
      auto leaf = std::make_unique<QueryNode>();
      leaf->predicate = negate ? cp::call("invert", {expr}) : expr;
      // An index that does not answer the whole may answer the parts of an
      // AND or OR below (a bitmap answers the equality beside a contains).
      const bool answers = std::all_of(index->segments.begin(), index->segments.end(),
                                       [&](const auto& seg) { return seg->CanSearch(leaf->predicate, column); });
      if (answers) {
        for (const auto& seg : index->segments) {
          if (!seg->IsExact(leaf->predicate)) *exact = false;  // candidates, rechecked
        }
        if (!index->nulls_indexed) {
          LANCE_ASSIGN_OR_RAISE(auto null, arrow::MakeArrayOfNull(index->segments[0]->value_type(), 1));
          LANCE_ASSIGN_OR_RAISE(auto on_null, EvaluateOn(leaf->predicate, column, null));
          if (on_null[0]) return nullptr;
        }
        leaf->index = std::move(index);
        return leaf;
      }
    }
    const auto* call = expr.call();
    if (call == nullptr) return nullptr;
    const std::string& f = call->function_name;
    if (f == "invert" && call->arguments.size() == 1) return Build(call->arguments[0], !negate, exact);
    const bool is_and = f == "and_kleene" || f == "and";
    const bool is_or = f == "or_kleene" || f == "or";
    if (!is_and && !is_or) return nullptr;
    // De Morgan holds in three-valued logic: NOT pushes down to the leaves.
    const bool conjunction = is_and != negate;
    auto node = std::make_unique<QueryNode>();
    node->kind = conjunction ? QueryNode::Kind::kAnd : QueryNode::Kind::kOr;
    for (const auto& arg : call->arguments) {
      bool child_exact = true;
      LANCE_ASSIGN_OR_RAISE(auto child, Build(arg, negate, &child_exact));
      if (child == nullptr) {
        if (!conjunction) return nullptr;  // OR with an unanswered side: nothing to narrow
        *exact = false;                    // AND: the other sides narrow, a refine checks
        continue;
      }
      if (!child_exact) *exact = false;
      node->children.push_back(std::move(child));
    }
    if (node->children.empty()) return nullptr;
    if (node->children.size() == 1) return std::move(node->children[0]);
    return node;
  }

 private:
  // The index a query uses for `column`: the first index name in manifest
  // order whose every segment lance-cpp reads, over exactly that column.
  Result<std::shared_ptr<ColumnIndex>> IndexOf(const std::string& column) {
    auto it = by_column_.find(column);
    if (it != by_column_.end()) return it->second;
    std::shared_ptr<ColumnIndex> chosen;
    const Schema& schema = dataset_->manifest().schema;
    auto field = std::find_if(schema.fields.begin(), schema.fields.end(),
                              [&](const Field& f) { return f.name == column; });
    LANCE_ASSIGN_OR_RAISE(auto arrow_schema, dataset_->ArrowSchema());
    auto arrow_field = arrow_schema->GetFieldByName(column);
    std::vector<std::string> tried;
    for (const auto& m : dataset_->indices()) {
      if (field == schema.fields.end() || arrow_field == nullptr || chosen) break;
      if (IsSystemIndex(m) || std::find(tried.begin(), tried.end(), m.name) != tried.end()) continue;
      // Keyed fields are `fields` less the trailing covering (carried) ones.
      if (m.fields.size() != m.covering_fields.size() + 1 || m.fields[0] != field->id) continue;
      tried.push_back(m.name);
      auto candidate = std::make_shared<ColumnIndex>();
      candidate->column = column;
      candidate->name = m.name;
      bool usable = true;
      for (const auto& seg : dataset_->indices()) {
        if (seg.name != m.name) continue;
        if (seg.fields != m.fields || seg.index_details_type_url != m.index_details_type_url ||
            !seg.fragment_ids) {
          usable = false;  // coverage unknown, or a mixed index: not used
          break;
        }
        LANCE_ASSIGN_OR_RAISE(auto opened, OpenScalarIndex(*dataset_, seg));
        if (opened == nullptr || !opened->value_type()->Equals(*arrow_field->type())) {
          usable = false;
          break;
        }
        candidate->type_name = opened->type_name();
        if (!seg.index_version) candidate->nulls_indexed = false;
        candidate->fragments.insert(seg.fragment_ids->begin(), seg.fragment_ids->end());
        candidate->segments.push_back(std::move(opened));
      }
      if (usable && !candidate->segments.empty()) chosen = std::move(candidate);
    }
    by_column_[column] = chosen;
    return chosen;
  }

  std::shared_ptr<const Dataset> dataset_;
  std::map<std::string, std::shared_ptr<ColumnIndex>> by_column_;
};

void CollectIndices(const QueryNode& node, std::vector<const ColumnIndex*>* out) {
  if (node.kind == QueryNode::Kind::kLeaf) {
    if (std::find(out->begin(), out->end(), node.index.get()) == out->end()) out->push_back(node.index.get());
    return;
  }
  for (const auto& c : node.children) CollectIndices(*c, out);
}

std::string DescribeNode(const QueryNode& node) {
  if (node.kind == QueryNode::Kind::kLeaf) {
    return "[" + node.predicate.ToString() + "]@" + node.index->name + " (" + node.index->type_name + ")";
  }
  std::string out = node.kind == QueryNode::Kind::kAnd ? "AND(" : "OR(";
  for (size_t i = 0; i < node.children.size(); ++i) {
    if (i) out += ",";
    out += DescribeNode(*node.children[i]);
  }
  return out + ")";
}

// Stable row id -> row address of the live rows of the covered fragments
// (the row-id index), built when an index stores stable ids. An id not in it
// belongs to a deleted row or to an uncovered fragment, whose scan finds it.
class AddressOf {
 public:
  AddressOf(const Dataset& dataset, const std::map<uint64_t, const Fragment*>& covered,
            std::function<Result<std::vector<uint32_t>>(const Fragment&)> deleted_of)
      : dataset_(dataset), covered_(covered), deleted_of_(std::move(deleted_of)) {}
  Result<RowIds> Map(const RowIds& ids) {
    if (!built_) {
      for (const auto& [id, fragment] : covered_) {
        LANCE_ASSIGN_OR_RAISE(auto row_ids, dataset_.RowIds(*fragment));
        LANCE_ASSIGN_OR_RAISE(auto deleted, deleted_of_(*fragment));
        size_t d = 0;
        for (uint64_t off = 0; off < row_ids.size(); ++off) {
          if (d < deleted.size() && deleted[d] == off) {
            ++d;
            continue;
          }
          address_[row_ids[off]] = (id << 32) | off;
        }
      }
      built_ = true;
    }
    RowIds out;
    for (uint64_t id : ids) {
      auto it = address_.find(id);
      if (it != address_.end()) out.push_back(it->second);
    }
    std::sort(out.begin(), out.end());
    return out;
  }

 private:
  const Dataset& dataset_;
  const std::map<uint64_t, const Fragment*>& covered_;
  std::function<Result<std::vector<uint32_t>>(const Fragment&)> deleted_of_;
  bool built_ = false;
  std::unordered_map<uint64_t, uint64_t> address_;
};

// The row addresses the query finds. Addresses an index holds from before
// a deferred compaction remap are mapped to the rows' addresses now.
Result<RowIds> Evaluate(const QueryNode& node, bool stable, AddressOf& address_of, const FragReuseMap* reuse) {
  if (node.kind == QueryNode::Kind::kLeaf) {
    RowIds out;
    for (const auto& seg : node.index->segments) {
      LANCE_ASSIGN_OR_RAISE(auto ids, seg->Search(node.predicate, node.index->column));
      if (stable && !seg->stores_addresses()) {
        LANCE_ASSIGN_OR_RAISE(ids, address_of.Map(ids));
      } else if (reuse) {
        ids = reuse->MapSorted(ids);
      }
      out = out.empty() ? std::move(ids) : Union(out, ids);
    }
    return out;
  }
  LANCE_ASSIGN_OR_RAISE(RowIds acc, Evaluate(*node.children[0], stable, address_of, reuse));
  for (size_t i = 1; i < node.children.size(); ++i) {
    LANCE_ASSIGN_OR_RAISE(auto next, Evaluate(*node.children[i], stable, address_of, reuse));
    acc = node.kind == QueryNode::Kind::kAnd ? Intersect(acc, next) : Union(acc, next);
  }
  return acc;
}

}  // namespace

IndexedFilter::IndexedFilter() = default;
IndexedFilter::~IndexedFilter() = default;
IndexedFilter::IndexedFilter(IndexedFilter&&) noexcept = default;
IndexedFilter& IndexedFilter::operator=(IndexedFilter&&) noexcept = default;

Result<std::optional<IndexedFilter>> IndexedFilter::Plan(std::shared_ptr<const Dataset> dataset,
                                                        const cp::Expression& filter,
                                                        const std::vector<const Fragment*>& fragments) {
  Planner planner(dataset);
  bool exact = true;
  LANCE_ASSIGN_OR_RAISE(auto root, planner.Build(filter, /*negate=*/false, &exact));
  if (root == nullptr) return std::nullopt;
  IndexedFilter out;
  out.dataset_ = std::move(dataset);
  out.refine_ = !exact;
  std::vector<const ColumnIndex*> used;
  CollectIndices(*root, &used);
  out.root_ = std::move(root);
  // A deferred compaction remap left indices naming old row addresses (the
  // bitmaps read already name the new fragments).
  if (const auto& details = DatasetAccess::FragReuse(*out.dataset_)) {
    LANCE_ASSIGN_OR_RAISE(auto map, FragReuseMap::Make(*details));
    if (!map.empty()) out.reuse_ = std::make_shared<FragReuseMap>(std::move(map));
  }
  // A fragment is answered by the indices only when every index used covers
  // it. Data overlay files change cells after the index was built (the index
  // does not see them): such fragments are scanned.
  for (const Fragment* f : fragments) {
    if (!f->overlays.empty()) continue;
    const bool all = std::all_of(used.begin(), used.end(),
                                 [&](const ColumnIndex* c) { return c->fragments.count(f->id) > 0; });
    if (all && out.covered_.emplace(f->id, f).second) out.covered_list_.push_back(f->id);
  }
  // Indices that cover none of the fragments scanned (all of theirs were
  // compacted away, say) answer nothing: pylance plans no index query then.
  if (out.covered_.empty()) return std::nullopt;
  return std::optional<IndexedFilter>(std::move(out));
}

std::string IndexedFilter::Describe() const { return DescribeNode(*root_); }

Result<IndexedRows> IndexedFilter::Execute(const KnownDeleted* known_deleted) const {
  IndexedRows out;
  if (covered_.empty()) return out;
  auto deleted_of = [&](const Fragment& fragment) -> Result<std::vector<uint32_t>> {
    if (known_deleted) {
      auto it = known_deleted->find(fragment.id);
      if (it != known_deleted->end()) return *it->second;
    }
    return dataset_->DeletedRows(fragment);
  };
  const bool stable = dataset_->manifest().UsesStableRowIds();
  AddressOf address_of(*dataset_, covered_, deleted_of);
  LANCE_ASSIGN_OR_RAISE(RowIds ids, Evaluate(*root_, stable, address_of, reuse_.get()));
  for (const auto& [id, fragment] : covered_) {
    auto& rows = out.candidates[id];
    LANCE_ASSIGN_OR_RAISE(auto deleted, deleted_of(*fragment));
    LANCE_ASSIGN_OR_RAISE(uint64_t physical, dataset_->PhysicalRows(*fragment));
    auto live = [&](uint64_t offset) {
      return offset < physical && !std::binary_search(deleted.begin(), deleted.end(), static_cast<uint32_t>(offset));
    };
    auto lo = std::lower_bound(ids.begin(), ids.end(), id << 32);
    auto hi = std::lower_bound(ids.begin(), ids.end(), (id + 1) << 32);
    for (auto p = lo; p != hi; ++p) {
      const uint64_t off = *p & 0xFFFFFFFFu;
      if (live(off)) rows.push_back(off);
    }
  }
  return out;
}

}  // namespace lance::index
