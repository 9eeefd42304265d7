#include "lance/table/row_id_sequence.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "lance/rowids.pb.h"

namespace lance::table {
namespace {

namespace pbt = ::lance::pb::table;
using Kind = U64Segment::Kind;

std::string LittleEndian(const std::vector<uint64_t>& values, int width) {
  std::string out;
  for (uint64_t v : values) {
    for (int i = 0; i < width; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
  }
  return out;
}

std::vector<uint64_t> Iota(uint64_t start, uint64_t count) {
  std::vector<uint64_t> v(count);
  std::iota(v.begin(), v.end(), start);
  return v;
}

// Serializes a one-segment sequence built with the generated classes.
std::string OneSegment(const pbt::U64Segment& segment) {
  pbt::RowIdSequence seq;
  *seq.add_segments() = segment;
  return seq.SerializeAsString();
}

pbt::RowIdSequence ToProto(const RowIdSequence& seq) {
  pbt::RowIdSequence pb;
  EXPECT_TRUE(pb.ParseFromString(seq.Serialize()));
  return pb;
}

std::vector<uint64_t> ParseValues(const std::string& bytes) {
  auto parsed = RowIdSequence::Parse(bytes, "test");
  EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
  return parsed.ok() ? parsed->ToVector() : std::vector<uint64_t>{};
}

void ExpectInvalid(const std::string& bytes, const std::string& fragment) {
  auto parsed = RowIdSequence::Parse(bytes, "row ids of fragment 7");
  ASSERT_FALSE(parsed.ok()) << "expected an error mentioning '" << fragment << "'";
  EXPECT_TRUE(parsed.status().IsInvalid()) << parsed.status().ToString();
  EXPECT_NE(parsed.status().message().find("row ids of fragment 7"), std::string::npos)
      << parsed.status().ToString();
  EXPECT_NE(parsed.status().message().find(fragment), std::string::npos)
      << parsed.status().ToString();
}

// ---------------------------------------------------------------------------
// Round trips of every segment kind.

TEST(RowIdSequenceTest, RoundTripEverySegmentKind) {
  U64Segment range;
  range.kind = Kind::kRange;
  range.start = 10;
  range.end = 15;

  U64Segment holes;
  holes.kind = Kind::kRangeWithHoles;
  holes.start = 100;
  holes.end = 110;
  holes.values = {101, 105, 109};

  U64Segment bitmap;
  bitmap.kind = Kind::kRangeWithBitmap;
  bitmap.start = 200;
  bitmap.end = 212;
  bitmap.bitmap = {0b10100101, 0b00001001};  // 200,202,205,207,208,211

  U64Segment sorted;
  sorted.kind = Kind::kSortedArray;
  sorted.values = {1000, 1000000, 5000000000ull};

  U64Segment unsorted;
  unsorted.kind = Kind::kArray;
  unsorted.values = {9, 3, 70000, 4};

  RowIdSequence seq({range, holes, bitmap, sorted, unsorted});
  const std::vector<uint64_t> expected = {10,  11,  12,  13,  14,  100,  102,     103,
                                          104, 106, 107, 108, 200, 202,  205,     207,
                                          208, 211, 1000, 1000000, 5000000000ull, 9,
                                          3,   70000, 4};
  EXPECT_EQ(seq.ToVector(), expected);
  EXPECT_EQ(seq.Length(), expected.size());

  auto parsed = RowIdSequence::Parse(seq.Serialize(), "round trip");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  ASSERT_EQ(parsed->segments().size(), 5u);
  EXPECT_EQ(parsed->segments()[0].kind, Kind::kRange);
  EXPECT_EQ(parsed->segments()[1].kind, Kind::kRangeWithHoles);
  EXPECT_EQ(parsed->segments()[1].values, holes.values);
  EXPECT_EQ(parsed->segments()[2].kind, Kind::kRangeWithBitmap);
  EXPECT_EQ(parsed->segments()[2].bitmap, bitmap.bitmap);
  EXPECT_EQ(parsed->segments()[3].kind, Kind::kSortedArray);
  EXPECT_EQ(parsed->segments()[4].kind, Kind::kArray);
  EXPECT_EQ(parsed->ToVector(), expected);
  EXPECT_EQ(parsed->Length(), expected.size());
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(parsed->segments()[i].Length(), seq.segments()[i].Length()) << "segment " << i;
  }
}

TEST(RowIdSequenceTest, RoundTripEveryArrayWidth) {
  const std::vector<std::vector<uint64_t>> inputs = {
      {7, 3, 65535 + 3},                     // u16: max - min == 65535
      {7, 3, 65536 + 3},                     // u32
      {7, 3, 0xFFFFFFFFull + 3},             // u32: max - min == 2^32 - 1
      {7, 3, 0x100000000ull + 3},            // u64
      {~0ull, 0, 12345678901234ull},         // u64 with the extremes
  };
  for (const auto& values : inputs) {
    auto seq = RowIdSequence::FromValues(values);
    auto parsed = RowIdSequence::Parse(seq.Serialize(), "widths");
    ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
    EXPECT_EQ(parsed->ToVector(), values);
  }
}

TEST(RowIdSequenceTest, FromRange) {
  auto seq = RowIdSequence::FromRange(1ull << 40, 4);
  ASSERT_EQ(seq.segments().size(), 1u);
  EXPECT_EQ(seq.segments()[0].kind, Kind::kRange);
  EXPECT_EQ(seq.ToVector(), Iota(1ull << 40, 4));
  auto pb = ToProto(seq);
  ASSERT_EQ(pb.segments_size(), 1);
  ASSERT_TRUE(pb.segments(0).has_range());
  EXPECT_EQ(pb.segments(0).range().start(), 1ull << 40);
  EXPECT_EQ(pb.segments(0).range().end(), (1ull << 40) + 4);

  auto empty = RowIdSequence::FromRange(5, 0);
  EXPECT_EQ(empty.Length(), 0u);
  auto parsed = RowIdSequence::Parse(empty.Serialize(), "empty range");
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->Length(), 0u);
}

TEST(RowIdSequenceTest, EmptySequence) {
  auto seq = RowIdSequence::FromValues({});
  EXPECT_TRUE(seq.segments().empty());
  EXPECT_EQ(seq.Length(), 0u);
  EXPECT_EQ(seq.Serialize(), "");
  auto parsed = RowIdSequence::Parse("", "empty");
  ASSERT_TRUE(parsed.ok());
  EXPECT_TRUE(parsed->segments().empty());
}

// ---------------------------------------------------------------------------
// Hand-built protobuf bytes for each variant.

TEST(RowIdSequenceTest, ParsesHandBuiltRange) {
  pbt::U64Segment s;
  s.mutable_range()->set_start(42);
  s.mutable_range()->set_end(46);
  EXPECT_EQ(ParseValues(OneSegment(s)), (std::vector<uint64_t>{42, 43, 44, 45}));
}

TEST(RowIdSequenceTest, ParsesHandBuiltRangeWithHolesInEveryWidth) {
  const std::vector<uint64_t> holes = {1001, 1003};
  const std::vector<uint64_t> expected = {1000, 1002, 1004};
  for (int width : {2, 4, 8}) {
    pbt::U64Segment s;
    auto* r = s.mutable_range_with_holes();
    r->set_start(1000);
    r->set_end(1005);
    if (width == 2) {
      r->mutable_holes()->mutable_u16_array()->set_base(1001);
      r->mutable_holes()->mutable_u16_array()->set_offsets(LittleEndian({0, 2}, 2));
    } else if (width == 4) {
      r->mutable_holes()->mutable_u32_array()->set_base(1000);
      r->mutable_holes()->mutable_u32_array()->set_offsets(LittleEndian({1, 3}, 4));
    } else {
      r->mutable_holes()->mutable_u64_array()->set_values(LittleEndian(holes, 8));
    }
    EXPECT_EQ(ParseValues(OneSegment(s)), expected) << "width " << width;
  }
}

TEST(RowIdSequenceTest, ParsesHandBuiltBitmapLsbFirst) {
  const uint64_t start = 5000;
  pbt::U64Segment s;
  auto* r = s.mutable_range_with_bitmap();
  r->set_start(start);
  r->set_end(start + 10);
  r->set_bitmap(std::string("\x09\x02", 2));  // bits 0, 3 and 9
  EXPECT_EQ(ParseValues(OneSegment(s)), (std::vector<uint64_t>{start, start + 3, start + 9}));
}

TEST(RowIdSequenceTest, ParsesHandBuiltArraysInEveryWidth) {
  for (bool sorted : {true, false}) {
    const std::vector<uint64_t> rel = sorted ? std::vector<uint64_t>{0, 5, 60000}
                                             : std::vector<uint64_t>{60000, 0, 5};
    for (int width : {2, 4, 8}) {
      const uint64_t base = width == 8 ? 0 : 77;
      std::vector<uint64_t> expected;
      for (uint64_t v : rel) expected.push_back(v + 77);
      pbt::EncodedU64Array a;
      if (width == 2) {
        a.mutable_u16_array()->set_base(base);
        a.mutable_u16_array()->set_offsets(LittleEndian(rel, 2));
      } else if (width == 4) {
        a.mutable_u32_array()->set_base(base);
        a.mutable_u32_array()->set_offsets(LittleEndian(rel, 4));
      } else {
        a.mutable_u64_array()->set_values(LittleEndian(expected, 8));
      }
      pbt::U64Segment s;
      if (sorted) {
        *s.mutable_sorted_array() = a;
      } else {
        *s.mutable_array() = a;
      }
      auto parsed = RowIdSequence::Parse(OneSegment(s), "arrays");
      ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
      ASSERT_EQ(parsed->segments().size(), 1u);
      EXPECT_EQ(parsed->segments()[0].kind, sorted ? Kind::kSortedArray : Kind::kArray);
      EXPECT_EQ(parsed->ToVector(), expected) << "width " << width << " sorted " << sorted;
    }
  }
}

TEST(RowIdSequenceTest, ParsesSeveralSegmentsInOrder) {
  pbt::RowIdSequence seq;
  auto* a = seq.add_segments()->mutable_range();
  a->set_start(50);
  a->set_end(52);
  seq.add_segments()->mutable_array()->mutable_u64_array()->set_values(
      LittleEndian({3, 1}, 8));
  auto* b = seq.add_segments()->mutable_range();
  b->set_start(0);
  b->set_end(1);
  EXPECT_EQ(ParseValues(seq.SerializeAsString()), (std::vector<uint64_t>{50, 51, 3, 1, 0}));
}

// ---------------------------------------------------------------------------
// The writer's choice of segment.

pbt::U64Segment OnlySegment(const std::vector<uint64_t>& values) {
  auto seq = RowIdSequence::FromValues(values);
  auto pb = ToProto(seq);
  EXPECT_EQ(pb.segments_size(), 1);
  // Whatever was chosen must decode back to the input.
  EXPECT_EQ(ParseValues(seq.Serialize()), values);
  return pb.segments_size() == 1 ? pb.segments(0) : pbt::U64Segment();
}

TEST(RowIdSequenceTest, WriterUsesRangeForContiguous) {
  auto s = OnlySegment(Iota(100, 100));
  ASSERT_TRUE(s.has_range());
  EXPECT_EQ(s.range().start(), 100u);
  EXPECT_EQ(s.range().end(), 200u);
  auto single = OnlySegment({7});
  ASSERT_TRUE(single.has_range());
  EXPECT_EQ(single.range().end(), 8u);
}

TEST(RowIdSequenceTest, WriterUsesSortedArrayForSparseHugeSpan) {
  auto s = OnlySegment({0, 1000000, 2000000000});
  ASSERT_TRUE(s.has_sorted_array());
  ASSERT_TRUE(s.sorted_array().has_u32_array());
  EXPECT_EQ(s.sorted_array().u32_array().base(), 0u);
  EXPECT_EQ(s.sorted_array().u32_array().offsets(), LittleEndian({0, 1000000, 2000000000}, 4));
}

TEST(RowIdSequenceTest, WriterUsesHolesForDenseWithFewHoles) {
  auto values = Iota(1000, 1000);
  values.erase(values.begin() + 500);  // drop 1500
  auto s = OnlySegment(values);
  ASSERT_TRUE(s.has_range_with_holes());
  EXPECT_EQ(s.range_with_holes().start(), 1000u);
  EXPECT_EQ(s.range_with_holes().end(), 2000u);
  ASSERT_TRUE(s.range_with_holes().holes().has_u16_array());
  EXPECT_EQ(s.range_with_holes().holes().u16_array().base(), 1500u);  // absolute hole
  EXPECT_EQ(s.range_with_holes().holes().u16_array().offsets(), LittleEndian({0}, 2));
}

TEST(RowIdSequenceTest, WriterUsesBitmapForMidDensity) {
  std::vector<uint64_t> values;
  for (uint64_t v = 0; v < 1000; v += 2) values.push_back(v + 64);
  auto s = OnlySegment(values);
  ASSERT_TRUE(s.has_range_with_bitmap());
  EXPECT_EQ(s.range_with_bitmap().start(), 64u);
  EXPECT_EQ(s.range_with_bitmap().end(), 64u + 999);
  const std::string& bitmap = s.range_with_bitmap().bitmap();
  ASSERT_EQ(bitmap.size(), 125u);  // ceil(999 / 8)
  EXPECT_EQ(static_cast<uint8_t>(bitmap[0]), 0x55);
  EXPECT_EQ(static_cast<uint8_t>(bitmap[124]), 0x55 & 0x7F);  // bit 998 is the last
}

TEST(RowIdSequenceTest, WriterBitmapIsLsbFirst) {
  const uint64_t start = 1u << 20;
  auto s = OnlySegment({start, start + 3, start + 9});
  ASSERT_TRUE(s.has_range_with_bitmap());
  EXPECT_EQ(s.range_with_bitmap().start(), start);
  EXPECT_EQ(s.range_with_bitmap().end(), start + 10);
  EXPECT_EQ(s.range_with_bitmap().bitmap(), std::string("\x09\x02", 2));
}

TEST(RowIdSequenceTest, WriterUsesArrayForUnsorted) {
  auto s = OnlySegment({5, 3, 4});
  ASSERT_TRUE(s.has_array());
  ASSERT_TRUE(s.array().has_u16_array());
  EXPECT_EQ(s.array().u16_array().base(), 3u);  // base is the minimum, not the first
  EXPECT_EQ(s.array().u16_array().offsets(), LittleEndian({2, 0, 1}, 2));
}

TEST(RowIdSequenceTest, WriterUsesSortedArrayForDuplicates) {
  auto s = OnlySegment({1, 1, 2});
  EXPECT_TRUE(s.has_sorted_array());
  auto t = OnlySegment({1, 1, 3});  // same count as the span, still not a range
  EXPECT_TRUE(t.has_sorted_array());
}

TEST(RowIdSequenceTest, WriterHandlesMaxValue) {
  const uint64_t max = ~0ull;
  auto s = OnlySegment({max - 1, max});  // contiguous, but end would overflow
  EXPECT_TRUE(s.has_sorted_array());
}

TEST(RowIdSequenceTest, WriterTieBreaks) {
  // span 32, one hole: holes 24+4 == bitmap 24+4 < array 24+62 -> holes.
  auto values = Iota(0, 32);
  values.erase(values.begin() + 7);
  EXPECT_TRUE(OnlySegment(values).has_range_with_holes());
  // span 80, five values: bitmap 24+10 == array 24+10 < holes -> bitmap.
  EXPECT_TRUE(OnlySegment({0, 20, 40, 60, 79}).has_range_with_bitmap());
  // One byte fewer for the array wins.
  EXPECT_TRUE(OnlySegment({0, 20, 40, 60, 80}).has_sorted_array());
}

TEST(RowIdSequenceTest, WriterArrayWidthSelection) {
  auto u16 = OnlySegment({5, 10, 65535 + 5});
  ASSERT_TRUE(u16.has_sorted_array());
  EXPECT_TRUE(u16.sorted_array().has_u16_array());
  EXPECT_EQ(u16.sorted_array().u16_array().base(), 5u);
  EXPECT_EQ(u16.sorted_array().u16_array().offsets(), LittleEndian({0, 5, 65535}, 2));

  auto u32 = OnlySegment({5, 10, 65536 + 5});
  ASSERT_TRUE(u32.has_sorted_array());
  EXPECT_TRUE(u32.sorted_array().has_u32_array());
  EXPECT_EQ(u32.sorted_array().u32_array().offsets(), LittleEndian({0, 5, 65536}, 4));

  auto u32_edge = OnlySegment({5, 0xFFFFFFFFull + 5});
  EXPECT_TRUE(u32_edge.sorted_array().has_u32_array());

  auto u64 = OnlySegment({5, 0x100000000ull + 5});
  ASSERT_TRUE(u64.sorted_array().has_u64_array());
  EXPECT_EQ(u64.sorted_array().u64_array().values(), LittleEndian({5, 0x100000000ull + 5}, 8));
}

TEST(RowIdSequenceTest, EmptyArrayIsWrittenAsU64) {
  U64Segment s;
  s.kind = Kind::kArray;
  auto pb = ToProto(RowIdSequence({s}));
  ASSERT_EQ(pb.segments_size(), 1);
  ASSERT_TRUE(pb.segments(0).has_array());
  ASSERT_TRUE(pb.segments(0).array().has_u64_array());
  EXPECT_TRUE(pb.segments(0).array().u64_array().values().empty());
}

// ---------------------------------------------------------------------------
// Corrupt inputs.

TEST(RowIdSequenceTest, GarbageBytesAreInvalid) {
  ExpectInvalid(std::string("\xff\xff\xff\xff", 4), "malformed");
  ExpectInvalid(std::string("\x0a\x10\x0a", 3), "malformed");  // length past the end
  // A valid message cut short.
  auto bytes = RowIdSequence::FromValues({0, 3, 9, 100000, 7}).Serialize();
  ExpectInvalid(bytes.substr(0, bytes.size() - 3), "malformed");
}

TEST(RowIdSequenceTest, BadArrayWidthsAreInvalid) {
  for (int width : {2, 4, 8}) {
    pbt::U64Segment s;
    auto* a = s.mutable_array();
    std::string odd(width + 1, '\x01');
    if (width == 2) a->mutable_u16_array()->set_offsets(odd);
    if (width == 4) a->mutable_u32_array()->set_offsets(odd);
    if (width == 8) a->mutable_u64_array()->set_values(odd);
    ExpectInvalid(OneSegment(s), "not a multiple of " + std::to_string(width));
  }
}

TEST(RowIdSequenceTest, BitmapLengthMismatchIsInvalid) {
  for (size_t len : {0, 1, 3}) {
    pbt::U64Segment s;
    auto* r = s.mutable_range_with_bitmap();
    r->set_start(10);
    r->set_end(20);  // needs 2 bytes
    r->set_bitmap(std::string(len, '\x01'));
    ExpectInvalid(OneSegment(s), "expected 2");
  }
}

TEST(RowIdSequenceTest, BitmapPaddingBitsAreInvalid) {
  pbt::U64Segment s;
  auto* r = s.mutable_range_with_bitmap();
  r->set_start(0);
  r->set_end(10);
  r->set_bitmap(std::string("\x01\x04", 2));  // bit 10 is past the end
  ExpectInvalid(OneSegment(s), "past the end");
}

TEST(RowIdSequenceTest, EndBeforeStartIsInvalid) {
  pbt::U64Segment range;
  range.mutable_range()->set_start(10);
  range.mutable_range()->set_end(9);
  ExpectInvalid(OneSegment(range), "before start");

  pbt::U64Segment holes;
  holes.mutable_range_with_holes()->set_start(10);
  holes.mutable_range_with_holes()->set_end(5);
  holes.mutable_range_with_holes()->mutable_holes()->mutable_u64_array();
  ExpectInvalid(OneSegment(holes), "before start");

  pbt::U64Segment bitmap;
  bitmap.mutable_range_with_bitmap()->set_start(10);
  bitmap.mutable_range_with_bitmap()->set_end(2);
  ExpectInvalid(OneSegment(bitmap), "before start");
}

TEST(RowIdSequenceTest, BadHolesAreInvalid) {
  auto make = [](const std::vector<uint64_t>& holes) {
    pbt::U64Segment s;
    auto* r = s.mutable_range_with_holes();
    r->set_start(100);
    r->set_end(110);
    r->mutable_holes()->mutable_u64_array()->set_values(LittleEndian(holes, 8));
    return OneSegment(s);
  };
  ExpectInvalid(make({99}), "outside");
  ExpectInvalid(make({110}), "outside");
  ExpectInvalid(make({105, 103}), "strictly increasing");
  ExpectInvalid(make({103, 103}), "strictly increasing");
  // Relative offsets instead of absolute values land outside the range.
  ExpectInvalid(make({1, 2}), "outside");

  pbt::U64Segment missing;
  missing.mutable_range_with_holes()->set_start(0);
  missing.mutable_range_with_holes()->set_end(4);
  ExpectInvalid(OneSegment(missing), "no holes");
}

TEST(RowIdSequenceTest, UnsetVariantsAreInvalid) {
  pbt::U64Segment empty;
  ExpectInvalid(OneSegment(empty), "no variant");
  pbt::U64Segment no_array;
  no_array.mutable_sorted_array();
  ExpectInvalid(OneSegment(no_array), "no variant");
}

TEST(RowIdSequenceTest, UnsortedSortedArrayIsInvalid) {
  pbt::U64Segment s;
  s.mutable_sorted_array()->mutable_u16_array()->set_offsets(LittleEndian({3, 1}, 2));
  ExpectInvalid(OneSegment(s), "not sorted");
}

TEST(RowIdSequenceTest, OverflowingBaseIsInvalid) {
  pbt::U64Segment s;
  s.mutable_array()->mutable_u32_array()->set_base(~0ull - 1);
  s.mutable_array()->mutable_u32_array()->set_offsets(LittleEndian({1, 2}, 4));
  ExpectInvalid(OneSegment(s), "overflows");
}

TEST(RowIdSequenceTest, AbsurdLengthsAreInvalid) {
  pbt::U64Segment huge;
  huge.mutable_range()->set_start(0);
  huge.mutable_range()->set_end((1ull << 32) + 1);
  ExpectInvalid(OneSegment(huge), "2^32");

  // Each segment fits, but together they exceed what a fragment holds.
  pbt::RowIdSequence seq;
  seq.add_segments()->mutable_range()->set_end(1ull << 32);
  auto* second = seq.add_segments()->mutable_range();
  second->set_start(1ull << 32);
  second->set_end((1ull << 32) + 1);
  ExpectInvalid(seq.SerializeAsString(), "2^32");

  // Exactly 2^32 is allowed (and not materialized here).
  pbt::U64Segment max;
  max.mutable_range()->set_end(1ull << 32);
  auto parsed = RowIdSequence::Parse(OneSegment(max), "max");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->Length(), 1ull << 32);
}

