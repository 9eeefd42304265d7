// Compaction: rewriting small fragments, and fragments with many deleted
// rows, into fewer fragments of live rows only, as the reference's
// `optimize.compact_files` (rust/lance/src/dataset/optimize.rs). The same
// plan as pylance 14's for the same dataset; rows keep their order; stable
// row ids and row lineage are carried over. Also in the distributed form:
// plan, execute each task anywhere, commit their results together.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lance/dataset.h"
#include "lance/fragment.h"
#include "lance/progress.h"
#include "lance/retry.h"
#include "lance/status.h"

namespace lance {

/// How data is rewritten (pylance 14's compaction_mode).
enum class CompactionMode {
  kReencode,         // decode and encode again (the default)
  kTryBinaryCopy,    // copy the pages of the tasks pylance 14 would copy, re-encode the rest
  kForceBinaryCopy,  // copy pages, or fail (NotImplemented) on a task that cannot be copied
};

/// The reference's CompactionOptions, names and defaults.
struct CompactionOptions {
  /// Fragments with fewer physical rows are candidates to merge with their
  /// neighbours; also the most rows a new fragment gets. Default 1,048,576.
  uint64_t target_rows_per_fragment = 1024 * 1024;
  /// Rows per row group of the files written. Default 1024.
  uint64_t max_rows_per_group = 1024;
  /// Bytes per file written at most; unset = WriteParams' (90 GiB).
  std::optional<uint64_t> max_bytes_per_file;
  /// Whether fragments with many deleted rows are rewritten on their own.
  bool materialize_deletions = true;
  /// The deleted fraction above which a fragment is rewritten (0.1); at or
  /// above 1.0 deletions are never materialized.
  float materialize_deletions_threshold = 0.1f;
  /// CompactFiles: tasks rewritten at once (memory grows with it); unset =
  /// the machine's cores. Not used by ExecuteCompactionTask.
  std::optional<uint32_t> num_threads;
  /// Rows per batch read from the old fragments (memory follows it);
  /// unset = the scanner's default (8192).
  std::optional<uint64_t> batch_size;
  /// Record the row moves in the `__lance_frag_reuse` index (one more
  /// version of it) instead of remapping indices, which keep their old row
  /// addresses and are read through it. Refused over stable row ids, as
  /// pylance 14 refuses it.
  bool defer_index_remap = false;
  CompactionMode compaction_mode = CompactionMode::kReencode;
  /// Per-run budgets: the plan keeps its tasks, in order, until the next
  /// would take the total of source fragments / live rows / data-file bytes
  /// over the limit. Unset = no limit; 0 is refused.
  std::optional<uint64_t> max_source_fragments;
  std::optional<uint64_t> max_source_rows;
  std::optional<uint64_t> max_source_bytes;
  /// A fragment carrying more data overlay files than this is rewritten on
  /// its own, its overlays (and deletions) materialized into the new files;
  /// 0 rewrites every overlaid fragment, a set nullopt disables the trigger.
  /// Unset = the table config key lance.compaction.max_overlays_per_fragment
  /// (an integer or "none"), else 10, as pylance 14. (Overlaid fragments
  /// rewritten for another reason are materialized too: every rewrite reads
  /// through the overlays.)
  std::optional<std::optional<uint64_t>> max_overlays_per_fragment;
  /// Fragments left alone; they end a run of candidates like a fragment
  /// that is no candidate. Unknown ids are ignored.
  std::vector<uint64_t> excluded_fragment_ids;
  /// The data file version of the new files (2.0, 2.1, 2.2 or stable):
  /// unset = the dataset's (legacy datasets: legacy files). Another v2
  /// version than the dataset's sets the mixed data-file-versions feature
  /// bit (256) for good, as pylance 14; the dataset's own version does not
  /// change. Legacy and v2 files are never mixed (refused).
  std::optional<std::string> data_storage_version;
  /// Stage "compacting", in rows written; empty = no reports.
  ProgressCallback progress;
  /// CompactFiles: re-runs after a retryable conflict (conflict_retries,
  /// retry_timeout) and commit attempts (num_retries).
  RetryParams retry;
  /// Record both commits' transactions only inline in the manifest, with
  /// no _transactions/ file (writer flag 32).
  bool disable_transaction_file = false;
};

/// pylance's CompactionMetrics.
struct CompactionMetrics {
  uint64_t fragments_removed = 0;
  uint64_t fragments_added = 0;
  /// Data and deletion files of the old fragments.
  uint64_t files_removed = 0;
  /// Data files of the new fragments.
  uint64_t files_added = 0;
};

/// One group of adjacent fragments to rewrite together.
struct CompactionTask {
  /// The version the plan read.
  uint64_t read_version = 0;
  std::vector<uint64_t> fragment_ids;
};

struct CompactionPlan {
  uint64_t read_version = 0;
  std::vector<CompactionTask> tasks;
};

/// What executing a task wrote, to be committed with CommitCompaction.
struct RewriteResult {
  uint64_t read_version = 0;
  /// The fragments replaced, as they were at read_version.
  std::vector<Fragment> original_fragments;
  /// The new fragments, without ids (the commit reserves them); with stable
  /// row ids, carrying the row ids and lineage of their rows.
  std::vector<Fragment> new_fragments;
  CompactionMetrics metrics;
  /// The new files are copies of the old ones' pages (compaction_mode
  /// try/force_binary_copy): pylance 14 then records their sizes in the
  /// manifest but not in the transaction, and so does the commit.
  bool binary_copy = false;
};

struct CompactionResult {
  CompactionMetrics metrics;
  /// The version committed, or the latest version when nothing was to do.
  uint64_t version = 0;
  bool committed = false;
};

/// Compaction started from an opened dataset (Dataset::NewCompaction), as
/// the builders of lance/dataset_ops.h: it plans on the handle's version,
/// reads and writes every file through the handle's filesystem, and on a
/// retryable conflict runs again on the latest version through it.
///
///   auto compaction = ds->NewCompaction();
///   LANCE_ASSIGN_OR_RAISE(auto v2, compaction.Options(options).Commit());
///   compaction.result().metrics.fragments_removed;
class CompactionBuilder {
 public:
  explicit CompactionBuilder(std::shared_ptr<const Dataset> dataset) : dataset_(std::move(dataset)) {}
  CompactionBuilder& Options(CompactionOptions options) {
    options_ = std::move(options);
    return *this;
  }
  /// The plan for the handle's version (see PlanCompaction).
  Result<CompactionPlan> Plan() const;
  /// Plan, execute and commit, as pylance's `compact_files`; returns the
  /// dataset at the version committed, or the dataset the run read when
  /// the plan was empty (result().committed is false).
  Result<std::shared_ptr<Dataset>> Commit();
  /// The metrics and version of the last successful Commit.
  const CompactionResult& result() const { return result_; }

