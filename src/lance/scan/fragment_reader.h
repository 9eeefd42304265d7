// Reading the columns of one fragment: each top-level field comes from the
// data file that holds it, or is all nulls when no file does, and the cells
// its data overlay files cover take the overlay's values (scan/overlays.h),
// so every read path (scan, take, filter, count, rewrites) sees them. Data
// files stay open across reads of the same fragment.
#pragma once

#include <map>
#include <memory>
#include <vector>

#include <arrow/memory_pool.h>
#include <arrow/record_batch.h>

#include "lance/dataset.h"
#include "lance/file/legacy/legacy_reader.h"
#include "lance/file_reader.h"
#include "lance/scan/overlays.h"
#include "lance/status.h"

namespace lance::scan {

/// REQUIRES: the dataset outlives the reader. Not thread-safe.
class FragmentReader {
 public:
  /// Reads the given top-level fields of the dataset schema, in that order,
  /// with the dataset's names and types. With `cache_file_readers` the data
  /// files' readers are the dataset handle's (kept open for later reads);
  /// without, they are this reader's own and close with it.
  static Result<std::unique_ptr<FragmentReader>> Open(const Dataset& dataset, const Fragment& fragment,
                                                      const std::vector<const Field*>& fields,
                                                      arrow::MemoryPool* pool, bool cache_file_readers = true);

  /// Physical rows, deleted ones included.
  uint64_t num_rows() const { return rows_; }
  /// Bytes per physical row of the fields' data files (file sizes over rows;
  /// an estimate that sizes scan windows). 0 when unknown.
  uint64_t EstimatedBytesPerRow() const;
  /// Whether every data file reads only the pages a range or take needs.
  bool ReadsPagesSelectively() const;

  /// Row boundaries every `target_rows` rows: the unit of a bounded-memory
  /// scan. Each field is decoded in runs it can decode on its own and
  /// sliced, so windows need not align with any field's pages.
  Result<std::vector<uint64_t>> ReadWindows(uint64_t target_rows) const;

  /// Physical rows [offset, offset + count).
  Result<std::shared_ptr<arrow::RecordBatch>> ReadRange(uint64_t offset, uint64_t count);
  /// Physical rows at ascending `offsets`.
  Result<std::shared_ptr<arrow::RecordBatch>> Take(const std::vector<uint64_t>& offsets);

 private:
  struct Source {
    const DataFile* file = nullptr;
    size_t position = 0;  // of `file` in the fragment's files
    std::string location;
    std::shared_ptr<FileReader> v2;                                // v2 files
    std::shared_ptr<file::legacy::LegacyFileReader> legacy;        // legacy files
    std::shared_ptr<arrow::RecordBatch> legacy_rows;               // decoded once
    std::vector<size_t> outputs;                                   // indexes into fields_
    std::vector<std::string> names;                                // v2: field names in the file
    std::vector<Field> file_fields;                                // v2: those fields, with children
    // v2: the last decoded window of each field (first row, rows), so a
    // sequential scan decodes every part of a field once.
    std::vector<std::pair<uint64_t, std::shared_ptr<arrow::Array>>> windows;
  };
  Result<std::vector<std::shared_ptr<arrow::Array>>> ReadSource(Source& source, uint64_t offset, uint64_t count,
                                                                const std::vector<uint64_t>* offsets);
  Result<std::shared_ptr<arrow::RecordBatch>> Read(uint64_t offset, uint64_t count,
                                                   const std::vector<uint64_t>* offsets);

  const Dataset* dataset_ = nullptr;
  std::vector<const Field*> fields_;
  std::shared_ptr<arrow::Schema> schema_;
  uint64_t rows_ = 0;
  arrow::MemoryPool* pool_ = nullptr;
  std::vector<Source> sources_;
  std::vector<size_t> null_fields_;
  std::unique_ptr<OverlayResolver> overlays_;
};

}  // namespace lance::scan
