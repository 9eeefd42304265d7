// Reading a sequence of RecordBatchReaders ahead of their consumer, on
// threads of their own, so the reading (opening files, decoding, dropping
// deleted rows) overlaps what the consumer does with the batches before,
// and several small readers (one per fragment) read at once.
#pragma once

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <arrow/record_batch.h>
#include <arrow/util/byte_size.h>

#include "lance/status.h"

namespace lance::util {

/// The batches of the readers `open(0)` .. `open(n - 1)`, in that order,
/// each reader's batches as it gives them (so whatever is written from them
/// is the same as when read one after another). Up to `threads` readers are
/// read at once, each on a thread of this object's; while the waiting
/// batches take `max_bytes` or more, readers stop (the one being consumed
/// only while one of its batches waits), so memory stays near `max_bytes`
/// plus a batch per thread, whatever the readers' lengths.
/// REQUIRES: not used on a thread of Arrow's CPU pool when the readers use
/// that pool (they would wait on tasks queued behind the caller).
/// Thread-compatible: one consumer.
class ReadAhead {
 public:
  using Open = std::function<Result<std::shared_ptr<arrow::RecordBatchReader>>(size_t)>;

  ReadAhead(size_t n, Open open, size_t threads, uint64_t max_bytes)
      : open_(std::move(open)), max_bytes_(max_bytes), slots_(n) {
    threads = std::max<size_t>(1, std::min(threads, n));
    max_open_ = threads;
    for (size_t t = 0; t < threads; ++t) threads_.emplace_back([this] { Run(); });
  }

  ~ReadAhead() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    changed_.notify_all();
    for (auto& t : threads_) t.join();
  }

  ReadAhead(const ReadAhead&) = delete;
  ReadAhead& operator=(const ReadAhead&) = delete;

  /// The next batch, or null after the last; a reader's error (opening or
  /// reading) once the batches before it are consumed.
  Status ReadNext(std::shared_ptr<arrow::RecordBatch>* out) {
    std::unique_lock<std::mutex> lock(mu_);
    while (true) {
      if (consumed_ >= slots_.size()) {
        *out = nullptr;
        return Status::OK();
      }
      Slot& slot = slots_[consumed_];
      changed_.wait(lock, [&] { return !slot.batches.empty() || slot.done; });
      if (!slot.batches.empty()) {
        *out = std::move(slot.batches.front().first);
        queued_bytes_ -= slot.batches.front().second;
        slot.batches.pop_front();
        changed_.notify_all();
        return Status::OK();
      }
      if (!slot.status.ok()) return slot.status;
      ++consumed_;
      changed_.notify_all();
    }
  }

 private:
  struct Slot {
    std::deque<std::pair<std::shared_ptr<arrow::RecordBatch>, uint64_t>> batches;
    bool done = false;
    Status status;
  };

  void Run() {
    while (true) {
      size_t i = 0;
      {
        std::unique_lock<std::mutex> lock(mu_);
        changed_.wait(lock, [&] { return stop_ || next_ >= slots_.size() || next_ < consumed_ + max_open_; });
        if (stop_ || next_ >= slots_.size()) return;
        i = next_++;
      }
      auto reader = open_(i);
      if (!reader.ok()) {
        Finish(i, reader.status());
        continue;
      }
      while (true) {
        {
          std::unique_lock<std::mutex> lock(mu_);
          // Past the limit only the reader being consumed goes on, and only
          // while none of its batches waits: memory stays bounded by the
          // batches, however long a reader is.
          changed_.wait(lock, [&] {
            return stop_ || queued_bytes_ < max_bytes_ || (i == consumed_ && slots_[i].batches.empty());
          });
          if (stop_) return;
        }
        std::shared_ptr<arrow::RecordBatch> batch;
        Status st = (*reader)->ReadNext(&batch);
        if (!st.ok() || !batch) {
          Finish(i, std::move(st));
          break;
        }
        auto bytes = arrow::util::ReferencedBufferSize(*batch);
        const uint64_t size = static_cast<uint64_t>(bytes.ok() ? *bytes : 0);
        std::lock_guard<std::mutex> lock(mu_);
        queued_bytes_ += size;
        slots_[i].batches.emplace_back(std::move(batch), size);
        changed_.notify_all();
      }
    }
  }

  void Finish(size_t i, Status st) {
    std::lock_guard<std::mutex> lock(mu_);
    slots_[i].status = std::move(st);
    slots_[i].done = true;
    changed_.notify_all();
  }

  const Open open_;
  const uint64_t max_bytes_;
  size_t max_open_ = 1;  // readers read at once at most (the consumed one included)
  std::mutex mu_;
  std::condition_variable changed_;
  std::vector<Slot> slots_;   // under mu_
  size_t consumed_ = 0;       // under mu_: slots before it are drained
  size_t next_ = 0;           // under mu_: the next slot to open
  uint64_t queued_bytes_ = 0; // under mu_
  bool stop_ = false;         // under mu_
  std::vector<std::thread> threads_;  // last: they start once the members above exist
};

}  // namespace lance::util
