// Writing the files of BTREE and BITMAP indices in the layouts pylance 14
// writes (see btree.cc and bitmap.cc for what they hold), with lance-cpp's
// own Lance file writer.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <arrow/type_fwd.h>

#include "lance/index_metadata.h"
#include "lance/io/object_store.h"
#include "lance/status.h"

namespace lance::index {

/// One column's values with the row id of each, in any order.
struct IndexInput {
  std::shared_ptr<arrow::Array> values;
  std::shared_ptr<arrow::UInt64Array> ids;
};

/// The files written into `dir` of `store` (named as the index's files,
/// sorted by name, with their sizes). `file_version` is the Lance file
/// version of the files ("2.0", "2.1", "2.2"): pylance writes its index files
/// in the dataset's data storage version.
Result<std::vector<IndexFile>> WriteBTreeIndex(const io::ObjectStore& store, const std::string& dir,
                                               const IndexInput& input, const std::string& file_version);
Result<std::vector<IndexFile>> WriteBitmapIndex(const io::ObjectStore& store, const std::string& dir,
                                                const IndexInput& input, const std::string& file_version);

/// The same BTREE from `rows` (batches of two columns: the values of
/// `type`, then uint64 ids), holding at most about `run_rows` rows in
/// memory: sorted runs of that many rows are spilled to local temporary
/// Lance files and merged. Fewer rows than that are sorted in memory.
Result<std::vector<IndexFile>> WriteBTreeIndexSpilling(const io::ObjectStore& store, const std::string& dir,
                                                       arrow::RecordBatchReader& rows,
                                                       const std::shared_ptr<arrow::DataType>& type,
                                                       const std::string& file_version, int64_t run_rows);

/// `ids` (sorted, unique) serialized as a RowIdTreeMap.
std::string EncodeRowIdTreeMap(const std::vector<uint64_t>& ids);

}  // namespace lance::index
