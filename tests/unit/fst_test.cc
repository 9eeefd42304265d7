// FstMap and FstMapBuilder against the Rust `fst` crate's own bytes:
// pylance 14's token dictionaries (a sentence's below; tests/fixtures/fst's
// words.fst from gen.py, with the ids gen.py learned from the postings),
// fst 0.4.7's MapBuilder output for edge cases (hex below) and for
// generated maps (length and FNV-1a hash; the same key sets come from
// tests/fixtures/fst/crate_cases.py); then round trips, and damaged bytes
// that must give errors, not crashes.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <utility>

#include "lance/index/fst.h"

namespace lance::index {
namespace {

namespace fs = std::filesystem;
using Pairs = std::vector<std::pair<std::string, uint64_t>>;

fs::path FixtureDir() { return fs::path(LANCE_TEST_FIXTURES_DIR) / "fst"; }

std::string Unhex(std::string_view hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  }
  return out;
}

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Result<Pairs> ReadAll(const FstMap& m, std::string_view prefix = {}) {
  Pairs out;
  LANCE_RETURN_NOT_OK(m.ForEachWithPrefix(prefix, [&](std::string_view k, uint64_t v) {
    out.emplace_back(std::string(k), v);
    return Status::OK();
  }));
  return out;
}

Result<std::string> Build(const Pairs& pairs) {
  FstMapBuilder b;
  for (const auto& [k, v] : pairs) LANCE_RETURN_NOT_OK(b.Insert(k, v));
  return b.Finish();
}

Pairs Sorted(Pairs p) {
  std::sort(p.begin(), p.end());  // std::string orders bytes unsigned, as the crate
  return p;
}

uint64_t Fnv1a64(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (const char c : s) h = (h ^ static_cast<uint8_t>(c)) * 0x100000001b3ull;
  return h;
}

// Bit by bit, apart from the library's table.
uint32_t Crc32c(std::string_view s) {
  uint32_t c = ~0u;
  for (const char ch : s) {
    c ^= static_cast<uint8_t>(ch);
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0x82F63B78u & (0u - (c & 1)));
  }
  return ~c;
}

// Re-seals version-3 bytes after an edit, so the checks past the checksum run.
std::string Reseal(std::string b) {
  if (b.size() < 4) return b;
  const uint32_t c = Crc32c(std::string_view(b).substr(0, b.size() - 4));
  const uint32_t masked = ((c >> 15) | (c << 17)) + 0xA282EAD8u;
  for (int i = 0; i < 4; ++i) b[b.size() - 4 + i] = static_cast<char>((masked >> (8 * i)) & 0xFF);
  return b;
}

// Whatever `bytes` are, Open fails cleanly, or what it opened is a
// consistent map: sorted distinct keys, as many as size(), each found.
void ExpectSafe(const std::string& bytes, int* rejected) {
  auto m = FstMap::Open(bytes, "damaged");
  if (!m.ok()) {
    EXPECT_TRUE(m.status().IsInvalid()) << m.status().ToString();
    ++*rejected;
    return;
  }
  auto all = ReadAll(*m);
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  ASSERT_EQ(all->size(), m->size());
  for (size_t i = 0; i < all->size(); ++i) {
    if (i > 0) {
      ASSERT_LT((*all)[i - 1].first, (*all)[i].first);
    }
    ASSERT_EQ(m->Get((*all)[i].first), (*all)[i].second);
  }
}

void ExpectMapHolds(const FstMap& m, const Pairs& sorted) {
  auto all = ReadAll(m);
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  ASSERT_EQ(*all, sorted);
  EXPECT_EQ(m.size(), sorted.size());
  EXPECT_EQ(m.empty(), sorted.empty());
  std::set<std::string> keys;
  for (const auto& [k, v] : sorted) {
    ASSERT_EQ(m.Get(k), v) << k;
    keys.insert(k);
  }
  // Neighbours of each key that are not keys themselves.
  for (const auto& [k, v] : sorted) {
    for (std::string probe : {k + '\0', k + '\xff', k + 'a', k.empty() ? std::string() : k.substr(0, k.size() - 1)}) {
      if (!keys.count(probe)) {
        ASSERT_FALSE(m.Get(probe).has_value()) << probe;
      }
    }
  }
}

