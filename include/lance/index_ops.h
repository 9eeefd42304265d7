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
#include "lance/index_metadata.h"
#include "lance/status.h"

namespace lance {

/// Builds one scalar index over a column (a top-level name or a nested
/// path "a.b") and commits it. Types: "BTREE" and "BITMAP" (case-
/// insensitive). The other types pylance builds are refused as not
/// implemented; names pylance does not know are invalid.
///
/// Memory: a BTREE build sorts at most 4Mi rows (values and row ids) in
/// memory, spilling sorted runs to local temporary files and merging them
/// beyond that (LANCE_CPP_INDEX_SORT_RUN_ROWS changes the number); a BITMAP
/// build holds every row id of the column while it builds the bitmaps, as
/// pylance's does.
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
  Result<std::shared_ptr<Dataset>> Commit();
  /// After a successful Commit: the index it added.
  const IndexMetadata& result() const { return result_; }

 private:
  std::shared_ptr<const Dataset> dataset_;
  std::string column_;
  std::string index_type_;
  std::optional<std::string> name_;
  bool replace_ = false;
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
