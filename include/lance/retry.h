// How often a write is tried again when other writers commit first. The
// names and defaults are the reference's.
#pragma once

#include <chrono>
#include <cstdint>

namespace lance {

struct RetryParams {
  /// Delete, update and merge-insert: times the whole operation is run
  /// again on the new latest version after a retryable commit conflict
  /// (the reference's conflict_retries, default 10) ...
  uint32_t conflict_retries = 10;
  /// ... as long as it has not run for longer than this in all (its
  /// retry_timeout, default 30 s). Past either bound the operation fails
  /// with ErrorKind::kTooMuchWriteContention.
  std::chrono::milliseconds retry_timeout{30000};
  /// Every commit: attempts at creating the next version while other
  /// writers keep taking it first, each one checked and rebased on the new
  /// latest (CommitConfig num_retries, default 20). Past it the commit fails
  /// with ErrorKind::kCommitConflict.
  uint32_t num_retries = 20;
};

}  // namespace lance
