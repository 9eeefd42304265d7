// The set of deleted row offsets of one fragment, whichever file it came from.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "lance/status.h"

namespace lance::table {

/// Deleted row offsets (positions within a fragment). Backed by a 32-bit
/// Roaring bitmap; iteration is always in ascending order.
/// Thread-safety: const methods may be called concurrently.
class DeletionVector {
 public:
  DeletionVector();
  ~DeletionVector();
  DeletionVector(DeletionVector&&) noexcept;
  DeletionVector& operator=(DeletionVector&&) noexcept;
  DeletionVector(const DeletionVector&);
  DeletionVector& operator=(const DeletionVector&);

  static DeletionVector FromOffsets(const std::vector<uint32_t>& offsets);

  /// Parses an `.arrow` deletion file: an Arrow IPC file with exactly one
  /// record batch of one non-null UInt32 column named "row_id".
  /// `path` only names the file in error messages.
  static Result<DeletionVector> FromArrowIpc(std::string_view bytes, const std::string& path);
  /// Parses a `.bin` deletion file: a portable (32-bit) Roaring bitmap.
  static Result<DeletionVector> FromRoaringPortable(std::string_view bytes,
                                                    const std::string& path);

  /// Serializes as an `.arrow` file (UInt32 "row_id", ZSTD-compressed body).
  Result<std::string> ToArrowIpc() const;
  /// Serializes as a portable Roaring bitmap (`.bin`).
  std::string ToRoaringPortable() const;

  void Add(uint32_t offset);
  bool Contains(uint32_t offset) const;
  uint64_t Cardinality() const;
  bool Empty() const { return Cardinality() == 0; }
  /// Largest offset, or nothing if empty.
  bool Max(uint32_t* out) const;
  std::vector<uint32_t> ToVector() const;

  /// this := this ∪ other.
  void UnionWith(const DeletionVector& other);
  /// this ∩ other.
  DeletionVector Intersection(const DeletionVector& other) const;
  bool operator==(const DeletionVector& other) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace lance::table
