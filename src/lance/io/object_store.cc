#include "lance/io/object_store.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <random>
#include <typeinfo>

#include "lance/io/s3_conditional_put.h"
#include "lance/io/s3_config.h"

#include <arrow/buffer.h>
#include <arrow/filesystem/localfs.h>
#include <arrow/filesystem/s3fs.h>
#include <arrow/io/file.h>
#include <arrow/io/interfaces.h>

namespace lance::io {

namespace {

// A local file read with pread for large reads and through a read-only map
// for small ones. Small scattered reads (takes, index pages, page metadata)
// then copy nothing and allocate nothing: a fresh buffer per read costs more
// than the read (first touches of the allocator's pages, zeroed whole when
// they are transparent huge pages). Large reads (scans) stay copies, which
// are quicker than faulting the map in. Data files never change once
// written, so the map stays valid.
class LocalFile final : public arrow::io::RandomAccessFile {
 public:
  static constexpr int64_t kMappedReadLimit = 256 * 1024;

  LocalFile(std::shared_ptr<arrow::io::RandomAccessFile> file, std::string path)
      : file_(std::move(file)), path_(std::move(path)) {}

  arrow::Status Close() override { return file_->Close(); }
  bool closed() const override { return file_->closed(); }
  arrow::Result<int64_t> Tell() const override { return file_->Tell(); }
  arrow::Status Seek(int64_t position) override { return file_->Seek(position); }
  arrow::Result<int64_t> GetSize() override { return file_->GetSize(); }
  arrow::Result<int64_t> Read(int64_t nbytes, void* out) override { return file_->Read(nbytes, out); }
  arrow::Result<std::shared_ptr<arrow::Buffer>> Read(int64_t nbytes) override { return file_->Read(nbytes); }
  arrow::Result<int64_t> ReadAt(int64_t position, int64_t nbytes, void* out) override {
    return file_->ReadAt(position, nbytes, out);
  }
  arrow::Result<std::shared_ptr<arrow::Buffer>> ReadAt(int64_t position, int64_t nbytes) override {
    if (nbytes <= kMappedReadLimit) {
      if (auto* map = Map()) return map->ReadAt(position, nbytes);
    }
    return file_->ReadAt(position, nbytes);
  }

 private:
  // The map, made on the first small read; null if the file cannot be mapped.
  arrow::io::MemoryMappedFile* Map() {
    std::call_once(map_once_, [&] {
      auto mapped = arrow::io::MemoryMappedFile::Open(path_, arrow::io::FileMode::READ);
      if (mapped.ok()) map_ = *mapped;
    });
    return map_.get();
  }

