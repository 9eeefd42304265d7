// Reading the rows a `write` is given: Arrow IPC (file or stream), Parquet
// (when built with libparquet) or CSV, chosen by content and extension.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <arrow/record_batch.h>

#include "lance/status.h"

namespace lance::cli {

/// The rows of `path`. `num_rows`, when given, is set to how many rows it
/// holds where the format says so without reading them (an Arrow IPC file,
/// Parquet, CSV once parsed), else to nullopt (an Arrow IPC stream).
Result<std::shared_ptr<arrow::RecordBatchReader>> OpenInput(const std::string& path,
                                                            std::optional<uint64_t>* num_rows = nullptr);

}  // namespace lance::cli
