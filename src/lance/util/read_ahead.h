// Reading a RecordBatchReader one step ahead of its consumer, on a thread
// of its own, so the reading (opening files, decoding, dropping deleted
// rows) overlaps what the consumer does with the batches before.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>

#include <arrow/record_batch.h>
#include <arrow/util/byte_size.h>

#include "lance/status.h"

namespace lance::util {

/// The batches of `reader`, in order, read on a thread of its own while
/// fewer than `max_bytes` of them wait (at least one always may). The same
/// batches as the reader gives, so whatever is written from them is too.
/// REQUIRES: not constructed on a thread of Arrow's CPU pool when the reader
/// uses that pool (its thread would wait on tasks queued behind the caller).
/// Thread-compatible: one consumer.
class ReadAhead {
 public:
  ReadAhead(std::shared_ptr<arrow::RecordBatchReader> reader, uint64_t max_bytes)
      : reader_(std::move(reader)), max_bytes_(max_bytes), thread_([this] { Run(); }) {}

  ~ReadAhead() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    changed_.notify_all();
    thread_.join();
  }

  ReadAhead(const ReadAhead&) = delete;
  ReadAhead& operator=(const ReadAhead&) = delete;

  /// The next batch, or null at the end; the reader's error where it failed.
  Status ReadNext(std::shared_ptr<arrow::RecordBatch>* out) {
    std::unique_lock<std::mutex> lock(mu_);
    changed_.wait(lock, [&] { return !queue_.empty() || done_; });
    if (queue_.empty()) {
      *out = nullptr;
      return status_;
    }
    *out = std::move(queue_.front().first);
    queued_bytes_ -= queue_.front().second;
    queue_.pop_front();
    changed_.notify_all();
    return Status::OK();
  }

 private:
  void Run() {
    while (true) {
      {
        std::unique_lock<std::mutex> lock(mu_);
        changed_.wait(lock, [&] { return stop_ || queue_.empty() || queued_bytes_ < max_bytes_; });
        if (stop_) break;
      }
      std::shared_ptr<arrow::RecordBatch> batch;
      Status st = reader_->ReadNext(&batch);
      std::lock_guard<std::mutex> lock(mu_);
      if (!st.ok() || !batch) {
        status_ = std::move(st);
        break;
      }
      auto bytes = arrow::util::ReferencedBufferSize(*batch);
      const uint64_t size = static_cast<uint64_t>(bytes.ok() ? *bytes : 0);
      queued_bytes_ += size;
      queue_.emplace_back(std::move(batch), size);
      changed_.notify_all();
    }
    std::lock_guard<std::mutex> lock(mu_);
    done_ = true;
    changed_.notify_all();
  }

  std::shared_ptr<arrow::RecordBatchReader> reader_;
  const uint64_t max_bytes_;
  std::mutex mu_;
  std::condition_variable changed_;
  std::deque<std::pair<std::shared_ptr<arrow::RecordBatch>, uint64_t>> queue_;  // under mu_
  uint64_t queued_bytes_ = 0;                                                  // under mu_
  bool stop_ = false;                                                          // under mu_
  bool done_ = false;                                                          // under mu_
  Status status_;                                                              // under mu_
  std::thread thread_;  // last: starts once the members above exist
};

}  // namespace lance::util