  std::shared_ptr<arrow::io::RandomAccessFile> file_;
  std::string path_;
  std::once_flag map_once_;
  std::shared_ptr<arrow::io::MemoryMappedFile> map_;
};

}  // namespace

namespace {

Status InitializeS3Once() {
  static const Status initialized = arrow::fs::EnsureS3Initialized();
  return initialized;
}

// Arrow's S3 filesystem for a resolved configuration; fills in
// config->region when none was configured, as pylance: the bucket's own
// region on AWS, else us-west-2.
Result<std::shared_ptr<arrow::fs::FileSystem>> MakeS3FileSystem(const std::string& uri, S3Config* config) {
  LANCE_RETURN_NOT_OK(InitializeS3Once());
  arrow::fs::S3Options o;
  if (!config->access_key_id.empty()) {
    o = arrow::fs::S3Options::FromAccessKey(config->access_key_id, config->secret_access_key,
                                            config->session_token);
  } else if (config->skip_signature) {
    o = arrow::fs::S3Options::Anonymous();
  } else {
    o = arrow::fs::S3Options::Defaults();
  }
  if (config->region.empty()) {
    if (config->endpoint.empty()) {
      auto region = arrow::fs::ResolveS3BucketRegion(config->bucket);
      if (!region.ok()) {
        return Status::IOError("cannot open ", uri, ": no region configured (aws_region) and the region of bucket ",
                               config->bucket, " is unknown: ", region.status().message());
      }
      config->region = *region;
    } else {
      config->region = "us-west-2";
    }
  }
  o.region = config->region;
  if (!config->endpoint.empty()) {
    o.endpoint_override = config->endpoint_host;
    o.scheme = config->endpoint_scheme;
  }
  o.force_virtual_addressing = config->virtual_hosted_style;
  // A small file is then one PUT, not a multipart upload.
  o.allow_delayed_open = true;
  o.connect_timeout = config->connect_timeout_seconds;
  o.request_timeout = config->request_timeout_seconds;
  if (!config->proxy_url.empty()) {
    auto proxy = arrow::fs::S3ProxyOptions::FromUri(config->proxy_url);
    if (!proxy.ok()) return Status::Invalid("storage option proxy_url: ", proxy.status().message());
    o.proxy_options = *proxy;
  }
  o.tls_verify_certificates = !config->allow_invalid_certificates;
  o.retry_strategy = arrow::fs::S3RetryStrategy::GetAwsStandardRetryStrategy(config->max_retries + 1);
  auto fs = arrow::fs::S3FileSystem::Make(o);
  if (!fs.ok()) return Status::IOError("cannot open ", uri, ": ", fs.status().message());
  // Arrow does not shut the AWS SDK down by itself, and a process exiting
  // without that crashes. Registered after the first Make, whose static
  // client finalizer must outlive the handler (exit runs them in reverse).
  static const bool finalize_at_exit = [] {
    std::atexit([] { (void)arrow::fs::EnsureS3Finalized(); });
    return true;
  }();
  (void)finalize_at_exit;
  return std::shared_ptr<arrow::fs::FileSystem>(*fs);
}

}  // namespace

Result<std::shared_ptr<ObjectStore>> ObjectStore::Open(const std::string& uri, const StorageOptions& options) {
  LANCE_ASSIGN_OR_RAISE(auto s3, ResolveStorageOptions(uri, options));
  if (s3) {
    LANCE_ASSIGN_OR_RAISE(auto fs, MakeS3FileSystem(uri, &*s3));
    std::string root = s3->bucket + (s3->key_prefix.empty() ? "" : "/" + s3->key_prefix);
    auto store = std::make_shared<ObjectStore>(std::move(fs), std::move(root), uri);
    store->options_ = options;
    store->s3_ = std::make_shared<const S3Config>(std::move(*s3));
    return store;
  }
  std::string root;
  // Relative local paths are resolved against the working directory.
  std::string location = uri;
  if (uri.find("://") == std::string::npos && !uri.empty() && uri.front() != '/') {
    location = std::filesystem::absolute(uri).lexically_normal().string();
  }
  auto fs = arrow::fs::FileSystemFromUriOrPath(location, &root);
  if (!fs.ok()) {
    return Status::Invalid("cannot open dataset location ", uri, ": ", fs.status().message());
  }
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  auto store = std::make_shared<ObjectStore>(*fs, root, uri);
  store->options_ = options;
  return store;
}

Result<std::shared_ptr<ObjectStore>> ObjectStore::Open(const std::string& uri,
                                                      std::shared_ptr<arrow::fs::FileSystem> fs,
                                                      const StorageOptions& options) {
  if (!fs) return Open(uri, options);
  LANCE_RETURN_NOT_OK(ResolveStorageOptions(uri, options).status());
  // A path inside the caller's filesystem: used as given, no URI parsing.
  std::string root = uri;
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  if (root.empty()) return Status::Invalid("cannot open dataset location: empty path in filesystem ", fs->type_name());
  auto store = std::make_shared<ObjectStore>(std::move(fs), root, uri);
  store->options_ = options;
  return store;
}

std::string ObjectStore::FullPath(const std::string& relative) const {
  if (relative.empty()) return root_;
  return root_ + "/" + relative;
}

Result<std::string> ObjectStore::ReadAll(const std::string& relative) const {
  const std::string path = FullPath(relative);
  auto file = fs_->OpenInputFile(path);
  if (!file.ok()) return file.status().WithMessage("cannot open ", path, ": ", file.status().message());
  auto size = (*file)->GetSize();
  if (!size.ok()) return size.status().WithMessage("cannot stat ", path, ": ", size.status().message());
  auto buffer = (*file)->ReadAt(0, *size);
  if (!buffer.ok()) return buffer.status().WithMessage("cannot read ", path, ": ", buffer.status().message());
  if ((*buffer)->size() != *size) {
    return Status::IOError("short read of ", path, ": ", (*buffer)->size(), " of ", *size, " bytes");
  }
  return (*buffer)->ToString();
}

Result<std::string> ObjectStore::ReadRange(const std::string& relative, int64_t offset,
                                           int64_t length) const {
  const std::string path = FullPath(relative);
  auto file = fs_->OpenInputFile(path);
  if (!file.ok()) return file.status().WithMessage("cannot open ", path, ": ", file.status().message());
  auto buffer = (*file)->ReadAt(offset, length);
  if (!buffer.ok()) return buffer.status().WithMessage("cannot read ", path, ": ", buffer.status().message());
  if ((*buffer)->size() != length) {
    return Status::IOError("short read of ", path, ": wanted ", length, " bytes at ", offset, ", got ",
                           (*buffer)->size());
  }
  return (*buffer)->ToString();
}

Result<std::shared_ptr<arrow::io::RandomAccessFile>> ObjectStore::OpenInputFile(
    const std::string& relative) const {
  const std::string path = FullPath(relative);
  auto file = fs_->OpenInputFile(path);
  if (!file.ok()) return file.status().WithMessage("cannot open ", path, ": ", file.status().message());
  if (IsLocal()) return std::shared_ptr<arrow::io::RandomAccessFile>(std::make_shared<LocalFile>(*file, path));
  return *file;
}

Result<int64_t> ObjectStore::Size(const std::string& relative) const {
  const std::string path = FullPath(relative);
  auto info = fs_->GetFileInfo(path);
  if (!info.ok()) return info.status().WithMessage("cannot stat ", path, ": ", info.status().message());
  if (info->type() != arrow::fs::FileType::File) return Status::IOError("not a file: ", path);
  return info->size();
}

Result<bool> ObjectStore::Exists(const std::string& relative) const {
  LANCE_ASSIGN_OR_RAISE(auto info, fs_->GetFileInfo(FullPath(relative)));
  return info.type() != arrow::fs::FileType::NotFound;
}

Result<bool> ObjectStore::IsDirectory(const std::string& relative) const {
  LANCE_ASSIGN_OR_RAISE(auto info, fs_->GetFileInfo(FullPath(relative)));
  return info.type() == arrow::fs::FileType::Directory;
}

Result<std::vector<ObjectInfo>> ObjectStore::ListFiles(const std::string& relative_dir) const {
  arrow::fs::FileSelector selector;
  selector.base_dir = FullPath(relative_dir);
  selector.allow_not_found = true;
  selector.recursive = false;
  auto infos = fs_->GetFileInfo(selector);
  if (!infos.ok()) {
    return infos.status().WithMessage("cannot list ", selector.base_dir, ": ", infos.status().message());
  }
  std::vector<ObjectInfo> out;
  for (const auto& info : *infos) {
    if (info.type() != arrow::fs::FileType::File) continue;
    out.push_back({info.base_name(), info.size(),
                   std::chrono::duration_cast<std::chrono::nanoseconds>(info.mtime().time_since_epoch()).count()});
  }
  return out;
}

Result<std::vector<ObjectInfo>> ObjectStore::ListFilesRecursive(const std::string& relative_dir) const {
  arrow::fs::FileSelector selector;
  selector.base_dir = FullPath(relative_dir);
  selector.allow_not_found = true;
  selector.recursive = true;
  auto infos = fs_->GetFileInfo(selector);
  if (!infos.ok()) {
    return infos.status().WithMessage("cannot list ", selector.base_dir, ": ", infos.status().message());
  }
  const std::string prefix = selector.base_dir + "/";
  std::vector<ObjectInfo> out;
  for (const auto& info : *infos) {
    if (info.type() != arrow::fs::FileType::File) continue;
    if (info.path().rfind(prefix, 0) != 0) {
      return Status::IOError("listing ", selector.base_dir, " returned ", info.path(), ", which is not below it");
    }
    out.push_back({info.path().substr(prefix.size()), info.size(),
                   std::chrono::duration_cast<std::chrono::nanoseconds>(info.mtime().time_since_epoch()).count()});
  }
  return out;
}

Result<std::vector<std::string>> ObjectStore::ListFileNames(const std::string& relative_dir) const {
  std::vector<std::string> out;
  if (!IsLocal()) {
    LANCE_ASSIGN_OR_RAISE(auto files, ListFiles(relative_dir));
    for (auto& f : files) out.push_back(std::move(f.name));
    return out;
  }
  const std::string dir = FullPath(relative_dir);
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) {
    if (errno == ENOENT) return out;
    return Status::IOError("cannot list ", dir, ": ", std::strerror(errno));
  }
  errno = 0;
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    bool file = e->d_type == DT_REG;
    if (e->d_type == DT_LNK || e->d_type == DT_UNKNOWN) {
      // As ListFiles: a link counts as what it points to.
      struct stat st {};
      file = ::stat((dir + "/" + name).c_str(), &st) == 0 && S_ISREG(st.st_mode);
    }
    if (file) out.push_back(name);
    errno = 0;
  }
  const int err = errno;
  ::closedir(d);
  if (err != 0) return Status::IOError("cannot list ", dir, ": ", std::strerror(err));
  return out;
}

