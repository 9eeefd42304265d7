// A filesystem for tests that counts every I/O call it forwards to another
// one and can make the Nth of them fail, write only half its bytes and
// fail (a torn write), or stall first, as LevelDB's fault-injection Env.
// Given to lance through OpenOptions::filesystem / WriteParams::filesystem,
// it sees every call a write path makes: stats, listings, opens, each read,
// write, flush and close, directory changes, deletes and renames.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include <arrow/buffer.h>
#include <arrow/filesystem/filesystem.h>
#include <arrow/io/interfaces.h>
#include <arrow/status.h>

namespace lance::fault {

enum class FaultKind {
  kFail,        // the call returns an IOError without doing anything
  kShortWrite,  // a write puts down half its bytes, then fails; other calls fail
  kStall,       // the call waits, then succeeds
};

class FaultInjectingFileSystem : public arrow::fs::FileSystem {
 public:
  explicit FaultInjectingFileSystem(std::shared_ptr<arrow::fs::FileSystem> base) : base_(std::move(base)) {}

  /// Counting restarts; the `n`th call from now (1-based) faults. With
  /// `sticky`, every call after it fails too (as if the process had died
  /// there: nothing after it reaches the disk). n = 0: no fault.
  void Arm(int64_t n, FaultKind kind, bool sticky = false) {
    calls_ = 0;
    fault_at_ = n;
    kind_ = kind;
    sticky_ = sticky;
    fired_ = false;
    std::lock_guard<std::mutex> lock(mu_);
    fired_call_.clear();
  }
  void Disarm() { Arm(0, FaultKind::kFail); }
  int64_t calls() const { return calls_; }
  bool fired() const { return fired_; }
  /// "op path" of the call that faulted.
  std::string fired_call() const {
    std::lock_guard<std::mutex> lock(mu_);
    return fired_call_;
  }

  /// Counts one call; the status it must return (OK: go ahead). For a
  /// short write, *short_write is set and the caller writes half.
  arrow::Status Hit(const char* op, const std::string& path, bool* short_write = nullptr) {
    const int64_t n = ++calls_;
    if (fault_at_ <= 0 || n < fault_at_) return arrow::Status::OK();
    if (n > fault_at_) {
      if (sticky_ && kind_ != FaultKind::kStall) {
        return arrow::Status::IOError("injected fault: call ", n, " (", op, " ", path, ") after the fault");
      }
      return arrow::Status::OK();
    }
    fired_ = true;
    {
      std::lock_guard<std::mutex> lock(mu_);
      fired_call_ = std::string(op) + " " + path;
    }
    switch (kind_) {
      case FaultKind::kStall:
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        return arrow::Status::OK();
      case FaultKind::kShortWrite:
        if (short_write != nullptr) *short_write = true;
        [[fallthrough]];
      case FaultKind::kFail:
        break;
    }
    return arrow::Status::IOError("injected fault: call ", n, " (", op, " ", path, ")");
  }

  std::string type_name() const override { return "fault-injecting"; }
  bool Equals(const arrow::fs::FileSystem& other) const override { return this == &other; }
  arrow::Result<std::string> NormalizePath(std::string path) override { return base_->NormalizePath(path); }
  arrow::Result<std::string> PathFromUri(const std::string& uri) const override { return base_->PathFromUri(uri); }

  arrow::Result<arrow::fs::FileInfo> GetFileInfo(const std::string& path) override {
    ARROW_RETURN_NOT_OK(Hit("stat", path));
    return base_->GetFileInfo(path);
  }
  arrow::Result<arrow::fs::FileInfoVector> GetFileInfo(const arrow::fs::FileSelector& select) override {
    ARROW_RETURN_NOT_OK(Hit("list", select.base_dir));
    return base_->GetFileInfo(select);
  }
  arrow::Status CreateDir(const std::string& path, bool recursive) override {
    ARROW_RETURN_NOT_OK(Hit("mkdir", path));
    return base_->CreateDir(path, recursive);
  }
  arrow::Status DeleteDir(const std::string& path) override {
    ARROW_RETURN_NOT_OK(Hit("rmdir", path));
    return base_->DeleteDir(path);
  }
  arrow::Status DeleteDirContents(const std::string& path, bool missing_dir_ok) override {
    ARROW_RETURN_NOT_OK(Hit("rmdir-contents", path));
    return base_->DeleteDirContents(path, missing_dir_ok);
  }
  arrow::Status DeleteRootDirContents() override {
    ARROW_RETURN_NOT_OK(Hit("rmdir-contents", "/"));
    return base_->DeleteRootDirContents();
  }
  arrow::Status DeleteFile(const std::string& path) override {
    ARROW_RETURN_NOT_OK(Hit("delete", path));
    return base_->DeleteFile(path);
  }
  arrow::Status Move(const std::string& src, const std::string& dest) override {
    ARROW_RETURN_NOT_OK(Hit("move", src + " -> " + dest));
    return base_->Move(src, dest);
  }
  arrow::Status CopyFile(const std::string& src, const std::string& dest) override {
    ARROW_RETURN_NOT_OK(Hit("copy", src + " -> " + dest));
    return base_->CopyFile(src, dest);
  }
  arrow::Result<std::shared_ptr<arrow::io::InputStream>> OpenInputStream(const std::string& path) override {
    ARROW_ASSIGN_OR_RAISE(auto file, OpenInputFile(path));
    return file;
  }
  arrow::Result<std::shared_ptr<arrow::io::RandomAccessFile>> OpenInputFile(const std::string& path) override;
  arrow::Result<std::shared_ptr<arrow::io::OutputStream>> OpenOutputStream(
      const std::string& path, const std::shared_ptr<const arrow::KeyValueMetadata>& metadata) override;
  arrow::Result<std::shared_ptr<arrow::io::OutputStream>> OpenAppendStream(
      const std::string& path, const std::shared_ptr<const arrow::KeyValueMetadata>& metadata) override {
    return arrow::Status::NotImplemented("append streams are not used by lance");
  }

