// The `.blob` files beside one data file, as pylance writes them for blob v2
// columns: values over the inline threshold go to a shared pack file
// (packed) or, over the dedicated threshold, to a file of their own; each
// file is named by a blob id counted from 1 per data file.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <arrow/io/interfaces.h>
#include <arrow/record_batch.h>

#include "lance/file/blob_v2.h"
#include "lance/io/object_store.h"
#include "lance/ops/blob_v2_external.h"
#include "lance/schema.h"
#include "lance/status.h"

namespace lance::ops {

/// `data/<stem>/<id>.blob`: the id's 32 bits, least significant first.
std::string BlobV2SidecarPath(const std::string& data_dir, const std::string& stem, uint32_t blob_id);

class BlobV2Sidecars {
 public:
  /// `dir` is the sidecar directory relative to the store (data/<stem>).
  /// `external` says how URIs are stored.
  BlobV2Sidecars(const io::ObjectStore& store, std::string dir, const Schema& schema,
                 BlobV2ExternalPolicy external = {})
      : store_(store), dir_(std::move(dir)), schema_(schema), external_(std::move(external)) {}

  /// Writes the large values of `batch`'s blob v2 columns (given as
  /// struct<data, uri[, position, size]>) to `.blob` files and resolves
  /// their URIs; returns the batch with those rows described by
  /// kind/blob_id/blob_size/position/blob_uri children.
  Result<std::shared_ptr<arrow::RecordBatch>> Spill(const std::shared_ptr<arrow::RecordBatch>& batch);
  /// Closes the open pack file.
  Status Finish();
  /// Every file written so far (relative to the store).
  const std::vector<std::string>& created() const { return created_; }

 private:
  Result<std::shared_ptr<arrow::Array>> SpillColumn(const std::shared_ptr<arrow::Array>& column, const Field& field);
  Result<std::string> NewFile(uint32_t blob_id);

  const io::ObjectStore& store_;
  std::string dir_;
  const Schema& schema_;
  BlobV2ExternalPolicy external_;
  uint32_t next_blob_id_ = 1;
  // The open pack file.
  std::shared_ptr<arrow::io::OutputStream> pack_;
  uint32_t pack_id_ = 0;
  uint64_t pack_size_ = 0;
  std::vector<std::string> created_;
};

}  // namespace lance::ops
