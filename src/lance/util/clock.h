// The wall clock as the manifests record it.
#pragma once

#include <chrono>
#include <cstdint>

namespace lance::util {

/// Nanoseconds since the Unix epoch, now (the unit of manifest timestamps).
inline int64_t NowNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace lance::util
