#include "lance/file/compression/general.h"

#include <gtest/gtest.h>

#include "lance/file/compression/byte_stream_split.h"

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

std::string Decompress(GeneralCodec codec, std::string_view framed) {
  auto r = GeneralDecompress(codec, framed, arrow::default_memory_pool());
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? (*r)->ToString() : std::string();
}

std::string Compress(GeneralCodec codec, std::string_view raw, std::optional<int32_t> level = {}) {
  auto r = GeneralCompress(codec, raw, level);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : std::string();
}

Status DecompressStatus(GeneralCodec codec, std::string_view framed) {
  return GeneralDecompress(codec, framed, arrow::default_memory_pool()).status();
}

uint64_t Le(std::string_view s, size_t bytes) {
  uint64_t v = 0;
  for (size_t i = bytes; i-- > 0;) v = (v << 8) | static_cast<uint8_t>(s[i]);
  return v;
}

std::string PutLe(uint64_t v, size_t bytes) {
  std::string s;
  for (size_t i = 0; i < bytes; ++i) s.push_back(static_cast<char>(v >> (8 * i)));
  return s;
}

// gen_vectors.py general_values: the first mini-block chunk of the column,
// byte-stream split (f64: 512 values i / 7; f32: 1024 values i / 3).
std::string ExpectedChunk(bool f64) {
  std::string raw;
  const size_t n = f64 ? 512 : 1024;
  for (size_t i = 0; i < n; ++i) {
    char bytes[8];
    if (f64) {
      const double v = static_cast<double>(i) / 7.0;
      std::memcpy(bytes, &v, 8);
    } else {
      const float v = static_cast<float>(i) / 3.0f;
      std::memcpy(bytes, &v, 4);
    }
    raw.append(bytes, f64 ? 8 : 4);
  }
  std::string split(raw.size(), '\0');
  const size_t width = f64 ? 8 : 4;
  EXPECT_TRUE(ByteStreamSplitEncode({reinterpret_cast<const uint8_t*>(raw.data()), raw.size()}, width,
                                    {reinterpret_cast<uint8_t*>(split.data()), split.size()})
                  .ok());
  return split;
}

struct ReferenceCase {
  const char* file;
  GeneralCodec codec;
  bool f64;
  std::optional<int32_t> level;
};

TEST(GeneralCompressionTest, MatchesReferenceWriter) {
  const ReferenceCase cases[] = {
      {"zstd_f64_bss.bin", GeneralCodec::kZstd, true, std::nullopt},
      {"zstd_f64_bss_level9.bin", GeneralCodec::kZstd, true, 9},
      {"zstd_f32_bss.bin", GeneralCodec::kZstd, false, std::nullopt},
      {"lz4_f32_bss.bin", GeneralCodec::kLz4, false, std::nullopt},
      {"lz4_f64_bss.bin", GeneralCodec::kLz4, true, std::nullopt},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.file);
    const std::string framed = ReadFixture(c.file);
    const std::string expected = ExpectedChunk(c.f64);
    ASSERT_EQ(expected.size(), 4096u);
    // Framing: u64 (zstd) or u32 (lz4) LE raw length first.
    const size_t prefix = c.codec == GeneralCodec::kZstd ? 8 : 4;
    EXPECT_EQ(Le(framed, prefix), expected.size());
    EXPECT_EQ(Decompress(c.codec, framed), expected);
    // The reference used libzstd / liblz4 from its Rust crates; the same
    // algorithm versions produce the same bytes.
    EXPECT_EQ(Compress(c.codec, expected, c.level), framed) << "compressed bytes differ from the reference";
  }
}

TEST(GeneralCompressionTest, Framing) {
  const std::string raw(1000, 'a');
  const std::string z = Compress(GeneralCodec::kZstd, raw);
  EXPECT_EQ(Le(z, 8), 1000u);
  EXPECT_EQ(Le(std::string_view(z).substr(8), 4), 0xFD2FB528u);  // a zstd frame follows
  const std::string l = Compress(GeneralCodec::kLz4, raw);
  EXPECT_EQ(Le(l, 4), 1000u);
  EXPECT_LT(l.size(), 100u);
}

