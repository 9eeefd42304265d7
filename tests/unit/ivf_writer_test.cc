// The JSON numbers of IVF storage metadata as pylance 14's serde_json
// writes and reads them (index/vector/ivf_writer.h).
#include "lance/index/vector/ivf_writer.h"

#include <cmath>

#include <gtest/gtest.h>

namespace lance::index::vector {
namespace {

double Parse(const char* text) {
  auto v = SerdeJsonParseFloat(text);
  EXPECT_TRUE(v.ok()) << text << ": " << v.status().ToString();
  return v.ok() ? *v : NAN;
}

TEST(SerdeJsonFloatTest, WritesShortestDigits) {
  EXPECT_EQ(SerdeJsonFloat(-3.9055898189544678), "-3.9055898189544678");
  EXPECT_EQ(SerdeJsonFloat(4.0), "4.0");
  EXPECT_EQ(SerdeJsonFloat(0.0000133514404296875), "0.0000133514404296875");
  EXPECT_EQ(SerdeJsonFloat(6.585226401512045e-6), "6.585226401512045e-6");
  EXPECT_EQ(SerdeJsonFloat(-0.0), "-0.0");
}

TEST(SerdeJsonFloatTest, ReadsAsSerdeJsonWithoutFloatRoundtrip) {
  // Seen in pylance 14's remap of an IVF_SQ: the bound read back is 1 ulp
  // off the one written (39055898189544678 as f64, divided by 1e16).
  EXPECT_EQ(SerdeJsonFloat(Parse("-3.9055898189544678")), "-3.905589818954468");
  EXPECT_EQ(Parse("-3.9055898189544678"), -(static_cast<double>(39055898189544678ull) / 1e16));
  // Most values read back exactly.
  EXPECT_EQ(Parse("4.015152931213379"), 4.015152931213379);
  EXPECT_EQ(Parse("0.0000133514404296875"), 0.0000133514404296875);
  EXPECT_EQ(Parse("6.585226401512045e-6"), 6.585226401512045e-6);
  EXPECT_EQ(Parse("12"), 12.0);
  EXPECT_EQ(Parse("-0.0"), 0.0);
  EXPECT_TRUE(std::signbit(Parse("-0.0")));
  EXPECT_EQ(Parse("1E+2"), 100.0);
  // Digits past u64: integer ones scale, fraction ones are dropped.
  EXPECT_EQ(Parse("123456789012345678901234"), static_cast<double>(12345678901234567890ull) * 1e4);
  EXPECT_EQ(Parse("1.23456789012345678901234"), static_cast<double>(12345678901234567890ull) / 1e19);
  // Beyond 1e308 below: divided in steps.
  EXPECT_EQ(Parse("1e-320"), 1.0 / 1e308 / 1e12);
  for (const char* bad : {"", "-", "1.", ".5", "1e", "1x", "+1", "nan", "1e400"}) {
    EXPECT_FALSE(SerdeJsonParseFloat(bad).ok()) << bad;
  }
}

TEST(SqStorageMetadataTest, AsPylanceWritesIt) {
  EXPECT_EQ(SqStorageMetadata(16, -4.494117259979248, 3.945549726486206),
            "[\"{\\\"dim\\\":16,\\\"num_bits\\\":8,\\\"bounds\\\":{\\\"start\\\":-4.494117259979248,"
            "\\\"end\\\":3.945549726486206}}\"]");
}

}  // namespace
}  // namespace lance::index::vector
