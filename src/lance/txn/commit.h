// The commit: turning a transaction into the next version of a dataset.
// Data and deletion files are written before; the commit writes the
// transaction file and then the manifest for version latest + 1 with an
// atomic create-if-absent, so two writers never both create a version.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lance/io/object_store.h"
#include "lance/manifest.h"
#include "lance/status.h"
#include "lance/table/manifest_file.h"
#include "lance/table/manifest_location.h"
#include "lance/txn/conflict_resolver.h"
#include "lance/txn/transaction_builder.h"

namespace lance::txn {

struct BaseVersion;

struct CommitOptions {
  /// Naming of a dataset's first manifest; existing datasets keep theirs.
  /// pylance 14 names new datasets the V2 way.
  table::ManifestNamingScheme new_dataset_naming = table::ManifestNamingScheme::kV2;
  /// Stable row ids for a dataset being created; existing datasets keep
  /// what they have.
  bool enable_stable_row_ids = false;
  /// Data storage version recorded for a new dataset (or an overwrite that
  /// changes it); empty = keep the dataset's, "2.2" for a new one.
  std::string data_storage_version;
  /// Attempts at creating the next version when other writers keep taking
  /// it first (the reference's CommitConfig num_retries, default 20); at
  /// least one. Between attempts a random slot of 4, 8, 16, ... slots is
  /// waited, a slot being 1.1 times the first attempt's duration.
  int num_retries = 20;
  /// The transaction only inline in the manifest, no _transactions/ file:
  /// the manifest names none and sets writer flag 32, as the reference's
  /// disable_transaction_file does.
  bool disable_transaction_file = false;
  /// The rows the operation touched (delete, update, merge-insert), for a
  /// row-level rebase over concurrent deletes; null = unknown.
  std::shared_ptr<const AffectedRows> affected_rows;
  /// The latest version as the caller loaded it (LoadLatestForWrite) for
  /// the transaction's read version, so the first attempt neither lists nor
  /// reads _versions/ again. Not owned; null = load it.
  const BaseVersion* latest = nullptr;
  /// For a Clone: the source version the new dataset is made from. Not
  /// owned; required with a Clone, ignored otherwise.
  const table::ManifestFile* clone_source = nullptr;
};

/// The newest version of a dataset, loaded for writing.
struct BaseVersion {
  table::ManifestLocation location;
  table::ManifestFile file;
};

/// The latest version of the dataset in `store`, or nothing if there is no
/// dataset there yet. Refuses ("upgrade") a dataset whose reader or writer
/// feature flags hold a bit this build does not support, so callers check
/// before they write any file.
Result<std::optional<BaseVersion>> LoadLatestForWrite(const io::ObjectStore& store);

/// A manifest file at `location`, with the reader- and writer-flag checks.
Result<BaseVersion> LoadVersion(const io::ObjectStore& store, const table::ManifestLocation& location);

struct CommitResult {
  uint64_t version = 0;
  std::string manifest_path;  // relative to the dataset root
  Manifest manifest;
  /// The rest of the committed manifest file and where it is, so that a
  /// handle on the new version needs no read of it (DatasetAccess::
  /// FromCommit).
  std::vector<IndexMetadata> indices;
  std::optional<std::string> transaction_bytes;
  table::ManifestNamingScheme naming = table::ManifestNamingScheme::kV2;
  /// Older versions may have been removed after the commit (an automatic
  /// cleanup ran): a handle lists the versions again.
  bool versions_removed = false;
};

/// Commits `txn` on top of the latest version of `store`. Versions
/// committed since `txn.read_version` are checked against it with the
/// reference's conflict rules (conflict_resolver.h): a compatible one is
/// built upon; where both changed deletion files of the same fragments, the
/// deletion vectors are merged row by row; otherwise the result is a
/// retryable or incompatible conflict (GetErrorKind). If another writer
/// creates the same version first, the check and rebuild are repeated on
/// the new latest, up to `num_retries` attempts. Deletion files of `txn`
/// that a rebase replaced are removed once it is committed. A transaction
/// with read version 0 creates the dataset and fails if one exists; so
/// does a Clone, whatever its read version.
Result<CommitResult> Commit(const io::ObjectStore& store, Transaction txn,
                            const CommitOptions& options = {});

/// The same on the dataset at `uri` (a local path or an arrow::fs URI).
Result<CommitResult> Commit(const std::string& uri, Transaction txn, const CommitOptions& options = {});

/// Whether `status` is a commit conflict of any kind (nothing was committed).
bool IsCommitConflict(const Status& status);
/// Whether the operation should be re-run on the new latest version.
bool IsRetryableConflict(const Status& status);
/// An incompatible commit conflict.
Status CommitConflict(const std::string& message);

}  // namespace lance::txn
