#include "lance/io/object_store.h"

#include <filesystem>

#include <arrow/buffer.h>
#include <arrow/filesystem/localfs.h>
#include <arrow/io/interfaces.h>

namespace lance::io {

Result<std::shared_ptr<ObjectStore>> ObjectStore::Open(const std::string& uri) {
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
  return std::make_shared<ObjectStore>(*fs, root, uri);
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

}  // namespace lance::io
