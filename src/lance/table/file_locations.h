// Where the files a manifest names live, through their base ids. The rule,
// as the reference keeps it (Dataset::data_file_dir, dataset_dir_for_deletion,
// indice_files_dir): a file with no base id is under the dataset root, in
// data/, _deletions/ or _indices/ by its kind. A file with a base id is under
// the manifest's base path of that id: in the same subdirectory when the base
// is a dataset root, else directly in the base's directory (which deletion
// files may not use). Every reader and writer goes through this file.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "lance/fragment.h"
#include "lance/index_metadata.h"
#include "lance/io/object_store.h"
#include "lance/manifest.h"
#include "lance/status.h"

namespace lance::table {

/// The kinds of file a manifest refers to through a base id. Blob v2
/// sidecar files sit beside their data file, so they are kData.
enum class FileKind { kData, kDeletion, kIndex };

/// A directory of files of one kind.
struct FileDirectory {
  /// The registered base path it is under; null for the dataset root.
  const BasePath* base = nullptr;
  /// The directory inside the root or base: "data", "_deletions",
  /// "_indices", or "" for the base's own directory.
  std::string dir;
};

/// The directory of `kind` files with `base_id` in `manifest`. `what` names
/// the file in errors ("deletion file of fragment 3"). The result points into
/// `manifest`.
Result<FileDirectory> DirectoryOf(const Manifest& manifest, FileKind kind, std::optional<uint32_t> base_id,
                                  const std::string& what);

/// `dir` + "/" + `name`, or `name` alone when `dir` is empty.
std::string JoinPath(const std::string& dir, const std::string& name);

/// A file: the store of the root or base path holding it, and its path
/// relative to that store.
struct FileLocation {
  std::shared_ptr<const io::ObjectStore> store;
  std::string path;
  /// The full location, for messages and as a cache key.
  std::string FullPath() const { return store->FullPath(path); }
};

/// Locates the files of one manifest, opening the store of each base path
/// once. Base paths are opened as given (a relative one against the working
/// directory, as pylance does). Thread-safe.
/// REQUIRES: `manifest` outlives the locator.
class FileLocator {
 public:
  FileLocator(std::shared_ptr<const io::ObjectStore> root, const Manifest& manifest)
      : root_(std::move(root)), manifest_(manifest) {}

  /// The file `name` of `kind` with `base_id`.
  Result<FileLocation> Locate(FileKind kind, std::optional<uint32_t> base_id, const std::string& name,
                              const std::string& what) const;
  /// A fragment's data file (DataFile::path may hold subdirectories).
  Result<FileLocation> Data(const DataFile& file) const;
  /// A fragment's deletion file.
  Result<FileLocation> Deletion(uint64_t fragment_id, const DeletionFile& file) const;
  /// A file of an index (`name` relative to its directory, as
  /// IndexMetadata::files lists them), or with an empty `name` the index's
  /// directory itself: `_indices/{uuid}` under the root or its base.
  Result<FileLocation> Index(const IndexMetadata& index, const std::string& name) const;
  /// The directory of a data file's blob v2 sidecars (`{stem}` beside it).
  Result<FileLocation> BlobSidecarDir(const DataFile& file) const;
  /// The store rooted at the registered base path `id` itself (for paths
  /// stored relative to a base, such as external blob URIs).
  Result<std::shared_ptr<const io::ObjectStore>> BaseStore(uint32_t id, const std::string& what) const;

  const std::shared_ptr<const io::ObjectStore>& root() const { return root_; }

 private:
  Result<std::shared_ptr<const io::ObjectStore>> StoreOf(const BasePath& base) const;

  std::shared_ptr<const io::ObjectStore> root_;
  const Manifest& manifest_;
  mutable std::mutex mutex_;
  mutable std::map<uint32_t, std::shared_ptr<const io::ObjectStore>> bases_;
};

}  // namespace lance::table