// pylance 14.0.2: "The quick brown foxes jumped" / "over the lazy dogs
// running", INVERTED with no stemming, stop words, lower-casing or folding.
// Token ids are first-seen order (the postings say so: ids 0-4 are doc 0's).
constexpr std::string_view kSentenceHex =
    "03000000000000000000000000000000001082ce00108bccc4c7001086d7c4031082eac4001092c2c9d0d300109df6c5001087"
    "c2e20010a7cac8d3001097cbc8cbcbd3060901050704030802003001090f141920252a307472716f6c6a66646254110a0a0000"
    "0000000000620000000000000006214520";
const Pairs kSentence = {{"The", 0},  {"quick", 1}, {"brown", 2}, {"foxes", 3}, {"jumped", 4},
                         {"over", 5}, {"the", 6},   {"lazy", 7},  {"dogs", 8},  {"running", 9}};

TEST(FstTest, ChecksumHelperIsCrc32c) { EXPECT_EQ(Crc32c("123456789"), 0xE3069283u); }

TEST(FstTest, ReadsAndRebuildsPylanceSentence) {
  const std::string bytes = Unhex(kSentenceHex);
  auto m = FstMap::Open(bytes, "sentence");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->version(), 3u);
  EXPECT_EQ(m->fst_type(), 0u);
  ExpectMapHolds(*m, Sorted(kSentence));
  for (std::string_view absent : {"", "T", "Th", "the ", "thee", "Quick", "zebra", "running!"}) {
    EXPECT_FALSE(m->Get(absent).has_value()) << absent;
  }
  auto rebuilt = Build(Sorted(kSentence));
  ASSERT_TRUE(rebuilt.ok()) << rebuilt.status().ToString();
  EXPECT_EQ(*rebuilt, bytes);
}

TEST(FstTest, ReadsAndRebuildsPylanceWords) {
  const std::string bytes = ReadFile(FixtureDir() / "words.fst");
  ASSERT_EQ(bytes.size(), 25531u);
  Pairs expected;
  {
    std::ifstream in(FixtureDir() / "words.tsv", std::ios::binary);
    std::string line;
    while (std::getline(in, line)) {
      const size_t tab = line.find('\t');
      ASSERT_NE(tab, std::string::npos);
      expected.emplace_back(line.substr(0, tab), std::stoull(line.substr(tab + 1)));
    }
  }
  ASSERT_EQ(expected.size(), 3192u);
  ASSERT_EQ(Sorted(expected), expected);
  // The root has more than 64 transitions (its count in a byte of its own)
  // and more than 32 (the byte-to-transition table).
  std::set<char> first;
  for (const auto& [k, v] : expected) first.insert(k[0]);
  EXPECT_GT(first.size(), 64u);

  auto m = FstMap::Open(bytes, "words.fst");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  ExpectMapHolds(*m, expected);

  for (std::string prefix : {"", "q", "Q", "ka", "日本", "\xc3", "st", "zzzz", "nothing", "q9"}) {
    Pairs want;
    for (const auto& p : expected) {
      if (p.first.compare(0, prefix.size(), prefix) == 0) want.push_back(p);
    }
    auto got = ReadAll(*m, prefix);
    ASSERT_TRUE(got.ok());
    EXPECT_EQ(*got, want) << prefix;
  }

  auto rebuilt = Build(expected);
  ASSERT_TRUE(rebuilt.ok()) << rebuilt.status().ToString();
  EXPECT_EQ(rebuilt->size(), bytes.size());
  EXPECT_TRUE(*rebuilt == bytes) << "builder output differs from pylance's";
}

