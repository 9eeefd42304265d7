// Re-running an operation after a retryable commit conflict, as the
// reference's execute_with_retry (rust/lance/src/dataset/write/retry.rs):
// the operation reads the new latest version and runs whole again, after a
// slot backoff, up to conflict_retries times within retry_timeout.
// Internal to src/lance/ops.
#pragma once

#include <chrono>
#include <string>
#include <thread>

#include "lance/dataset.h"
#include "lance/retry.h"
#include "lance/status.h"
#include "lance/txn/backoff.h"
#include "lance/txn/commit.h"

namespace lance::ops {

/// Calls `run()` (one whole attempt on the latest version) until it
/// succeeds or fails other than with a retryable conflict. `what` ("delete
/// of URI") starts the too-much-contention message.
template <class Fn>
auto RunWithRetries(const RetryParams& params, const std::string& what, Fn&& run) -> decltype(run()) {
  const auto start = std::chrono::steady_clock::now();
  txn::SlotBackoff backoff;
  uint32_t runs = 0;
  while (true) {
    auto result = run();
    ++runs;
    if (result.ok() || !txn::IsRetryableConflict(result.status())) return result;
    const auto elapsed = std::chrono::steady_clock::now() - start;
    const std::string last = result.status().message();
    if (runs > params.conflict_retries) {
      return MakeError(ErrorKind::kTooMuchWriteContention,
                       "too much write contention: " + what + " was run " + std::to_string(runs) +
                           " time(s) and conflicted with a concurrent commit each time (conflict_retries " +
                           std::to_string(params.conflict_retries) + "); last: " + last);
    }
    if (elapsed > params.retry_timeout) {
      return MakeError(ErrorKind::kTooMuchWriteContention,
                       "too much write contention: " + what + " still conflicted after " + std::to_string(runs) +
                           " runs in " + std::to_string(params.retry_timeout.count()) + " ms (retry timeout); last: " +
                           last);
    }
    if (backoff.attempt() == 0) backoff.set_unit(txn::SlotUnitAfter(elapsed));
    auto wait = backoff.Next();
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(params.retry_timeout - elapsed);
    std::this_thread::sleep_for(wait < left ? wait : left);
  }
}

/// RunWithRetries from a dataset handle: the first run is on `dataset`
/// (its version is the read version), each re-run on the latest version
/// then, opened through the same store, as the reference's
/// execute_with_retry checks out the latest. `run(dataset)` is one whole
/// attempt; `*ran_on` is set to the dataset of the last run.
template <class Fn>
auto RunOnDatasetWithRetries(const RetryParams& params, const std::string& what,
                             const std::shared_ptr<const Dataset>& dataset, Fn&& run,
                             std::shared_ptr<const Dataset>* ran_on)
    -> decltype(run(dataset)) {
  *ran_on = dataset;
  bool first = true;
  return RunWithRetries(params, what, [&]() -> decltype(run(dataset)) {
    if (!first) {
      LANCE_ASSIGN_OR_RAISE(*ran_on, dataset->CheckoutLatest());
    }
    first = false;
    return run(*ran_on);
  });
}

}  // namespace lance::ops
