// Scalar index management on an opened Dataset, in the style of
// lance/dataset_ops.h: create (pylance's create_scalar_index), drop
// (drop_index) and describe (list_indices / index_statistics).
//
//   LANCE_ASSIGN_OR_RAISE(auto ds, lance::Dataset::Open(uri));
//   lance::CreateIndexBuilder build(ds, "id", "BTREE");
//   LANCE_ASSIGN_OR_RAISE(auto v2, build.Name("id_idx").Commit());
//
// Each Commit is one CreateIndex transaction whose read version is the
// dataset's version (the index covers that version's fragments).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lance/dataset.h"
#include "lance/full_text.h"
#include "lance/index_metadata.h"
#include "lance/status.h"

namespace lance {

/// Parameters of a vector index build (IVF_FLAT, IVF_SQ), named as pylance's
/// create_index arguments.
struct VectorIndexParams {
  /// "l2", "cosine" or "dot" (pylance's `metric`, default "l2").
  std::string metric = "l2";
  /// Unset: clamp(rows / 4096, 1, 4096) as pylance 14 for IVF_FLAT
  /// (rows / 8192 for IVF_SQ).
  std::optional<uint32_t> num_partitions;
  /// k-means trains on num_partitions x sample_rate vectors (all when
  /// fewer), chosen by a seeded reservoir sample (default 256).
  uint32_t sample_rate = 256;
  /// k-means iterations at most (pylance's max_iters, default 50).
  uint32_t max_iterations = 50;
  /// Seed of the sample and of the k-means initial centroids (three runs,
  /// seeds seed..seed+2, the lowest loss kept; pylance seeds from the OS,
  /// lance-cpp's builds are reproducible).
  uint64_t seed = 42;
  /// Given centroids, [num_partitions][dim] row-major (pylance's
  /// `ivf_centroids`): no training. Empty: train.
  std::vector<float> centroids;
};

/// Builds one scalar index over a column (a top-level name or a nested
/// path "a.b") and commits it. Types: "BTREE", "BITMAP", "LABEL_LIST" (a
/// list column), "ZONEMAP", "NGRAM", "BLOOMFILTER" and "INVERTED" (alias
/// "FTS"; a full-text index of a string or list-of-strings column)
/// (case-insensitive). The other types
/// pylance builds are refused as not implemented; names pylance does not
/// know are invalid.
///
/// Memory: a BTREE build sorts at most 4Mi rows (values and row ids) in
/// memory, spilling sorted runs to local temporary files and merging them
/// beyond that (LANCE_CPP_INDEX_SORT_RUN_ROWS changes the number); a BITMAP
/// or LABEL_LIST build holds every row id of the column (of each element)
/// while it builds the bitmaps, as pylance's does; a ZONEMAP or BLOOMFILTER
/// build holds one zone's values (and filter) at a time. An NGRAM build holds the posting
/// bitmaps of at most as many rows (the same variable), spilling and merging
/// beyond that; it refuses (NotImplemented) text with characters past
/// U+017F, which pylance ASCII-folds by a table lance-cpp does not carry.
/// An INVERTED build holds one partition (its tokens, postings, positions
/// and documents) in memory, writing it and starting another when its
/// estimate passes LANCE_CPP_FTS_PARTITION_MB (default 2048 MiB, pylance's
/// per-worker limit); it refuses json columns and tokenizer parameters
/// lance-cpp does not implement (InvertedIndexParams::CheckSupported).
/// "IVF_FLAT" and "IVF_SQ" (8 bits) build a vector index on a fixed_size_list<float32> column in
/// pylance 14's layout (VectorParams; k-means on a sample, or the given
/// centroids): it holds the sample, one uint32 per row (its partition) and
/// the vectors of a window of partitions of at most LANCE_CPP_IVF_WRITE_MB
/// (default 256 MiB) while it writes them (ops/vector_index_build.h). The
/// other vector types are refused as not implemented, naming the type.
class CreateIndexBuilder {
 public:
  CreateIndexBuilder(std::shared_ptr<const Dataset> dataset, std::string column, std::string index_type)
      : dataset_(std::move(dataset)), column_(std::move(column)), index_type_(std::move(index_type)) {}
  /// Unset = "{column}_idx", as pylance names it.
  CreateIndexBuilder& Name(std::string name) {
    name_ = std::move(name);
    return *this;
  }
  /// Replace the indices of the same name (the Rust builder's `replace`,
  /// default false: an existing name is refused).
  CreateIndexBuilder& Replace(bool replace = true) {
    replace_ = replace;
    return *this;
  }
  /// ZONEMAP: rows per zone (pylance's `rows_per_zone`, default 8192).
  /// Refused for the other types.
  CreateIndexBuilder& RowsPerZone(uint64_t rows) {
    rows_per_zone_ = rows;
    return *this;
  }
  /// BLOOMFILTER: the items each zone's filter is sized for, also the rows
  /// per zone (pylance's `number_of_items`, default 8192), and its false-
  /// positive probability (`probability`, default 0.00057, in [0, 1)).
  /// Refused for the other types.
  CreateIndexBuilder& NumberOfItems(uint64_t items) {
    number_of_items_ = items;
    return *this;
  }
  CreateIndexBuilder& Probability(double probability) {
    probability_ = probability;
    return *this;
  }
  /// INVERTED: the tokenizer parameters and with_position (pylance's
  /// create_scalar_index keyword arguments; defaults as InvertedIndexParams).
  /// lance_tokenizer must stay "text". Refused for the other types.
  CreateIndexBuilder& InvertedParams(InvertedIndexParams params) {
    inverted_params_ = std::move(params);
    return *this;
  }
  /// IVF_FLAT, IVF_SQ: the vector index parameters (defaults as VectorIndexParams).
  /// Refused for the other types.
  CreateIndexBuilder& VectorParams(VectorIndexParams params) {
    vector_params_ = std::move(params);
    return *this;
  }
  Result<std::shared_ptr<Dataset>> Commit();
  /// After a successful Commit: the index it added.
  const IndexMetadata& result() const { return result_; }

