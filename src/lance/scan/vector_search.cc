// Nearest-neighbour search as pylance 14 runs `to_table(nearest={...})`
// (docs/vector-indices.md §4):
//  - without a vector index (or use_index = false): every live row's exact
//    distance, the metric l2 unless one is given, the nearest k;
//  - through an IVF index (every segment of it, deltas included): each
//    segment's partitions ranked by centroid distance, the initial probe
//    count (fixed nprobes, or the adaptive rule) searched, more partitions
//    in rank order while fewer than k rows were found (late search), the
//    nearest k (k * refine_factor, then re-scored exactly) of the rows the
//    prefilter and the deletions leave; fragments no segment covers are
//    searched flat and united with them, every distance then exact;
//  - a postfilter drops rows from the nearest k.
// Ties go to the lower row id. The index is used as pylance would use it or
// refused: nothing falls back to another answer.
#include "lance/vector_search.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <unordered_map>

#include <arrow/api.h>

#include "lance/dataset_internal.h"
#include "lance/index/frag_reuse.h"
#include "lance/index/vector/distance.h"
#include "lance/index/vector/ivf_index.h"
#include "lance/scan/row_gate.h"
#include "lance/scanner.h"
#include "lance/schema.h"
#include "lance/util/parallel.h"

namespace lance {
namespace {

using index::vector::IvfSegment;
using index::vector::Metric;
using index::vector::Nearer;
using index::vector::Neighbor;

// The k nearest of `all` (nearest first).
void KeepNearest(std::vector<Neighbor>* all, size_t k) {
  if (all->size() > k) {
    std::nth_element(all->begin(), all->begin() + static_cast<std::ptrdiff_t>(k), all->end(), Nearer);
    all->resize(k);
  }
  std::sort(all->begin(), all->end(), Nearer);
}

using scan::RowGate;

struct Query {
  std::string column;
  std::vector<float> values;
  float norm = 0.0f;
  uint32_t dim = 0;
  Metric metric = Metric::kL2;
  float Distance(const float* x) const {
    return index::vector::Distance(metric, values.data(), norm, x, dim);
  }
};

// The vectors of a fixed-size list array: row i at Row(i), nullptr if null.
struct Vectors {
  std::shared_ptr<arrow::FixedSizeListArray> list;
  const float* values = nullptr;
  int32_t dim = 0;
  const float* Row(int64_t i) const {
    if (list->IsNull(i)) return nullptr;
    return values + list->value_offset(i);
  }
};

Result<Vectors> VectorsOf(const std::shared_ptr<arrow::Array>& array, const std::string& column) {
  if (array->type_id() != arrow::Type::FIXED_SIZE_LIST) {
    return Status::Invalid("vector search: column '", column, "' read as ", array->type()->ToString());
  }
  Vectors v;
  v.list = std::static_pointer_cast<arrow::FixedSizeListArray>(array);
  auto values = std::dynamic_pointer_cast<arrow::FloatArray>(v.list->values());
  if (!values) return Status::Invalid("vector search: column '", column, "' values are not float32");
  v.values = values->raw_values();
  v.dim = v.list->value_length();
  return v;
}

// The nearest k of the rows of `fragments` (nullopt: all) passing `filter`,
// by exact distance.
Result<std::vector<Neighbor>> FlatSearch(const std::shared_ptr<const Dataset>& dataset, const Query& q, size_t k,
                                         const std::optional<std::vector<uint64_t>>& fragments,
                                         const std::string& filter) {
  std::vector<Neighbor> best;
  if (k == 0 || (fragments && fragments->empty())) return best;
  ScanOptions scan;
  scan.columns = {q.column};
  scan.with_row_id = true;
  scan.fragment_ids = fragments;
  scan.filter = filter;
  LANCE_ASSIGN_OR_RAISE(auto reader, ScanBuilder(dataset).Options(scan).ToReader());
  while (true) {
    std::shared_ptr<arrow::RecordBatch> batch;
    LANCE_RETURN_NOT_OK(reader->ReadNext(&batch));
    if (!batch) break;
    LANCE_ASSIGN_OR_RAISE(auto vectors, VectorsOf(batch->column(0), q.column));
    auto ids = std::static_pointer_cast<arrow::UInt64Array>(batch->GetColumnByName("_rowid"));
    for (int64_t i = 0; i < batch->num_rows(); ++i) {
      const float* x = vectors.Row(i);
      if (!x) continue;  // a null vector has no distance (pylance drops it)
      best.push_back(Neighbor{q.Distance(x), ids->Value(i)});
    }
    if (best.size() > 4 * k + 1024) KeepNearest(&best, k);
  }
  KeepNearest(&best, k);
  return best;
}

// The exact distances of `rows` (null vectors dropped), nearest first.
Result<std::vector<Neighbor>> Rescore(const std::shared_ptr<const Dataset>& dataset, const Query& q,
                                      const std::vector<Neighbor>& rows) {
  std::vector<uint64_t> ids;
  for (const auto& r : rows) ids.push_back(r.row_id);
  std::vector<Neighbor> out;
  if (ids.empty()) return out;
  LANCE_ASSIGN_OR_RAISE(auto table, TakeRows(dataset, ids, {q.column}));
  LANCE_ASSIGN_OR_RAISE(auto array, arrow::Concatenate(table->column(0)->chunks()));
  LANCE_ASSIGN_OR_RAISE(auto vectors, VectorsOf(array, q.column));
  for (size_t i = 0; i < ids.size(); ++i) {
    const float* x = vectors.Row(static_cast<int64_t>(i));
    if (x) out.push_back(Neighbor{q.Distance(x), ids[i]});
  }
  std::sort(out.begin(), out.end(), Nearer);
  return out;
}

// The vector index entries on `column`: vector index details, or none
// (pylance before 0.21 recorded none for its vector indices).
std::vector<const IndexMetadata*> VectorIndicesOn(const Dataset& dataset, const std::string& column) {
  std::vector<const IndexMetadata*> out;
  const Schema& schema = dataset.manifest().schema;
  for (const auto& m : dataset.indices()) {
    if (m.fields.size() != 1 || schema.FieldPath(m.fields[0]) != column) continue;
    if (index::vector::IsVectorIndex(m) || m.index_details_type_url.empty()) out.push_back(&m);
  }
  return out;
}

// The nearest `want` rows of the segments (the index's distances; `entries`:
// the searched version's manifest entry of each, for its fragment bitmap), probing
// as pylance does (late search and its shortcut count to k, not to `want`:
// with a refine factor pylance stops probing at k rows, observed); rows must pass `gate` and lie in a fragment their
// segment covers.
// `reuse` (null: none) maps the row addresses of segments written before a
// deferred compaction to the rows' addresses now.
Result<std::vector<Neighbor>> AnnSearch(const std::vector<std::shared_ptr<const IvfSegment>>& segments,
                                        const std::vector<const IndexMetadata*>& entries,
                                        const std::vector<float>& query, const VectorSearchOptions& options,
                                        size_t want, RowGate& gate, const index::FragReuseMap* reuse,
                                        const std::set<uint32_t>& live, std::string* explain) {
  struct Probe {
    std::vector<float> prepared;
    std::vector<size_t> order;  // partitions, nearest centroid first
    index::vector::ProbePlan plan;
    std::set<uint32_t> covered;
    size_t searched = 0;
  };
  std::vector<Probe> probes;
  for (size_t s = 0; s < segments.size(); ++s) {
    const auto& seg = segments[s];
    Probe p;
    p.prepared = seg->PrepareQuery(query);
    const auto distances = seg->CentroidDistances(p.prepared.data());
    p.order.resize(distances.size());
    for (size_t i = 0; i < p.order.size(); ++i) p.order[i] = i;
    std::stable_sort(p.order.begin(), p.order.end(), [&](size_t a, size_t b) { return distances[a] < distances[b]; });
    std::vector<float> sorted;
    for (size_t i : p.order) sorted.push_back(distances[i]);
    uint32_t minimum = options.nprobes ? *options.nprobes : options.minimum_nprobes;
    std::optional<uint32_t> maximum = options.nprobes ? options.nprobes : options.maximum_nprobes;
    p.plan = index::vector::PlanProbes(sorted, seg->metric(), options.k, minimum, maximum, options.refine_factor);
    p.covered.insert(entries[s]->fragment_ids->begin(), entries[s]->fragment_ids->end());
    probes.push_back(std::move(p));
  }
  std::vector<Neighbor> found;
  // The rows of a searched partition that may answer, kept in `found` in
  // search order (so the answer does not depend on which thread searched).
  auto admit = [&](size_t s, const std::vector<Neighbor>& part) -> Status {
    for (auto n : part) {
      if (reuse) {
        const std::optional<uint64_t> now = (*reuse)(n.row_id);
        if (!now) continue;  // deleted before the compaction dropped it
        if (*now != n.row_id) {
          const auto to = static_cast<uint32_t>(*now >> 32);
          // Moved into a fragment that is gone yet out of the bitmap: a later
          // compaction rewrote it without remapping the index.
          if (!live.count(to) && !probes[s].covered.count(to)) {
            return Status::NotImplemented(
                "vector search: index '", entries[s]->name, "' predates a compaction recorded in the ",
                "fragment reuse index (", table::kFragReuseIndexName, ") and a later compaction without ",
                "defer_index_remap moved its fragments but not its row addresses; re-create the index");
          }
        }
        n.row_id = *now;
      }
      // A row answers from where the index saw it: a stable row id an
      // update moved to a fragment the segment does not cover is that
      // fragment's row now (searched flat).
      LANCE_ASSIGN_OR_RAISE(auto fragment, gate.FragmentOf(n.row_id));
      if (fragment && probes[s].covered.count(*fragment)) found.push_back(n);
    }
    return Status::OK();
  };
  std::vector<Neighbor> part;
  auto search = [&](size_t s, size_t rank) -> Status {
    ++probes[s].searched;
    part.clear();
    LANCE_RETURN_NOT_OK(segments[s]->SearchPartition(probes[s].order[rank], probes[s].prepared.data(), &part));
    return admit(s, part);
  };
  // The initial probes, many at high nprobes: their distances are computed
  // on the CPU pool, then admitted in the order the loop above would search.
  size_t rounds = 0;
  std::vector<std::pair<size_t, size_t>> initial;  // (segment, rank)
  for (size_t s = 0; s < segments.size(); ++s) {
    for (size_t r = 0; r < probes[s].plan.initial; ++r) initial.emplace_back(s, r);
    probes[s].searched += probes[s].plan.initial;
    rounds = std::max(rounds, probes[s].plan.initial);
  }
  {
    // A few contiguous runs of partitions, one per pool thread, and none
    // when the rows are too few to repay waking the threads (measured: a
    // task per partition of a few hundred rows was slower than one thread).
    constexpr uint64_t kValuesPerThread = uint64_t{1} << 18;
    uint64_t values = 0;
    for (const auto& [s, r] : initial) values += segments[s]->partition_rows(probes[s].order[r]) * segments[s]->dim();
    const size_t threads = static_cast<size_t>(arrow::internal::GetCpuThreadPool()->GetCapacity());
    const size_t runs = std::max<size_t>(1, std::min<size_t>({threads, initial.size(), values / kValuesPerThread}));
    std::vector<std::vector<Neighbor>> parts(initial.size());
    LANCE_RETURN_NOT_OK(util::ParallelFor(runs, [&](size_t run) -> Status {
      for (size_t i = run * initial.size() / runs; i < (run + 1) * initial.size() / runs; ++i) {
        const auto [s, r] = initial[i];
        LANCE_RETURN_NOT_OK(segments[s]->SearchPartition(probes[s].order[r], probes[s].prepared.data(), &parts[i]));
      }
      return Status::OK();
    }));
    for (size_t i = 0; i < initial.size(); ++i) LANCE_RETURN_NOT_OK(admit(initial[i].first, parts[i]));
  }
  const auto k = static_cast<size_t>(options.k);
  // Late search happens when the probe count is not fixed (the initial
  // count below the maximum) and fewer than k rows were found. Then a filter
  // admitting at most k rows of the segments makes pylance 14 return them
  // all, those the first partitions did not hold with an infinite distance,
  // and search no further (observed; lance's knn.rs late_search).
  bool late = true;
  const bool may_search_late = std::any_of(probes.begin(), probes.end(),
                                           [](const Probe& p) { return p.plan.initial < p.plan.maximum; });
  if (gate.filtered() && may_search_late && found.size() < k) {
    std::set<uint32_t> covered;
    for (const auto& p : probes) covered.insert(p.covered.begin(), p.covered.end());
    LANCE_ASSIGN_OR_RAISE(auto admitted, gate.Admitted(covered, k));
    if (admitted) {
      std::set<uint64_t> seen;
      for (const auto& n : found) seen.insert(n.row_id);
      for (uint64_t id : *admitted) {
        if (!seen.count(id)) found.push_back(Neighbor{std::numeric_limits<float>::infinity(), id});
      }
      late = false;
    }
  }
  // Late search: further partitions in rank order while fewer than k.
  for (size_t r = rounds; late && found.size() < k; ++r) {
    bool any = false;
    for (size_t s = 0; s < segments.size(); ++s) {
      if (r < probes[s].plan.initial || r >= probes[s].plan.maximum) continue;
      LANCE_RETURN_NOT_OK(search(s, r));
      any = true;
    }
    if (!any && std::all_of(probes.begin(), probes.end(), [&](const Probe& p) { return r >= p.plan.maximum; })) break;
  }
  if (explain) {
    for (size_t s = 0; s < segments.size(); ++s) {
      const auto& m = *entries[s];
      std::string fragments;
      for (uint32_t f : probes[s].covered) fragments += (fragments.empty() ? "" : ", ") + std::to_string(f);
      *explain += "  IvfSearch: " + m.name + " (" + segments[s]->type_name() + "), segment=" + m.UuidString() +
                  ", metric=" + index::vector::MetricName(segments[s]->metric()) + ", fragments=[" + fragments +
                  "], partitions=" + std::to_string(segments[s]->num_partitions()) +
                  ", minimum_nprobes=" + std::to_string(probes[s].plan.initial) +
                  ", maximum_nprobes=" + std::to_string(probes[s].plan.maximum) +
                  ", partitions_searched=" + std::to_string(probes[s].searched) + "\n";
    }
  }
  KeepNearest(&found, want);
  return found;
}

Result<std::vector<Neighbor>> IndexedSearch(const std::shared_ptr<const Dataset>& dataset,
                                            const std::vector<const IndexMetadata*>& entries, Query& q,
                                            const VectorSearchOptions& options, const std::string& scan_filter,
                                            std::string* explain) {
  const std::string& name = entries.front()->name;
  for (const auto* m : entries) {
    if (m->name != name) {
      return Status::NotImplemented("vector search: column '", q.column, "' of ", dataset->uri(),
                                    " has several vector indices ('", name, "', '", m->name,
                                    "'); lance-cpp does not choose between them (use_index=false searches exactly)");
    }
  }
  const std::string where = "vector search: index '" + name + "' on '" + q.column + "' of " + dataset->uri();
  std::vector<std::shared_ptr<const IvfSegment>> segments;
  for (const auto* m : entries) {
    // The segment's files, opened once per process; its fragment bitmap is
    // this version's (entries), never the cached segment's.
    LANCE_ASSIGN_OR_RAISE(auto seg, IvfSegment::OpenCached(*dataset, *m));
    if (!m->fragment_ids) {
      return Status::Invalid(where, ": segment ", m->UuidString(), " records no fragment bitmap");
    }
    segments.push_back(std::move(seg));
  }
  // After a compaction with defer_index_remap the segments name the old
  // row addresses: mapped through the fragment reuse index, as pylance 14
  // maps them (rows no compaction moved map to themselves).
  std::shared_ptr<const index::FragReuseMap> reuse;
  std::set<uint32_t> live;
  if (const auto& details = DatasetAccess::FragReuse(*dataset); details && !dataset->manifest().UsesStableRowIds()) {
    LANCE_ASSIGN_OR_RAISE(auto map, index::FragReuseMap::Make(*details));
    if (!map.empty()) reuse = std::make_shared<const index::FragReuseMap>(std::move(map));
    for (const auto& f : dataset->manifest().fragments) live.insert(static_cast<uint32_t>(f.id));
  }
  for (const auto& seg : segments) {
    if (seg->dim() != q.dim) {
      return Status::Invalid(where, ": the index has vectors of ", seg->dim(), " values, the query ", q.dim);
    }
    if (seg->metric() != segments.front()->metric()) {
      return Status::Invalid(where, ": its segments use different metrics");
    }
  }
  const Metric metric = segments.front()->metric();
  if (!options.metric.empty()) {
    auto asked = index::vector::ParseMetric(options.metric);
    if (*asked != metric) {
      return Status::NotImplemented(where, ": the index was built with metric ", index::vector::MetricName(metric),
                                    ", the query asks for ", options.metric,
                                    " (use_index=false searches exactly with it)");
    }
  }
  q.metric = metric;
  const size_t k = static_cast<size_t>(options.k);
  const size_t want = options.refine_factor ? k * std::max<uint32_t>(*options.refine_factor, 1) : k;
  LANCE_ASSIGN_OR_RAISE(auto gate, RowGate::Make(dataset, scan_filter));
  LANCE_ASSIGN_OR_RAISE(auto result, AnnSearch(segments, entries, q.values, options, want, gate, reuse.get(), live, explain));
  bool exact = false;
  if (options.refine_factor) {
    if (explain) *explain += "  Refine: " + std::to_string(want) + " candidates re-scored exactly\n";
    LANCE_ASSIGN_OR_RAISE(result, Rescore(dataset, q, result));
    if (result.size() > k) result.resize(k);
    exact = true;
  }
  if (!options.fast_search) {
    std::set<uint64_t> covered;
    for (const auto* m : entries) covered.insert(m->fragment_ids->begin(), m->fragment_ids->end());
    std::vector<uint64_t> unindexed;
    for (const auto& f : dataset->manifest().fragments) {
      if (!covered.count(f.id)) unindexed.push_back(f.id);
    }
    if (explain) {
      std::string ids;
      for (uint64_t f : unindexed) ids += (ids.empty() ? "" : ", ") + std::to_string(f);
      *explain += "  FlatSearch: unindexed fragments=[" + ids + "]" + (unindexed.empty() ? "" : ", every distance re-scored exactly") + "\n";
    }
    if (!unindexed.empty()) {
      // pylance unites the flat search of these with the index's rows and
      // re-scores them all exactly.
      LANCE_ASSIGN_OR_RAISE(auto flat, FlatSearch(dataset, q, k, unindexed, scan_filter));
      if (!exact) {
        LANCE_ASSIGN_OR_RAISE(result, Rescore(dataset, q, result));
      }
      result.insert(result.end(), flat.begin(), flat.end());
      KeepNearest(&result, k);
    }
  }
  return result;
}

}  // namespace

// The search; with `explain`, also what it did, as text.
static Result<std::shared_ptr<arrow::Table>> Run(const std::shared_ptr<const Dataset>& dataset,
                                          const VectorSearchOptions& options, std::string* explain) {
  if (options.k <= 0) return Status::Invalid("vector search: k must be positive (got ", options.k, ")");
  if (options.refine_factor && *options.refine_factor == 0) {
    return Status::Invalid("vector search: refine_factor must be positive");
  }
  // As pylance 14 refuses them, with an index or without:
  // "Nprobes must be > 0", "minimum_nprobes must be >= 1".
  if (options.nprobes && *options.nprobes == 0) return Status::Invalid("vector search: nprobes must be positive");
  if (options.minimum_nprobes == 0) {
    return Status::Invalid("vector search: minimum_nprobes must be at least 1 (got 0)");
  }
  if (options.maximum_nprobes && *options.maximum_nprobes < options.minimum_nprobes) {
    return Status::Invalid("vector search: maximum_nprobes (", *options.maximum_nprobes,
                           ") is below minimum_nprobes (", options.minimum_nprobes, ")");
  }
  Query q;
  q.column = options.column;
  q.values = options.query;
  if (!options.metric.empty()) {
    auto m = index::vector::ParseMetric(options.metric);
    if (!m) {
      if (options.metric == "hamming") {
        return Status::NotImplemented("vector search: the hamming metric is not supported by lance-cpp");
      }
      return Status::Invalid("vector search: unknown metric '", options.metric, "' (l2, cosine or dot)");
    }
    q.metric = *m;
  }
  LANCE_ASSIGN_OR_RAISE(auto schema, dataset->ArrowSchema());
  auto field = schema->GetFieldByName(options.column);
  if (!field) {
    return Status::Invalid("vector search: ", dataset->uri(), " has no column '", options.column, "'");
  }
  const auto& type = field->type();
  if (type->id() == arrow::Type::LIST || type->id() == arrow::Type::LARGE_LIST) {
    return Status::NotImplemented("vector search: column '", options.column, "' (", type->ToString(),
                                  ") holds several vectors per row (multivector), not supported by lance-cpp");
  }
  if (type->id() != arrow::Type::FIXED_SIZE_LIST) {
    return Status::Invalid("vector search: column '", options.column, "' is ", type->ToString(),
                           ", not a vector column (fixed-size list)");
  }
  const auto& list_type = static_cast<const arrow::FixedSizeListType&>(*type);
  if (list_type.value_type()->id() != arrow::Type::FLOAT) {
    return Status::NotImplemented("vector search: column '", options.column, "' holds ",
                                  list_type.value_type()->ToString(),
                                  " vectors; lance-cpp searches float32 vectors only");
  }
  q.dim = static_cast<uint32_t>(list_type.list_size());
  if (q.values.size() != q.dim) {
    return Status::Invalid("vector search: the query has ", q.values.size(), " values, column '", options.column,
                           "' vectors of ", q.dim);
  }
  for (float v : q.values) {
    if (!std::isfinite(v)) return Status::Invalid("vector search: the query holds a value that is not finite");
  }

  q.norm = index::vector::Norm(q.values.data(), q.dim);
  const bool postfilter = !options.filter.empty() && !options.prefilter;
  const std::string scan_filter = postfilter ? "" : options.filter;
  const size_t k = static_cast<size_t>(options.k);
  std::vector<Neighbor> result;
  const auto entries = VectorIndicesOn(*dataset, options.column);
  if (options.use_index && !entries.empty()) {
    LANCE_ASSIGN_OR_RAISE(result, IndexedSearch(dataset, entries, q, options, scan_filter, explain));
  } else if (!options.fast_search) {
    if (explain) *explain += std::string("  FlatSearch: every fragment, metric=") + index::vector::MetricName(q.metric) + "\n";
    LANCE_ASSIGN_OR_RAISE(result, FlatSearch(dataset, q, k, std::nullopt, scan_filter));
  } else if (explain) {
    *explain += "  (fast_search without an index: nothing searched)\n";
  }
  if (explain && !options.filter.empty()) {
    *explain += std::string("  ") + (postfilter ? "Postfilter (on the nearest k): " : "Prefilter: ") + options.filter + "\n";
  }
  // fast_search without an index used: no row is indexed, none is returned
  // (pylance 14 returns an empty table, with use_index=False too).
  if (postfilter) {
    LANCE_ASSIGN_OR_RAISE(auto passing, RowGate::Make(dataset, options.filter));
    std::vector<Neighbor> kept;
    for (const auto& n : result) {
      LANCE_ASSIGN_OR_RAISE(bool allowed, passing.Allows(n.row_id));
      if (allowed) kept.push_back(n);
    }
    result = std::move(kept);
  }

  std::vector<uint64_t> row_ids;
  std::vector<float> distances;
  for (const auto& n : result) {
    row_ids.push_back(n.row_id);
    distances.push_back(n.distance);
  }
  return scan::TakeScoredRows(dataset, row_ids, distances, options.columns, "_distance", options.with_row_id);
}

Result<std::shared_ptr<arrow::Table>> VectorSearch(const std::shared_ptr<const Dataset>& dataset,
                                                   const VectorSearchOptions& options) {
  return Run(dataset, options, nullptr);
}

Result<std::string> ExplainVectorSearch(const std::shared_ptr<const Dataset>& dataset,
                                        const VectorSearchOptions& options) {
  std::string out = "VectorSearch: uri=" + dataset->uri() + ", version=" + std::to_string(dataset->version()) +
                    ", column=" + options.column + ", k=" + std::to_string(options.k) + "\n";
  LANCE_ASSIGN_OR_RAISE(auto table, Run(dataset, options, &out));
  out += "  rows returned: " + std::to_string(table->num_rows()) + "\n";
  return out;
}

}  // namespace lance
