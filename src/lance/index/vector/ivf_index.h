// One segment (one manifest IndexMetadata entry) of a pylance 14 IVF
// vector index: `_indices/{uuid}/index.idx` (the IVF model: centroids in
// the global buffer that schema metadata `lance:ivf` names) and
// `auxiliary.idx` (the vectors of each partition, raw (IVF_FLAT) or
// quantized (IVF_PQ, IVF_SQ), with their `_rowid`). Layout:
// docs/vector-indices.md. Other index types and layouts are refused by
// Open with an error naming the index.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "lance/dataset.h"
#include "lance/file_reader.h"
#include "lance/index/vector/distance.h"
#include "lance/index/vector/pq.h"
#include "lance/index/vector/sq.h"
#include "lance/index_metadata.h"
#include "lance/status.h"

namespace lance::index::vector {

/// Whether a manifest entry is a vector index (its index_details).
bool IsVectorIndex(const IndexMetadata& metadata);

/// A candidate row of a search: its distance and row id.
struct Neighbor {
  float distance;
  uint64_t row_id;
};
/// Nearest first, equal distances by row id (pylance's TopK order); NaN last.
bool Nearer(const Neighbor& a, const Neighbor& b);

/// What one segment's files hold, and nothing a dataset version decides
/// (take the fragment bitmap from the searched version's manifest entry):
/// one opened segment serves every version listing its uuid.
/// Thread-safe once opened.
class IvfSegment {
 public:
  enum class Storage { kFlat, kPq, kSq };

  /// Opens `metadata`'s files; NotImplemented, naming the index, for the
  /// types and layouts lance-cpp does not search.
  static Result<std::shared_ptr<const IvfSegment>> Open(const Dataset& dataset, const IndexMetadata& metadata);
  /// Open through a process-wide cache of the segments opened last (the
  /// files under a uuid never change), as pylance keeps an index cache: a
  /// query does not re-read the centroids, the quantizer and the partition
  /// offsets. A segment also keeps the partitions it has searched, decoded,
  /// while a process-wide budget allows (kPartitionCacheBytes).
  static Result<std::shared_ptr<const IvfSegment>> OpenCached(const Dataset& dataset,
                                                              const IndexMetadata& metadata);
  ~IvfSegment();

  /// What the decoded partitions of all segments together may hold: 1 GiB
  /// (pylance's index cache, index_cache_size_bytes, holds partitions too).
  /// Past it partitions are read per query: no eviction, the partitions
  /// searched first stay while their segment is open.
  static constexpr uint64_t kPartitionCacheBytes = uint64_t{1} << 30;

  /// "IVF_FLAT", "IVF_PQ" or "IVF_SQ".
  const std::string& type_name() const { return type_name_; }
  Storage storage() const { return storage_; }
  Metric metric() const { return metric_; }
  uint32_t dim() const { return dim_; }
  size_t num_partitions() const { return lengths_.size(); }
  uint64_t partition_rows(size_t p) const { return lengths_[p]; }
  /// Where partition `p`'s rows start in auxiliary.idx.
  uint64_t partition_offset(size_t p) const { return offsets_[p]; }
  /// auxiliary.idx, and the name of its codes column ("flat", "__pq_code",
  /// "__sq_code").
  const std::shared_ptr<FileReader>& auxiliary() const { return aux_; }
  const std::string& code_column() const { return code_column_; }

  /// The query as the index compares it: normalized for cosine.
  std::vector<float> PrepareQuery(const std::vector<float>& query) const;
  /// Each partition's centroid distance to a prepared query: squared L2
  /// (l2, cosine) or 1 - q.c (dot).
  std::vector<float> CentroidDistances(const float* prepared) const;
  /// Every row of partition `p` with its distance to the prepared query
  /// (the index's distance: exact for IVF_FLAT, quantized otherwise).
  Status SearchPartition(size_t p, const float* prepared, std::vector<Neighbor>* out) const;

 private:
  // One partition's rows as auxiliary.idx holds them, decoded once: row ids
  // and codes (vectors, PQ or SQ codes), each contiguous, checked.
  struct Partition {
    std::shared_ptr<arrow::Array> ids_array, codes_array;  // own the values
    const uint64_t* ids = nullptr;
    const void* codes = nullptr;  // float (flat) or uint8_t [rows][code width]
    uint64_t bytes = 0;
  };
  Result<std::shared_ptr<const Partition>> ReadPartition(size_t p) const;
  Result<std::shared_ptr<const Partition>> CachedPartition(size_t p) const;

  IvfSegment() = default;
  mutable std::mutex partitions_mutex_;
  mutable std::vector<std::shared_ptr<const Partition>> partitions_;  // by partition; null: not kept
  mutable uint64_t partition_bytes_ = 0;                               // this segment's share of the budget
  std::string type_name_;
  std::string where_;  // names the index in errors
  Storage storage_ = Storage::kFlat;
  Metric metric_ = Metric::kL2;
  uint32_t dim_ = 0;
  std::vector<float> centroids_;  // [partitions][dim]
  std::vector<uint64_t> offsets_;  // rows of auxiliary.idx
  std::vector<uint32_t> lengths_;
  std::shared_ptr<FileReader> aux_;
  std::string code_column_;
  std::optional<ProductQuantizer> pq_;
  std::optional<ScalarQuantizer> sq_;
};

/// How many partitions to probe (pylance 14's IVF probing). `sorted`: the
/// centroid distances of the partitions, ascending. Returns the initial
/// probe count and the maximum (late search probes more, in rank order,
/// while fewer than k rows were found).
struct ProbePlan {
  size_t initial = 0;
  size_t maximum = 0;
};
ProbePlan PlanProbes(const std::vector<float>& sorted, Metric metric, int64_t k, uint32_t minimum_nprobes,
                     std::optional<uint32_t> maximum_nprobes, std::optional<uint32_t> refine_factor);

}  // namespace lance::index::vector
