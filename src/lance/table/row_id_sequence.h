// Stable row ids of a fragment (RowIdSequence) and row lineage
// (RowDatasetVersionSequence): decoding every variant the format allows and
// encoding the way the reference writer does.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "lance/status.h"

namespace lance::table {

/// One U64Segment, decoded into explicit form.
struct U64Segment {
  enum class Kind { kRange, kRangeWithHoles, kRangeWithBitmap, kSortedArray, kArray };
  Kind kind = Kind::kRange;
  uint64_t start = 0;            // kRange*, inclusive
  uint64_t end = 0;              // kRange*, exclusive
  std::vector<uint64_t> values;  // holes (kRangeWithHoles) or the values (arrays)
  std::vector<uint8_t> bitmap;   // kRangeWithBitmap, LSB-first presence bits

  /// Number of values in the segment.
  uint64_t Length() const;
  /// Appends the segment's values, in order, to `out`.
  void AppendTo(std::vector<uint64_t>* out) const;
};

/// The row ids of one fragment, one per physical row, in physical row order.
class RowIdSequence {
 public:
  RowIdSequence() = default;
  explicit RowIdSequence(std::vector<U64Segment> segments) : segments_(std::move(segments)) {}

  /// Decodes a serialized `lance.table.RowIdSequence` message.
  /// `what` names the source in error messages (e.g. "row ids of fragment 3").
  static Result<RowIdSequence> Parse(std::string_view bytes, const std::string& what);
  /// The sequence [start, start + count) as one Range segment (what appends write).
  static RowIdSequence FromRange(uint64_t start, uint64_t count);
  /// Encodes values choosing segments as the reference writer does.
  static RowIdSequence FromValues(const std::vector<uint64_t>& values);

  /// Serializes to `lance.table.RowIdSequence` bytes.
  std::string Serialize() const;

  /// Appends `other`'s segments. A Range followed by the Range that
  /// continues it become one, as the reference's RowIdSequence::extend.
  void Extend(RowIdSequence other);

  const std::vector<U64Segment>& segments() const { return segments_; }
  uint64_t Length() const;
  std::vector<uint64_t> ToVector() const;

 private:
  std::vector<U64Segment> segments_;
};

/// A run of physical rows that share a dataset version.
struct VersionRun {
  uint64_t length = 0;
  uint64_t version = 0;
};

/// Per-row dataset versions (created_at or last_updated_at), run-length coded.
class RowVersionSequence {
 public:
  RowVersionSequence() = default;
  explicit RowVersionSequence(std::vector<VersionRun> runs) : runs_(std::move(runs)) {}

  /// Decodes a serialized `lance.table.RowDatasetVersionSequence` message.
  static Result<RowVersionSequence> Parse(std::string_view bytes, const std::string& what);
  /// Serializes; each run's span is the Range of row positions it covers
  /// (start = the rows before it), as pylance 14 writes multi-run sequences.
  std::string Serialize() const;

  const std::vector<VersionRun>& runs() const { return runs_; }
  /// Adds `length` rows at `version`, extending the last run when it has
  /// that version (runs are kept maximal, as the reference writes them).
  void Append(uint64_t length, uint64_t version);
  uint64_t Length() const;
  /// The version of each row, expanded.
  std::vector<uint64_t> ToVector() const;

 private:
  std::vector<VersionRun> runs_;
};

}  // namespace lance::table
