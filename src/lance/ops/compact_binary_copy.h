// Compaction by binary copy (pylance 14's compaction_mode try_binary_copy /
// force_binary_copy): a task's data files merged page by page, without
// decoding them, when pylance 14 would. Internal to src/lance/ops.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lance/dataset.h"
#include "lance/file_reader.h"
#include "lance/fragment.h"
#include "lance/status.h"

namespace lance::ops {

/// Whether pylance 14 copies the pages of `fragments` (a task's, in order)
/// when writing `target_version` files: not over blob columns, every
/// fragment with data files and no deletion file, every file of the
/// dataset's version (and the target's), with the first file's field ids
/// and column indices, and no global buffer beyond the schema. Files it
/// cannot read make the task ineligible, as the reference's check.
/// Eligible: the layouts of the data files, fragment by fragment, file by
/// file, read once for BinaryCopyFragments; else nullopt.
std::optional<std::vector<FileLayout>> BinaryCopyLayouts(const Dataset& dataset, const std::vector<Fragment>& fragments,
                                                         const std::string& target_version);

/// force_binary_copy's first check, as pylance 14's: every data file of
/// `fragments` is of `target_version`, else NotImplemented naming the file.
Status CheckBinaryCopyTarget(const std::vector<Fragment>& fragments, const std::string& target_version);

/// Copies the pages of `fragments` (eligible ones, whose BinaryCopyLayouts
/// are `layouts`) into new data files:
/// file i ends after the input file that brings it to `file_rows[i]` rows
/// (the re-encode path's even split), later ones the rest, as
/// pylance 14's copy cuts them. The new fragments come without ids or row
/// ids. Removes what it wrote if it fails.
Result<std::vector<Fragment>> BinaryCopyFragments(const Dataset& dataset, const std::vector<Fragment>& fragments,
                                                  const std::vector<FileLayout>& layouts,
                                                  const std::vector<uint64_t>& file_rows);

/// With stable row ids, pylance 14's copy gives each new fragment the
/// created_at / last_updated_at sequences of the old fragments it holds,
/// their runs concatenated as they are (each keeping its own span). Done
/// where every such old fragment has both inline; the others keep the
/// re-chunked sequences they have (the same versions per row).
void ConcatenateLineage(const std::vector<Fragment>& old_fragments, std::vector<Fragment>* new_fragments);

}  // namespace lance::ops