namespace {

std::string ParentDir(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash);
}

// A name beside `path` that its bytes are written under before they are
// renamed or linked into place: never a committed file's name (readers skip
// ".tmp_"; cleanup removes stale ones). One engine per thread, seeded once:
// opening a random_device per commit shows in the profile of small commits.
std::string StagedSibling(const std::string& path) {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  const size_t slash = path.rfind('/');
  return path.substr(0, slash == std::string::npos ? 0 : slash + 1) + ".tmp_" + std::to_string(rng());
}

// Writes all of `bytes` to a new local file. No fsync, as the reference's
// object store: the file is whole for any reader once the call returns, and
// a flush would cost a commit milliseconds (tens right after bulk writes).
Status WriteLocalFile(const std::string& path, std::string_view bytes) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return Status::IOError("cannot create ", path, ": ", std::strerror(errno));
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      return Status::IOError("cannot write ", path, ": ", std::strerror(err));
    }
    done += static_cast<size_t>(n);
  }
  if (::close(fd) != 0) return Status::IOError("cannot close ", path, ": ", std::strerror(errno));
  return Status::OK();
}

}  // namespace

// Only Arrow's own local filesystem: there a path is an OS path, so the
// atomic link(2) below may be used. A subclass (a caller's wrapper that
// counts or fails calls) is honoured by going through its methods instead.
bool ObjectStore::IsLocal() const {
  const arrow::fs::FileSystem& fs = *fs_;
  return typeid(fs) == typeid(arrow::fs::LocalFileSystem);
}

