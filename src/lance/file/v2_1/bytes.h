// Bounds-checked little-endian reads and small arithmetic helpers shared by
// the 2.1/2.2 page decoders. Every read of file bytes goes through these so a
// corrupt size or offset becomes an error, never an out-of-bounds access.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <span>
#include <string_view>
#include <utility>

#include <arrow/buffer.h>
#include <arrow/memory_pool.h>
#include <arrow/status.h>

#include "lance/status.h"

namespace lance::file::v2_1 {

using ByteSpan = std::span<const uint8_t>;

inline ByteSpan AsSpan(const arrow::Buffer& buffer) {
  return ByteSpan(buffer.data(), static_cast<size_t>(buffer.size()));
}
inline ByteSpan AsSpan(const std::shared_ptr<arrow::Buffer>& buffer) {
  return buffer ? AsSpan(*buffer) : ByteSpan();
}

/// An error about bytes that do not follow the format.
template <typename... Args>
Status Corrupt(Args&&... args) {
  return Status::Invalid("corrupt data: ", std::forward<Args>(args)...);
}

/// Loads a little-endian T from `p` (which may be unaligned). The host is
/// little-endian (checked at compile time).
template <typename T>
T LoadLE(const uint8_t* p) {
  static_assert(std::endian::native == std::endian::little, "big-endian hosts are not supported");
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

/// Reads a T at `offset` of `bytes`, or errors naming `what`.
template <typename T>
Result<T> ReadLE(ByteSpan bytes, uint64_t offset, std::string_view what) {
  if (offset > bytes.size() || bytes.size() - offset < sizeof(T)) {
    return Corrupt(what, ": reading ", sizeof(T), " bytes at offset ", offset, " of a ", bytes.size(),
                   "-byte buffer");
  }
  return LoadLE<T>(bytes.data() + offset);
}

/// Reads an unsigned integer of `width` bytes (1, 2, 4 or 8).
inline uint64_t LoadUnsigned(const uint8_t* p, unsigned width) {
  switch (width) {
    case 1: return p[0];
    case 2: return LoadLE<uint16_t>(p);
    case 4: return LoadLE<uint32_t>(p);
    default: return LoadLE<uint64_t>(p);
  }
}

/// Rounds `x` up to a multiple of `align` (a power of two).
constexpr uint64_t PadTo(uint64_t x, uint64_t align) { return (x + align - 1) & ~(align - 1); }

inline bool AddOverflows(uint64_t a, uint64_t b, uint64_t* out) {
  return __builtin_add_overflow(a, b, out);
}
inline bool MulOverflows(uint64_t a, uint64_t b, uint64_t* out) {
  return __builtin_mul_overflow(a, b, out);
}

/// `bytes[offset, offset+length)` if it lies inside `bytes`, else an error.
inline Result<ByteSpan> SubSpan(ByteSpan bytes, uint64_t offset, uint64_t length, std::string_view what) {
  if (offset > bytes.size() || bytes.size() - offset < length) {
    return Corrupt(what, ": range [", offset, ", +", length, ") exceeds a ", bytes.size(), "-byte buffer");
  }
  return bytes.subspan(offset, length);
}

/// A zero-copy slice of `buffer` if it lies inside it, else an error.
inline Result<std::shared_ptr<arrow::Buffer>> SliceChecked(const std::shared_ptr<arrow::Buffer>& buffer,
                                                           uint64_t offset, uint64_t length,
                                                           std::string_view what) {
  const uint64_t size = buffer ? static_cast<uint64_t>(buffer->size()) : 0;
  if (offset > size || size - offset < length) {
    return Corrupt(what, ": range [", offset, ", +", length, ") exceeds a ", size, "-byte buffer");
  }
  if (!buffer) return std::make_shared<arrow::Buffer>(nullptr, 0);
  return arrow::SliceBuffer(buffer, static_cast<int64_t>(offset), static_cast<int64_t>(length));
}

/// A buffer of `size` bytes (refusing absurd sizes), uninitialized: for
/// callers that write every byte.
inline Result<std::shared_ptr<arrow::Buffer>> Allocate(uint64_t size, arrow::MemoryPool* pool);
/// The same, zero-filled.
inline Result<std::shared_ptr<arrow::Buffer>> AllocateZeroed(uint64_t size, arrow::MemoryPool* pool);

/// Largest number of values (or levels) one page or block may decode to;
/// guards against counts that lie.
inline constexpr uint64_t kMaxDecodedElements = uint64_t{1} << 31;
/// Largest single buffer the decoders allocate.
inline constexpr uint64_t kMaxAllocationBytes = uint64_t{1} << 34;

inline Result<std::shared_ptr<arrow::Buffer>> Allocate(uint64_t size, arrow::MemoryPool* pool) {
  if (size > kMaxAllocationBytes) return Corrupt("refusing to allocate ", size, " bytes");
  LANCE_ASSIGN_OR_RAISE(auto buffer, arrow::AllocateBuffer(static_cast<int64_t>(size), pool));
  return std::shared_ptr<arrow::Buffer>(std::move(buffer));
}

inline Result<std::shared_ptr<arrow::Buffer>> AllocateZeroed(uint64_t size, arrow::MemoryPool* pool) {
  LANCE_ASSIGN_OR_RAISE(auto buffer, Allocate(size, pool));
  if (size > 0) std::memset(buffer->mutable_data(), 0, size);
  return buffer;
}

/// The bytes of a buffer as a string_view (empty for a null buffer).
inline std::string_view AsStringView(const std::shared_ptr<arrow::Buffer>& buffer) {
  if (!buffer || buffer->size() == 0) return {};
  return std::string_view(reinterpret_cast<const char*>(buffer->data()), static_cast<size_t>(buffer->size()));
}

/// Whether `bits` is a supported machine word width (8, 16, 32, 64).
constexpr bool IsWordWidth(uint64_t bits) { return bits == 8 || bits == 16 || bits == 32 || bits == 64; }

}  // namespace lance::file::v2_1
