#include "lance/table/row_id_sequence.h"
#include "lance/util/protobuf.h"

#include <algorithm>
#include <bit>
#include <climits>
#include <limits>
#include <utility>

#include "lance/rowids.pb.h"

namespace lance::table {

namespace {

namespace pbt = ::lance::pb::table;

// A fragment addresses rows with a u32 offset, so no sequence can hold more.
constexpr uint64_t kMaxRows = uint64_t{1} << 32;
constexpr uint64_t kU64Max = std::numeric_limits<uint64_t>::max();

// ---------------------------------------------------------------------------
// EncodedU64Array

void PutLittleEndian(uint64_t v, int width, std::string* out) {
  for (int i = 0; i < width; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

uint64_t GetLittleEndian(const unsigned char* p, int width) {
  uint64_t v = 0;
  for (int i = 0; i < width; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

// Chooses the narrowest width that holds max - min, like the reference writer.
void EncodeArray(const std::vector<uint64_t>& values, pbt::EncodedU64Array* out) {
  if (values.empty()) {
    out->mutable_u64_array();  // present but empty
    return;
  }
  auto [min_it, max_it] = std::minmax_element(values.begin(), values.end());
  const uint64_t base = *min_it;
  const uint64_t range = *max_it - base;
  std::string bytes;
  if (range <= 0xFFFF) {
    bytes.reserve(values.size() * 2);
    for (uint64_t v : values) PutLittleEndian(v - base, 2, &bytes);
    auto* a = out->mutable_u16_array();
    a->set_base(base);
    a->set_offsets(std::move(bytes));
  } else if (range <= 0xFFFFFFFFull) {
    bytes.reserve(values.size() * 4);
    for (uint64_t v : values) PutLittleEndian(v - base, 4, &bytes);
    auto* a = out->mutable_u32_array();
    a->set_base(base);
    a->set_offsets(std::move(bytes));
  } else {
    bytes.reserve(values.size() * 8);
    for (uint64_t v : values) PutLittleEndian(v, 8, &bytes);
    out->mutable_u64_array()->set_values(std::move(bytes));
  }
}

Status DecodeOffsets(const std::string& bytes, int width, uint64_t base, const std::string& where,
                     std::vector<uint64_t>* out) {
  if (bytes.size() % width != 0) {
    return Status::Invalid(where, ": u", width * 8, " array has ", bytes.size(),
                           " bytes, not a multiple of ", width);
  }
  const size_t n = bytes.size() / width;
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  out->clear();
  out->reserve(n);
  for (size_t i = 0; i < n; ++i) {
    const uint64_t offset = GetLittleEndian(p + i * width, width);
    if (offset > kU64Max - base) {
      return Status::Invalid(where, ": base ", base, " + offset ", offset, " overflows u64");
    }
    out->push_back(base + offset);
  }
  return Status::OK();
}

Status DecodeArray(const pbt::EncodedU64Array& array, const std::string& where,
                   std::vector<uint64_t>* out) {
  switch (array.array_case()) {
    case pbt::EncodedU64Array::kU16Array:
      return DecodeOffsets(array.u16_array().offsets(), 2, array.u16_array().base(), where, out);
    case pbt::EncodedU64Array::kU32Array:
      return DecodeOffsets(array.u32_array().offsets(), 4, array.u32_array().base(), where, out);
    case pbt::EncodedU64Array::kU64Array:
      return DecodeOffsets(array.u64_array().values(), 8, 0, where, out);
    case pbt::EncodedU64Array::ARRAY_NOT_SET:
      break;
  }
  return Status::Invalid(where, ": encoded array has no variant set");
}

// ---------------------------------------------------------------------------
// U64Segment <-> protobuf

uint64_t Span(uint64_t start, uint64_t end) { return end > start ? end - start : 0; }

Status CheckRange(uint64_t start, uint64_t end, const std::string& where) {
  if (end < start) {
    return Status::Invalid(where, ": range end ", end, " is before start ", start);
  }
  return Status::OK();
}

Status DecodeSegment(const pbt::U64Segment& pb, const std::string& where, U64Segment* out) {
  using Kind = U64Segment::Kind;
  *out = U64Segment{};
  switch (pb.segment_case()) {
    case pbt::U64Segment::kRange: {
      out->kind = Kind::kRange;
      out->start = pb.range().start();
      out->end = pb.range().end();
      LANCE_RETURN_NOT_OK(CheckRange(out->start, out->end, where));
      break;
    }
    case pbt::U64Segment::kRangeWithHoles: {
      const auto& r = pb.range_with_holes();
      out->kind = Kind::kRangeWithHoles;
      out->start = r.start();
      out->end = r.end();
      LANCE_RETURN_NOT_OK(CheckRange(out->start, out->end, where));
      if (!r.has_holes()) return Status::Invalid(where, ": range with holes has no holes array");
      LANCE_RETURN_NOT_OK(DecodeArray(r.holes(), where + ": holes", &out->values));
      // Length() and AppendTo() rely on holes being strictly increasing and in range.
      for (size_t i = 0; i < out->values.size(); ++i) {
        const uint64_t h = out->values[i];
        if (h < out->start || h >= out->end) {
          return Status::Invalid(where, ": hole ", h, " is outside [", out->start, ", ", out->end,
                                 ")");
        }
        if (i > 0 && h <= out->values[i - 1]) {
          return Status::Invalid(where, ": holes are not strictly increasing at index ", i);
        }
      }
      break;
    }
    case pbt::U64Segment::kRangeWithBitmap: {
      const auto& r = pb.range_with_bitmap();
      out->kind = Kind::kRangeWithBitmap;
      out->start = r.start();
      out->end = r.end();
      LANCE_RETURN_NOT_OK(CheckRange(out->start, out->end, where));
      const uint64_t span = out->end - out->start;
      const uint64_t expected = span / 8 + (span % 8 != 0 ? 1 : 0);
      if (r.bitmap().size() != expected) {
        return Status::Invalid(where, ": bitmap has ", r.bitmap().size(), " bytes, expected ",
                               expected, " for range [", out->start, ", ", out->end, ")");
      }
      out->bitmap.assign(r.bitmap().begin(), r.bitmap().end());
      // The reference counts every set bit, so padding bits must be clear.
      if (span % 8 != 0) {
        const uint8_t padding = static_cast<uint8_t>(0xFF << (span % 8));
        if (out->bitmap.back() & padding) {
          return Status::Invalid(where, ": bitmap has bits set past the end of the range");
        }
      }
      break;
    }
    case pbt::U64Segment::kSortedArray: {
      out->kind = Kind::kSortedArray;
      LANCE_RETURN_NOT_OK(DecodeArray(pb.sorted_array(), where, &out->values));
      if (!std::is_sorted(out->values.begin(), out->values.end())) {
        return Status::Invalid(where, ": sorted array is not sorted");
      }
      break;
    }
    case pbt::U64Segment::kArray: {
      out->kind = Kind::kArray;
      LANCE_RETURN_NOT_OK(DecodeArray(pb.array(), where, &out->values));
      break;
    }
    case pbt::U64Segment::SEGMENT_NOT_SET:
      return Status::Invalid(where, ": segment has no variant set");
  }
  if (out->Length() > kMaxRows) {
    return Status::Invalid(where, ": segment has ", out->Length(),
                           " values, more than a fragment can hold (2^32)");
  }
  return Status::OK();
}

void EncodeSegment(const U64Segment& segment, pbt::U64Segment* out) {
  using Kind = U64Segment::Kind;
  switch (segment.kind) {
    case Kind::kRange: {
      auto* r = out->mutable_range();
      r->set_start(segment.start);
      r->set_end(segment.end);
      break;
    }
    case Kind::kRangeWithHoles: {
      auto* r = out->mutable_range_with_holes();
      r->set_start(segment.start);
      r->set_end(segment.end);
      EncodeArray(segment.values, r->mutable_holes());
      break;
    }
    case Kind::kRangeWithBitmap: {
      auto* r = out->mutable_range_with_bitmap();
      r->set_start(segment.start);
      r->set_end(segment.end);
      r->set_bitmap(std::string(segment.bitmap.begin(), segment.bitmap.end()));
      break;
    }
    case Kind::kSortedArray:
      EncodeArray(segment.values, out->mutable_sorted_array());
      break;
    case Kind::kArray:
      EncodeArray(segment.values, out->mutable_array());
      break;
  }
}

template <typename Message>
Status ParseMessage(std::string_view bytes, const std::string& what, const char* type,
                    Message* out) {
  if (bytes.size() > static_cast<size_t>(INT_MAX)) {
    return Status::Invalid(what, ": ", type, " of ", bytes.size(), " bytes is too large");
  }
  if (!util::ParseMessage(bytes, out)) {
    return Status::Invalid(what, ": malformed ", type, " protobuf (", bytes.size(), " bytes)");
  }
  return Status::OK();
}

// Whether bit i of an LSB-first bitmap is set; bits past the data read as clear.
bool BitSet(const std::vector<uint8_t>& bitmap, uint64_t i) {
  const uint64_t byte = i / 8;
  return byte < bitmap.size() && ((bitmap[byte] >> (i % 8)) & 1) != 0;
}

}  // namespace

// ---------------------------------------------------------------------------
// U64Segment

uint64_t U64Segment::Length() const {
  switch (kind) {
    case Kind::kRange:
      return Span(start, end);
    case Kind::kRangeWithHoles: {
      // Counts distinct in-range holes so hand-built segments can't underflow.
      uint64_t holes = 0;
      for (size_t i = 0; i < values.size(); ++i) {
        const uint64_t h = values[i];
        if (h >= start && h < end && (i == 0 || h != values[i - 1])) ++holes;
      }
      const uint64_t span = Span(start, end);
      return holes > span ? 0 : span - holes;
    }
    case Kind::kRangeWithBitmap: {
      const uint64_t span = Span(start, end);
      const uint64_t full_bytes = std::min<uint64_t>(span / 8, bitmap.size());
      uint64_t count = 0;
      for (uint64_t b = 0; b < full_bytes; ++b) count += std::popcount(bitmap[b]);
      for (uint64_t i = full_bytes * 8; i < span && i / 8 < bitmap.size(); ++i) {
        count += BitSet(bitmap, i) ? 1 : 0;
      }
      return count;
    }
    case Kind::kSortedArray:
    case Kind::kArray:
      return values.size();
  }
  return 0;
}

void U64Segment::AppendTo(std::vector<uint64_t>* out) const {
  switch (kind) {
    case Kind::kRange:
      for (uint64_t v = start; v < end; ++v) out->push_back(v);
      break;
    case Kind::kRangeWithHoles: {
      // Walk the range and the (sorted) holes together.
      size_t h = 0;
      for (uint64_t v = start; v < end; ++v) {
        while (h < values.size() && values[h] < v) ++h;
        if (h < values.size() && values[h] == v) continue;
        out->push_back(v);
      }
      break;
    }
    case Kind::kRangeWithBitmap: {
      const uint64_t span = Span(start, end);
      const uint64_t limit = std::min<uint64_t>(span, static_cast<uint64_t>(bitmap.size()) * 8);
      for (uint64_t i = 0; i < limit; ++i) {
        if (BitSet(bitmap, i)) out->push_back(start + i);
      }
      break;
    }
    case Kind::kSortedArray:
    case Kind::kArray:
      out->insert(out->end(), values.begin(), values.end());
      break;
  }
}

// ---------------------------------------------------------------------------
// RowIdSequence

Result<RowIdSequence> RowIdSequence::Parse(std::string_view bytes, const std::string& what) {
  pbt::RowIdSequence pb;
  LANCE_RETURN_NOT_OK(ParseMessage(bytes, what, "RowIdSequence", &pb));
  std::vector<U64Segment> segments(pb.segments_size());
  uint64_t total = 0;
  for (int i = 0; i < pb.segments_size(); ++i) {
    const std::string where = what + ": segment " + std::to_string(i);
    LANCE_RETURN_NOT_OK(DecodeSegment(pb.segments(i), where, &segments[i]));
    total += segments[i].Length();  // each <= 2^32, so no overflow
    if (total > kMaxRows) {
      return Status::Invalid(what, ": row id sequence has more than 2^32 rows");
    }
  }
  return RowIdSequence(std::move(segments));
}

RowIdSequence RowIdSequence::FromRange(uint64_t start, uint64_t count) {
  U64Segment segment;
  segment.kind = U64Segment::Kind::kRange;
  segment.start = start;
  segment.end = count > kU64Max - start ? kU64Max : start + count;
  return RowIdSequence({std::move(segment)});
}

U64Segment U64Segment::FromValues(const std::vector<uint64_t>& values) {
  if (values.empty()) return U64Segment();

  bool sorted = true;
  bool distinct = true;
  for (size_t i = 1; i < values.size(); ++i) {
    if (values[i] < values[i - 1]) sorted = false;
    if (values[i] == values[i - 1]) distinct = false;
  }
  U64Segment segment;
  if (!sorted) {
    segment.kind = Kind::kArray;
    segment.values = values;
    return segment;
  }

  const uint64_t min = values.front();
  const uint64_t max = values.back();
  const uint64_t n = values.size();
  // Range kinds need distinct values and an exclusive end that fits in u64.
  if (!distinct || max == kU64Max) {
    segment.kind = Kind::kSortedArray;
    segment.values = values;
    return segment;
  }
  const uint64_t span = max - min + 1;  // >= n since values are distinct
  const uint64_t holes = span - n;
  if (holes == 0) {
    segment.kind = Kind::kRange;
    segment.start = min;
    segment.end = max + 1;
    return segment;
  }

  // Estimated encoded sizes, as the reference writer computes them; 128-bit so
  // huge spans cannot wrap. Ties go to holes, then bitmap.
  using u128 = unsigned __int128;
  const u128 holes_size = 24 + u128{4} * holes;
  const u128 bitmap_size = 24 + (u128{span} + 7) / 8;
  const u128 array_size = 24 + u128{2} * n;
  const u128 best = std::min({holes_size, bitmap_size, array_size});

  segment.start = min;
  segment.end = max + 1;
  if (best == holes_size) {
    segment.kind = Kind::kRangeWithHoles;
    segment.values.reserve(holes);
    uint64_t expect = min;
    for (uint64_t v : values) {
      for (; expect < v; ++expect) segment.values.push_back(expect);
      expect = v + 1;
    }
  } else if (best == bitmap_size) {
    segment.kind = Kind::kRangeWithBitmap;
    segment.bitmap.assign((span + 7) / 8, 0);
    for (uint64_t v : values) {
      const uint64_t i = v - min;
      segment.bitmap[i / 8] |= static_cast<uint8_t>(1u << (i % 8));
    }
  } else {
    segment.kind = Kind::kSortedArray;
    segment.start = segment.end = 0;
    segment.values = values;
  }
  return segment;
}

U64Segment U64Segment::Slice(uint64_t offset, uint64_t count) const {
  if (count == 0) return U64Segment();
  std::vector<uint64_t> all;
  AppendTo(&all);
  const uint64_t from = std::min<uint64_t>(offset, all.size());
  const uint64_t to = std::min<uint64_t>(from + count, all.size());
  return FromValues(std::vector<uint64_t>(all.begin() + static_cast<std::ptrdiff_t>(from),
                                          all.begin() + static_cast<std::ptrdiff_t>(to)));
}

void U64Segment::Mask(const std::vector<uint32_t>& positions) {
  if (positions.empty()) return;
  std::vector<uint64_t> all;
  AppendTo(&all);
  std::vector<uint64_t> kept;
  kept.reserve(all.size());
  auto p = positions.begin();
  for (uint64_t i = 0; i < all.size(); ++i) {
    if (p != positions.end() && *p == i) {
      ++p;
      continue;
    }
    kept.push_back(all[i]);
  }
  if (kept.empty()) {
    *this = U64Segment();
  } else if (kind == Kind::kArray) {
    values = std::move(kept);  // the reference keeps an unsorted kind unsorted
  } else {
    *this = FromValues(kept);
  }
}

RowIdSequence RowIdSequence::FromValues(const std::vector<uint64_t>& values) {
  if (values.empty()) return RowIdSequence();
  return RowIdSequence({U64Segment::FromValues(values)});
}

namespace {

// Splits ascending physical `positions` among consecutive pieces of the given
// lengths and masks each piece; returns false for a position past the end.
template <typename Each>
bool SplitPositions(const std::vector<uint32_t>& positions, size_t pieces, Each each_length_and_mask) {
  auto p = positions.begin();
  uint64_t offset = 0;
  std::vector<uint32_t> local;
  for (size_t i = 0; i < pieces; ++i) {
    const uint64_t end = offset + each_length_and_mask(i, nullptr);
    local.clear();
    for (; p != positions.end() && *p < end; ++p) local.push_back(static_cast<uint32_t>(*p - offset));
    if (!local.empty()) each_length_and_mask(i, &local);
    offset = end;
  }
  return p == positions.end();
}

}  // namespace

void RowIdSequence::Mask(const std::vector<uint32_t>& positions) {
  SplitPositions(positions, segments_.size(), [&](size_t i, const std::vector<uint32_t>* local) -> uint64_t {
    if (local) segments_[i].Mask(*local);
    return segments_[i].Length();
  });
  std::erase_if(segments_, [](const U64Segment& s) { return s.Length() == 0; });
}

void RowIdSequence::CoalesceRanges() {
  std::vector<U64Segment> out;
  out.reserve(segments_.size());
  for (size_t i = 0; i < segments_.size();) {
    size_t j = i;
    while (j < segments_.size() && segments_[j].kind == U64Segment::Kind::kRange) ++j;
    if (j - i >= 2) {
      std::vector<uint64_t> values;
      for (size_t k = i; k < j; ++k) segments_[k].AppendTo(&values);
      out.push_back(U64Segment::FromValues(values));
      i = j;
    } else {
      out.push_back(std::move(segments_[i]));
      ++i;
    }
  }
  segments_ = std::move(out);
}

std::string RowIdSequence::Serialize() const {
  pbt::RowIdSequence pb;
  for (const auto& segment : segments_) EncodeSegment(segment, pb.add_segments());
  return pb.SerializeAsString();
}

void RowIdSequence::Extend(RowIdSequence other) {
  using Kind = U64Segment::Kind;
  auto next = other.segments_.begin();
  if (!segments_.empty() && next != other.segments_.end() && segments_.back().kind == Kind::kRange &&
      next->kind == Kind::kRange && segments_.back().end == next->start) {
    segments_.back().end = next->end;
    ++next;
  }
  segments_.insert(segments_.end(), std::make_move_iterator(next), std::make_move_iterator(other.segments_.end()));
}

uint64_t RowIdSequence::Length() const {
  uint64_t total = 0;
  for (const auto& segment : segments_) total += segment.Length();
  return total;
}

std::vector<uint64_t> RowIdSequence::ToVector() const {
  std::vector<uint64_t> out;
  out.reserve(Length());
  for (const auto& segment : segments_) segment.AppendTo(&out);
  return out;
}

// ---------------------------------------------------------------------------
// RowVersionSequence

Result<RowVersionSequence> RowVersionSequence::Parse(std::string_view bytes,
                                                     const std::string& what) {
  pbt::RowDatasetVersionSequence pb;
  LANCE_RETURN_NOT_OK(ParseMessage(bytes, what, "RowDatasetVersionSequence", &pb));
  std::vector<VersionRun> runs;
  runs.reserve(pb.runs_size());
  uint64_t total = 0;
  for (int i = 0; i < pb.runs_size(); ++i) {
    const auto& run = pb.runs(i);
    const std::string where = what + ": version run " + std::to_string(i);
    if (!run.has_span()) return Status::Invalid(where, ": missing span");
    // Any segment kind is accepted; only the number of rows it covers matters.
    U64Segment span;
    LANCE_RETURN_NOT_OK(DecodeSegment(run.span(), where, &span));
    const uint64_t length = span.Length();
    runs.push_back(VersionRun{length, run.version(), std::move(span)});
    total += runs.back().length;
    if (total > kMaxRows) {
      return Status::Invalid(what, ": version sequence covers more than 2^32 rows");
    }
  }
  return RowVersionSequence(std::move(runs));
}

std::string RowVersionSequence::Serialize() const {
  pbt::RowDatasetVersionSequence pb;
  uint64_t start = 0;
  for (const auto& run : runs_) {
    auto* out = pb.add_runs();
    if (run.span && run.span->Length() == run.length) {
      EncodeSegment(*run.span, out->mutable_span());
    } else {
      auto* range = out->mutable_span()->mutable_range();
      range->set_start(start);
      range->set_end(start + run.length);
    }
    out->set_version(run.version);
    start += run.length;
  }
  return pb.SerializeAsString();
}

void RowVersionSequence::Append(uint64_t length, uint64_t version) {
  if (length == 0) return;
  if (!runs_.empty() && runs_.back().version == version) {
    runs_.back().length += length;
    runs_.back().span.reset();  // no longer the span it was read with
  } else {
    runs_.push_back({length, version, std::nullopt});
  }
}

namespace {

// The span a run is serialized with, `start` being the rows before it.
U64Segment SpanOf(const VersionRun& run, uint64_t start) {
  if (run.span && run.span->Length() == run.length) return *run.span;
  U64Segment range;
  range.start = start;
  range.end = start + run.length;
  return range;
}

}  // namespace

void RowVersionSequence::Mask(const std::vector<uint32_t>& positions) {
  if (positions.empty()) return;
  // Spans are positions in the sequence as it was: fix them before masking.
  uint64_t start = 0;
  for (auto& run : runs_) {
    run.span = SpanOf(run, start);
    start += run.length;
  }
  SplitPositions(positions, runs_.size(), [&](size_t i, const std::vector<uint32_t>* local) -> uint64_t {
    VersionRun& run = runs_[i];
    if (local) {
      run.span->Mask(*local);
      run.length = run.span->Length();
    }
    return run.length;
  });
  std::erase_if(runs_, [](const VersionRun& r) { return r.length == 0; });
}

uint64_t RowVersionSequence::Length() const {
  uint64_t total = 0;
  for (const auto& run : runs_) total += run.length;
  return total;
}

std::vector<uint64_t> RowVersionSequence::ToVector() const {
  std::vector<uint64_t> out;
  out.reserve(Length());
  for (const auto& run : runs_) out.insert(out.end(), run.length, run.version);
  return out;
}

}  // namespace lance::table

// ---------------------------------------------------------------------------
// SequenceRechunker

namespace lance::table {

namespace {

// Cuts consecutive pieces of the given lengths at the chunk boundaries:
// calls piece(i, offset, count) for each part of piece i, close() at each
// chunk's end. `next` and `filled` are the chunk being filled and its rows.
template <typename Piece, typename Close>
Status CutPieces(const std::vector<uint64_t>& sizes, size_t* next, uint64_t* filled, size_t pieces,
                 const std::vector<uint64_t>& lengths, Piece piece, Close close) {
  for (size_t i = 0; i < pieces; ++i) {
    uint64_t offset = 0;
    while (offset < lengths[i]) {
      while (*next < sizes.size() && sizes[*next] == 0) {  // empty chunks close at once
        close();
        ++*next;
      }
      if (*next == sizes.size()) {
        return Status::Invalid("re-chunking row ids: ", lengths[i] - offset, " rows left after filling ",
                               sizes.size(), " chunks");
      }
      const uint64_t take = std::min(lengths[i] - offset, sizes[*next] - *filled);
      piece(i, offset, take);
      offset += take;
      *filled += take;
      if (*filled == sizes[*next]) {
        close();
        ++*next;
        *filled = 0;
      }
    }
  }
  return Status::OK();
}

}  // namespace

Status SequenceRechunker::Push(const RowIdSequence& ids, const RowVersionSequence& created,
                               const RowVersionSequence& updated, std::vector<RowIdSequence>* ids_out,
                               std::vector<RowVersionSequence>* created_out,
                               std::vector<RowVersionSequence>* updated_out) {
  if (ids.Length() != created.Length() || ids.Length() != updated.Length()) {
    return Status::Invalid("re-chunking row ids: ", ids.Length(), " row ids but ", created.Length(), " and ",
                           updated.Length(), " rows of versions");
  }
  const size_t next = next_;
  const uint64_t filled = filled_;
  std::vector<uint64_t> lengths;
  for (const auto& s : ids.segments()) lengths.push_back(s.Length());
  LANCE_RETURN_NOT_OK(CutPieces(
      sizes_, &next_, &filled_, lengths.size(), lengths,
      [&](size_t i, uint64_t offset, uint64_t count) {
        ids_.Extend(RowIdSequence({ids.segments()[i].Slice(offset, count)}));
      },
      [&] { ids_out->push_back(std::exchange(ids_, RowIdSequence())); }));
  auto versions = [&](const RowVersionSequence& seq, std::vector<VersionRun>* pending,
                      std::vector<RowVersionSequence>* out) -> Status {
    size_t n = next;
    uint64_t f = filled;
    std::vector<uint64_t> run_lengths;
    uint64_t start = 0;
    std::vector<U64Segment> spans;
    for (const auto& r : seq.runs()) {
      run_lengths.push_back(r.length);
      spans.push_back(SpanOf(r, start));
      start += r.length;
    }
    return CutPieces(
        sizes_, &n, &f, run_lengths.size(), run_lengths,
        [&](size_t i, uint64_t offset, uint64_t count) {
          pending->push_back(VersionRun{count, seq.runs()[i].version, spans[i].Slice(offset, count)});
        },
        [&] { out->push_back(RowVersionSequence(std::exchange(*pending, {}))); });
  };
  LANCE_RETURN_NOT_OK(versions(created, &created_, created_out));
  return versions(updated, &updated_, updated_out);
}

}  // namespace lance::table
