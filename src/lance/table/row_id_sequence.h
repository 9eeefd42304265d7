// Stable row ids of a fragment (RowIdSequence) and row lineage
// (RowDatasetVersionSequence): decoding every variant the format allows and
// encoding the way the reference writer does.
#pragma once

#include <cstdint>
#include <optional>
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

  /// Encodes values choosing the kind as the reference writer does
  /// (U64Segment::from_slice); an empty Range when `values` is empty.
  static U64Segment FromValues(const std::vector<uint64_t>& values);
  /// Values [offset, offset + count), re-encoded by FromValues, as the
  /// reference's U64Segment::slice.
  U64Segment Slice(uint64_t offset, uint64_t count) const;
  /// Removes the values at `positions` (ascending, local to the segment), as
  /// the reference's U64Segment::mask: an Array stays an Array, the sorted
  /// kinds are re-encoded.
  void Mask(const std::vector<uint32_t>& positions);
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
  /// Removes the rows at `positions` (ascending physical offsets) from each
  /// segment, dropping the segments left empty (RowIdSequence::mask).
  void Mask(const std::vector<uint32_t>& positions);
  /// Re-encodes each run of two or more consecutive Range segments as one
  /// segment of their values (U64Segment::FromValues). pylance 14's
  /// compaction does so with each old fragment's sequence (observed on its
  /// output; the reference source read re-encodes segment by segment).
  void CoalesceRanges();

  const std::vector<U64Segment>& segments() const { return segments_; }
  uint64_t Length() const;
  std::vector<uint64_t> ToVector() const;

 private:
  std::vector<U64Segment> segments_;
};

/// A run of physical rows that share a dataset version.
struct VersionRun {
  VersionRun() = default;
  VersionRun(uint64_t length, uint64_t version, std::optional<U64Segment> span = std::nullopt)
      : length(length), version(version), span(std::move(span)) {}

  uint64_t length = 0;
  uint64_t version = 0;
  /// The row positions the run covers as read or as masking left them
  /// (`length` values); unset: the Range after the runs before it.
  std::optional<U64Segment> span;
};

/// Per-row dataset versions (created_at or last_updated_at), run-length coded.
class RowVersionSequence {
 public:
  RowVersionSequence() = default;
  explicit RowVersionSequence(std::vector<VersionRun> runs) : runs_(std::move(runs)) {}

  /// Decodes a serialized `lance.table.RowDatasetVersionSequence` message.
  static Result<RowVersionSequence> Parse(std::string_view bytes, const std::string& what);
  /// Serializes; a run's span is the one it carries, else the Range of row
  /// positions it covers (start = the rows before it), as pylance 14 writes
  /// multi-run sequences.
  std::string Serialize() const;
  /// Removes the rows at `positions` (ascending physical offsets) from each
  /// run's span, dropping the runs left empty (the reference's
  /// RowDatasetVersionSequence::mask: spans keep the old positions).
  void Mask(const std::vector<uint32_t>& positions);

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

/// Cuts a stream of sequences into chunks of given sizes, one piece per
/// segment (or run) and chunk, each piece re-encoded by U64Segment::Slice:
/// the reference's rechunk_sequences and rechunk_version_sequences. Row id
/// pieces are joined by RowIdSequence::Extend, version runs kept apart.
/// Holds only the chunk being filled.
class SequenceRechunker {
 public:
  explicit SequenceRechunker(std::vector<uint64_t> chunk_sizes) : sizes_(std::move(chunk_sizes)) {}

  /// Adds the next sequences (row ids and the two version sequences of the
  /// same rows, equal lengths); appends each completed chunk to the outputs.
  /// Invalid if the rows overflow the chunk sizes.
  Status Push(const RowIdSequence& ids, const RowVersionSequence& created, const RowVersionSequence& updated,
              std::vector<RowIdSequence>* ids_out, std::vector<RowVersionSequence>* created_out,
              std::vector<RowVersionSequence>* updated_out);
  /// Chunks completed so far, and whether all are.
  size_t done() const { return next_; }
  bool finished() const { return next_ == sizes_.size(); }

 private:
  std::vector<uint64_t> sizes_;
  size_t next_ = 0;
  uint64_t filled_ = 0;
  RowIdSequence ids_;
  std::vector<VersionRun> created_, updated_;
};

}  // namespace lance::table