TEST(GeneralCompressionTest, RoundTrip) {
  std::mt19937_64 rng(7);
  for (size_t size : {0u, 1u, 7u, 8u, 100u, 4096u, 70000u, 300000u}) {
    std::string raw(size, '\0');
    for (size_t i = 0; i < size; ++i) raw[i] = static_cast<char>((rng() % 5 == 0) ? rng() : 'x' + (i % 3));
    for (GeneralCodec codec : {GeneralCodec::kZstd, GeneralCodec::kLz4}) {
      SCOPED_TRACE(std::to_string(size) + (codec == GeneralCodec::kZstd ? " zstd" : " lz4"));
      EXPECT_EQ(Decompress(codec, Compress(codec, raw)), raw);
      EXPECT_EQ(Decompress(codec, Compress(codec, raw, 1)), raw);
      EXPECT_EQ(Decompress(codec, Compress(codec, raw, 19)), raw);
    }
  }
}

TEST(GeneralCompressionTest, LevelChangesZstdOutputOnly) {
  const char* words[] = {"lance", "column", "page", "chunk", "vector", "zstd", "level", "of", "the"};
  std::mt19937 rng(3);
  std::string raw;
  while (raw.size() < 200000) raw += std::string(words[rng() % 9]) + (rng() % 4 == 0 ? "\n" : " ");
  // (EXPECT_TRUE rather than EXPECT_NE: the strings are too long to print.)
  EXPECT_TRUE(Compress(GeneralCodec::kZstd, raw, 1) != Compress(GeneralCodec::kZstd, raw, 19));
  EXPECT_LT(Compress(GeneralCodec::kZstd, raw, 19).size(), Compress(GeneralCodec::kZstd, raw, 1).size());
  // Level 0 is zstd's default level (3), as in the reference.
  EXPECT_TRUE(Compress(GeneralCodec::kZstd, raw, 0) == Compress(GeneralCodec::kZstd, raw, 3));
  EXPECT_TRUE(Compress(GeneralCodec::kZstd, raw) == Compress(GeneralCodec::kZstd, raw, 0));
  EXPECT_TRUE(Compress(GeneralCodec::kLz4, raw, 1) == Compress(GeneralCodec::kLz4, raw, 9));
}

TEST(GeneralCompressionTest, ZstdEmptyAndLegacyForms) {
  // An empty buffer decompresses to nothing (reference behaviour).
  EXPECT_EQ(Decompress(GeneralCodec::kZstd, ""), "");
  // Legacy: a bare zstd frame without the length prefix.
  const std::string raw = "hello hello hello hello hello hello hello";
  const std::string framed = Compress(GeneralCodec::kZstd, raw);
  EXPECT_EQ(Decompress(GeneralCodec::kZstd, std::string_view(framed).substr(8)), raw);
  // Two concatenated bare frames.
  const std::string two = framed.substr(8) + Compress(GeneralCodec::kZstd, "tail").substr(8);
  EXPECT_EQ(Decompress(GeneralCodec::kZstd, two), raw + "tail");
}

