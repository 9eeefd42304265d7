// Nearest-neighbour search on an opened Dataset, as pylance's
// `to_table(nearest={...})`: exact (flat) search, or through pylance 14's
// IVF_FLAT, IVF_PQ and IVF_SQ indices.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <arrow/type_fwd.h>

#include "lance/dataset.h"
#include "lance/status.h"

namespace lance {

/// A nearest-neighbour query, with pylance's names and defaults.
struct VectorSearchOptions {
  /// The vector column: a fixed-size list of float32.
  std::string column;
  /// The query vector; its length is the column's dimension.
  std::vector<float> query;
  /// The number of nearest rows returned (fewer when a filter or the
  /// probed partitions leave fewer). At least 1: 0 is refused (Invalid),
  /// as pylance refuses it.
  int64_t k = 10;
  /// Partitions probed, as pylance's `nprobes`: sets minimum_nprobes and
  /// maximum_nprobes both. nullopt: minimum_nprobes / maximum_nprobes.
  /// At least 1: 0 is refused (Invalid), as pylance refuses it.
  std::optional<uint32_t> nprobes;
  /// Partitions always probed (pylance's default 1, raised by its adaptive
  /// rule from the centroid distances when maximum_nprobes is unset).
  /// At least 1: 0 is refused (Invalid), as pylance refuses it.
  uint32_t minimum_nprobes = 1;
  /// Partitions probed at most when the first ones leave fewer than k rows
  /// (a prefilter, deletions); nullopt: all of them.
  std::optional<uint32_t> maximum_nprobes;
  /// Ask the index for k * refine_factor rows, re-score them with exact
  /// distances and keep the best k. nullopt: the index's distances.
  std::optional<uint32_t> refine_factor;
  /// "l2" (default for flat search), "cosine" or "dot". With an index:
  /// empty takes the index's metric; another one is refused.
  std::string metric;
  /// Only rows where this SQL predicate holds are returned.
  std::string filter;
  /// Whether the filter selects rows before the nearest k are chosen
  /// (true), or the nearest k are chosen and then filtered, returning
  /// fewer (false, pylance's default).
  bool prefilter = false;
  /// Search through the column's vector index when it has one; false:
  /// always exact (flat) search over every row.
  bool use_index = true;
  /// Search only what an index covers, with the index's distances: the
  /// fragments it does not cover are skipped (searched flat otherwise).
  /// Without an index used (none, or use_index false) nothing is returned,
  /// as in pylance.
  bool fast_search = false;
  /// Output columns; empty: all of them. `_distance` (float32) follows
  /// them, then `_rowid` when `with_row_id`.
  std::vector<std::string> columns;
  bool with_row_id = false;
};

/// The k rows nearest to `options.query`, nearest first (equal distances by
/// row id), as pylance 14 finds them. `_distance` is the metric's distance
/// (l2: squared; cosine: 1 - cos; dot: 1 - q.x) or, through an IVF_PQ /
/// IVF_SQ index without refine, the index's quantized estimate, as
/// pylance's. Deleted rows are never returned. Index types lance-cpp does
/// not search (HNSW, IVF_RQ, older layouts) are refused with an error
/// naming the index: `use_index = false` searches them exactly.
Result<std::shared_ptr<arrow::Table>> VectorSearch(const std::shared_ptr<const Dataset>& dataset,
                                                   const VectorSearchOptions& options);

/// VectorSearch(dataset, options) run, and what it did as text instead of
/// its rows (as pylance's analyze_plan): each index segment searched as
/// `NAME (TYPE)` with its fragments, its partitions, the probe counts
/// chosen (minimum_nprobes after the adaptive rule, maximum_nprobes) and
/// the partitions searched; the fragments searched flat; refine; the filter.
Result<std::string> ExplainVectorSearch(const std::shared_ptr<const Dataset>& dataset,
                                        const VectorSearchOptions& options);

}  // namespace lance
