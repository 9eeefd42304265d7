// Operations that rewrite rows of a table (update, merge-insert) and the
// clean-up of old versions. Each modifying call is one commit on top of the
// latest version; nothing is committed when it fails.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <arrow/record_batch.h>

#include "lance/progress.h"
#include "lance/retry.h"
#include "lance/status.h"

namespace lance {

struct UpdateResult {
  uint64_t num_rows_updated = 0;
  /// The new version (also committed when no row matched, as pylance does).
  uint64_t version = 0;
};

struct UpdateOptions {
  /// Reports in rows, total known: "scanning" (the position in the
  /// version's physical rows) while the predicate's columns are read to
  /// find few matching rows, then "updating" as rows are rewritten (the
  /// matched rows when few, else again the position in the version's
  /// physical rows); empty = no reports.
  ProgressCallback progress;
  /// Re-runs after conflicting commits (conflict_retries, retry_timeout)
  /// and commit attempts (num_retries).
  RetryParams retry;
  /// Record the transaction only inline in the manifest, with no
  /// _transactions/ file (writer flag 32; the reference's
  /// disable_transaction_file).
  bool disable_transaction_file = false;
  /// Write the new values as data overlay files (feature bit 64) instead
  /// of rewriting the rows: per fragment one file of the assigned columns,
  /// dense over its matching rows, committed as a DataOverlay (rows keep
  /// their addresses). Unstable: only with
  /// LANCE_ENABLE_UNSTABLE_DATA_OVERLAY_FILES set.
  bool overlay = false;
};

/// UPDATE ... SET col = value, ... WHERE predicate, as pylance's update:
/// matching rows are rewritten into new fragments and deleted where they
/// were. Values and predicate use the SQL of the CLI contract; an empty
/// predicate matches every row. Updated rows keep their stable row ids.
/// Concurrent deletes of other rows are merged row by row; a conflicting
/// commit makes it run again, per `options.retry`.
/// Dataset::Open(uri) and NewUpdate() (lance/dataset_ops.h).
Result<UpdateResult> UpdateRows(const std::string& uri,
                                const std::vector<std::pair<std::string, std::string>>& set,
                                const std::string& predicate = "", const UpdateOptions& options = {});

struct MergeInsertParams {
  /// Key columns the source is joined with the table on.
  std::vector<std::string> on;
  bool when_matched_update_all = false;
  bool when_not_matched_insert_all = false;
  bool when_not_matched_by_source_delete = false;
  /// With the above: only target rows where this holds are deleted.
  std::string when_not_matched_by_source_predicate;
  /// Reports stage "matching" in rows (the target's live rows, total
  /// known) as the keys are joined, then "writing" (the rows updated and
  /// inserted, total known); empty = no reports.
  ProgressCallback progress;
  /// Re-runs after conflicting commits (conflict_retries, retry_timeout)
  /// and commit attempts (num_retries).
  RetryParams retry;
  /// Record the transaction only inline in the manifest, with no
  /// _transactions/ file (writer flag 32; the reference's
  /// disable_transaction_file).
  bool disable_transaction_file = false;
};

struct MergeInsertResult {
  uint64_t num_inserted_rows = 0;
  uint64_t num_updated_rows = 0;
  uint64_t num_deleted_rows = 0;
  uint64_t version = 0;
};

/// pylance's merge_insert(on).when_...().execute(source). The source has
/// the key columns and every other column of the dataset or some of them
/// (matched by name, cast to the dataset's types; none the dataset lacks)
/// and is held in memory. Updated rows keep the target's values of the
/// columns a partial source lacks; inserted rows get nulls there (a
/// non-nullable one is an error). Two source rows matching the same target
/// row are an error ("Ambiguous merge inserts are prohibited"); null keys
/// never match. A conflicting concurrent commit makes it run again (per
/// params.retry), as the reference does; so does UpdateRows.
/// Dataset::Open(uri) and NewMergeInsert(params.on) (lance/dataset_ops.h).
Result<MergeInsertResult> MergeInsert(const std::string& uri,
                                      const std::shared_ptr<arrow::RecordBatchReader>& source,
                                      const MergeInsertParams& params);

struct CleanupResult {
  uint64_t old_versions = 0;   // manifests removed
  uint64_t bytes_removed = 0;
  uint64_t data_files = 0;
  uint64_t deletion_files = 0;
  uint64_t transaction_files = 0;
  uint64_t index_files = 0;
};

struct CleanupOptions {
  /// Reports stage "reading versions" in versions (every manifest, total
  /// known), then "removing" in files (manifests and files removed, total
  /// known); empty = no reports.
  ProgressCallback progress;
  /// pylance's error_if_tagged_old_versions (default true): refuse, removing
  /// nothing, when a tagged version is old enough to go; false keeps the
  /// tagged versions and removes the rest.
  bool error_if_tagged_old_versions = true;
};

/// Removes versions whose manifest is older than `older_than_seconds`
/// (except the latest and tagged ones) and every file that only removed
/// versions reference. Files no manifest references are removed only when
/// older than 7 days, or `delete_unverified`, as the reference does.
/// Also Dataset::CleanupOldVersions, through the dataset's filesystem.
Result<CleanupResult> CleanupOldVersions(const std::string& uri, int64_t older_than_seconds,
                                         bool delete_unverified = false, const CleanupOptions& options = {});

}  // namespace lance
