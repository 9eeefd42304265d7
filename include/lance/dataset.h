// Opening a Lance dataset at a version and reading its metadata.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <arrow/filesystem/filesystem.h>
#include <arrow/io/interfaces.h>
#include <arrow/memory_pool.h>
#include <arrow/type_fwd.h>

#include "lance/index_metadata.h"
#include "lance/manifest.h"
#include "lance/operations.h"
#include "lance/row_ops.h"
#include "lance/status.h"
#include "lance/storage_options.h"

namespace lance {

class FileReader;
// Operations started from a Dataset; defined in lance/dataset_ops.h.
class AppendBuilder;
class OverwriteBuilder;
class DeleteBuilder;
class UpdateBuilder;
class MergeInsertBuilder;
class RestoreBuilder;
class UpdateConfigBuilder;
class DataOverlayBuilder;
class CompactionBuilder;
class AddColumnsBuilder;
class DropColumnsBuilder;
class AlterColumnsBuilder;

struct OpenOptions {
  /// A version number, or a tag name; empty = the latest version. A tag
  /// opens the branch it was made on.
  std::string version;
  /// The branch to open (pylance's checkout_version((branch, version)));
  /// empty or "main" = the default branch. A branch's versions live under
  /// the dataset's tree/{branch}/.
  std::string branch;
  /// The filesystem every file of the dataset is read and written through
  /// (as LevelDB's Env): with it, the uri is a path inside it. Null = the
  /// filesystem arrow::fs picks for the uri (local paths, file://, ...).
  std::shared_ptr<arrow::fs::FileSystem> filesystem;
  /// pylance's storage_options (lance/storage_options.h): for s3:// URIs
  /// the endpoint, region, credentials, ...; AWS_* variables fill in the
  /// rest. Stores opened from this dataset (clone targets, base paths)
  /// use them too.
  StorageOptions storage_options;
};

/// Options of Dataset::ShallowClone and Dataset::DeepClone (pylance's
/// shallow_clone / deep_clone).
struct CloneOptions {
  /// The version to clone (pylance's `reference`): a version number or a
  /// tag name; empty = the version this dataset is at.
  std::string reference;
};

/// A branch, as listed by Dataset::Branches() (pylance's Branch).
struct BranchInfo {
  std::optional<std::string> parent_branch;  // null = main
  uint64_t parent_version = 0;
  uint64_t create_at = 0;  // unix seconds
  uint64_t manifest_size = 0;
  /// (version, id) per ancestor, main first (pylance's branch_identifier).
  std::vector<std::pair<uint64_t, std::string>> branch_identifier;
  std::map<std::string, std::string> metadata;
};

/// One committed version, as listed by Dataset::Versions().
struct VersionInfo {
  uint64_t version = 0;
  std::optional<int64_t> timestamp_nanos;  // UTC, since the epoch
  /// The operation of the transaction that made it ("Append", ...), or empty
  /// when the version recorded none.
  std::string operation;
};

struct TagInfo {
  uint64_t version = 0;
  std::optional<std::string> branch;
};

/// One version of a dataset, opened. Immutable once opened; thread-safe.
/// Operations started from it (NewDelete, NewAppend, ...; lance/dataset_ops.h)
/// commit against this version and use its filesystem.
class Dataset : public std::enable_shared_from_this<Dataset> {
 public:
  /// Opens `uri` (a local path or an arrow::fs URI, or a path inside
  /// `options.filesystem`) at `options.version`. Refuses a manifest whose
  /// reader feature flags this build does not support.
  static Result<std::shared_ptr<Dataset>> Open(const std::string& uri, const OpenOptions& options = {});

  /// The same dataset at `version` (a number or tag; empty = the latest
  /// now), through the same filesystem.
  Result<std::shared_ptr<Dataset>> Checkout(const std::string& version) const;
  /// The latest version now, as the reference's checkout_latest.
  Result<std::shared_ptr<Dataset>> CheckoutLatest() const { return Checkout(""); }

  /// Operations committing a new version on top of this one (its version is
  /// the transaction's read version; versions committed since are checked
  /// for conflicts at commit). Each returns a builder: set its options,
  /// then Commit(). Include lance/dataset_ops.h to use them.
  AppendBuilder NewAppend() const;
  OverwriteBuilder NewOverwrite() const;
  /// Deletes the rows where `predicate` (SQL) holds.
  DeleteBuilder NewDelete(std::string predicate) const;
  UpdateBuilder NewUpdate() const;
  /// Merge-insert joined on the key columns `on`.
  MergeInsertBuilder NewMergeInsert(std::vector<std::string> on) const;
  /// Commits the content of `version` as the new latest version.
  RestoreBuilder NewRestore(uint64_t version) const;
  /// Changes to the config and the table, schema and field metadata.
  UpdateConfigBuilder NewUpdateConfig() const;
  /// Schema evolution (lance/schema_evolution.h): new columns, dropped
  /// columns, renamed or re-typed ones.
  AddColumnsBuilder NewAddColumns() const;
  DropColumnsBuilder NewDropColumns(std::vector<std::string> columns) const;
  AlterColumnsBuilder NewAlterColumns() const;
  /// Data overlay files for some cells of some fragments (unstable: only
  /// with LANCE_ENABLE_UNSTABLE_DATA_OVERLAY_FILES set).
  DataOverlayBuilder NewDataOverlay() const;
  /// Compaction of this version (include lance/compaction.h).
  CompactionBuilder NewCompaction() const;