 private:
  std::shared_ptr<const Dataset> dataset_;
  CompactionOptions options_;
  CompactionResult result_;
};

/// The tasks pylance 14's `Compaction.plan` makes for `dataset`'s version.
/// Refuses (NotImplemented) what lance-cpp cannot
/// compact correctly: a fragment reuse index, legacy or nested blob columns
/// (top-level blob v2 columns are rewritten, their bytes written anew beside
/// the new files, as pylance 14 does), and the option values listed above
/// (data overlay files are read through: a rewritten fragment's overlays
/// become base data). Executing a task is also
/// refused when an index covers one of its fragments: pylance 14 rewrites
/// such indices (stable row ids or not), which lance-cpp cannot do yet.
Result<CompactionPlan> PlanCompaction(const Dataset& dataset, const CompactionOptions& options = {});

/// Rewrites the live rows of the task's fragments, in order, into new
/// fragments (streamed: memory follows the batch size, not the fragments),
/// reading the task's read_version of `dataset` (the handle itself when it
/// is at that version) and writing through its filesystem.
/// Commits nothing. Refused when an index covers one of the fragments.
Result<RewriteResult> ExecuteCompactionTask(const Dataset& dataset, const CompactionTask& task,
                                            const CompactionOptions& options = {});

/// Commits the results of tasks of one plan into `dataset`'s store: reserves
/// ids for their new fragments (a ReserveFragments version), then one
/// Rewrite with a group per result (read version: the results'), as
/// pylance 14's `Compaction.commit`. A concurrent change to one of the old
/// fragments is a retryable conflict (lance/status.h).
Result<CompactionResult> CommitCompaction(const Dataset& dataset, const std::vector<RewriteResult>& results,
                                          const CompactionOptions& options = {});

/// The same on the latest version of the dataset at `uri`: open, then the
/// functions above (CompactFiles: the builder).
Result<CompactionPlan> PlanCompaction(const std::string& uri, const CompactionOptions& options = {});
Result<RewriteResult> ExecuteCompactionTask(const std::string& uri, const CompactionTask& task,
                                            const CompactionOptions& options = {});
Result<CompactionResult> CommitCompaction(const std::string& uri, const std::vector<RewriteResult>& results,
                                          const CompactionOptions& options = {});
Result<CompactionResult> CompactFiles(const std::string& uri, const CompactionOptions& options = {});

/// The JSON forms of the distributed pieces. A task's JSON carries the
/// options that decide how it rewrites (limits, batch size, version).
std::string CompactionPlanToJson(const CompactionPlan& plan);
std::string CompactionTaskToJson(const CompactionTask& task, const CompactionOptions& options);
/// REQUIRES: `options` may be null; if given it receives the task's options.
Result<CompactionTask> CompactionTaskFromJson(const std::string& json, CompactionOptions* options);
std::string RewriteResultToJson(const RewriteResult& result);
Result<RewriteResult> RewriteResultFromJson(const std::string& json);

}  // namespace lance
