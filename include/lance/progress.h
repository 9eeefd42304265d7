// Progress of long operations (write, delete, update, merge-insert,
// cleanup), reported through a callback in each operation's options. The
// library never prints; a caller renders the reports as it likes.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>

namespace lance {

/// One report. An operation goes through one or more stages in order
/// ("scanning", then "writing", ...); `done` starts again at 0 in each.
struct Progress {
  /// What is being done now, a short lowercase phrase ("writing",
  /// "scanning", "matching", "reading versions", "removing"). Points to a
  /// string literal: valid after the call.
  std::string_view stage;
  /// What `done` and `total` count: "rows", "versions" or "files".
  std::string_view unit;
  /// Units finished so far in this stage; never decreases within a stage.
  uint64_t done = 0;
  /// Units the stage will have finished at its end, when known beforehand
  /// (an Arrow IPC file knows its rows, a stream does not).
  std::optional<uint64_t> total;
};

/// Called after each piece of work (a slice of rows, a window of a scan, a
/// file), possibly thousands of times a second: keep it cheap. It may be
/// called from worker threads, but never from two threads at once. An
/// empty function means no reports.
using ProgressCallback = std::function<void(const Progress&)>;

}  // namespace lance
