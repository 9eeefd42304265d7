// Running independent pieces of work (the fields of a window, of a take) on
// Arrow's CPU thread pool, so pages decode on every core.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include <arrow/util/future.h>
#include <arrow/util/thread_pool.h>

#include "lance/status.h"

namespace lance::util {

/// Calls fn(0) .. fn(n - 1), concurrently where the pool has threads, and
/// returns the first error (by index) after all calls have finished. Runs
/// inline when called from a pool thread, which must never wait on the pool.
inline Status ParallelFor(size_t n, const std::function<Status(size_t)>& fn) {
  auto* pool = arrow::internal::GetCpuThreadPool();
  if (n <= 1 || pool->GetCapacity() <= 1 || pool->OwnsThisThread()) {
    for (size_t i = 0; i < n; ++i) LANCE_RETURN_NOT_OK(fn(i));
    return Status::OK();
  }
  std::vector<arrow::Future<>> futures;
  Status submitted;
  for (size_t i = 1; i < n && submitted.ok(); ++i) {
    auto future = pool->Submit([&fn, i]() { return fn(i); });
    if (future.ok()) {
      futures.push_back(std::move(*future));
    } else {
      submitted = future.status();
    }
  }
  Status first = submitted.ok() ? fn(0) : submitted;
  // Every submitted call holds a reference to `fn`: wait for all of them.
  for (auto& f : futures) {
    const Status& st = f.status();
    if (first.ok() && !st.ok()) first = st;
  }
  return first;
}

}  // namespace lance::util