TEST(FstTest, MatchesCrateOnEdgeCases) {
  const std::string k00("\0", 1), k0000("\0\0", 2);
  const struct {
    const char* name;
    Pairs pairs;
    std::string_view hex;
  } cases[] = {
      {"empty map", {}, "0300000000000000000000000000000000000000000000000000001200000000000000546b2d0f"},
      {"empty key, zero", {{"", 0}}, "0300000000000000000000000000000001000000000000000000000000000000c4679536"},
      {"empty key, seven",
       {{"", 7}},
       "03000000000000000000000000000000070100400100000000000000130000000000000069ec4f5a"},
      {"empty key and a",
       {{"", 0}, {"a", 1}},
       "030000000000000000000000000000000001006111410200000000000000150000000000000056474927"},
      {"2^40",
       {{"k", uint64_t{1} << 40}},
       "030000000000000000000000000000000000000000010016a701000000000000001800000000000000c31d6368"},
      {"0x00 and 0xff, u64 max",
       {{k00, 5}, {k0000, 0}, {"\xff", uint64_t{1} << 40}, {"\xff\xff", UINT64_MAX}},
       "030000000000000000000000000000000500000011410000000000000000fffffffffffeffff00ff184100000000000100000000"
       "00000115ff00160204000000000000003b00000000000000237915cc"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string bytes = Unhex(c.hex);
    auto m = FstMap::Open(bytes, c.name);
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    ExpectMapHolds(*m, c.pairs);
    auto rebuilt = Build(c.pairs);
    ASSERT_TRUE(rebuilt.ok()) << rebuilt.status().ToString();
    EXPECT_EQ(*rebuilt, bytes);
  }
}

struct SplitMix64 {
  uint64_t s;
  uint64_t Next() {
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
};

enum class Values { kRank, kBelow2To40, kU64 };

// crate_cases.py's random_map: `draws` keys of 0 to max_len bytes from
// `alphabet`, then values in key order.
Pairs RandomMap(uint64_t seed, int draws, std::string_view alphabet, int max_len, Values values, bool all_single) {
  SplitMix64 rng{seed};
  std::set<std::string> keys;
  for (int i = 0; i < draws; ++i) {
    const uint64_t n = rng.Next() % static_cast<uint64_t>(max_len + 1);
    std::string k;
    for (uint64_t j = 0; j < n; ++j) k.push_back(alphabet[rng.Next() % alphabet.size()]);
    keys.insert(std::move(k));
  }
  if (all_single) {
    for (int b = 0; b < 256; ++b) keys.insert(std::string(1, static_cast<char>(b)));
  }
  Pairs out;
  uint64_t rank = 0;
  for (const auto& k : keys) {
    uint64_t v = rank++;
    if (values == Values::kBelow2To40) v = rng.Next() % (uint64_t{1} << 40);
    if (values == Values::kU64) v = rng.Next();
    out.emplace_back(k, v);
  }
  return out;
}

std::string AllBytes() {
  std::string s;
  for (int b = 0; b < 256; ++b) s.push_back(static_cast<char>(b));
  return s;
}

TEST(FstTest, MatchesCrateOnGeneratedMaps) {
  const std::string lower = "abcdefghijklmnopqrstuvwxyz";
  const std::string zero_ff("\0\1ab\xfe\xff", 6);
  const struct {
    const char* name;
    Pairs pairs;
    size_t keys, length;
    uint64_t fnv;
  } cases[] = {
      // A root with all 256 transitions (the count byte's 1), beside the
      // empty key; 3-byte keys over every byte.
      {"all_bytes", RandomMap(1, 3000, AllBytes(), 3, Values::kBelow2To40, true), 1752, 16898,
       0x8b243e46a2f7dd35ull},
      {"zero_ff", RandomMap(2, 5000, zero_ff, 10, Values::kU64, false), 3320, 57334, 0x5a6c64e004eb6385ull},
      // Past the registry's 10000 buckets, so eviction decides what is shared.
      {"words_rank", RandomMap(3, 32000, lower, 8, Values::kRank, false), 21568, 163628, 0x157a3d3787385bb5ull},
      {"words_random", RandomMap(4, 32000, lower, 8, Values::kBelow2To40, false), 21561, 283556,
       0xf2c437c912005000ull},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    ASSERT_EQ(c.pairs.size(), c.keys);
    auto bytes = Build(c.pairs);
    ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
    EXPECT_EQ(bytes->size(), c.length);
    EXPECT_EQ(Fnv1a64(*bytes), c.fnv);
    auto m = FstMap::Open(*bytes, c.name);
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    ExpectMapHolds(*m, c.pairs);
  }
}

TEST(FstTest, RoundTrips) {
  std::mt19937_64 rng(42);
  auto random_keys = [&](int n, std::string_view alphabet, int max_len) {
    std::set<std::string> keys;
    for (int i = 0; i < n; ++i) {
      std::string k(rng() % (max_len + 1), '\0');
      for (auto& ch : k) ch = alphabet[rng() % alphabet.size()];
      keys.insert(k);
    }
    return keys;
  };
  std::vector<std::set<std::string>> sets = {
      {},
      {"only"},
      {""},
      {"a", "ab", "abc", "abcd", "abd", "b", "ba"},
      {std::string("\0", 1), std::string("\0\0", 2), std::string("\0\xff", 2), "\xff", "\xff\xff", "\xff\x00"},
      {"shared_prefix_long_tail_1", "shared_prefix_long_tail_2", "shared_prefix_long_tail_3x"},
      random_keys(20000, "abcdefghijklmnopqrstuvwxyz", 10),
      random_keys(3000, std::string("\0\1\x7f\x80\xfe\xff" "ab", 8), 12),
      random_keys(5000, AllBytes(), 4),
  };
  for (size_t s = 0; s < sets.size(); ++s) {
    for (int mode = 0; mode < 4; ++mode) {
      SCOPED_TRACE(testing::Message() << "set " << s << " values " << mode);
      Pairs pairs;
      uint64_t rank = 0;
      for (const auto& k : sets[s]) {
        uint64_t v = rank++;
        if (mode == 1) v = rng() % ((uint64_t{1} << 40) + 1);
        if (mode == 2) v = 0;
        if (mode == 3) v = (rng() % 4 == 0) ? UINT64_MAX - rng() % 3 : rng() >> (rng() % 64);
        pairs.emplace_back(k, v);
      }
      auto bytes = Build(pairs);
      ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
      auto m = FstMap::Open(*bytes, "round trip");
      ASSERT_TRUE(m.ok()) << m.status().ToString();
      ExpectMapHolds(*m, pairs);
      // Prefix scans against the sorted pairs.
      for (int q = 0; q < 20 && !pairs.empty(); ++q) {
        const std::string& k = pairs[rng() % pairs.size()].first;
        const std::string prefix = k.substr(0, rng() % (k.size() + 1));
        Pairs want;
        for (const auto& p : pairs) {
          if (p.first.compare(0, prefix.size(), prefix) == 0) want.push_back(p);
        }
        auto got = ReadAll(*m, prefix);
        ASSERT_TRUE(got.ok());
        ASSERT_EQ(*got, want);
      }
    }
  }
}

TEST(FstTest, VisitorErrorStopsTheWalk) {
  auto m = FstMap::Open(Unhex(kSentenceHex), "sentence");
  ASSERT_TRUE(m.ok());
  int seen = 0;
  const Status st = m->ForEach([&](std::string_view, uint64_t) {
    return ++seen == 3 ? Status::Cancelled("enough") : Status::OK();
  });
  EXPECT_TRUE(st.IsCancelled());
  EXPECT_EQ(seen, 3);
}

TEST(FstTest, BuilderRejectsBadKeyOrder) {
  FstMapBuilder b;
  ASSERT_TRUE(b.Insert("b", 1).ok());
  EXPECT_TRUE(b.Insert("b", 2).IsInvalid());  // duplicate
  EXPECT_TRUE(b.Insert("a", 2).IsInvalid());  // out of order
  EXPECT_TRUE(b.Insert("", 2).IsInvalid());
  EXPECT_TRUE(b.Insert("\xff", 2).ok());      // unsigned: 0xff sorts after 'b'
  EXPECT_TRUE(b.Insert("\x7f", 2).IsInvalid());
  EXPECT_EQ(b.size(), 2u);
  auto bytes = b.Finish();
  ASSERT_TRUE(bytes.ok());
  EXPECT_TRUE(b.Insert("zzz", 1).IsInvalid());
  EXPECT_FALSE(b.Finish().ok());
  auto m = FstMap::Open(*bytes, "built");
  ASSERT_TRUE(m.ok());
  ExpectMapHolds(*m, {{"b", 1}, {"\xff", 2}});
}

TEST(FstTest, RejectsBadHeaderAndFooter) {
  const std::string good = Unhex(kSentenceHex);
  auto open = [](const std::string& b) { return FstMap::Open(b, "bad.fst").status(); };

  for (size_t n = 0; n < 36; ++n) EXPECT_TRUE(open(good.substr(0, n)).IsInvalid()) << n;
  std::string v = good;
  v[0] = 0;
  EXPECT_TRUE(open(Reseal(v)).IsInvalid());
  v[0] = 4;
  const Status version = open(Reseal(v));
  EXPECT_TRUE(version.IsInvalid());
  EXPECT_NE(version.message().find("version 4"), std::string::npos) << version.ToString();

  std::string sum = good;
  sum[40] ^= 1;
  const Status checksum = open(sum);
  EXPECT_NE(checksum.message().find("checksum"), std::string::npos) << checksum.ToString();
  EXPECT_NE(checksum.message().find("bad.fst"), std::string::npos) << checksum.ToString();

  // Footer fields: key count, then root address.
  const size_t footer = good.size() - 20;
  std::string count = good;
  count[footer] = 11;
  const Status keys = open(Reseal(count));
  EXPECT_NE(keys.message().find("footer says 11 keys"), std::string::npos) << keys.ToString();
  for (uint8_t root : {0, 1, 16, 0x61, 0x63, 0xff}) {
    std::string r = good;
    r[footer + 8] = static_cast<char>(root);
    EXPECT_TRUE(open(Reseal(r)).IsInvalid()) << int{root};
  }
  std::string far = good;
  for (int i = 0; i < 8; ++i) far[footer + 8 + i] = '\xff';
  EXPECT_TRUE(open(Reseal(far)).IsInvalid());
}

TEST(FstTest, ReadsVersionsOneAndTwo) {
  // Versions 1 and 2 have no checksum; version 1 no byte-to-transition
  // table (the sentence has no node that needs one).
  auto downgrade = [](std::string b, char version) {
    b.resize(b.size() - 4);
    b[0] = version;
    return b;
  };
  auto v1 = FstMap::Open(downgrade(Unhex(kSentenceHex), 1), "v1");
  ASSERT_TRUE(v1.ok()) << v1.status().ToString();
  EXPECT_EQ(v1->version(), 1u);
  ExpectMapHolds(*v1, Sorted(kSentence));
  const std::string words = ReadFile(FixtureDir() / "words.fst");
  auto v2 = FstMap::Open(downgrade(words, 2), "v2");
  ASSERT_TRUE(v2.ok()) << v2.status().ToString();
  auto all = ReadAll(*v2);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), 3192u);
  // Read as version 1, the words' tables are taken for other fields.
  int rejected = 0;
  ExpectSafe(downgrade(words, 1), &rejected);
}

