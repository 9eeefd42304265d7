// The manifest a transaction produces from the version it is applied on.
#pragma once

#include <cstdint>

#include "lance/status.h"
#include "lance/table/manifest_file.h"
#include "lance/txn/commit.h"
#include "lance/txn/transaction_builder.h"

namespace lance::txn {

/// What the new version is built from.
struct BuildInputs {
  /// The latest version (null when creating a dataset).
  const table::ManifestFile* base = nullptr;
  /// For Restore: the version being restored.
  const table::ManifestFile* restore_source = nullptr;
  /// For Clone: the source version (its manifest and indices).
  const table::ManifestFile* clone_source = nullptr;
  int64_t timestamp_nanos = 0;
};

/// The manifest (and index list) of version base + 1 (or 1): fragments and
/// schema per the operation, new fragment ids from max_fragment_id + 1
/// (from 0 for a new dataset), stable row ids and lineage for new fragments,
/// config and table metadata carried over, feature flags recomputed, the
/// transaction file named. The section offsets are filled in when the file
/// is serialized.
Result<table::ManifestFile> BuildManifest(const Transaction& txn, const BuildInputs& inputs,
                                          const CommitOptions& options);

}  // namespace lance::txn
