// Writing the two files of a pylance 14 IVF segment (IVF_FLAT, IVF_PQ,
// IVF_SQ with the FLAT sub-index; docs/vector-indices.md §2, §3): the one
// writer behind both the build (create-index) and the remap of compaction.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <arrow/type_fwd.h>

#include "lance/index/scalar_index.h"
#include "lance/index_metadata.h"
#include "lance/io/object_store.h"
#include "lance/status.h"

namespace lance {
class Dataset;
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

/// The f64 serde_json reads from the JSON number `text` without its
/// float_roundtrip feature, as pylance 14 does: the digits as a u64 (those
/// past its range dropped) converted to f64, then multiplied or divided by
/// the power of ten, so not always the nearest f64 ("-3.9055898189544678"
/// reads as -3.905589818954468). Invalid for what is not a JSON number.
Result<double> SerdeJsonParseFloat(std::string_view text);

/// auxiliary.idx's storage_metadata of an 8-bit IVF_SQ over `dim` values
/// with bounds [lo, hi].
std::string SqStorageMetadata(uint32_t dim, double lo, double hi);

/// auxiliary.idx (the rows `write_rows` writes: partition after partition,
/// `files.lengths` rows each) and index.idx of a segment, into `dir`.
Result<std::vector<IndexFile>> WriteIvfFiles(const io::ObjectStore& store, const std::string& dir,
                                             const IvfFiles& files,
                                             const std::function<Status(FileWriter&)>& write_rows,
                                             const std::string& file_version);

/// The segment `metadata` of `dataset` (an IVF_FLAT, IVF_PQ or IVF_SQ as
/// IvfSegment::Open reads) rewritten into `dir` as pylance 14's compaction
/// remaps it: the same model, quantizer and storage metadata; in each
/// partition its rows in their order, each row id mapped by `map`, the rows
/// it maps to nullopt left out (PQ codes stay transposed per partition).
/// The SQ bounds are read back and written again as pylance's serde_json
/// does (SerdeJsonParseFloat): they may move by an ulp.
/// Holds 65,536 rows of IVF_FLAT / IVF_SQ at a time, a whole partition of
/// IVF_PQ (its codes are transposed over the partition).
Result<std::vector<IndexFile>> RemapIvfIndex(const Dataset& dataset, const io::ObjectStore& store,
                                             const std::string& dir, const IndexMetadata& metadata,
                                             const RowIdMap& map, const std::string& file_version);

}  // namespace lance::index::vector
