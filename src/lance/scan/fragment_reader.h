// Reading the columns of one fragment: each top-level field comes from the
// data file that holds its id, or is all nulls when no file does.
#pragma once

#include <memory>
#include <vector>

#include <arrow/memory_pool.h>
#include <arrow/record_batch.h>

#include "lance/dataset.h"
#include "lance/status.h"

namespace lance::scan {

/// Every physical row (deleted ones included) of the given top-level fields
/// of the dataset schema, in that order, with the dataset's names and types.
Result<std::shared_ptr<arrow::RecordBatch>> ReadFragmentFields(const Dataset& dataset, const Fragment& fragment,
                                                                const std::vector<const Field*>& fields,
                                                                arrow::MemoryPool* pool);

}  // namespace lance::scan
