// Blob v2 values of rows being rewritten (update, merge-insert): a scan or
// take gives each blob v2 column as descriptors (kind, position, size,
// blob_id, blob_uri) that point into the row's own data file or the `.blob`
// files beside it. A rewritten row goes to a new data file, so its bytes
// are read back and written anew there, as pylance 14's update and
// merge-insert do (new inline buffers and `.blob` files, new blob ids).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <arrow/record_batch.h>
#include <arrow/type.h>

#include "lance/dataset.h"
#include "lance/io/object_store.h"
#include "lance/status.h"

namespace lance::ops {

/// True when the dataset's schema has a top-level blob v2 column.
bool HasBlobV2Columns(const Dataset& dataset);

/// `schema` (the dataset's Arrow schema, blob v2 columns as descriptors)
/// with each blob v2 column as the logical struct<data, uri> the writer
/// takes; metadata kept.
std::shared_ptr<arrow::Schema> BlobV2WritableSchema(const Dataset& dataset, const arrow::Schema& schema);

/// `batch` with each blob v2 descriptor column replaced by the logical
/// struct<data, uri> holding the values' bytes. Row i of `batch` is the
/// row at `row_addrs[i]` of `dataset` (whose files live in `store`).
/// Values stored as external URIs are refused (lance-cpp writes none).
Result<std::shared_ptr<arrow::RecordBatch>> ReadBlobV2Values(const io::ObjectStore& store, const Dataset& dataset,
                                                             const std::shared_ptr<arrow::RecordBatch>& batch,
                                                             const std::vector<uint64_t>& row_addrs);

}  // namespace lance::ops