// As the reference's extend: a Range continued by a Range merges; nothing else does.
TEST(RowIdSequenceTest, ExtendMergesContinuingRanges) {
  RowIdSequence seq = RowIdSequence::FromRange(0, 10);
  seq.Extend(RowIdSequence::FromRange(10, 10));
  ASSERT_EQ(seq.segments().size(), 1u);
  EXPECT_EQ(seq.segments()[0].kind, U64Segment::Kind::kRange);
  EXPECT_EQ(seq.segments()[0].end, 20u);
  seq.Extend(RowIdSequence::FromRange(21, 2));  // a gap: a segment of its own
  ASSERT_EQ(seq.segments().size(), 2u);
  seq.Extend(RowIdSequence::FromValues({23, 25, 26}));  // not a Range
  ASSERT_EQ(seq.segments().size(), 3u);
  seq.Extend(RowIdSequence());
  ASSERT_EQ(seq.segments().size(), 3u);
  EXPECT_EQ(seq.ToVector(), (std::vector<uint64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18,
                                                   19, 21, 22, 23, 25, 26}));
}

// ---------------------------------------------------------------------------
// Row version sequences.

TEST(RowVersionSequenceTest, RoundTrip) {
  RowVersionSequence seq({{3, 1}, {2, 5}, {0, 9}, {1, 2}});
  EXPECT_EQ(seq.Length(), 6u);
  EXPECT_EQ(seq.ToVector(), (std::vector<uint64_t>{1, 1, 1, 5, 5, 2}));

  const std::string bytes = seq.Serialize();
  pbt::RowDatasetVersionSequence pb;
  ASSERT_TRUE(pb.ParseFromString(bytes));
  ASSERT_EQ(pb.runs_size(), 4);
  ASSERT_TRUE(pb.runs(0).span().has_range());
  EXPECT_EQ(pb.runs(0).span().range().start(), 0u);
  EXPECT_EQ(pb.runs(0).span().range().end(), 3u);
  EXPECT_EQ(pb.runs(0).version(), 1u);
  // Spans are positions, as pylance writes them: run 1 covers rows 3..5.
  EXPECT_EQ(pb.runs(1).span().range().start(), 3u);
  EXPECT_EQ(pb.runs(1).span().range().end(), 5u);
  EXPECT_EQ(pb.runs(1).version(), 5u);
  EXPECT_EQ(pb.runs(3).span().range().start(), 5u);
  EXPECT_EQ(pb.runs(3).span().range().end(), 6u);

  auto parsed = RowVersionSequence::Parse(bytes, "versions");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  ASSERT_EQ(parsed->runs().size(), 4u);
  EXPECT_EQ(parsed->runs()[1].length, 2u);
  EXPECT_EQ(parsed->runs()[1].version, 5u);
  EXPECT_EQ(parsed->ToVector(), seq.ToVector());
}

