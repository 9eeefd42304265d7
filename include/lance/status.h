// Errors as values. lance-cpp speaks Arrow at its API, so it uses Arrow's
// Status and Result<T> directly; these aliases and macros are the one place
// that decision is written down.
#pragma once

#include <string>

#include <arrow/result.h>
#include <arrow/status.h>

namespace lance {

using Status = arrow::Status;
template <typename T>
using Result = arrow::Result<T>;

/// What a failed write means for the caller, beyond the Arrow status code
/// (the reference's error kinds). Nothing was committed in any of them.
enum class ErrorKind {
  kOther = 0,
  /// Another writer committed a change this one must be re-run on top of
  /// (the reference's RetryableCommitConflict); retrying may succeed.
  kRetryableCommitConflict,
  /// Another writer committed a change this one cannot be combined with
  /// (CommitConflict / IncompatibleTransaction), or a commit kept losing
  /// the race for its version through all its attempts.
  kCommitConflict,
  /// An operation was re-run as often or as long as its options allow and
  /// still conflicted (TooMuchWriteContention).
  kTooMuchWriteContention,
};

/// The kind of `status` (kOther for success and every other error).
ErrorKind GetErrorKind(const Status& status);

/// A failed Status of `kind` (Arrow code Invalid) with `message`.
Status MakeError(ErrorKind kind, const std::string& message);

}  // namespace lance

#define LANCE_RETURN_NOT_OK(expr) ARROW_RETURN_NOT_OK(expr)
#define LANCE_ASSIGN_OR_RAISE(lhs, rexpr) ARROW_ASSIGN_OR_RAISE(lhs, rexpr)