bool ObjectStore::IsObjectStore() const { return fs_->type_name() == "s3"; }

Status ObjectStore::Write(const std::string& relative, std::string_view bytes) const {
  LANCE_ASSIGN_OR_RAISE(auto out, OpenOutputStream(relative));
  const std::string path = FullPath(relative);
  Status st = out->Write(bytes.data(), static_cast<int64_t>(bytes.size()));
  if (st.ok()) st = out->Close();
  if (!st.ok()) return st.WithMessage("cannot write ", path, ": ", st.message());
  return Status::OK();
}

Result<std::shared_ptr<arrow::io::OutputStream>> ObjectStore::OpenOutputStream(
    const std::string& relative) const {
  const std::string path = FullPath(relative);
  const std::string dir = ParentDir(path);
  // Object stores have no directories: Arrow would PUT an empty marker
  // object per level (and HEAD the bucket) for nothing.
  if (!dir.empty() && !IsObjectStore()) {
    Status st = fs_->CreateDir(dir, /*recursive=*/true);
    if (!st.ok()) return st.WithMessage("cannot create directory ", dir, ": ", st.message());
  }
  auto out = fs_->OpenOutputStream(path);
  if (!out.ok()) return out.status().WithMessage("cannot create ", path, ": ", out.status().message());
  return *out;
}