TEST(RowVersionSequenceTest, AcceptsAnySpanVariant) {
  pbt::RowDatasetVersionSequence pb;
  auto* a = pb.add_runs();  // a range that does not start at 0
  a->mutable_span()->mutable_range()->set_start(100);
  a->mutable_span()->mutable_range()->set_end(102);
  a->set_version(4);
  auto* b = pb.add_runs();  // three values in an array
  b->mutable_span()->mutable_array()->mutable_u16_array()->set_offsets(
      LittleEndian({9, 1, 5}, 2));
  b->set_version(6);
  auto* c = pb.add_runs();  // bitmap with two bits
  c->mutable_span()->mutable_range_with_bitmap()->set_end(4);
  c->mutable_span()->mutable_range_with_bitmap()->set_bitmap(std::string("\x05", 1));
  c->set_version(7);
  auto parsed = RowVersionSequence::Parse(pb.SerializeAsString(), "versions");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->ToVector(), (std::vector<uint64_t>{4, 4, 6, 6, 6, 7, 7}));
}

TEST(RowVersionSequenceTest, CorruptInputsAreInvalid) {
  auto garbage = RowVersionSequence::Parse(std::string("\x0a\x05\x01", 3), "created_at of 3");
  ASSERT_FALSE(garbage.ok());
  EXPECT_NE(garbage.status().message().find("created_at of 3"), std::string::npos);

  pbt::RowDatasetVersionSequence missing;
  missing.add_runs()->set_version(1);
  auto no_span = RowVersionSequence::Parse(missing.SerializeAsString(), "created_at of 3");
  ASSERT_FALSE(no_span.ok());
  EXPECT_NE(no_span.status().message().find("missing span"), std::string::npos);

  pbt::RowDatasetVersionSequence backwards;
  auto* run = backwards.add_runs();
  run->mutable_span()->mutable_range()->set_start(5);
  run->mutable_span()->mutable_range()->set_end(1);
  auto bad = RowVersionSequence::Parse(backwards.SerializeAsString(), "created_at of 3");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("before start"), std::string::npos);
}

}  // namespace
}  // namespace lance::table

