// Index remap for a rewrite of fragments (compaction), as pylance 14 does
// it with defer_index_remap false: each index over the old fragments whose
// rows are row addresses is written anew, under a new UUID, over the new
// addresses; the Rewrite records it (rewritten_indices) and the manifest
// swaps the entry (txn/manifest_builder.cc). Which indices that is, is
// table/index_rows.h's rule.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "lance/dataset.h"
#include "lance/status.h"
#include "lance/txn/operation.h"

namespace lance::ops {

/// Refuses, before anything is written, a rewrite of `fragment_ids` that an
/// index lance-cpp cannot remap covers (naming the index and its type).
Status CheckIndicesRemappable(const Dataset& dataset, const std::vector<uint64_t>& fragment_ids);

/// Writes the remapped indices of `dataset` (the version the rewrite read)
/// for `groups` (their new fragments with their final ids), and returns
/// what the Rewrite records of them. `written` gets each new index
/// directory, for the caller to remove if the commit fails.
Result<std::vector<txn::RewrittenIndex>> RemapIndices(const Dataset& dataset,
                                                      const std::vector<txn::RewriteGroup>& groups,
                                                      std::vector<std::string>* written);

/// The fragment reuse index a compaction with defer_index_remap commits
/// instead (pylance 14's build_new_frag_reuse_index): the indices keep their
/// old row addresses, and this one records how `groups` moved them, as one
/// more version after those of the index `dataset` already has, both
/// stamped `dataset_version` (pylance: the version its ReserveFragments
/// commit made). Its details go to `_indices/{uuid}/details.binpb` when too
/// large to be inline; `written` then gets that directory.
Result<IndexMetadata> FragReuseIndexFor(const Dataset& dataset, const std::vector<txn::RewriteGroup>& groups,
                                        uint64_t dataset_version, std::vector<std::string>* written);

}  // namespace lance::ops
