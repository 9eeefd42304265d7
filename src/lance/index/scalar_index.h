// Scalar indices as the planner sees them: one reader per index type, found
// through a registry keyed by the index_details type URL the manifest
// records. A type lance-cpp does not implement (or a layout or version it
// does not recognise) opens as "not usable", and the filter is then answered
// by the scan alone: an index is never guessed at.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <arrow/compute/expression.h>
#include <arrow/type_fwd.h>

#include "lance/dataset.h"
#include "lance/index_metadata.h"
#include "lance/status.h"

namespace lance::index {

/// Row ids an index search found: row addresses (fragment id << 32 |
/// offset), or stable row ids when the dataset uses them and the index
/// stores those (ScalarIndex::stores_addresses). Sorted, unique.
using RowIds = std::vector<uint64_t>;

RowIds Union(const RowIds& a, const RowIds& b);
RowIds Intersect(const RowIds& a, const RowIds& b);

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
  /// predicate on their values say yes.
  virtual bool CanSearch(const arrow::compute::Expression& /*predicate*/, const std::string& /*column*/) const {
    return true;
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

/// Opens `metadata` through the registry; nullptr when it is not usable.
Result<std::unique_ptr<ScalarIndex>> OpenScalarIndex(const Dataset& dataset, const IndexMetadata& metadata);

// ---- helpers shared by the index readers

/// Opens one file of an index (a Lance file under `_indices/{uuid}/`);
/// nullptr when it is in a file format lance-cpp does not read (legacy).
Result<std::shared_ptr<FileReader>> OpenIndexFile(const Dataset& dataset, const IndexMetadata& metadata,
                                                  const std::string& name);

/// Evaluates `predicate` (over the column `column`) on `values`: which
/// positions it is true for.
Result<std::vector<bool>> EvaluateOn(const arrow::compute::Expression& predicate, const std::string& column,
                                     const std::shared_ptr<arrow::Array>& values);

/// A serialized RowIdTreeMap (a bitmap index's row sets) as sorted row ids.
Result<RowIds> DecodeRowIdTreeMap(std::string_view bytes, const std::string& context);

// The readers the registry knows (btree.cc, bitmap.cc, label_list.cc, zonemap.cc).
Result<std::unique_ptr<ScalarIndex>> OpenBTreeIndex(const Dataset& dataset, const IndexMetadata& metadata);
Result<std::unique_ptr<ScalarIndex>> OpenBitmapIndex(const Dataset& dataset, const IndexMetadata& metadata);
Result<std::unique_ptr<ScalarIndex>> OpenLabelListIndex(const Dataset& dataset, const IndexMetadata& metadata);
Result<std::unique_ptr<ScalarIndex>> OpenZoneMapIndex(const Dataset& dataset, const IndexMetadata& metadata);

}  // namespace lance::index
