// Pieces shared by create-index and optimize-indices: reading a column for
// an index build and the LABEL_LIST / ZONEMAP specifics (pylance 14's).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <arrow/type_fwd.h>

#include "lance/dataset.h"
#include "lance/scanner.h"
#include "lance/index/index_writer.h"
#include "lance/index_metadata.h"
#include "lance/status.h"
#include "lance/txn/transaction.h"

namespace lance::ops {

/// The 16 bytes of a hyphenated UUID text.
std::array<uint8_t, 16> UuidBytes(const std::string& text);
/// The frag-reuse and MemWAL indices: not user indices.
bool IsSystemIndex(const IndexMetadata& index);
/// Commits `op` on top of `dataset`'s version (the indices it read).
Result<std::shared_ptr<Dataset>> CommitIndexChange(const Dataset& dataset, txn::CreateIndex op);
/// The commit alone: a builder that removes the files it wrote when the
/// commit fails must not remove them when only the new handle fails.
Result<txn::CommitResult> CommitIndexTransaction(const Dataset& dataset, txn::CreateIndex op);

/// Rows a BTREE build sorts in memory before it spills a sorted run, and an
/// NGRAM build holds the posting lists of before it spills them: 4Mi
/// (LANCE_CPP_INDEX_SORT_RUN_ROWS overrides, for tests and small machines).
int64_t SortRunRows();

/// pylance 14's ROWS_PER_ZONE_DEFAULT.
inline constexpr uint64_t kDefaultRowsPerZone = 8192;

/// The ZoneMapIndexDetails message pylance 14 records: rows_per_zone,
/// use_seeds, has_null_bitmap (lance-cpp always writes the null bitmap).
std::string ZoneMapDetails(uint64_t rows_per_zone, bool use_seeds);
/// The rows_per_zone and use_seeds of a ZoneMapIndexDetails message; an
/// error when it has no null bitmap or fields lance-cpp does not know.
Status ParseZoneMapDetails(const std::string& bytes, uint64_t* rows_per_zone, bool* use_seeds);
/// pylance 14's default use_seeds for a column type: variable-width values
/// and fixed-width ones wider than 8 bytes.
bool ZoneMapDefaultUseSeeds(const arrow::DataType& type);

/// The scan an index build reads `column` with: its values and uint64 ids
/// (row addresses when `addresses`, else the dataset's row ids) of
/// `fragments` (every fragment when unset), deleted rows left out.
ScanOptions IndexColumnScan(const std::string& column, bool addresses,
                            const std::optional<std::vector<uint64_t>>& fragments);
/// `column` (values, then uint64 ids) of `fragments` (every fragment when
/// unset), deleted rows left out; ids are row addresses when `addresses`,
/// else the dataset's row ids. A table of the two columns.
Result<std::shared_ptr<arrow::Table>> ReadColumnForIndex(const std::shared_ptr<const Dataset>& dataset,
                                                         const std::string& column, bool addresses,
                                                         const std::optional<std::vector<uint64_t>>& fragments);

/// The elements of the list column `lists` (with `ids`), and the ids of the
/// null lists, appended to `elements` / `list_nulls`.
Status FlattenLists(const arrow::ChunkedArray& lists, const arrow::ChunkedArray& ids,
                    arrow::ArrayVector* element_values, arrow::ArrayVector* element_ids,
                    std::vector<uint64_t>* list_nulls);

/// Streams `column` of `fragments` by row address into `trainer`.
Status TrainZones(const std::shared_ptr<const Dataset>& dataset, const std::string& column,
                  const std::optional<std::vector<uint64_t>>& fragments, index::ZoneTrainer* trainer);

/// One input of the arrays given (or an empty one of `type`).
Result<index::IndexInput> Concat(const arrow::ArrayVector& values, const arrow::ArrayVector& ids,
                                 const std::shared_ptr<arrow::DataType>& type);

/// The files of a LABEL_LIST or ZONEMAP (`type`) index of `column` (of
/// `value_type`) over `fragments` (every fragment when unset), in `dir`.
Result<std::vector<IndexFile>> WriteListOrZoneIndex(const std::shared_ptr<const Dataset>& dataset,
                                                    const std::string& column, const std::string& type,
                                                    const std::shared_ptr<arrow::DataType>& value_type,
                                                    uint64_t rows_per_zone, const io::ObjectStore& store,
                                                    const std::string& dir, const std::string& file_version,
                                                    const std::optional<std::vector<uint64_t>>& fragments);

/// File `name` of `index`; NotImplemented when it is in a file format
/// lance-cpp does not read (legacy).
Result<std::shared_ptr<FileReader>> OpenFile(const Dataset& ds, const IndexMetadata& index, const std::string& name);

/// index::ReadRowIdBuffer, for a buffer the index needs: NotImplemented
/// when `reader` has no `key`.
Result<std::vector<uint64_t>> ReadRowSet(const FileReader& reader, const std::string& key, const std::string& what);

/// The (value, id) rows of `index`'s bitmap_page_lookup.lance (a BITMAP or
/// LABEL_LIST) with their ids mapped by `map`, appended to `values` /
/// `ids`; with `list_nulls`, the LABEL_LIST's null lists too.
Status BitmapRows(const Dataset& ds, const IndexMetadata& index, const index::RowIdMap& map, arrow::ArrayVector* values,
                  arrow::ArrayVector* ids, std::vector<uint64_t>* list_nulls);

}  // namespace lance::ops
