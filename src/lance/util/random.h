// Random names and ids (data files, branches, transactions): uniqueness
// only, nothing secret.
#pragma once

#include <array>
#include <cstdint>
#include <random>

namespace lance::util {

/// 16 random bytes. One engine per thread, seeded once: opening a
/// random_device per call shows in the profile of small commits.
inline std::array<uint8_t, 16> RandomBytes16() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  std::array<uint8_t, 16> b;
  for (size_t i = 0; i < b.size(); i += 8) {
    const uint64_t v = rng();
    for (size_t j = 0; j < 8; ++j) b[i + j] = static_cast<uint8_t>(v >> (8 * j));
  }
  return b;
}

/// The bytes of a random UUID (version 4, RFC 4122 variant).
inline std::array<uint8_t, 16> RandomUuidBytes() {
  auto b = RandomBytes16();
  b[6] = static_cast<uint8_t>((b[6] & 0x0F) | 0x40);
  b[8] = static_cast<uint8_t>((b[8] & 0x3F) | 0x80);
  return b;
}

}  // namespace lance::util
