#include "lance/file/compression/fastlanes.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

namespace lance::file::compression {
namespace {

std::filesystem::path FixtureDir() {
  return std::filesystem::path(LANCE_TEST_FIXTURES_DIR) / "compression";
}

std::string ReadFixture(const std::string& name) {
  std::ifstream in(FixtureDir() / name, std::ios::binary);
  EXPECT_TRUE(in.good()) << "missing fixture " << name;
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// gen_vectors.py: Lcg and bitpack_values.
struct Lcg {
  uint64_t state;
  uint64_t Next() {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return state >> 33;
  }
};

template <typename T>
std::vector<T> BitpackValues(unsigned width) {
  constexpr unsigned kBits = sizeof(T) * 8;
  Lcg rng{0x9E3779B97F4A7C15ULL ^ ((uint64_t{kBits} << 8) | width)};
  const uint64_t mask = width == 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1;
  std::vector<T> values;
  for (int i = 0; i < 1024; ++i) {
    uint64_t v = (rng.Next() << 31) ^ rng.Next();
    v = (v << 2) ^ rng.Next();
    values.push_back(static_cast<T>(v & mask));
  }
  values[7] = static_cast<T>(mask);
  return values;
}

template <typename T>
std::vector<uint8_t> Pack(const std::vector<T>& values, unsigned width) {
  std::vector<uint8_t> out(FastLanesPackedBytes(width), 0xAA);
  auto st = FastLanesPack<T>(values, width, out);
  EXPECT_TRUE(st.ok()) << st.ToString();
  return out;
}

template <typename T>
std::vector<T> Unpack(std::span<const uint8_t> packed, unsigned width) {
  std::vector<T> out(kFastLanesValues, 0x5A);
  auto st = FastLanesUnpack<T>(packed, width, out);
  EXPECT_TRUE(st.ok()) << st.ToString();
  return out;
}

template <typename T>
void CheckReferenceVector(unsigned width) {
  SCOPED_TRACE("u" + std::to_string(sizeof(T) * 8) + " width " + std::to_string(width));
  const std::string file =
      ReadFixture("bitpack_u" + std::to_string(sizeof(T) * 8) + "_w" + std::to_string(width) + ".bin");
  // InlineBitpacking chunk: one T word holding the width, then the block.
  ASSERT_EQ(file.size(), sizeof(T) + FastLanesPackedBytes(width));
  uint64_t stored_width = 0;
  for (size_t i = sizeof(T); i-- > 0;) stored_width = (stored_width << 8) | static_cast<uint8_t>(file[i]);
  EXPECT_EQ(stored_width, width);
  std::span<const uint8_t> packed(reinterpret_cast<const uint8_t*>(file.data()) + sizeof(T),
                                  FastLanesPackedBytes(width));

  const std::vector<T> expected = BitpackValues<T>(width);
  EXPECT_EQ(Unpack<T>(packed, width), expected);
  const std::vector<uint8_t> ours = Pack<T>(expected, width);
  EXPECT_TRUE(std::equal(ours.begin(), ours.end(), packed.begin(), packed.end()))
      << "packed bytes differ from the reference";
}

TEST(FastLanesTest, MatchesReferenceWriter) {
  CheckReferenceVector<uint8_t>(1);
  CheckReferenceVector<uint8_t>(3);
  CheckReferenceVector<uint8_t>(7);
  CheckReferenceVector<uint16_t>(1);
  CheckReferenceVector<uint16_t>(11);
  CheckReferenceVector<uint32_t>(5);
  CheckReferenceVector<uint32_t>(17);
  CheckReferenceVector<uint32_t>(31);
  CheckReferenceVector<uint64_t>(13);
  CheckReferenceVector<uint64_t>(37);
}

TEST(FastLanesTest, PackedSizes) {
  EXPECT_EQ(FastLanesPackedBytes(0), 0u);
  EXPECT_EQ(FastLanesPackedBytes(1), 128u);
  EXPECT_EQ(FastLanesPackedBytes(3), 384u);
  EXPECT_EQ(FastLanesPackedBytes(64), 8192u);
}

// Hand-derived: for u8 (8 rows of 128 lanes, order {0} for rows 0..7) value
// index r * 128 + l sits in row r of lane l; at width 1 row r of every lane is
// bit r of the lane's single byte, which is packed byte l.
TEST(FastLanesTest, HandDerivedU8Width1) {
  std::vector<uint8_t> values(1024, 0);
  values[3 * 128 + 5] = 1;
  std::vector<uint8_t> expected(128, 0);
  expected[5] = 0x08;
  EXPECT_EQ(Pack<uint8_t>(values, 1), expected);
  EXPECT_EQ(Unpack<uint8_t>(expected, 1), values);
}

// Hand-derived for u16 (64 lanes): value index 64 is row 8 (order[1] = 4,
// 4 * 16 = 64), lane 0, bits 24..26 of lane 0's stream: word 1 of the lane,
// i.e. packed word 64 (bytes 128..129), shifted by 8 -> byte 129.
// Value index 642 = 5 * 128 + 2 is row 5, lane 2, bits 15..17: bit 15 of word
// 2 (byte 5, top bit) and bits 0..1 of word 66 (byte 132).
TEST(FastLanesTest, HandDerivedU16Width3) {
  std::vector<uint16_t> values(1024, 0);
  values[64] = 5;
  values[642] = 7;
  std::vector<uint8_t> expected(384, 0);
  expected[129] = 0x05;
  expected[5] = 0x80;
  expected[132] = 0x03;
  EXPECT_EQ(Pack<uint16_t>(values, 3), expected);
  EXPECT_EQ(Unpack<uint16_t>(expected, 3), values);
}

// At full width the block is the transposed input: packed word row * 32 + lane
// (u32) holds input[order[row / 8] * 16 + (row % 8) * 128 + lane].
TEST(FastLanesTest, FullWidthIsTransposition) {
  std::vector<uint32_t> values(1024);
  for (uint32_t i = 0; i < 1024; ++i) values[i] = 0x01000000u + i;
  const std::vector<uint8_t> packed = Pack<uint32_t>(values, 32);
  auto word = [&](size_t i) {
    uint32_t v;
    std::memcpy(&v, packed.data() + 4 * i, 4);
    return v;
  };
  EXPECT_EQ(word(0), 0x01000000u + 0);
  EXPECT_EQ(word(1), 0x01000000u + 1);      // row 0, lane 1
  EXPECT_EQ(word(32), 0x01000000u + 128);   // row 1, lane 0
  EXPECT_EQ(word(256), 0x01000000u + 64);   // row 8 -> order[1] * 16
  EXPECT_EQ(word(512), 0x01000000u + 32);   // row 16 -> order[2] * 16
  EXPECT_EQ(word(31 * 32 + 31), 0x01000000u + 6 * 16 + 7 * 128 + 31);
  EXPECT_EQ(Unpack<uint32_t>(packed, 32), values);
}

template <typename T>
void RoundTripAllWidths() {
  std::mt19937_64 rng(42 + sizeof(T));
  for (unsigned width = 0; width <= sizeof(T) * 8; ++width) {
    SCOPED_TRACE(width);
    const uint64_t mask = width == 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1;
    std::vector<T> values(1024);
    for (auto& v : values) v = static_cast<T>(rng() & mask);
    const std::vector<uint8_t> packed = Pack<T>(values, width);
    EXPECT_EQ(packed.size(), 128u * width);
    EXPECT_EQ(Unpack<T>(packed, width), values);
  }
}

TEST(FastLanesTest, RoundTripEveryWidth) {
  RoundTripAllWidths<uint8_t>();
  RoundTripAllWidths<uint16_t>();
  RoundTripAllWidths<uint32_t>();
  RoundTripAllWidths<uint64_t>();
}

// One value unpacked alone equals that value of the whole block, at every
// width and position.
template <typename T>
void UnpackOneMatchesBlock() {
  std::mt19937_64 rng(7 + sizeof(T));
  for (unsigned width = 0; width <= sizeof(T) * 8; ++width) {
    SCOPED_TRACE(width);
    const uint64_t mask = width == 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1;
    std::vector<T> values(1024);
    for (auto& v : values) v = static_cast<T>(rng() & mask);
    const std::vector<uint8_t> packed = Pack<T>(values, width);
    for (size_t i = 0; i < 1024; ++i) {
      T one = 0;
      ASSERT_TRUE(FastLanesUnpackOne<T>(packed, width, i, &one).ok());
      ASSERT_EQ(one, values[i]) << "value " << i;
    }
  }
  T one = 0;
  EXPECT_FALSE(FastLanesUnpackOne<T>(std::vector<uint8_t>(10), 3, 0, &one).ok()) << "short block";
  EXPECT_FALSE(FastLanesUnpackOne<T>(std::vector<uint8_t>(1024), 1, 1024, &one).ok()) << "index past the block";
}

TEST(FastLanesTest, UnpackOneMatchesBlock) {
  UnpackOneMatchesBlock<uint8_t>();
  UnpackOneMatchesBlock<uint16_t>();
  UnpackOneMatchesBlock<uint32_t>();
  UnpackOneMatchesBlock<uint64_t>();
}

TEST(FastLanesTest, WidthZero) {
  std::vector<uint64_t> zeros(1024, 0);
  std::vector<uint8_t> none;
  EXPECT_TRUE(FastLanesPack<uint64_t>(zeros, 0, none).ok());
  std::vector<uint64_t> out(1024, 9);
  EXPECT_TRUE(FastLanesUnpack<uint64_t>({}, 0, out).ok());
  EXPECT_EQ(out, zeros);
}

TEST(FastLanesTest, UnpackIgnoresTrailingBytesAndExtraOutput) {
  std::vector<uint16_t> values(1024);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<uint16_t>(i % 32);
  std::vector<uint8_t> packed = Pack<uint16_t>(values, 5);
  packed.resize(packed.size() + 10, 0xFF);
  std::vector<uint16_t> out(1100, 0xBEEF);
  ASSERT_TRUE(FastLanesUnpack<uint16_t>(packed, 5, out).ok());
  EXPECT_TRUE(std::equal(values.begin(), values.end(), out.begin()));
  EXPECT_EQ(out[1024], 0xBEEF);
}

TEST(FastLanesTest, RejectsBadArguments) {
  std::vector<uint8_t> packed(FastLanesPackedBytes(9), 0);
  std::vector<uint8_t> out8(1024);
  std::vector<uint16_t> out16(1024);
  // Width wider than the element type.
  auto st = FastLanesUnpack<uint8_t>(packed, 9, out8);
  EXPECT_TRUE(st.IsInvalid()) << st.ToString();
  EXPECT_NE(st.message().find("exceeds"), std::string::npos) << st.message();
  std::vector<uint64_t> out64(1024);
  EXPECT_TRUE(FastLanesUnpack<uint64_t>(std::vector<uint8_t>(FastLanesPackedBytes(65)), 65, out64).IsInvalid());
  // Packed buffer one byte short.
  st = FastLanesUnpack<uint16_t>(std::span<const uint8_t>(packed.data(), packed.size() - 1), 9, out16);
  EXPECT_TRUE(st.IsInvalid()) << st.ToString();
  // Too few output values.
  std::vector<uint16_t> short_out(1023);
  EXPECT_TRUE(FastLanesUnpack<uint16_t>(packed, 9, short_out).IsInvalid());

  // Pack: too few input values, too little room, a value wider than the width.
  std::vector<uint16_t> in(1024, 1);
  std::vector<uint8_t> room(FastLanesPackedBytes(4));
  EXPECT_TRUE(FastLanesPack<uint16_t>(std::span<const uint16_t>(in.data(), 1000), 4, room).IsInvalid());
  EXPECT_TRUE(FastLanesPack<uint16_t>(in, 4, std::span<uint8_t>(room.data(), room.size() - 1)).IsInvalid());
  in[700] = 16;
  st = FastLanesPack<uint16_t>(in, 4, room);
  EXPECT_TRUE(st.IsInvalid());
  EXPECT_NE(st.message().find("index 700"), std::string::npos) << st.message();
  std::vector<uint8_t> room17(FastLanesPackedBytes(17));
  EXPECT_TRUE(FastLanesPack<uint16_t>(in, 17, room17).IsInvalid());
}

}  // namespace
}  // namespace lance::file::compression
