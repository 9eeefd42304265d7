// Which rows a search (vector or full-text) may return: the live rows of a
// dataset version, passing a filter when one is given. Searches find row
// ids in an index and ask the gate of each.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <arrow/type_fwd.h>

#include "lance/dataset.h"
#include "lance/status.h"

namespace lance::scan {

/// Row ids are row addresses, or stable row ids when the dataset has them
/// (then a row answers from the fragment holding its live copy). Row
/// addresses are checked against their fragment's deletions (read the first
/// time a row of it is asked about) or the filter's rows. Not thread-safe.
class RowGate {
 public:
  /// `filter` (SQL; empty: none) is evaluated at once, as MatchingRows.
  static Result<RowGate> Make(const std::shared_ptr<const Dataset>& dataset, const std::string& filter);

  bool filtered() const { return filtered_; }

  /// The id of the fragment holding the row now; nullopt when it may not
  /// be returned.
  Result<std::optional<uint32_t>> FragmentOf(uint64_t row_id);

  /// Whether the row may be returned.
  Result<bool> Allows(uint64_t row_id);

  /// With a filter: the ids of the rows it admits in `fragments` (ids),
  /// when they are at most `limit`; nullopt when there are more.
  Result<std::optional<std::vector<uint64_t>>> Admitted(const std::set<uint32_t>& fragments, size_t limit) const;

 private:
  std::shared_ptr<const Dataset> dataset_;
  bool stable_ = false;
  bool filtered_ = false;
  std::unordered_map<uint32_t, size_t> index_of_;  // fragment id -> place in the manifest
  std::vector<std::vector<uint32_t>> allowed_;     // per fragment: offsets passing the filter
  std::vector<std::optional<std::vector<uint32_t>>> deleted_;  // per fragment, read when first needed
  std::unordered_map<uint64_t, std::pair<size_t, uint32_t>> rows_;  // stable id -> live row
};

/// A search's answer: the rows `row_ids` names, in that order, with the
/// projected `columns`, then `score_column` (float32, `scores` row by row),
/// then `_rowid` when asked.
Result<std::shared_ptr<arrow::Table>> TakeScoredRows(const std::shared_ptr<const Dataset>& dataset,
                                                     const std::vector<uint64_t>& row_ids,
                                                     const std::vector<float>& scores,
                                                     const std::vector<std::string>& columns,
                                                     const std::string& score_column, bool with_row_id);

}  // namespace lance::scan
