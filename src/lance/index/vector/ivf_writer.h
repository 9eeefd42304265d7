// Writing the two files of a pylance 14 IVF segment (IVF_FLAT, IVF_PQ,
// IVF_SQ with the FLAT sub-index; docs/vector-indices.md §2, §3): the one
// writer of the build (create-index).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <arrow/type_fwd.h>

#include "lance/index_metadata.h"
#include "lance/io/object_store.h"
#include "lance/status.h"

namespace lance {
class FileWriter;
}  // namespace lance

namespace lance::index::vector {

/// What an IVF segment's files hold besides the partitions' rows.
struct IvfFiles {
  std::string type;         // "IVF_FLAT", "IVF_PQ" or "IVF_SQ"
  std::string metric_name;  // "l2", "cosine", "dot"
  /// index.idx's IVF message (centroids, loss; offsets and lengths zero),
  /// serialized.
  std::string index_ivf;
  /// auxiliary.idx's columns: _rowid, then the codes column.
  std::shared_ptr<arrow::Schema> aux_schema;
  /// auxiliary.idx's `storage_metadata` (a JSON array of one string).
  std::string storage_metadata;
  /// Rows of each partition, in the order the rows are written.
  std::vector<uint64_t> lengths;
  /// auxiliary.idx's global buffers after the IVF message (2, 3, ...),
  /// named by the storage metadata, not the schema: the PQ codebook.
  std::vector<std::string> aux_buffers;
};

/// `v` as serde_json writes an f64 (the ryu crate's format64): the shortest
/// digits that read back as `v`, fixed-point when the decimal point falls
/// within (-5, 16] digits of them, else d.ddde-N ("6.585226401512045e-6", but
/// "0.0000133514404296875").
std::string SerdeJsonFloat(double v);

/// auxiliary.idx's storage_metadata of an 8-bit IVF_SQ over `dim` values
/// with bounds [lo, hi].
std::string SqStorageMetadata(uint32_t dim, double lo, double hi);

/// auxiliary.idx (the rows `write_rows` writes: partition after partition,
/// `files.lengths` rows each) and index.idx of a segment, into `dir`.
Result<std::vector<IndexFile>> WriteIvfFiles(const io::ObjectStore& store, const std::string& dir,
                                             const IvfFiles& files,
                                             const std::function<Status(FileWriter&)>& write_rows,
                                             const std::string& file_version);

}  // namespace lance::index::vector