  /// A new dataset at `target_path` holding a version of this one (see
  /// CloneOptions), committed as that version number with a Clone
  /// transaction, as pylance's shallow_clone: no file is copied; the new
  /// manifest names this dataset's data, deletion and index files through
  /// a base path (this dataset's uri, as given when it was opened), and
  /// later writes to the clone go under `target_path`. Fails if a dataset
  /// exists at `target_path`.
  Result<std::shared_ptr<Dataset>> ShallowClone(const std::string& target_path,
                                                const CloneOptions& options = {}) const;
  /// The same with every data, blob sidecar, deletion and index file the
  /// version references copied under `target_path` first (pylance's
  /// deep_clone): the new dataset has no base paths and does not need
  /// this one.
  Result<std::shared_ptr<Dataset>> DeepClone(const std::string& target_path, const CloneOptions& options = {}) const;

  /// Creates branch `name` from `reference` (a version number of this
  /// dataset's branch or a tag; empty = this dataset's version), as
  /// pylance's create_branch: a shallow clone under tree/{name}/ committed
  /// at that version, then _refs/branches/{name}.json. Refuses an invalid
  /// name, "main", and a branch that exists. Returns the branch.
  Result<std::shared_ptr<Dataset>> CreateBranch(const std::string& name, const std::string& reference = "") const;
  /// Every branch of the dataset.
  Result<std::map<std::string, BranchInfo>> Branches() const;
  /// Removes a branch's metadata and directory, as pylance's delete_branch:
  /// refused while another branch was made from it or a tag points at it.
  Status DeleteBranch(const std::string& name) const;
  /// The branch this dataset is on; nullopt = main.
  const std::optional<std::string>& branch() const;

  /// Creates tag `name` on `version` of this dataset's branch (see
  /// lance::CreateTag); tags live at the dataset root whatever their branch.
  Status CreateTag(const std::string& name, uint64_t version) const;
  /// Removes tag `name` (see lance::DeleteTag).
  Status DeleteTag(const std::string& name) const;
  /// Removes old versions and the files only they use (see
  /// lance::CleanupOldVersions); the latest version at the time of the call
  /// is always kept.
  Result<CleanupResult> CleanupOldVersions(int64_t older_than_seconds, bool delete_unverified = false,
                                           const CleanupOptions& options = {}) const;

  const std::string& uri() const;
  uint64_t version() const;
  /// The newest version at the time of opening.
  uint64_t latest_version() const;
  /// "v1" or "v2".
  const char* manifest_naming() const;
  const Manifest& manifest() const;
  const std::vector<IndexMetadata>& indices() const;
  /// The data storage version: "0.1", "2.0", "2.1" or "2.2" (inferred from
  /// the data files when the manifest does not say).
  Result<std::string> DataStorageVersion() const;
  Result<std::shared_ptr<arrow::Schema>> ArrowSchema() const;

  /// Rows of a fragment including deleted ones: from the manifest, else
  /// from its first data file's footer (datasets written before 0.8).
  Result<uint64_t> PhysicalRows(const Fragment& fragment) const;
  /// Deleted row offsets of a fragment, ascending (empty if it has none).
  Result<std::vector<uint32_t>> DeletedRows(const Fragment& fragment) const;
  /// Number of deleted rows: the recorded count, else read from the file.
  Result<uint64_t> NumDeletedRows(const Fragment& fragment) const;
  /// Stable row ids of a fragment in physical order; empty if the dataset
  /// does not use stable row ids.
  Result<std::vector<uint64_t>> RowIds(const Fragment& fragment) const;

  /// Per-row dataset versions in physical order (row lineage): when each row
  /// was created, and last updated. nullopt if the fragment records none.
  Result<std::optional<std::vector<uint64_t>>> RowCreatedAtVersions(const Fragment& fragment) const;
  Result<std::optional<std::vector<uint64_t>>> RowLastUpdatedAtVersions(const Fragment& fragment) const;

  /// The location of a data file (for error messages) and a handle to read it.
  Result<std::string> DataFileLocation(const DataFile& file) const;
  Result<std::shared_ptr<arrow::io::RandomAccessFile>> OpenDataFile(const DataFile& file) const;
  /// A v2 data file (2.0+) opened as a FileReader. Its footer and column
  /// metadata are read once per opened dataset and the reader is shared by
  /// later calls (data files never change), as pylance's file-metadata cache
  /// does, so repeated takes do not re-read them. Thread-safe.
  Result<std::shared_ptr<FileReader>> OpenDataFileReader(const DataFile& file,
                                                         arrow::MemoryPool* pool = arrow::default_memory_pool()) const;

  /// Every committed version, ascending. Reads each version's manifest: an
  /// unreadable one fails the whole list (as pylance's versions()).
  Result<std::vector<VersionInfo>> Versions() const;
  /// The version numbers listed when the dataset was opened, ascending,
  /// without reading their manifests.
  std::vector<uint64_t> VersionNumbers() const;
  Result<std::map<std::string, TagInfo>> Tags() const;

  ~Dataset();

 private:
  friend struct DatasetAccess;  // src/lance/dataset_internal.h
  struct Impl;
  explicit Dataset(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace lance
