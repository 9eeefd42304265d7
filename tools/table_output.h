// Printing Arrow results for people (table), for tools (csv, json), or to an
// Arrow IPC file (--out).
#pragma once

#include <memory>
#include <string>

#include <arrow/record_batch.h>
#include <arrow/table.h>

#include "lance/status.h"

namespace lance::cli {

/// Writes `reader`'s batches to `out_path` as an Arrow IPC file if given,
/// else prints them in `format` ("table", "csv" or "json") to stdout.
/// Writing to a file is atomic: a temporary file is renamed into place, so
/// a failure leaves no partial output.
Status EmitResult(const std::shared_ptr<arrow::RecordBatchReader>& reader, const std::string& format,
                  const std::string& out_path);

}  // namespace lance::cli
