// One dictionary per dictionary-typed column across a stream of batches.
//
// Scans and takes hand out dictionary columns as the files hold them: every
// fragment (and, in 2.0 files, every page) has its own dictionary, as
// pylance's `to_table()` does. An Arrow IPC file allows one dictionary per
// field, extended by deltas but never replaced, so such a stream cannot be
// written to one as it is. This wrapper rewrites it so that it can.
#pragma once

#include <memory>

#include <arrow/memory_pool.h>
#include <arrow/record_batch.h>

#include "lance/status.h"

namespace lance {

/// Wraps `reader` so that each dictionary-typed column, at any depth of
/// structs and lists, keeps one dictionary that only grows: a batch's
/// dictionary is the previous batch's with the values new in this batch
/// appended, and its indices are rewritten to point into it. Values, nulls,
/// the schema and the index type are unchanged; a null entry of a dictionary
/// becomes a null index. Batches whose dictionaries already agree pass
/// through untouched. Fails (on the batch that needs it) when the values of
/// a column together do not fit its index type, or when dictionaries of its
/// value type cannot be unified (Arrow unifies primitive and string types).
/// Dictionaries inside a dictionary's values are left as they are.
Result<std::shared_ptr<arrow::RecordBatchReader>> UnifyDictionaries(
    std::shared_ptr<arrow::RecordBatchReader> reader, arrow::MemoryPool* pool = arrow::default_memory_pool());

}  // namespace lance
