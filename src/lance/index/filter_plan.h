// Answering a scan's filter through scalar indices: the planner step between
// a bound filter and the scan. It splits the filter into an index query (the
// parts indices answer) and a refine (the rest, rechecked on the candidate
// rows), and runs the query to the candidate rows of every fragment all the
// indices used cover. Fragments they do not cover are scanned with the
// whole filter, so the rows are always exactly a full scan's.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <arrow/compute/expression.h>

#include "lance/dataset.h"
#include "lance/status.h"

namespace lance::index {

struct QueryNode;
class FragReuseMap;

/// Candidate rows of the covered fragments.
struct IndexedRows {
  /// Fragment id -> physical offsets of its candidate rows, ascending, its
  /// deleted rows removed. Holds every covered fragment (maybe with none).
  std::map<uint64_t, std::vector<uint64_t>> candidates;
};

class IndexedFilter {
 public:
  ~IndexedFilter();
  IndexedFilter(IndexedFilter&&) noexcept;
  IndexedFilter& operator=(IndexedFilter&&) noexcept;

  /// The index query for `filter` over `fragments` (those a scan reads), or
  /// nullopt when no usable index answers any part of it.
  static Result<std::optional<IndexedFilter>> Plan(std::shared_ptr<const Dataset> dataset,
                                                   const arrow::compute::Expression& filter,
                                                   const std::vector<const Fragment*>& fragments);

  /// Whether candidates must still be checked against the whole filter
  /// (some part of it no index answers).
  bool needs_refine() const { return refine_; }
  /// Whether the scan covers fragment `id` through the indices.
  bool Covers(uint64_t id) const { return covered_.count(id) > 0; }
  /// pylance's notation: AND([(i > 3)]@i_idx (BTree),[(s == "e")]@s_idx (Bitmap)).
  std::string Describe() const;
  const std::vector<uint64_t>& covered_fragments() const { return covered_list_; }

  /// Deleted offsets of fragments (by id) a caller has read already; the
  /// others are read.
  using KnownDeleted = std::map<uint64_t, const std::vector<uint32_t>*>;

  /// Runs the query. `known_deleted`, when given, spares reading those
  /// fragments' deletion files again.
  Result<IndexedRows> Execute(const KnownDeleted* known_deleted = nullptr) const;

 private:
  IndexedFilter();
  std::shared_ptr<const Dataset> dataset_;
  std::unique_ptr<QueryNode> root_;
  bool refine_ = false;
  std::map<uint64_t, const Fragment*> covered_;
  std::vector<uint64_t> covered_list_;  // in scan order
  std::shared_ptr<const FragReuseMap> reuse_;  // the fragment reuse index's mapping, if any
};

}  // namespace lance::index
