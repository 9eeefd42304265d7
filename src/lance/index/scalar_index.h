// Scalar indices as the planner sees them: one reader per index type, found
// through a registry keyed by the index_details type URL the manifest
// records. A type lance-cpp does not implement (or a layout or version it
// does not recognise) opens as "not usable", and the filter is then answered
// by the scan alone: an index is never guessed at.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <arrow/compute/expression.h>
#include <arrow/type_fwd.h>

#include "lance/dataset.h"
#include "lance/index_metadata.h"
#include "lance/status.h"

struct roaring_bitmap_s;  // CRoaring's roaring_bitmap_t

namespace lance::index {

/// Row ids an index search found: row addresses (fragment id << 32 |
/// offset), or stable row ids when the dataset uses them and the index
/// stores those (ScalarIndex::stores_addresses). Sorted, unique.
using RowIds = std::vector<uint64_t>;

/// What became of a row id (compaction's remap, optimize's filter): the id
/// it is now, or nullopt when the row is gone.
using RowIdMap = std::function<std::optional<uint64_t>(uint64_t)>;

RowIds Union(const RowIds& a, const RowIds& b);
RowIds Intersect(const RowIds& a, const RowIds& b);

/// Arrow's conjunction and disjunction kernels (the filter binder uses the
/// Kleene ones).
bool IsAnd(const std::string& function);
bool IsOr(const std::string& function);

/// The intersection (AND) or union (OR) of `eval` over the arguments of
/// `call`, an AND or OR call: the connectives of indices that answer
/// them whole.
Result<RowIds> CombineAndOr(const arrow::compute::Expression::Call& call,
                            const std::function<Result<RowIds>(const arrow::compute::Expression&)>& eval);

/// Whether `predicate` calls a text search function (match_substring,
/// starts_with, match_like).
bool HasTextSearch(const arrow::compute::Expression& predicate);

/// One opened index segment (one IndexMetadata entry) over one column.
class ScalarIndex {
 public:
  virtual ~ScalarIndex() = default;
  /// The type as pylance names it in list_indices and explain_plan ("BTree").
  virtual const char* type_name() const = 0;
  /// The type of the indexed values; the planner uses the index only for a
  /// column of exactly this type.
  virtual const std::shared_ptr<arrow::DataType>& value_type() const = 0;
  /// Whether its row ids are row addresses even in a dataset with stable
  /// row ids.
  virtual bool stores_addresses() const = 0;
  /// Whether Search answers `predicate` (over `column`): the planner asks
  /// before it plans a query on this index. Indices that evaluate any
  /// predicate on their values say yes, except to text search (contains,
  /// starts_with, LIKE), which pylance leaves to its text indices.
  virtual bool CanSearch(const arrow::compute::Expression& predicate, const std::string& /*column*/) const {
    return !HasTextSearch(predicate);
  }
  /// Whether Search gives exactly the rows `predicate` holds for; an inexact
  /// index (a zone map) gives a superset, which the scan rechecks.
  virtual bool IsExact(const arrow::compute::Expression& /*predicate*/) const { return true; }
  /// Rows whose value makes `predicate` true. `predicate` refers to the
  /// indexed column only, by the name `column`, and is evaluated on the
  /// index's values exactly as a scan would evaluate it on the column (three-
  /// valued: null and false both exclude the row).
  virtual Result<RowIds> Search(const arrow::compute::Expression& predicate, const std::string& column) = 0;
};

/// What the registry knows of one index type.
struct ScalarIndexType {
  /// The index_details message: "lance.table.BTreeIndexDetails"; the type
  /// URL is any prefix ending in '/' followed by it.
  std::string_view message_name;
  std::string_view name;              // "BTree"
  /// Opens an index of this type; nullptr (not an error) when its version or
  /// files are not a layout this reader knows.
  Result<std::unique_ptr<ScalarIndex>> (*open)(const Dataset& dataset, const IndexMetadata& metadata);
};

/// The type registered for `details_type_url`; nullptr when lance-cpp does
/// not read that type (yet).
const ScalarIndexType* FindScalarIndexType(std::string_view details_type_url);

/// Opens `metadata` through the registry; nullptr when it is not usable
/// (the filter is scanned), NotImplemented for a layout lance-cpp refuses
/// (a range-partitioned BTREE).
Result<std::unique_ptr<ScalarIndex>> OpenScalarIndex(const Dataset& dataset, const IndexMetadata& metadata);

// ---- helpers shared by the index readers

/// Opens one file of an index (a Lance file under `_indices/{uuid}/`);
/// nullptr when it is in a file format lance-cpp does not read (legacy).
Result<std::shared_ptr<FileReader>> OpenIndexFile(const Dataset& dataset, const IndexMetadata& metadata,
                                                  const std::string& name);

/// One file of an index in the legacy (0.1) Lance format, read whole by
/// the schema embedded in it (pylance before 0.21 wrote index files so);
/// nullptr when it has no embedded schema. Legacy files keep no validity:
/// nulls read as zero values.
Result<std::shared_ptr<arrow::RecordBatch>> ReadLegacyIndexFile(const Dataset& dataset, const IndexMetadata& metadata,
                                                                const std::string& name);

/// Evaluates `predicate` (over the column `column`) on `values`: which
/// positions it is true for.
Result<std::vector<bool>> EvaluateOn(const arrow::compute::Expression& predicate, const std::string& column,
                                     const std::shared_ptr<arrow::Array>& values);

/// Every row id of the dataset's fragments whose ids are in `fragments`
/// (sorted): deleted rows too (the planner keeps only live rows), in the id
/// space of an index that stores the dataset's row ids (stable ids when the
/// dataset has them). For an inexact or negated search that must give "any
/// row of the segment".
Result<RowIds> AllRowIds(const Dataset& dataset, const std::vector<uint32_t>& fragments);

/// The RowIdTreeMap in the global buffer that schema metadata `key` of
/// `file` names (an index file's null rows), decoded; nullopt when `file`
/// has no `key`. A value naming no buffer of the file is Invalid; `what`
/// names the index in errors.
Result<std::optional<RowIds>> ReadRowIdBuffer(const FileReader& file, const std::string& key,
                                              const std::string& what);

/// A serialized RoaringTreemap (an ngram index's posting list) as sorted
/// row ids.
Result<RowIds> DecodeRoaringTreemap(std::string_view bytes, const std::string& context);

/// A RoaringTreemap's bytes from its 32-bit bitmaps by high part (empty ones
/// are written too, as the crate writes what it holds).
std::string SerializeRoaringTreemap(const std::map<uint32_t, roaring_bitmap_s*>& parts);
/// The same for sorted row ids; `run_optimize`: each bitmap's containers
/// made runs where that is smaller (the roaring crate's optimize).
std::string EncodeRoaringTreemap(const RowIds& sorted_ids, bool run_optimize);

/// A serialized RowIdTreeMap (a bitmap index's row sets) as sorted row ids.
Result<RowIds> DecodeRowIdTreeMap(std::string_view bytes, const std::string& context);

// The readers the registry knows (btree.cc, bitmap.cc, label_list.cc, zonemap.cc, ngram.cc,
// bloomfilter.cc).
Result<std::unique_ptr<ScalarIndex>> OpenBTreeIndex(const Dataset& dataset, const IndexMetadata& metadata);
Result<std::unique_ptr<ScalarIndex>> OpenBitmapIndex(const Dataset& dataset, const IndexMetadata& metadata);
Result<std::unique_ptr<ScalarIndex>> OpenLabelListIndex(const Dataset& dataset, const IndexMetadata& metadata);
Result<std::unique_ptr<ScalarIndex>> OpenZoneMapIndex(const Dataset& dataset, const IndexMetadata& metadata);
Result<std::unique_ptr<ScalarIndex>> OpenNGramIndex(const Dataset& dataset, const IndexMetadata& metadata);
Result<std::unique_ptr<ScalarIndex>> OpenBloomFilterIndex(const Dataset& dataset, const IndexMetadata& metadata);

}  // namespace lance::index
