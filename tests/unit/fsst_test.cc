#include "lance/file/compression/fsst.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <string>
#include <vector>

namespace lance::file::compression {
namespace {

constexpr size_t kTableSize = 2312;

std::filesystem::path FixtureDir() {
  return std::filesystem::path(LANCE_TEST_FIXTURES_DIR) / "compression";
}

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << "missing file " << path;
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string ReadFixture(const std::string& name) { return ReadFile(FixtureDir() / name); }

// gen_vectors.py: Lcg, varied_strings, FSST_SHORT, fsst_long_value.
struct Lcg {
  uint64_t state;
  uint64_t Next() {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return state >> 33;
  }
};

const char* const kWords[] = {
    "lance", "columnar", "format", "vector", "search", "arrow", "page", "chunk", "symbol",
    "table", "the", "of", "and", "compression", "fast", "random", "access", "data", "file",
    "index", "query", "2024", "x", "zz", "storage", "engine", "fsst", "bit", "packing", "string",
};

std::vector<std::string> VariedStrings(uint64_t seed, size_t count, uint64_t max_words) {
  Lcg rng{seed};
  std::vector<std::string> out;
  for (size_t i = 0; i < count; ++i) {
    const uint64_t n = 1 + rng.Next() % max_words;
    std::string s;
    for (uint64_t w = 0; w < n; ++w) {
      if (w > 0) s += ' ';
      s += kWords[rng.Next() % 30];
    }
    s += "-" + std::to_string(rng.Next() % 100000);
    out.push_back(std::move(s));
  }
  return out;
}

const std::string kShort = "The quick brown fox jumps over the lazy dog 0123456789";

std::string LongValue() {
  std::string s;
  const auto parts = VariedStrings(7, 60, 6);
  for (size_t i = 0; i < parts.size(); ++i) s += (i ? " | " : "") + parts[i];
  return s.substr(0, 600);
}

// Values as (offsets, data) for the API.
struct Flat {
  std::vector<uint64_t> offsets{0};
  std::string data;
};

Flat Flatten(const std::vector<std::string>& values) {
  Flat f;
  for (const auto& v : values) {
    f.data += v;
    f.offsets.push_back(f.data.size());
  }
  return f;
}

std::vector<std::string> Unflatten(const VariableValues& v) {
  std::vector<std::string> out;
  for (size_t i = 0; i + 1 < v.offsets.size(); ++i) {
    out.push_back(v.data.substr(v.offsets[i], v.offsets[i + 1] - v.offsets[i]));
  }
  return out;
}

// A mini-block Variable chunk buffer: u32 offsets (relative to the buffer,
// the first equal to their own size), then the bytes.
Flat ParseChunk(const std::string& chunk) {
  uint32_t first;
  std::memcpy(&first, chunk.data(), 4);
  const size_t n = first / 4 - 1;
  std::vector<uint32_t> raw(n + 1);
  std::memcpy(raw.data(), chunk.data(), 4 * (n + 1));
  Flat f;
  f.offsets.clear();
  for (uint32_t o : raw) f.offsets.push_back(o - raw[0]);
  f.data = chunk.substr(raw[0], raw[n] - raw[0]);
  return f;
}

VariableValues Decompress(std::string_view table, const Flat& f) {
  auto r = FsstDecompress(table, f.offsets, f.data);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : VariableValues{};
}

std::pair<std::string, VariableValues> Compress(const Flat& f) {
  auto r = FsstCompress(f.offsets, f.data);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : std::pair<std::string, VariableValues>{};
}

// A table with the given symbols, encoder switch on.
std::string MakeTable(const std::vector<std::string>& symbols) {
  std::string t(kTableSize, '\0');
  const uint64_t header = (uint64_t{0x46535354} << 32) | (uint64_t{1} << 24) | symbols.size();
  std::memcpy(t.data(), &header, 8);
  for (size_t i = 0; i < symbols.size(); ++i) {
    std::memcpy(t.data() + 8 + 8 * i, symbols[i].data(), symbols[i].size());
    t[8 + 8 * symbols.size() + i] = static_cast<char>(symbols[i].size());
  }
  return t;
}

TEST(FsstTest, HandBuiltTable) {
  const std::string table = MakeTable({"ab", "hello", "x"});
  Flat f;
  f.data = std::string("\x01\x00\xFFZ\x02", 5) + std::string("\xFF\xFF", 2) + "";
  f.offsets = {0, 5, 7, 7};
  const VariableValues out = Decompress(table, f);
  EXPECT_EQ(Unflatten(out), (std::vector<std::string>{"helloabZx", "\xFF", ""}));
  EXPECT_EQ(out.offsets, (std::vector<uint64_t>{0, 9, 10, 10}));
}

TEST(FsstTest, SerializedTableLayout) {
  // Above 32 KiB the values are compressed and the switch bit is set.
  const Flat f = Flatten(std::vector<std::string>(1000, kShort));
  auto [table, values] = Compress(f);
  ASSERT_EQ(table.size(), kTableSize);
  EXPECT_EQ(table.substr(4, 4), "TSSF");  // "FSST" in the top half of a LE u64
  EXPECT_EQ(static_cast<uint8_t>(table[3]), 1);
  const size_t n = static_cast<uint8_t>(table[0]);
  ASSERT_GT(n, 0u);
  for (size_t i = 8 + 9 * n; i < kTableSize; ++i) ASSERT_EQ(table[i], 0) << i;
  // Below 32 KiB: header only, values as they are.
  const Flat small = Flatten({"alpha", "beta", ""});
  auto [small_table, small_values] = Compress(small);
  EXPECT_EQ(small_table, std::string("\0\0\0\0TSSF", 8) + std::string(kTableSize - 8, '\0'));
  EXPECT_EQ(small_values.offsets, small.offsets);
  EXPECT_EQ(small_values.data, small.data);
}

struct ReferenceCase {
  const char* name;
  std::vector<std::string> values;  // all values of the page
};

std::vector<ReferenceCase> ReferenceCases() {
  return {{"fsst_short", std::vector<std::string>(1000, kShort)},
          {"fsst_long", std::vector<std::string>(64, LongValue())},
          {"fsst_small", VariedStrings(11, 100, 8)}};
}

// Chunk 0 of pages pylance wrote decodes to the original values.
TEST(FsstTest, DecompressesReferencePages) {
  for (const auto& c : ReferenceCases()) {
    SCOPED_TRACE(c.name);
    const std::string table = ReadFixture(std::string(c.name) + ".table");
    const Flat chunk = ParseChunk(ReadFixture(std::string(c.name) + ".chunk"));
    const size_t n = chunk.offsets.size() - 1;
    ASSERT_GT(n, 0u);
    ASSERT_LE(n, c.values.size());
    const std::vector<std::string> expected(c.values.begin(), c.values.begin() + n);
    EXPECT_EQ(Unflatten(Decompress(table, chunk)), expected);
  }
}

// With a sample the reference cannot vary (all values equal, or too little
// data to compress), our compressor reproduces its table and codes exactly.
TEST(FsstTest, CompressorMatchesReference) {
  for (const auto& c : ReferenceCases()) {
    SCOPED_TRACE(c.name);
    const std::string ref_table = ReadFixture(std::string(c.name) + ".table");
    const Flat ref_chunk = ParseChunk(ReadFixture(std::string(c.name) + ".chunk"));
    auto [table, values] = Compress(Flatten(c.values));
    EXPECT_TRUE(table == ref_table) << "symbol table differs from the reference";
    const size_t n = ref_chunk.offsets.size() - 1;
    ASSERT_GE(values.offsets.size(), n + 1);
    const std::string ours = values.data.substr(0, values.offsets[n]);
    EXPECT_TRUE(ours == ref_chunk.data) << "codes differ from the reference";
    EXPECT_EQ(std::vector<uint64_t>(values.offsets.begin(), values.offsets.begin() + n + 1),
              ref_chunk.offsets);
  }
}

std::vector<std::string> BinaryValues(uint32_t seed, size_t count) {
  std::mt19937 rng(seed);
  std::vector<std::string> out;
  for (size_t i = 0; i < count; ++i) {
    std::string s;
    const size_t len = rng() % 3 == 0 ? 0 : rng() % 40;
    for (size_t k = 0; k < len; ++k) {
      const uint32_t r = rng() % 10;
      s += r < 2 ? '\0' : r < 4 ? '\xFF' : r < 7 ? "abcab"[k % 5] : static_cast<char>(rng());
    }
    out.push_back(std::move(s));
  }
  return out;
}

TEST(FsstTest, RoundTrip) {
  std::vector<std::vector<std::string>> inputs;
  for (uint64_t seed = 1; seed <= 5; ++seed) inputs.push_back(VariedStrings(seed, 3000, 3 + seed));
  inputs.push_back(BinaryValues(9, 4000));
  {
    // Values longer than the reference's 511-byte pieces, with empty ones between.
    std::vector<std::string> longs;
    for (int i = 0; i < 80; ++i) {
      longs.push_back(i % 3 == 1 ? "" : LongValue().substr(i % 50) + LongValue() + std::to_string(i));
    }
    inputs.push_back(longs);
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    SCOPED_TRACE(i);
    const Flat f = Flatten(inputs[i]);
    ASSERT_GE(f.data.size(), 32u * 1024);
    auto [table, values] = Compress(f);
    EXPECT_EQ(static_cast<uint8_t>(table[3]), 1) << "expected compression to be switched on";
    if (i < 5) {
      EXPECT_LT(values.data.size(), f.data.size() / 2);
    }
    EXPECT_EQ(Unflatten(Decompress(table, Flat{values.offsets, values.data})), inputs[i]);
  }
}

// Almost every value empty: the reference's sampling would spin nearly
// forever; ours stops after a bounded number of draws and still round-trips.
TEST(FsstTest, MostlyEmptyValuesTerminate) {
  Flat f;
  f.data = std::string(40000, 'q');
  f.offsets.assign(200000, 0);
  f.offsets.push_back(3);
  auto [table, values] = Compress(f);
  EXPECT_EQ(Unflatten(Decompress(table, Flat{values.offsets, values.data})).back(), "qqq");
  // No non-empty value at all: stored as-is.
  f.offsets.back() = 0;
  auto [table2, values2] = Compress(f);
  EXPECT_EQ(static_cast<uint8_t>(table2[3]), 0);
  EXPECT_TRUE(values2.data.empty());
}

TEST(FsstTest, CompressorIsDeterministic) {
  const Flat f = Flatten(VariedStrings(3, 3000, 6));
  auto a = Compress(f);
  auto b = Compress(f);
  EXPECT_TRUE(a.first == b.first);
  EXPECT_TRUE(a.second.data == b.second.data);
}

TEST(FsstTest, OffsetsNeedNotStartAtZero) {
  // Decompress: offsets into a larger buffer; output is rebased to 0.
  const std::string table = MakeTable({"abc"});
  const std::string data("junk\x00\x00\xFFQtail", 12);
  const std::vector<uint64_t> offsets = {4, 5, 8};
  auto r = FsstDecompress(table, offsets, data);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(Unflatten(*r), (std::vector<std::string>{"abc", "abcQ"}));
  EXPECT_EQ(r->offsets.front(), 0u);
  // Switch off: stored values come back as they are, rebased.
  std::string off_table(kTableSize, '\0');
  std::memcpy(off_table.data() + 4, "TSSF", 4);
  r = FsstDecompress(off_table, offsets, data);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(Unflatten(*r), (std::vector<std::string>{std::string("\0", 1), std::string("\0\xFFQ", 3)}));
  EXPECT_EQ(r->offsets, (std::vector<uint64_t>{0, 1, 4}));
}

// The chunks of a page decode into one output: 32-bit offsets that need not
// start at zero, appended run after run, each end counted from the start.
TEST(FsstTest, DecoderAppendsRunsWithNarrowOffsets) {
  const Flat f = Flatten(VariedStrings(3, 3000, 6));
  auto [table, compressed] = Compress(f);
  auto decoder = FsstDecoder::Make(table);
  ASSERT_TRUE(decoder.ok()) << decoder.status().ToString();
  auto made = arrow::AllocateResizableBuffer(0);
  ASSERT_TRUE(made.ok());
  std::shared_ptr<arrow::ResizableBuffer> out = std::move(*made);
  const size_t n = compressed.offsets.size() - 1;
  std::vector<uint64_t> ends(n);
  // Three runs of unequal length; offsets as u32 shifted by 5 over padded data.
  const std::string data = "#####" + compressed.data;
  size_t done = 0;
  for (size_t run : {size_t{1}, n / 3, n - 1 - n / 3}) {
    std::vector<uint32_t> offsets;
    for (size_t i = done; i <= done + run; ++i) offsets.push_back(static_cast<uint32_t>(compressed.offsets[i] + 5));
    auto st = decoder->DecompressAppend(reinterpret_cast<const uint8_t*>(offsets.data()), 4, run, data, out.get(),
                                        ends.data() + done);
    ASSERT_TRUE(st.ok()) << st.ToString();
    done += run;
  }
  ASSERT_EQ(done, n);
  VariableValues got;
  got.offsets.push_back(0);
  got.offsets.insert(got.offsets.end(), ends.begin(), ends.end());
  got.data.assign(reinterpret_cast<const char*>(out->data()), static_cast<size_t>(out->size()));
  EXPECT_EQ(got.offsets, f.offsets);
  EXPECT_EQ(got.data, f.data);
  // A bad width and an unknown code in the middle of a run.
  EXPECT_TRUE(decoder->DecompressAppend(nullptr, 2, 0, "", out.get(), ends.data()).IsInvalid());
  const std::string small = MakeTable({"ab"});
  auto d2 = FsstDecoder::Make(small);
  ASSERT_TRUE(d2.ok());
  const uint64_t offsets[] = {0, 1, 3, 4};
  auto st = d2->DecompressAppend(reinterpret_cast<const uint8_t*>(offsets), 8, 3, std::string_view("\x00\x00\x07\x00", 4),
                                 out.get(), ends.data());
  EXPECT_TRUE(st.IsInvalid());
  EXPECT_NE(st.message().find("value 1 uses code 7"), std::string::npos) << st.message();
}

TEST(FsstTest, RejectsCorruptInput) {
  const std::string table = MakeTable({"ab", "cd"});
  auto status = [](std::string_view t, std::vector<uint64_t> offsets, std::string_view data) {
    return FsstDecompress(t, offsets, data).status();
  };
  EXPECT_TRUE(status(table, {0, 2}, std::string_view("\x00\x01", 2)).ok());
  // Table: wrong size, bad magic, symbol length 0 or 9.
  EXPECT_TRUE(status(table.substr(0, kTableSize - 1), {0}, "").IsInvalid());
  EXPECT_TRUE(status(table + "x", {0}, "").IsInvalid());
  EXPECT_TRUE(status("", {0}, "").IsInvalid());
  std::string bad = table;
  bad[7] = 'X';
  EXPECT_TRUE(status(bad, {0}, "").IsInvalid());
  bad = table;
  bad[8 + 16] = 0;
  EXPECT_TRUE(status(bad, {0}, "").IsInvalid());
  bad[8 + 16] = 9;
  EXPECT_TRUE(status(bad, {0}, "").IsInvalid());
  // Codes: one past the table, a trailing escape (also at a value boundary).
  auto st = status(table, {0, 1}, "\x02");
  EXPECT_TRUE(st.IsInvalid());
  EXPECT_NE(st.message().find("code 2"), std::string::npos) << st.message();
  EXPECT_TRUE(status(table, {0, 1}, "\xFF").IsInvalid());
  EXPECT_TRUE(status(table, {0, 1, 2}, "\xFFZ").IsInvalid());
  // Offsets: none, decreasing, past the data.
  EXPECT_TRUE(status(table, {}, "").IsInvalid());
  EXPECT_TRUE(status(table, {0, 2, 1}, std::string_view("\x00\x01", 2)).IsInvalid());
  EXPECT_TRUE(status(table, {0, 3}, std::string_view("\x00\x01", 2)).IsInvalid());
  // The compressor validates offsets too.
  EXPECT_TRUE(FsstCompress(std::vector<uint64_t>{0, 5}, "abc").status().IsInvalid());
  EXPECT_TRUE(FsstCompress(std::vector<uint64_t>{}, "").status().IsInvalid());
}

// Random damage to a real table and real codes: an error or some output,
// never a crash (meaningful under ASan).
TEST(FsstTest, FuzzedInputNeverCrashes) {
  const Flat f = Flatten(VariedStrings(21, 2500, 5));
  auto [table, values] = Compress(f);
  std::mt19937 rng(5);
  for (int i = 0; i < 2000; ++i) {
    std::string t = table;
    std::string d = values.data;
    std::vector<uint64_t> o = values.offsets;
    switch (rng() % 4) {
      case 0:
        t[rng() % 8] = static_cast<char>(rng());
        break;
      case 1:
        t[8 + rng() % (kTableSize - 8)] = static_cast<char>(rng());
        break;
      case 2:
        for (int k = 0; k < 4; ++k) d[rng() % d.size()] = static_cast<char>(rng());
        break;
      default:
        o[1 + rng() % (o.size() - 1)] = rng() % (d.size() + 50);
        break;
    }
    auto r = FsstDecompress(t, o, d);
    if (r.ok()) {
      EXPECT_EQ(r->offsets.size(), o.size());
      EXPECT_EQ(r->offsets.back(), r->data.size());
    }
  }
}

// Optional: pages with varied values written by pylance (whose tables depend
// on a random sample, so they are not stored). Produce them with
//   gen_vectors.py --crosscheck DIR
// and run with LANCE_FSST_CROSSCHECK_DIR=DIR.
TEST(FsstTest, CrossCheckVariedReferencePages) {
  const char* dir = std::getenv("LANCE_FSST_CROSSCHECK_DIR");
  if (dir == nullptr) GTEST_SKIP() << "LANCE_FSST_CROSSCHECK_DIR not set";
  size_t checked = 0;
  size_t compressed = 0;
  for (int i = 0;; ++i) {
    const std::filesystem::path base = std::filesystem::path(dir) / std::to_string(i);
    if (!std::filesystem::exists(base.string() + ".table")) break;
    SCOPED_TRACE(base.string());
    const std::string table = ReadFile(base.string() + ".table");
    const Flat chunk = ParseChunk(ReadFile(base.string() + ".chunk"));
    const std::string raw = ReadFile(base.string() + ".values");
    std::vector<std::string> expected;
    for (size_t p = 0; p + 4 <= raw.size();) {
      uint32_t len;
      std::memcpy(&len, raw.data() + p, 4);
      expected.push_back(raw.substr(p + 4, len));
      p += 4 + len;
    }
    compressed += static_cast<uint8_t>(table[3]) == 1;
    EXPECT_EQ(Unflatten(Decompress(table, chunk)), expected);
    ++checked;
  }
  EXPECT_GT(checked, 0u);
  std::cout << "cross-checked " << checked << " reference pages (" << compressed << " compressed)\n";
}

}  // namespace
}  // namespace lance::file::compression
