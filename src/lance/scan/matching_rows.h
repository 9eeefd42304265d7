// The rows a predicate selects, as fragment offsets: what delete (and any
// operation that marks rows rather than reads them) needs from a scan.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <arrow/memory_pool.h>

#include "lance/dataset.h"
#include "lance/status.h"
#include "lance/util/progress_reporter.h"

namespace lance::scan {

/// The physical offsets, ascending, of the live rows where `filter` (SQL, as
/// ScanOptions::filter) is true: one list per fragment of the manifest, in
/// its order. Only the columns the filter names are read, no row is copied,
/// and fragments (large ones in parts) are evaluated on all cores.
/// `progress`, when given, gets the rows of each window evaluated (every
/// physical row once, deleted ones included). `deleted_rows`, when given,
/// gets each fragment's deleted offsets as read for the evaluation (same
/// order), so a caller marking more rows need not read them again.
/// Fragments scalar indices cover are answered through them, as the
/// reference's delete plans its scan (candidates rechecked when the filter
/// has parts no index answers); `use_scalar_index` false scans them all.
Result<std::vector<std::vector<uint32_t>>> MatchingRows(std::shared_ptr<const Dataset> dataset,
                                                        const std::string& filter,
                                                        arrow::MemoryPool* pool = arrow::default_memory_pool(),
                                                        util::ProgressStage* progress = nullptr,
                                                        std::vector<std::vector<uint32_t>>* deleted_rows = nullptr,
                                                        bool use_scalar_index = true);

/// Builds what filters need once per process (Arrow's compute registry,
/// milliseconds) on a background thread, so a caller can overlap it with
/// reading the manifest; does nothing once built. Joins on destruction.
class FilterSetupInBackground {
 public:
  FilterSetupInBackground();
  ~FilterSetupInBackground();
  FilterSetupInBackground(const FilterSetupInBackground&) = delete;
  FilterSetupInBackground& operator=(const FilterSetupInBackground&) = delete;

 private:
  std::thread thread_;
};

}  // namespace lance::scan