TEST(FstTest, DamagedBytesGiveErrorsNotCrashes) {
  const std::string sentence = Unhex(kSentenceHex);
  auto medium = Build(RandomMap(9, 300, std::string("\0\1ab\xfe\xff", 6), 6, Values::kBelow2To40, false));
  ASSERT_TRUE(medium.ok());
  auto wide = Build(RandomMap(10, 400, AllBytes(), 2, Values::kRank, false));  // nodes with tables
  ASSERT_TRUE(wide.ok());
  for (const std::string* good : {&sentence, &std::as_const(*medium), &std::as_const(*wide)}) {
    int rejected = 0;
    for (size_t n = 0; n < good->size(); ++n) {
      EXPECT_FALSE(FstMap::Open(good->substr(0, n), "truncated").ok()) << n;
      ExpectSafe(Reseal(good->substr(0, n)), &rejected);
    }
    int flips = 0;
    rejected = 0;
    for (size_t i = 0; i + 4 < good->size(); ++i) {
      for (int bit = 0; bit < 8; ++bit) {
        std::string b = *good;
        b[i] ^= static_cast<char>(1 << bit);
        EXPECT_FALSE(FstMap::Open(b, "flipped").ok());  // the checksum
        ExpectSafe(Reseal(b), &rejected);
        ++flips;
      }
    }
    EXPECT_GT(rejected, flips / 4);
    // Random bytes over the nodes, header and footer kept.
    std::mt19937_64 rng(7);
    for (int trial = 0; trial < 300; ++trial) {
      std::string b = *good;
      const int edits = 1 + static_cast<int>(rng() % 8);
      for (int e = 0; e < edits; ++e) b[16 + rng() % (b.size() - 36)] = static_cast<char>(rng());
      ExpectSafe(Reseal(b), &rejected);
    }
  }
}

}  // namespace
}  // namespace lance::index
