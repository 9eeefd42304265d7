// DataOverlay: data overlay files appended to fragments (feature bit 64).
#include <algorithm>

#include "lance/dataset_internal.h"
#include "lance/dataset_ops.h"
#include "lance/ops/dataset_ops_internal.h"
#include "lance/table/deletion_vector.h"
#include "lance/table/feature_flags.h"
#include "lance/txn/commit.h"

namespace lance {

DataOverlayBuilder& DataOverlayBuilder::AddDense(uint64_t fragment_id, DataFile file, std::vector<uint32_t> offsets) {
  return Add(fragment_id, std::move(file), {std::move(offsets)}, /*dense=*/true);
}

DataOverlayBuilder& DataOverlayBuilder::AddSparse(uint64_t fragment_id, DataFile file,
                                                  std::vector<std::vector<uint32_t>> offsets) {
  return Add(fragment_id, std::move(file), std::move(offsets), /*dense=*/false);
}

DataOverlayBuilder& DataOverlayBuilder::Add(uint64_t fragment_id, DataFile file,
                                            std::vector<std::vector<uint32_t>> offsets, bool dense) {
  if (!error_.ok()) return *this;
  const std::string what = "data overlay file " + file.path + " of fragment " + std::to_string(fragment_id);
  if (!dense && offsets.size() != file.fields.size()) {
    error_ = Status::Invalid(what, ": ", offsets.size(), " offset sets for ", file.fields.size(), " fields");
    return *this;
  }
  DataOverlayFile overlay;
  std::vector<std::string> bitmaps;
  for (auto& set : offsets) {
    std::sort(set.begin(), set.end());
    // A repeat would shift every later value onto the wrong row (pylance
    // refuses it too).
    auto dup = std::adjacent_find(set.begin(), set.end());
    if (dup != set.end()) {
      error_ = Status::Invalid(what, ": offset ", *dup, " is given twice");
      return *this;
    }
    bitmaps.push_back(table::DeletionVector::FromOffsets(set).ToRoaringPortable());
  }
  if (dense) {
    overlay.shared_offsets = std::move(bitmaps[0]);
  } else {
    overlay.field_offsets = std::move(bitmaps);
  }
  overlay.data_file = std::move(file);
  if (groups_.empty() || groups_.back().first != fragment_id) groups_.emplace_back(fragment_id, std::vector<DataOverlayFile>{});
  groups_.back().second.push_back(std::move(overlay));
  return *this;
}

Result<std::shared_ptr<Dataset>> DataOverlayBuilder::Commit() {
  if (!table::DataOverlayFilesEnabled()) {
    return Status::NotImplemented("cannot write data overlay files to dataset ", dataset_->uri(),
                                  ": they are unstable (feature bit 64); set ", table::kEnableDataOverlayFilesEnv,
                                  " to opt in");
  }
  LANCE_RETURN_NOT_OK(error_);
  if (groups_.empty()) return Status::Invalid("DataOverlay on ", dataset_->uri(), ": no overlay files given");
  const io::ObjectStore& store = *DatasetAccess::Store(*dataset_);
  LANCE_RETURN_NOT_OK(ops::CheckWritable(*dataset_));
  txn::DataOverlay op;
  for (const auto& [id, overlays] : groups_) op.groups.push_back(txn::DataOverlayGroup{id, overlays});
  const txn::BaseVersion base = ops::BaseVersionOf(*dataset_);
  txn::CommitOptions options;
  options.latest = &base;
  options.num_retries = static_cast<int>(retry_.num_retries);
  options.disable_transaction_file = disable_transaction_file_;
  auto t = txn::Transaction::Make(dataset_->version(), std::move(op));
  LANCE_ASSIGN_OR_RAISE(auto result, ops::CommitTransaction(store, std::move(t), options));
  return ops::AtVersion(*dataset_, result.version, std::move(result));
}

DataOverlayBuilder Dataset::NewDataOverlay() const { return DataOverlayBuilder(shared_from_this()); }

}  // namespace lance
