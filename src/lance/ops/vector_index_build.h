// Building an IVF_FLAT or IVF_SQ vector index segment in the layout pylance 14 writes
// (docs/vector-indices.md §1–§3): k-means on a sample (or given centroids),
// every live vector assigned to its nearest centroid, index.idx (the IVF
// model) and auxiliary.idx (the vectors grouped by partition).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "lance/dataset.h"
#include "lance/index_metadata.h"
#include "lance/index_ops.h"
#include "lance/io/object_store.h"
#include "lance/status.h"

namespace lance::ops {

/// The files of an IVF_FLAT or IVF_SQ (8 bits; bounds the least and
/// greatest value of all vectors) segment of `column` written into `dir`, in
/// `file_version`. `row_ids`: store the dataset's stable row ids (else row
/// addresses). Sets `*details` to the serialized VectorIndexDetails.
///
/// Memory: the training sample (num_partitions x sample_rate vectors), one
/// uint32 partition number per row of the column, and the vectors of a
/// window of partitions of at most LANCE_CPP_IVF_WRITE_MB (default 256 MiB)
/// while they are written: the column is scanned once for the sample, once
/// to assign, and once per window.
Result<std::vector<IndexFile>> BuildIvfIndex(const std::shared_ptr<const Dataset>& dataset, const std::string& type,
                                                 const std::string& column, bool row_ids,
                                                 const VectorIndexParams& params, const io::ObjectStore& store,
                                                 const std::string& dir, const std::string& file_version,
                                                 std::string* details);

}  // namespace lance::ops
