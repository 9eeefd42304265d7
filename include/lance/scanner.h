// Reading rows of a dataset: scans (with projection, filter, limit/offset,
// row ids), takes by dataset offset or by row id, and counts.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <arrow/memory_pool.h>
#include <arrow/record_batch.h>
#include <arrow/table.h>

#include "lance/dataset.h"
#include "lance/status.h"

namespace lance {

/// Options of a scan; mirror pylance's scanner arguments.
struct ScanOptions {
  /// Columns to return, in order: top-level names or nested paths "a.b"
  /// (returned under that name). Empty = every top-level field.
  std::vector<std::string> columns;
  /// A SQL predicate (see the CLI contract); rows where it is not true are dropped.
  std::string filter;
  /// Rows to skip / to return at most, after filtering.
  int64_t offset = 0;
  std::optional<int64_t> limit;
  /// Append `_rowid` (stable ids when the dataset has them, else row
  /// addresses) and `_rowaddr` ((fragment id << 32) | offset), both uint64.
  bool with_row_id = false;
  bool with_row_address = false;
  /// Rows per output batch at most.
  int64_t batch_size = 8192;
  /// Scans and counts: only these fragments, in this order (pylance's
  /// scanner `fragments=`); unset = every fragment in dataset order. An id
  /// the version does not hold is an error.
  std::optional<std::vector<uint64_t>> fragment_ids;
  /// Answer the filter through the dataset's scalar indices where they can
  /// (pylance's `use_scalar_index`); false always scans. Rows are the same.
  bool use_scalar_index = true;
  /// Keep the data files' readers open in the dataset handle (up to 128),
  /// so later scans and takes skip opening them; false opens each for this
  /// scan only and closes it after its fragment (a one-pass read such as
  /// compaction's, whose readers would only hold memory). Rows are the same.
  bool cache_file_readers = true;
  arrow::MemoryPool* pool = arrow::default_memory_pool();
};

/// Builds and runs a scan. REQUIRES: the dataset outlives nothing; the
/// builder keeps it alive.
class ScanBuilder {
 public:
  explicit ScanBuilder(std::shared_ptr<const Dataset> dataset) : dataset_(std::move(dataset)) {}
  ScanBuilder& Project(std::vector<std::string> columns) { options_.columns = std::move(columns); return *this; }
  ScanBuilder& Filter(std::string sql) { options_.filter = std::move(sql); return *this; }
  ScanBuilder& Offset(int64_t n) { options_.offset = n; return *this; }
  ScanBuilder& Limit(int64_t n) { options_.limit = n; return *this; }
  ScanBuilder& WithRowId(bool on = true) { options_.with_row_id = on; return *this; }
  ScanBuilder& WithRowAddress(bool on = true) { options_.with_row_address = on; return *this; }
  ScanBuilder& BatchSize(int64_t n) { options_.batch_size = n; return *this; }
  ScanBuilder& UseScalarIndex(bool on = true) { options_.use_scalar_index = on; return *this; }
  ScanBuilder& Options(ScanOptions options) { options_ = std::move(options); return *this; }

  /// Streams the result, one fragment in memory at a time.
  Result<std::shared_ptr<arrow::RecordBatchReader>> ToReader() const;
  Result<std::shared_ptr<arrow::Table>> ToTable() const;
  /// Rows the scan would return (offset and limit applied).
  Result<int64_t> CountRows() const;
  /// The plan, as text: what is read, and the scalar index query answering
  /// the filter (each index named `NAME (TYPE)`), as pylance's explain_plan.
  Result<std::string> ExplainPlan() const;

 private:
  std::shared_ptr<const Dataset> dataset_;
  ScanOptions options_;
};

/// Rows at dataset offsets (positions among live rows, in dataset order), in
/// the order asked; repeats allowed. As pylance's `take`.
Result<std::shared_ptr<arrow::Table>> Take(const std::shared_ptr<const Dataset>& dataset,
                                           const std::vector<uint64_t>& indices,
                                           const std::vector<std::string>& columns = {});

/// Rows by row id (stable ids, or row addresses when the dataset has none),
/// in the order asked. As pylance's `_take_rows`.
Result<std::shared_ptr<arrow::Table>> TakeRows(const std::shared_ptr<const Dataset>& dataset,
                                               const std::vector<uint64_t>& row_ids,
                                               const std::vector<std::string>& columns = {});

}  // namespace lance
