// Files of a dataset, over Arrow's filesystem layer. Paths given to the
// methods are relative to the dataset root, with '/' separators.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <arrow/filesystem/filesystem.h>

#include "lance/status.h"
#include "lance/storage_options.h"

namespace lance::io {

struct S3Config;

struct ObjectInfo {
  std::string name;   // base name
  int64_t size = -1;
  int64_t mtime_nanos = 0;
};

/// Thread-safety: all methods may be called concurrently.
class ObjectStore {
 public:
  /// A local path or any URI arrow::fs understands (file://, memory://),
  /// or s3://bucket/path configured by `options` and AWS_* variables
  /// (lance/storage_options.h; options are checked for every scheme).
  static Result<std::shared_ptr<ObjectStore>> Open(const std::string& uri, const StorageOptions& options = {});
  /// With `fs` (may be null: then as above), `uri` is a path inside `fs`
  /// and every file access goes through it.
  static Result<std::shared_ptr<ObjectStore>> Open(const std::string& uri,
                                                  std::shared_ptr<arrow::fs::FileSystem> fs,
                                                  const StorageOptions& options = {});
  ObjectStore(std::shared_ptr<arrow::fs::FileSystem> fs, std::string root, std::string uri)
      : fs_(std::move(fs)), root_(std::move(root)), uri_(std::move(uri)) {}

  const std::string& uri() const { return uri_; }
  /// The options this store was opened with, for stores opened from it by
  /// URI (a clone's target, a shallow clone's base).
  const StorageOptions& storage_options() const { return options_; }
  /// The store rooted at `relative` below this one, through the same
  /// filesystem (a branch's directory, say).
  std::shared_ptr<ObjectStore> Child(const std::string& relative) const {
    return WithRoot(FullPath(relative), uri_ + (uri_.ends_with("/") ? "" : "/") + relative);
  }
  /// The store at filesystem path `root` (URI `uri`) of the same
  /// filesystem, with this one's settings.
  std::shared_ptr<ObjectStore> WithRoot(std::string root, std::string uri) const {
    auto out = std::make_shared<ObjectStore>(*this);
    out->root_ = std::move(root);
    out->uri_ = std::move(uri);
    return out;
  }
  /// The full filesystem path of `relative`.
  std::string FullPath(const std::string& relative) const;

  Result<std::string> ReadAll(const std::string& relative) const;
  /// Bytes [offset, offset + length) of a file; errors if the file is shorter.
  Result<std::string> ReadRange(const std::string& relative, int64_t offset, int64_t length) const;
  Result<int64_t> Size(const std::string& relative) const;
  /// A random-access handle on a file, for readers that fetch ranges.
  Result<std::shared_ptr<arrow::io::RandomAccessFile>> OpenInputFile(const std::string& relative) const;
  Result<bool> Exists(const std::string& relative) const;
  Result<bool> IsDirectory(const std::string& relative) const;
  /// Files directly inside `relative_dir`; empty if it does not exist.
  Result<std::vector<ObjectInfo>> ListFiles(const std::string& relative_dir) const;
  /// Every file below `relative_dir` ("" = the root), at any depth; `name`
  /// is the path relative to `relative_dir`. Empty if it does not exist.
  Result<std::vector<ObjectInfo>> ListFilesRecursive(const std::string& relative_dir) const;
  /// The filesystem all access goes through.
  const std::shared_ptr<arrow::fs::FileSystem>& filesystem() const { return fs_; }
  /// The names of those files, without sizes or times: on a local disk one
  /// directory read, not a stat per file (a listing of _versions/ is on
  /// every commit's path, and it grows with every version).
  Result<std::vector<std::string>> ListFileNames(const std::string& relative_dir) const;

  /// Whether the files live on the local filesystem (where an atomic
  /// create-if-absent is available).
  bool IsLocal() const;
  /// Whether the files live in an object store (S3): no directories to
  /// create, a lexically ordered listing, requests that cost.
  bool IsObjectStore() const;
  /// Creates or replaces a file with `bytes`, creating parent directories.
  Status Write(const std::string& relative, std::string_view bytes) const;
  /// Creates a file that must not exist yet; AlreadyExists if it does.
  /// Local filesystem: the bytes go to a temp file in the same directory,
  /// which is then hard-linked to the final name, so of two racing callers
  /// exactly one succeeds and nobody ever sees a partial file. S3 opened
  /// by URI: one PUT with If-None-Match: * (io/s3_conditional_put.h); an
  /// S3 filesystem given by the caller is refused (no credentials to sign
  /// with). Other arrow::fs filesystems (memory://, a caller's) have no
  /// conditional put: this checks, writes a staged `.tmp_` file beside the
  /// target and renames it (so a failed write never leaves a torn file
  /// under the final name); two writers racing inside that window can both
  /// succeed.
  Status PutIfNotExists(const std::string& relative, std::string_view bytes) const;
  /// A stream that creates (or replaces) a file, parent directories created.
  Result<std::shared_ptr<arrow::io::OutputStream>> OpenOutputStream(const std::string& relative) const;
  /// Removes a file; a missing file is not an error.
  Status Delete(const std::string& relative) const;
  /// Removes a directory and everything below it; a missing one is not an
  /// error. REQUIRES: `relative` is not empty (the root is never removed).
  Status DeleteDirectory(const std::string& relative) const;

 private:
  Status S3PutIfNotExists(const std::string& relative, std::string_view bytes) const;

  std::shared_ptr<arrow::fs::FileSystem> fs_;
  std::string root_;
  std::string uri_;
  StorageOptions options_;
  std::shared_ptr<const S3Config> s3_;  // set for s3:// URIs
};

}  // namespace lance::io
