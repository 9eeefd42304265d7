// Table operations besides writing rows: delete, restore, tags. Each
// modifying call is one commit (a transaction plus the next version's
// manifest), refused before anything is written when the dataset's writer
// feature flags hold a bit this build does not know.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "lance/progress.h"
#include "lance/retry.h"
#include "lance/status.h"

namespace lance {

/// Changes to one string map of a dataset (its config, table metadata,
/// schema metadata or one field's metadata): the reference's UpdateMap.
struct UpdateMap {
  /// key -> new value; nullopt removes the key (ignored when replacing).
  std::vector<std::pair<std::string, std::optional<std::string>>> entries;
  /// True: the map becomes exactly the entries that have a value.
  bool replace = false;
};

struct DeleteResult {
  /// The new version (a delete that matches nothing commits one too, as
  /// pylance 14 does).
  uint64_t version = 0;
  uint64_t num_deleted_rows = 0;
  bool committed = false;
};

struct DeleteOptions {
  /// Reports stage "scanning" in rows (every physical row of the version,
  /// total known) as the predicate is evaluated; empty = no reports.
  ProgressCallback progress;
  /// Re-runs after conflicting commits (conflict_retries, retry_timeout)
  /// and commit attempts (num_retries).
  RetryParams retry;
  /// Record the transaction only inline in the manifest, with no
  /// _transactions/ file (writer flag 32; the reference's
  /// disable_transaction_file).
  bool disable_transaction_file = false;
};

/// Deletes the rows of the latest version where `predicate` (SQL, see the
/// CLI contract) is true. Deleted offsets are merged into each fragment's
/// deletion file; a fragment left without live rows is removed. Deletes
/// committed concurrently by other writers are merged row by row; a
/// conflicting commit makes it run again, per `options.retry`.
/// Dataset::Open(uri) and NewDelete(predicate) (lance/dataset_ops.h).
Result<DeleteResult> DeleteRows(const std::string& uri, const std::string& predicate,
                                const DeleteOptions& options = {});

/// Commits the content of `version` as the new latest version; returns it.
/// Dataset::Open(uri) and NewRestore(version).
Result<uint64_t> RestoreVersion(const std::string& uri, uint64_t version);

/// Creates tag `name` (alphanumerics, '.', '-', '_'; no leading or trailing
/// dot, no ".lock" suffix) on `version`, which must exist.
/// `_refs/tags/{name}.json` is created only if absent.
Status CreateTag(const std::string& uri, const std::string& name, uint64_t version);
/// Removes tag `name`, which must exist. The version it names stays.
/// (Also Dataset::CreateTag / DeleteTag, through the dataset's filesystem.)
Status DeleteTag(const std::string& uri, const std::string& name);

}  // namespace lance
