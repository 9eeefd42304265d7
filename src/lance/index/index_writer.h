// Writing the files of BTREE, BITMAP, LABEL_LIST, ZONEMAP and NGRAM indices
// in the layouts pylance 14 writes (see btree.cc, bitmap.cc, label_list.cc,
// zonemap.cc and ngram.cc for what they hold), with lance-cpp's own Lance
// file writer.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <arrow/type_fwd.h>

#include "lance/index/scalar_index.h"
#include "lance/index_metadata.h"
#include "lance/io/object_store.h"
#include "lance/status.h"

namespace lance {
class FileWriter;
}  // namespace lance

namespace lance::index {

/// One column's values with the row id of each, in any order.
struct IndexInput {
  std::shared_ptr<arrow::Array> values;
  std::shared_ptr<arrow::UInt64Array> ids;
};

/// One index file as pylance's index store writes it: `metadata` in the
/// schema, the rows `write_rows` writes, then each of `global_buffers` with
/// its buffer index under its key (an empty key: not recorded).
Result<IndexFile> WriteIndexFile(const io::ObjectStore& store, const std::string& dir, const std::string& name,
                                 const std::shared_ptr<arrow::Schema>& schema,
                                 const std::function<Status(FileWriter&)>& write_rows,
                                 const std::vector<std::pair<std::string, std::string>>& metadata,
                                 const std::string& file_version,
                                 const std::vector<std::pair<std::string, std::string>>& global_buffers = {});

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

/// An NGRAM index (see ngram.cc) from `rows`: batches of two columns, the
/// strings (utf8 or large_utf8) and their uint64 row ids. Holds the posting
/// lists (compressed bitmaps) of about `run_rows` rows at most: beyond that
/// they are spilled to local temporary Lance files, merged by token at the
/// end. A value with a character past U+017F is refused (ngram.h: pylance
/// folds those by a table lance-cpp does not carry); `column` names the
/// column in that message.
///
/// `old` are earlier segments' postings to merge in (optimize-indices):
/// each file's posting lists with their row ids mapped by `map` (nullopt:
/// left out), every token kept.
struct NGramPostings {
  std::shared_ptr<FileReader> file;  // an ngram_postings.lance
  RowIdMap map;
};
Result<std::vector<IndexFile>> WriteNGramIndex(const io::ObjectStore& store, const std::string& dir,
                                               arrow::RecordBatchReader& rows, const std::string& column,
                                               const std::string& file_version, int64_t run_rows,
                                               const std::vector<NGramPostings>& old = {});

/// A LABEL_LIST index: `elements` are the lists' elements, each with the
/// row id of its list (a bitmap index of them), `list_nulls` (sorted,
/// unique) the rows whose list is null.
Result<std::vector<IndexFile>> WriteLabelListIndex(const io::ObjectStore& store, const std::string& dir,
                                                   const IndexInput& elements, const std::vector<uint64_t>& list_nulls,
                                                   const std::string& file_version);

/// Zones of a ZONEMAP index, one entry each: the bounds of the zone's
/// values (1-row arrays of the value type; null when the zone has none) and
/// where it is, (fragment_id << 32 | start) and the `length` offsets after.
struct ZoneMapZones {
  arrow::ArrayVector mins, maxs;
  std::vector<uint32_t> null_counts, nan_counts;
  std::vector<uint64_t> fragment_ids, starts, lengths;
  size_t size() const { return fragment_ids.size(); }
  void Append(const ZoneMapZones& other);
};

/// Cuts rows arriving in row-address order into zones as pylance 14's zone
/// trainer does (ZONEMAP and BLOOMFILTER share it): `rows_per_zone` rows
/// each (deleted rows are absent from the input; a zone spans its first to
/// last offset), never across a fragment. Holds one zone's values at a time
/// and hands each zone to AddZone.
class ZoneTrainer {
 public:
  explicit ZoneTrainer(uint64_t rows_per_zone) : rows_per_zone_(rows_per_zone) {}
  virtual ~ZoneTrainer() = default;
  /// REQUIRES: addresses ascending across calls.
  Status Add(const std::shared_ptr<arrow::Array>& values, const arrow::UInt64Array& addresses);
  Status Finish();
  /// Row addresses of the null values seen, ascending.
  const std::vector<uint64_t>& null_rows() const { return null_rows_; }

