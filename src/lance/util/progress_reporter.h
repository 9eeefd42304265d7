// One stage of an operation's progress, reported through the caller's
// ProgressCallback: the one way every operation reports (internal).
#pragma once

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string_view>

#include "lance/progress.h"

namespace lance::util {

/// Counts the units of one stage and reports each change. Thread-safe:
/// workers may Add at once, the callback is still called by one at a time.
/// Does nothing when the callback is empty.
class ProgressStage {
 public:
  /// `stage` and `unit` must be string literals (Progress keeps views).
  ProgressStage(const ProgressCallback& callback, std::string_view stage, std::string_view unit,
                std::optional<uint64_t> total = std::nullopt)
      : callback_(callback) {
    progress_.stage = stage;
    progress_.unit = unit;
    progress_.total = total;
  }

  bool active() const { return static_cast<bool>(callback_); }

  /// `n` more units done.
  void Add(uint64_t n) {
    if (!callback_) return;
    std::lock_guard<std::mutex> lock(mutex_);
    progress_.done += n;
    callback_(progress_);
  }

  /// At least `done` units done (for positions that only move forward).
  void AdvanceTo(uint64_t done) {
    if (!callback_) return;
    std::lock_guard<std::mutex> lock(mutex_);
    if (done <= progress_.done) return;
    progress_.done = done;
    callback_(progress_);
  }

  /// The stage is over: done becomes the total, when one was known.
  void Finish() {
    if (!callback_) return;
    std::lock_guard<std::mutex> lock(mutex_);
    if (progress_.total) progress_.done = std::max(progress_.done, *progress_.total);
    callback_(progress_);
  }

 private:
  const ProgressCallback& callback_;
  std::mutex mutex_;
  Progress progress_;
};

}  // namespace lance::util
