// Turning the row numbers callers give (dataset offsets, row ids, row
// addresses) into physical rows of the dataset's fragments.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "lance/dataset.h"
#include "lance/status.h"

namespace lance::scan {

/// A physical row: an index into manifest().fragments and an offset in it.
struct PhysicalRow {
  size_t fragment_index = 0;
  uint32_t offset = 0;
};

/// Offsets among live rows, in dataset order (as pylance's take).
Result<std::vector<PhysicalRow>> RowsAtIndices(const Dataset& dataset, const std::vector<uint64_t>& indices);
/// Stable row ids of live rows; row addresses when the dataset has no
/// stable ids (as pylance's _take_rows).
Result<std::vector<PhysicalRow>> RowsWithIds(const Dataset& dataset, const std::vector<uint64_t>& row_ids);
/// Row addresses, (fragment id << 32) | offset; each must name a fragment
/// of the version and an offset below its physical rows.
Result<std::vector<PhysicalRow>> RowsAtAddresses(const Dataset& dataset, const std::vector<uint64_t>& addresses);

}  // namespace lance::scan