 private:
  // arrow::fs::FileSystem is already enable_shared_from_this.
  std::shared_ptr<FaultInjectingFileSystem> Self() {
    return std::static_pointer_cast<FaultInjectingFileSystem>(shared_from_this());
  }

  std::shared_ptr<arrow::fs::FileSystem> base_;
  std::atomic<int64_t> calls_{0};
  std::atomic<int64_t> fault_at_{0};
  std::atomic<FaultKind> kind_{FaultKind::kFail};
  std::atomic<bool> sticky_{false};
  std::atomic<bool> fired_{false};
  mutable std::mutex mu_;
  std::string fired_call_;
};

namespace detail {

class FaultInputFile : public arrow::io::RandomAccessFile {
 public:
  FaultInputFile(std::shared_ptr<FaultInjectingFileSystem> fs, std::shared_ptr<arrow::io::RandomAccessFile> base,
                 std::string path)
      : fs_(std::move(fs)), base_(std::move(base)), path_(std::move(path)) {}
  arrow::Status Close() override { return base_->Close(); }
  bool closed() const override { return base_->closed(); }
  arrow::Result<int64_t> Tell() const override { return base_->Tell(); }
  arrow::Status Seek(int64_t position) override { return base_->Seek(position); }
  arrow::Result<int64_t> GetSize() override {
    ARROW_RETURN_NOT_OK(fs_->Hit("size", path_));
    return base_->GetSize();
  }
  arrow::Result<int64_t> Read(int64_t nbytes, void* out) override {
    ARROW_RETURN_NOT_OK(fs_->Hit("read", path_));
    return base_->Read(nbytes, out);
  }
  arrow::Result<std::shared_ptr<arrow::Buffer>> Read(int64_t nbytes) override {
    ARROW_RETURN_NOT_OK(fs_->Hit("read", path_));
    return base_->Read(nbytes);
  }
  arrow::Result<int64_t> ReadAt(int64_t position, int64_t nbytes, void* out) override {
    ARROW_RETURN_NOT_OK(fs_->Hit("read", path_));
    return base_->ReadAt(position, nbytes, out);
  }
  arrow::Result<std::shared_ptr<arrow::Buffer>> ReadAt(int64_t position, int64_t nbytes) override {
    ARROW_RETURN_NOT_OK(fs_->Hit("read", path_));
    return base_->ReadAt(position, nbytes);
  }

 private:
  std::shared_ptr<FaultInjectingFileSystem> fs_;
  std::shared_ptr<arrow::io::RandomAccessFile> base_;
  std::string path_;
};

class FaultOutputStream : public arrow::io::OutputStream {
 public:
  FaultOutputStream(std::shared_ptr<FaultInjectingFileSystem> fs, std::shared_ptr<arrow::io::OutputStream> base,
                    std::string path)
      : fs_(std::move(fs)), base_(std::move(base)), path_(std::move(path)) {}
  arrow::Status Close() override {
    if (base_->closed()) return arrow::Status::OK();
    arrow::Status st = fs_->Hit("close", path_);
    // The descriptor is released either way; the caller sees the fault.
    arrow::Status closed = base_->Close();
    return st.ok() ? closed : st;
  }
  bool closed() const override { return base_->closed(); }
  arrow::Result<int64_t> Tell() const override { return base_->Tell(); }
  arrow::Status Write(const void* data, int64_t nbytes) override {
    bool short_write = false;
    arrow::Status st = fs_->Hit("write", path_, &short_write);
    if (short_write) {
      ARROW_RETURN_NOT_OK(base_->Write(data, nbytes / 2));
      ARROW_RETURN_NOT_OK(base_->Flush());
    }
    ARROW_RETURN_NOT_OK(st);
    return base_->Write(data, nbytes);
  }
  arrow::Status Flush() override {
    ARROW_RETURN_NOT_OK(fs_->Hit("flush", path_));
    return base_->Flush();
  }

 private:
  std::shared_ptr<FaultInjectingFileSystem> fs_;
  std::shared_ptr<arrow::io::OutputStream> base_;
  std::string path_;
};

}  // namespace detail

inline arrow::Result<std::shared_ptr<arrow::io::RandomAccessFile>> FaultInjectingFileSystem::OpenInputFile(
    const std::string& path) {
  ARROW_RETURN_NOT_OK(Hit("open", path));
  ARROW_ASSIGN_OR_RAISE(auto file, base_->OpenInputFile(path));
  return std::make_shared<detail::FaultInputFile>(Self(), std::move(file), path);
}

inline arrow::Result<std::shared_ptr<arrow::io::OutputStream>> FaultInjectingFileSystem::OpenOutputStream(
    const std::string& path, const std::shared_ptr<const arrow::KeyValueMetadata>& metadata) {
  ARROW_RETURN_NOT_OK(Hit("create", path));
  ARROW_ASSIGN_OR_RAISE(auto out, base_->OpenOutputStream(path, metadata));
  return std::make_shared<detail::FaultOutputStream>(Self(), std::move(out), path);
}

}  // namespace lance::fault