 protected:
  /// One zone: its values (in pieces, nulls included), at offsets
  /// [start, start + length) of `fragment`.
  virtual Status AddZone(const arrow::ArrayVector& values, uint64_t fragment, uint64_t start, uint64_t length) = 0;

 private:
  Status Flush();
  uint64_t rows_per_zone_;
  std::vector<uint64_t> null_rows_;
  arrow::ArrayVector chunk_;
  uint64_t rows_ = 0, fragment_ = 0, first_ = 0, last_ = 0;
};

/// A ZONEMAP's zones: each one's bounds and counts.
class ZoneMapTrainer : public ZoneTrainer {
 public:
  ZoneMapTrainer(std::shared_ptr<arrow::DataType> type, uint64_t rows_per_zone)
      : ZoneTrainer(rows_per_zone), type_(std::move(type)) {}
  const ZoneMapZones& zones() const { return zones_; }

 protected:
  Status AddZone(const arrow::ArrayVector& values, uint64_t fragment, uint64_t start, uint64_t length) override;

 private:
  std::shared_ptr<arrow::DataType> type_;
  ZoneMapZones zones_;
};

/// Zones of a BLOOMFILTER index: where each is, whether it holds a null,
/// and its serialized filter (bloom_filter.h).
struct BloomFilterZones {
  std::vector<uint64_t> fragment_ids, starts, lengths;
  std::vector<bool> has_nulls;
  std::vector<std::string> filters;
  size_t size() const { return fragment_ids.size(); }
  void Append(const BloomFilterZones& other);
};

/// A BLOOMFILTER's zones: `number_of_items` rows each (pylance's zone
/// size is its filter's expected item count), one filter per zone sized for
/// that many items at `probability`.
class BloomFilterTrainer : public ZoneTrainer {
 public:
  BloomFilterTrainer(uint64_t number_of_items, double probability)
      : ZoneTrainer(number_of_items), number_of_items_(number_of_items), probability_(probability) {}
  const BloomFilterZones& zones() const { return zones_; }

 protected:
  Status AddZone(const arrow::ArrayVector& values, uint64_t fragment, uint64_t start, uint64_t length) override;

 private:
  uint64_t number_of_items_;
  double probability_;
  BloomFilterZones zones_;
};

/// bloomfilter.lance of `zones` and their null rows (none recorded when
/// unset, as a file of an older writer), with the parameters in its schema
/// metadata as pylance 14 records them.
Result<std::vector<IndexFile>> WriteBloomFilterIndex(const io::ObjectStore& store, const std::string& dir,
                                                     const BloomFilterZones& zones,
                                                     const std::optional<std::vector<uint64_t>>& null_rows,
                                                     uint64_t number_of_items,
                                                     double probability, const std::string& file_version);

/// `v` as Rust's f64 Display writes it (the shortest digits that read back
/// as `v`, never an exponent): how pylance records a probability.
std::string RustFloatText(double v);

/// The value types a ZONEMAP index is built on by lance-cpp (those whose
/// bounds pylance 14 records and lance-cpp's reader uses).
bool ZoneMapValueType(const arrow::DataType& type);

/// zonemap.lance of `zones` (`type` values) and their null rows.
Result<std::vector<IndexFile>> WriteZoneMapIndex(const io::ObjectStore& store, const std::string& dir,
                                                 const std::shared_ptr<arrow::DataType>& type,
                                                 const ZoneMapZones& zones, const std::vector<uint64_t>& null_rows,
                                                 uint64_t rows_per_zone, const std::string& file_version);

/// The NGRAM index of `old` (its ngram_postings.lance) with each row id
/// mapped by `map` (nullopt: the row is gone), written into `dir`: every
/// token stays, with an empty list when none of its rows do, as pylance's
/// remap keeps them.
Result<std::vector<IndexFile>> RemapNGramIndex(const io::ObjectStore& store, const std::string& dir,
                                               const std::shared_ptr<FileReader>& old,
                                               const RowIdMap& map,
                                               const std::string& file_version);

/// `ids` (sorted, unique) serialized as a RowIdTreeMap.
std::string EncodeRowIdTreeMap(const std::vector<uint64_t>& ids);

}  // namespace lance::index
