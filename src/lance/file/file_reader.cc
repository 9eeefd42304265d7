// FileReader: opening a file and describing it. Reading rows is in
// file_read.cc.
#include "lance/file_reader.h"

#include <arrow/filesystem/filesystem.h>

#include <filesystem>

#include "lance/file/container.h"
#include "lance/file/page_cuts_cache.h"

namespace lance {

FileReader::FileReader(std::shared_ptr<arrow::io::RandomAccessFile> file, std::string name,
                       FileLayout layout, arrow::MemoryPool* pool)
    : file_(std::move(file)), name_(std::move(name)), layout_(std::move(layout)), pool_(pool),
      cuts_(std::make_shared<file::PageCutsCache>()) {}

Result<std::shared_ptr<FileReader>> FileReader::Open(const std::string& path, arrow::MemoryPool* pool) {
  std::string location = path;
  if (path.find("://") == std::string::npos && !path.empty() && path.front() != '/') {
    location = std::filesystem::absolute(path).lexically_normal().string();
  }
  std::string inner;
  auto fs = arrow::fs::FileSystemFromUriOrPath(location, &inner);
  if (!fs.ok()) return Status::Invalid("cannot open ", path, ": ", fs.status().message());
  auto file = (*fs)->OpenInputFile(inner);
  if (!file.ok()) return file.status().WithMessage("cannot open ", path, ": ", file.status().message());
  return Open(*file, path, pool);
}

Result<std::shared_ptr<FileReader>> FileReader::Open(std::shared_ptr<arrow::io::RandomAccessFile> file,
                                                     std::string name, arrow::MemoryPool* pool) {
  LANCE_ASSIGN_OR_RAISE(auto layout, file::ReadLayout(*file, name));
  return std::shared_ptr<FileReader>(new FileReader(std::move(file), std::move(name), std::move(layout), pool));
}

Result<std::shared_ptr<arrow::Buffer>> FileReader::ReadGlobalBuffer(size_t index) const {
  if (index >= layout_.global_buffers.size()) {
    return Status::Invalid(name_, ": no global buffer ", index, " (the file has ", layout_.global_buffers.size(), ")");
  }
  const BufferRange& r = layout_.global_buffers[index];
  if (r.position > layout_.file_size || r.size > layout_.file_size - r.position) {
    return Status::Invalid(name_, ": global buffer ", index, " lies outside the file");
  }
  auto buf = file_->ReadAt(static_cast<int64_t>(r.position), static_cast<int64_t>(r.size));
  if (!buf.ok()) return buf.status().WithMessage(name_, ": reading global buffer ", index, ": ", buf.status().message());
  if (static_cast<uint64_t>((*buf)->size()) != r.size) return Status::Invalid(name_, ": global buffer ", index, " is truncated");
  return *buf;
}

}  // namespace lance