 private:
  std::shared_ptr<const Dataset> dataset_;
  std::string column_;
  std::string index_type_;
  std::optional<std::string> name_;
  bool replace_ = false;
  std::optional<uint64_t> rows_per_zone_;
  std::optional<uint64_t> number_of_items_;
  std::optional<double> probability_;
  std::optional<InvertedIndexParams> inverted_params_;
  std::optional<VectorIndexParams> vector_params_;
  IndexMetadata result_;
};

/// Removes every index named `name` (all its segments): a CreateIndex with
/// them as removed_indices and no new one, as pylance's drop_index. Their
/// files stay until cleanup.
class DropIndexBuilder {
 public:
  DropIndexBuilder(std::shared_ptr<const Dataset> dataset, std::string name)
      : dataset_(std::move(dataset)), name_(std::move(name)) {}
  Result<std::shared_ptr<Dataset>> Commit();

 private:
  std::shared_ptr<const Dataset> dataset_;
  std::string name_;
};

/// Brings the rows of fragments an index does not cover into it, as
/// pylance 14's `optimize.optimize_indices()`: for each index (name) with
/// unindexed fragments, its last `num_indices_to_merge` segments and the
/// new rows become one new segment (a new uuid) replacing them; with stable
/// row ids, older segments covering fragments with deletions are merged
/// too. BTREE, BITMAP, NGRAM and INVERTED segments are merged from their
/// files (INVERTED: the old partitions' kept documents into new partitions,
/// their scores recomputed, then the new rows in partitions of their own);
/// LABEL_LIST, ZONEMAP and BLOOMFILTER ones too when one segment is merged,
/// and are rebuilt over their fragments when several are. Rows of
/// fragments no longer in the dataset are dropped (BTREE, BITMAP,
/// LABEL_LIST, NGRAM, INVERTED; with stable row ids the bitmaps and posting
/// lists drop deleted rows too); zone maps and Bloom filters keep their zones. One
/// CreateIndex transaction for every index changed; none when nothing is to
/// do. Other index types with unindexed fragments are refused.
struct OptimizeIndicesOptions {
  /// Only the indices of these names (pylance's `index_names`); empty =
  /// every user index. A name the dataset has no index of is an error.
  std::vector<std::string> index_names;
  /// pylance's `num_indices_to_merge` (default 1). 0 (pylance: the new
  /// rows become a delta segment of their own) is refused as not
  /// implemented: lance-cpp merges, and reads the deltas pylance makes.
  uint32_t num_indices_to_merge = 1;
};

class OptimizeIndicesBuilder {
 public:
  explicit OptimizeIndicesBuilder(std::shared_ptr<const Dataset> dataset) : dataset_(std::move(dataset)) {}
  OptimizeIndicesBuilder& Options(OptimizeIndicesOptions options) {
    options_ = std::move(options);
    return *this;
  }
  /// The dataset after the commit (the one given when nothing changed).
  Result<std::shared_ptr<const Dataset>> Commit();
  /// After Commit: the segments added and removed (empty when none).
  const std::vector<IndexMetadata>& added() const { return added_; }
  const std::vector<IndexMetadata>& removed() const { return removed_; }

 private:
  std::shared_ptr<const Dataset> dataset_;
  OptimizeIndicesOptions options_;
  std::vector<IndexMetadata> added_, removed_;
};

/// One index (all segments of one name) as pylance's describe_indices and
/// index_statistics report it.
struct IndexDescription {
  std::string name;
  /// As pylance names it ("BTree", "Bitmap"); the type URL's message name
  /// when lance-cpp does not know the type.
  std::string type;
  std::string type_url;
  std::vector<std::string> uuids;
  std::vector<std::string> field_names;  // dotted paths
  std::vector<uint32_t> fragment_ids;    // union over the segments, ascending
  uint64_t num_indexed_rows = 0;
  uint64_t num_unindexed_rows = 0;
  uint64_t num_unindexed_fragments = 0;
};

/// The dataset's user indices (system indices left out), in manifest order
/// of their first segment.
Result<std::vector<IndexDescription>> DescribeIndices(const Dataset& dataset);

}  // namespace lance