Status ObjectStore::PutIfNotExists(const std::string& relative, std::string_view bytes) const {
  const std::string path = FullPath(relative);
  if (s3_) return S3PutIfNotExists(relative, bytes);
  if (IsObjectStore()) {
    return Status::NotImplemented("cannot create ", path, " if absent through a caller's ", fs_->type_name(),
                                  " filesystem (a check-then-write could overwrite a concurrent commit); "
                                  "open the dataset by its s3:// URI with storage options");
  }
  if (!IsLocal()) {
    LANCE_ASSIGN_OR_RAISE(bool exists, Exists(relative));
    if (exists) return Status::AlreadyExists(path, " already exists");
    // Staged, then renamed: a write that fails half way must not leave a
    // torn file under the final name (a torn manifest is a broken version).
    const std::string staged = StagedSibling(relative);
    Status st = Write(staged, bytes);
    if (st.ok()) {
      st = fs_->Move(FullPath(staged), path);
      if (!st.ok()) st = st.WithMessage("cannot rename ", FullPath(staged), " to ", path, ": ", st.message());
    }
    if (!st.ok()) (void)Delete(staged);  // best effort; cleanup removes what stays
    return st;
  }
  const std::string dir = ParentDir(path);
  if (!dir.empty()) {
    Status st = fs_->CreateDir(dir, /*recursive=*/true);
    if (!st.ok()) return st.WithMessage("cannot create directory ", dir, ": ", st.message());
  }
  const std::string tmp = StagedSibling(path);
  LANCE_RETURN_NOT_OK(WriteLocalFile(tmp, bytes));
  // link(2) fails with EEXIST instead of replacing: the atomic create-if-absent.
  const int rc = ::link(tmp.c_str(), path.c_str());
  const int err = errno;
  ::unlink(tmp.c_str());
  if (rc != 0) {
    if (err == EEXIST) return Status::AlreadyExists(path, " already exists");
    return Status::IOError("cannot create ", path, ": ", std::strerror(err));
  }
  return Status::OK();
}

Status ObjectStore::S3PutIfNotExists(const std::string& relative, std::string_view bytes) const {
  const std::string path = FullPath(relative);  // "bucket/key"
  const std::string key = path.substr(s3_->bucket.size() + 1);
  S3Credentials creds;
  if (!s3_->access_key_id.empty()) {
    creds = {s3_->access_key_id, s3_->secret_access_key, s3_->session_token};
  } else if (!s3_->skip_signature) {
    // The provider chain Arrow resolved (environment, profile, instance role).
    const auto options = static_cast<const arrow::fs::S3FileSystem&>(*fs_).options();
    creds = {options.GetAccessKey(), options.GetSecretKey(), options.GetSessionToken()};
  }
  bool retried = false;
  Status st = io::S3PutIfNotExists(*s3_, creds, s3_->region, key, bytes, &retried);
  if (st.IsAlreadyExists() && retried) {
    // An earlier attempt whose answer was lost may have created the object:
    // it is ours if it holds our bytes (as pylance checks).
    auto existing = ReadAll(relative);
    if (existing.ok() && *existing == bytes) return Status::OK();
  }
  return st;
}

Status ObjectStore::Delete(const std::string& relative) const {
  const std::string path = FullPath(relative);
  auto info = fs_->GetFileInfo(path);
  if (info.ok() && info->type() == arrow::fs::FileType::NotFound) return Status::OK();
  Status st = fs_->DeleteFile(path);
  if (!st.ok()) return st.WithMessage("cannot delete ", path, ": ", st.message());
  return Status::OK();
}

Status ObjectStore::DeleteDirectory(const std::string& relative) const {
  if (relative.empty()) return Status::Invalid("refusing to remove the root of ", uri_);
  const std::string path = FullPath(relative);
  auto info = fs_->GetFileInfo(path);
  if (info.ok() && info->type() == arrow::fs::FileType::NotFound) return Status::OK();
  Status st = fs_->DeleteDir(path);
  if (!st.ok()) return st.WithMessage("cannot remove ", path, ": ", st.message());
  return Status::OK();
}

}  // namespace lance::io
