// Compaction by binary copy (pylance 14's compaction_mode try_binary_copy /
// force_binary_copy): a task's data files merged page by page, without
// decoding them, when pylance 14 would. Internal to src/lance/ops.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "lance/dataset.h"
#include "lance/fragment.h"
#include "lance/status.h"

namespace lance::ops {

/// Whether pylance 14 copies the pages of `fragments` (a task's, in order)
/// when writing `target_version` files: not over blob columns, every
/// fragment with data files and no deletion file, every file of the
/// dataset's version (and the target's), with the first file's field ids
/// and column indices, and no global buffer beyond the schema. Files it
/// cannot read make the task ineligible, as the reference's check.
bool BinaryCopyEligible(const Dataset& dataset, const std::vector<Fragment>& fragments,
                        const std::string& target_version);

/// Copies the pages of `fragments` (eligible ones) into new data files:
/// a file ends after the input file that brings it to
/// `target_rows_per_fragment` rows, as the reference's. The new fragments
/// come without ids or row ids. Removes what it wrote if it fails.
Result<std::vector<Fragment>> BinaryCopyFragments(const Dataset& dataset, const std::vector<Fragment>& fragments,
                                                  uint64_t target_rows_per_fragment);

}  // namespace lance::ops
