// Reading the rows a `write` is given: Arrow IPC (file or stream), Parquet
// (when built with libparquet) or CSV, chosen by content and extension.
#pragma once

#include <memory>
#include <string>

#include <arrow/record_batch.h>

#include "lance/status.h"

namespace lance::cli {

Result<std::shared_ptr<arrow::RecordBatchReader>> OpenInput(const std::string& path);

}  // namespace lance::cli
