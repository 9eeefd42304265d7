// Indices written before a compaction with defer_index_remap hold the old
// row addresses; the fragment reuse index (table/frag_reuse.h) records how
// the rows moved. From it the old -> new row address mapping is rebuilt, as
// the reference's transpose does: the surviving old addresses in ascending
// order are the new fragments' rows in order; the other rows of the old
// fragments were deleted.
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "lance/dataset.h"
#include "lance/index/scalar_index.h"
#include "lance/index_metadata.h"
#include "lance/status.h"
#include "lance/table/frag_reuse.h"

namespace lance::index {

/// The old -> new row address mapping of every version, applied in order.
class FragReuseMap {
 public:
  static Result<FragReuseMap> Make(const table::FragReuseDetails& details);
  /// The row's address now, or nullopt if a compaction dropped it (deleted).
  /// Addresses no version moved are returned as they are.
  std::optional<uint64_t> operator()(uint64_t address) const;
  /// Sorted addresses mapped, the dropped ones out, sorted again.
  std::vector<uint64_t> MapSorted(const std::vector<uint64_t>& addresses) const;
  bool empty() const { return versions_.empty(); }

 private:
  // Per version: old fragment id -> new address of each offset (kGone: deleted).
  std::vector<std::unordered_map<uint32_t, std::vector<uint64_t>>> versions_;
};

/// `then` of a row's address now: an address from before a deferred
/// compaction goes through `reuse` first (null: nothing to map), and a row
/// that compaction dropped is gone.
RowIdMap ThroughFragReuse(const FragReuseMap* reuse, RowIdMap then);

/// Whether `index` of `dataset` was written before one of the fragment
/// reuse index's compactions over fragments it covers, so its row
/// addresses must be mapped (FragReuseMap) before they are used.
Result<bool> HoldsOldRowAddresses(const Dataset& dataset, const IndexMetadata& index);

}  // namespace lance::index