TEST(RowVersionSequenceTest, AppendKeepsRunsMaximal) {
  lance::table::RowVersionSequence seq;
  seq.Append(2, 3);
  seq.Append(1, 3);  // same version: extends the run
  seq.Append(0, 7);  // nothing to add: no empty run
  seq.Append(4, 5);
  seq.Append(1, 3);
  ASSERT_EQ(seq.runs().size(), 3u);
  EXPECT_EQ(seq.runs()[0].length, 3u);
  EXPECT_EQ(seq.runs()[0].version, 3u);
  EXPECT_EQ(seq.runs()[1].length, 4u);
  EXPECT_EQ(seq.runs()[1].version, 5u);
  EXPECT_EQ(seq.runs()[2].length, 1u);
  EXPECT_EQ(seq.Length(), 8u);
  EXPECT_EQ(seq.ToVector(), (std::vector<uint64_t>{3, 3, 3, 5, 5, 5, 5, 3}));
}

namespace lance::table {
namespace {

U64Segment Seg(const std::vector<uint64_t>& values) { return U64Segment::FromValues(values); }

TEST(RowIdSequenceMask, MasksEachSegmentAndDropsEmptyOnes) {
  RowIdSequence seq({Seg({0, 1, 2, 3}), Seg({10}), Seg({9, 5, 7})});
  seq.Mask({0, 3, 4, 6});  // first and last of segment 0, all of segment 1, one of the array
  ASSERT_EQ(seq.segments().size(), 2u);
  EXPECT_EQ(seq.segments()[0].kind, U64Segment::Kind::kRange);
  EXPECT_EQ(seq.segments()[0].start, 1u);
  EXPECT_EQ(seq.segments()[0].end, 3u);
  // An Array stays an Array even when what is left is sorted.
  EXPECT_EQ(seq.segments()[1].kind, U64Segment::Kind::kArray);
  EXPECT_EQ(seq.ToVector(), (std::vector<uint64_t>{1, 2, 9, 7}));
}

TEST(RowIdSequenceMask, SliceReencodes) {
  const U64Segment array = Seg({9, 5, 6, 7});
  const U64Segment tail = array.Slice(1, 3);
  EXPECT_EQ(tail.kind, U64Segment::Kind::kRange);
  EXPECT_EQ(tail.start, 5u);
  EXPECT_EQ(tail.end, 8u);
}

TEST(RowIdSequenceMask, CoalescesRunsOfRanges) {
  RowIdSequence seq({Seg({3}), Seg({17}), Seg({41}), Seg({100, 102}), Seg({200}), Seg({300})});
  seq.CoalesceRanges();
  ASSERT_EQ(seq.segments().size(), 3u);
  EXPECT_EQ(seq.segments()[0].kind, U64Segment::Kind::kRangeWithBitmap);  // 3, 17, 41
  EXPECT_EQ(seq.segments()[1].kind, U64Segment::Kind::kRangeWithBitmap);  // not a Range: kept
  EXPECT_EQ(seq.segments()[2].kind, U64Segment::Kind::kSortedArray);      // 200, 300
  EXPECT_EQ(seq.ToVector(), (std::vector<uint64_t>{3, 17, 41, 100, 102, 200, 300}));
}

TEST(RowVersionSequenceMask, SpansKeepOldPositions) {
  RowVersionSequence seq({{4, 1}, {3, 2}});
  seq.Mask({1, 4});
  ASSERT_EQ(seq.runs().size(), 2u);
  EXPECT_EQ(seq.ToVector(), (std::vector<uint64_t>{1, 1, 1, 2, 2}));
  // Run 0 covers positions 0, 2, 3; run 1 positions 5, 6 (not 3..5).
  auto parsed = RowVersionSequence::Parse(seq.Serialize(), "test");
  ASSERT_TRUE(parsed.ok());
  ASSERT_TRUE(parsed->runs()[1].span.has_value());
  EXPECT_EQ(parsed->runs()[1].span->kind, U64Segment::Kind::kRange);
  EXPECT_EQ(parsed->runs()[1].span->start, 5u);
  std::vector<uint64_t> positions;
  parsed->runs()[0].span->AppendTo(&positions);
  EXPECT_EQ(positions, (std::vector<uint64_t>{0, 2, 3}));
}

TEST(SequenceRechunker, CutsPiecesAtChunkBoundaries) {
  SequenceRechunker rechunker({3, 4});
  std::vector<RowIdSequence> ids;
  std::vector<RowVersionSequence> created, updated;
  RowIdSequence a({Seg({0, 1}), Seg({5, 6})});
  RowVersionSequence va({{4, 1}});
  ASSERT_TRUE(rechunker.Push(a, va, va, &ids, &created, &updated).ok());
  ASSERT_EQ(ids.size(), 1u);  // [0, 1] + [5]: the second segment cut
  EXPECT_EQ(ids[0].segments().size(), 2u);
  EXPECT_EQ(created[0].runs().size(), 1u);
  RowIdSequence b({Seg({7, 8, 9})});
  RowVersionSequence vb({{3, 2}});
  ASSERT_TRUE(rechunker.Push(b, vb, vb, &ids, &created, &updated).ok());
  ASSERT_EQ(ids.size(), 2u);
  // [6] and [7, 8, 9] join into one Range; the version runs stay apart.
  ASSERT_EQ(ids[1].segments().size(), 1u);
  EXPECT_EQ(ids[1].ToVector(), (std::vector<uint64_t>{6, 7, 8, 9}));
  EXPECT_EQ(created[1].runs().size(), 2u);
  EXPECT_TRUE(rechunker.finished());
  EXPECT_FALSE(rechunker.Push(b, vb, vb, &ids, &created, &updated).ok());  // more rows than chunks
}

}  // namespace
}  // namespace lance::table
