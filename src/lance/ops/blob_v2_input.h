// Input for blob v2 columns of 2.2 datasets: pylance takes a large_binary
// column marked `lance-encoding:blob` (or its own struct<data, uri> blob
// array) and keeps it as the logical struct<data: large_binary, uri: string>
// tagged lance.blob.v2; the file writer turns those rows into descriptors.
#pragma once

#include <memory>
#include <string>

#include <arrow/record_batch.h>
#include <arrow/type.h>

#include "lance/schema.h"
#include "lance/status.h"

namespace lance::ops {

/// `schema` with each top-level blob column (large_binary with the blob
/// key) as the blob v2 logical struct, as pylance creates 2.2 datasets.
std::shared_ptr<arrow::Schema> BlobV2InputSchema(const arrow::Schema& schema);

/// The logical struct<data, uri> of a blob v2 field.
std::shared_ptr<arrow::DataType> BlobV2LogicalType();
/// What the dataset writer takes for a blob v2 field: the logical struct
/// plus the position/size of external ranges (pylance's blob_field shape).
std::shared_ptr<arrow::DataType> BlobV2WriteType();

/// `batch` with each column named like a blob v2 field of `schema` given as
/// BlobV2WriteType (binary values become `data`, the rest stays null).
/// Refuses rows pylance refuses: a valid row must set exactly one of data
/// and uri; position and size go together, with a uri, and size > 0.
Result<std::shared_ptr<arrow::RecordBatch>> ToBlobV2Input(const std::shared_ptr<arrow::RecordBatch>& batch,
                                                          const Schema& schema, const std::string& uri);

/// An error naming the first blob column of `schema` that lance-cpp cannot
/// write into a 2.2 dataset (nested ones), or OK.
Status CheckBlobV2Writable(const Schema& schema, const std::string& uri);

}  // namespace lance::ops
