// The progress bar of long commands: renders the library's Progress
// reports on stderr when it is a terminal (one line, redrawn in place).
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>

#include "lance/progress.h"

namespace lance::cli {

/// One line for `p`, at most `width - 1` characters:
///   "writing [######......] 1049600/4000000 rows  26%  1.05M rows/s  ETA 0:03"
/// and, without a total, "writing 1049600 rows  1.05M rows/s". The rate
/// and time left come from `elapsed_seconds` in the stage (omitted when 0).
std::string FormatProgress(const Progress& p, double elapsed_seconds, size_t width);

/// "0:07", "12:34", "1:02:03".
std::string FormatDuration(double seconds);

/// "950", "12.3k", "1.05M", "2.00G".
std::string FormatRate(double per_second);

/// Draws reports on stderr, at most ~10 times a second, when stderr is a
/// terminal and not `quiet`; silent otherwise. Thread-safe.
class ProgressBar {
 public:
  explicit ProgressBar(bool quiet);
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  bool enabled() const { return enabled_; }
  /// The callback for an operation's options; empty when the bar is off,
  /// so the library does not even count.
  ProgressCallback Callback();
  /// Removes the bar's line; call before printing anything else.
  void Clear();

 private:
  using Clock = std::chrono::steady_clock;
  void Update(const Progress& p);

  const bool enabled_;
  std::mutex mutex_;
  std::string stage_;             // of the last report
  Clock::time_point stage_start_;  // when that stage began
  Clock::time_point last_report_;
  Clock::time_point last_draw_;
  uint64_t drawn_done_ = 0;
  bool drawn_ = false;  // a line is on the screen
  bool any_draw_ = false;
};

}  // namespace lance::cli
