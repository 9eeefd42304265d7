#include "lance/file/compression/byte_stream_split.h"

#include <gtest/gtest.h>

#include <arrow/memory_pool.h>

#include "lance/file/compression/general.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <numeric>
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

std::vector<uint8_t> Encode(const std::vector<uint8_t>& in, size_t width) {
  std::vector<uint8_t> out(in.size());
  auto st = ByteStreamSplitEncode(in, width, out);
  EXPECT_TRUE(st.ok()) << st.ToString();
  return out;
}

std::vector<uint8_t> Decode(const std::vector<uint8_t>& in, size_t width) {
  std::vector<uint8_t> out(in.size());
  auto st = ByteStreamSplitDecode(in, width, out);
  EXPECT_TRUE(st.ok()) << st.ToString();
  return out;
}

// The example in the reference's module documentation.
TEST(ByteStreamSplitTest, ReferenceDocExample) {
  const float values[] = {1.0f, 2.0f, 3.0f, 4.0f};
  std::vector<uint8_t> raw(16);
  std::memcpy(raw.data(), values, 16);
  const std::vector<uint8_t> expected = {0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                                         0x80, 0x00, 0x40, 0x80, 0x3F, 0x40, 0x40, 0x40};
  EXPECT_EQ(Encode(raw, 4), expected);
  EXPECT_EQ(Decode(expected, 4), raw);
}

TEST(ByteStreamSplitTest, HandDerivedWidth3) {
  // Values (a0 a1 a2) (b0 b1 b2) -> streams a0 b0 | a1 b1 | a2 b2.
  const std::vector<uint8_t> raw = {1, 2, 3, 4, 5, 6};
  const std::vector<uint8_t> split = {1, 4, 2, 5, 3, 6};
  EXPECT_EQ(Encode(raw, 3), split);
  EXPECT_EQ(Decode(split, 3), raw);
}

// Chunk 0 of reference pages written with bss=on under zstd and lz4: after
// general decompression the bytes are the byte-stream split of the values.
TEST(ByteStreamSplitTest, MatchesReferenceWriter) {
  struct Case {
    const char* file;
    GeneralCodec codec;
    bool f64;
  };
  for (const Case& c : {Case{"zstd_f64_bss.bin", GeneralCodec::kZstd, true},
                        Case{"zstd_f32_bss.bin", GeneralCodec::kZstd, false},
                        Case{"lz4_f32_bss.bin", GeneralCodec::kLz4, false},
                        Case{"lz4_f64_bss.bin", GeneralCodec::kLz4, true}}) {
    SCOPED_TRACE(c.file);
    auto split = GeneralDecompress(c.codec, ReadFixture(c.file), arrow::default_memory_pool());
    ASSERT_TRUE(split.ok()) << split.status().ToString();
    const std::vector<uint8_t> stored((*split)->data(), (*split)->data() + (*split)->size());
    const size_t width = c.f64 ? 8 : 4;
    const size_t n = c.f64 ? 512 : 1024;  // one mini-block chunk
    ASSERT_EQ(stored.size(), n * width);
    std::vector<uint8_t> raw(n * width);
    for (size_t i = 0; i < n; ++i) {
      if (c.f64) {
        const double v = static_cast<double>(i) / 7.0;
        std::memcpy(raw.data() + 8 * i, &v, 8);
      } else {
        const float v = static_cast<float>(i) / 3.0f;
        std::memcpy(raw.data() + 4 * i, &v, 4);
      }
    }
    EXPECT_EQ(Decode(stored, width), raw);
    EXPECT_EQ(Encode(raw, width), stored);
  }
}

TEST(ByteStreamSplitTest, RoundTripWidths) {
  for (size_t width : {1u, 2u, 4u, 8u, 16u}) {
    for (size_t n : {0u, 1u, 5u, 1000u}) {
      std::vector<uint8_t> raw(width * n);
      std::iota(raw.begin(), raw.end(), static_cast<uint8_t>(width));
      const std::vector<uint8_t> split = Encode(raw, width);
      EXPECT_EQ(Decode(split, width), raw) << width << " x " << n;
      if (width == 1) {
        EXPECT_EQ(split, raw);
      }
    }
  }
}

TEST(ByteStreamSplitTest, RejectsBadSizes) {
  std::vector<uint8_t> in(12), out(12), small(8);
  EXPECT_TRUE(ByteStreamSplitDecode(in, 0, out).IsInvalid());
  EXPECT_TRUE(ByteStreamSplitDecode(in, 5, out).IsInvalid());  // 12 is not a multiple of 5
  EXPECT_TRUE(ByteStreamSplitDecode(in, 4, small).IsInvalid());
  EXPECT_TRUE(ByteStreamSplitEncode(in, 4, small).IsInvalid());
  EXPECT_TRUE(ByteStreamSplitEncode(small, 4, in).IsInvalid());
  auto st = ByteStreamSplitDecode(in, 8, out);
  EXPECT_TRUE(st.IsInvalid());
  EXPECT_NE(st.message().find("8-byte"), std::string::npos) << st.message();
  // In place (or overlapping) is refused: the transform needs a separate output.
  EXPECT_TRUE(ByteStreamSplitDecode(in, 4, in).IsInvalid());
  std::vector<uint8_t> big(16);
  EXPECT_TRUE(ByteStreamSplitEncode(std::span<const uint8_t>(big.data(), 12), 4,
                                    std::span<uint8_t>(big.data() + 4, 12))
                  .IsInvalid());
  EXPECT_TRUE(ByteStreamSplitDecode({}, 4, {}).ok());
}

}  // namespace
}  // namespace lance::file::compression
