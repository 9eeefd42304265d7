// The reference's SlotBackoff (rust/lance-core/src/utils/backoff.rs): after
// attempt i (from 0) wait a random one of 2^(i+2) slots, i.e. 4, 8, 16, ...
// slots of `unit` each. Callers set the unit to 1.1 times the first
// attempt's duration, so writers that started together spread out over
// about as long as one attempt takes. Not thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <random>

namespace lance::txn {

class SlotBackoff {
 public:
  SlotBackoff() : rng_(Seed()) {}

  /// Attempts made so far (calls of Next).
  uint32_t attempt() const { return attempt_; }
  void set_unit(std::chrono::milliseconds unit) { unit_ = unit; }
  std::chrono::milliseconds unit() const { return unit_; }

  /// The wait before the next attempt.
  std::chrono::milliseconds Next() {
    const uint32_t exponent = attempt_ + 2 < 31 ? attempt_ + 2 : 31;
    const uint64_t slots = uint64_t{1} << exponent;
    const uint64_t slot = std::uniform_int_distribution<uint64_t>(0, slots - 1)(rng_);
    ++attempt_;
    return std::chrono::milliseconds(static_cast<int64_t>(slot) * unit_.count());
  }

 private:
  // Opening a random_device per commit shows in the profile of small
  // commits: seeds come from one engine per thread, seeded once.
  static uint64_t Seed() {
    thread_local std::mt19937_64 seeds{std::random_device{}()};
    return seeds();
  }

  uint32_t attempt_ = 0;
  std::chrono::milliseconds unit_{50};  // the reference's default unit
  std::mt19937_64 rng_;
};

/// 1.1 times `elapsed`, at least 1 ms: the slot unit after a first attempt.
inline std::chrono::milliseconds SlotUnitAfter(std::chrono::steady_clock::duration elapsed) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(elapsed).count() * 11 / 10;
  return std::chrono::milliseconds(ms > 0 ? ms : 1);
}

}  // namespace lance::txn