TEST(GeneralCompressionTest, RejectsHostileZstd) {
  const std::string raw(5000, 'q');
  const std::string good = Compress(GeneralCodec::kZstd, raw);
  // Truncated frames (prefixed and bare).
  for (size_t cut : {9u, 12u, 20u}) {
    ASSERT_LT(cut, good.size());
    EXPECT_TRUE(DecompressStatus(GeneralCodec::kZstd, good.substr(0, cut)).IsInvalid()) << cut;
  }
  EXPECT_TRUE(DecompressStatus(GeneralCodec::kZstd, good.substr(8, good.size() - 9)).IsInvalid());
  EXPECT_TRUE(DecompressStatus(GeneralCodec::kZstd, "abc").IsInvalid());
  // Declared size absurd, larger than the frame, smaller than the frame.
  std::string absurd = PutLe(uint64_t{1} << 40, 8) + good.substr(8);
  auto st = DecompressStatus(GeneralCodec::kZstd, absurd);
  EXPECT_TRUE(st.IsInvalid());
  EXPECT_NE(st.message().find("2 GiB"), std::string::npos) << st.message();
  EXPECT_TRUE(DecompressStatus(GeneralCodec::kZstd, PutLe(uint64_t{1} << 30, 8) + good.substr(8)).IsInvalid());
  EXPECT_TRUE(DecompressStatus(GeneralCodec::kZstd, PutLe(5001, 8) + good.substr(8)).IsInvalid());
  EXPECT_TRUE(DecompressStatus(GeneralCodec::kZstd, PutLe(4999, 8) + good.substr(8)).IsInvalid());
  // Garbage after a valid prefix.
  EXPECT_TRUE(DecompressStatus(GeneralCodec::kZstd, PutLe(10, 8) + "not a zstd frame at all").IsInvalid());
  // Corrupted body bytes never crash.
  std::mt19937 rng(1);
  for (int i = 0; i < 300; ++i) {
    std::string bad = good;
    bad[8 + rng() % (bad.size() - 8)] ^= static_cast<char>(1 + rng() % 255);
    auto r = GeneralDecompress(GeneralCodec::kZstd, bad, arrow::default_memory_pool());
    if (r.ok()) {
      EXPECT_EQ((*r)->size(), 5000);
    }
  }
}

TEST(GeneralCompressionTest, RejectsHostileLz4) {
  std::string raw;
  for (int i = 0; i < 3000; ++i) raw += static_cast<char>('a' + i % 7);
  const std::string good = Compress(GeneralCodec::kLz4, raw);
  EXPECT_TRUE(DecompressStatus(GeneralCodec::kLz4, "").IsInvalid());
  EXPECT_TRUE(DecompressStatus(GeneralCodec::kLz4, "\x01\x00").IsInvalid());
  EXPECT_TRUE(DecompressStatus(GeneralCodec::kLz4, good.substr(0, good.size() - 3)).IsInvalid());
  // Negative (as the reference reads it) and absurd declared sizes.
  EXPECT_TRUE(DecompressStatus(GeneralCodec::kLz4, PutLe(0x80000000u, 4) + good.substr(4)).IsInvalid());
  auto st = DecompressStatus(GeneralCodec::kLz4, PutLe(0x7FFFFFFFu, 4) + good.substr(4));
  EXPECT_TRUE(st.IsInvalid());
  // Declared size disagreeing with the block, either way.
  EXPECT_TRUE(DecompressStatus(GeneralCodec::kLz4, PutLe(2999, 4) + good.substr(4)).IsInvalid());
  EXPECT_TRUE(DecompressStatus(GeneralCodec::kLz4, PutLe(3001, 4) + good.substr(4)).IsInvalid());
  std::mt19937 rng(2);
  for (int i = 0; i < 300; ++i) {
    std::string bad = good;
    bad[4 + rng() % (bad.size() - 4)] ^= static_cast<char>(1 + rng() % 255);
    auto r = GeneralDecompress(GeneralCodec::kLz4, bad, arrow::default_memory_pool());
    if (r.ok()) {
      EXPECT_EQ((*r)->size(), 3000);
    }
  }
  // Empty input round trip: prefix 0 and a one-byte block.
  EXPECT_EQ(Compress(GeneralCodec::kLz4, ""), std::string("\0\0\0\0\0", 5));
  EXPECT_EQ(Decompress(GeneralCodec::kLz4, std::string("\0\0\0\0\0", 5)), "");
}

TEST(GeneralCompressionTest, UsesTheGivenPool) {
  arrow::ProxyMemoryPool pool(arrow::default_memory_pool());
  const std::string raw(10000, 'z');
  {
    auto r = GeneralDecompress(GeneralCodec::kLz4, Compress(GeneralCodec::kLz4, raw), &pool);
    ASSERT_TRUE(r.ok());
    EXPECT_GE(pool.bytes_allocated(), 10000);
  }
  EXPECT_EQ(pool.bytes_allocated(), 0);
}

}  // namespace
}  // namespace lance::file::compression
