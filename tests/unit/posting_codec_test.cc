// The INVERTED index posting codec against the rows pylance 14.0.2 wrote
// (tests/fixtures/posting/postings.txt, made by gen.py there): the texts are
// made again here, so every doc id, frequency, position and doc length is
// derived from them, not from the bytes. Decoding must give them exactly,
// encoding them (with the block scores read back) must give pylance's bytes,
// and random lists must round-trip; corrupt bytes must be errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "lance/index/posting_codec.h"

namespace lance::index {
namespace {

std::string Hex(std::string_view hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  }
  return out;
}

uint32_t Bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

std::vector<std::string_view> Views(const std::vector<std::string>& v) { return {v.begin(), v.end()}; }

// ---- The fixture's texts, made as gen.py makes them.

struct Lcg {
  uint32_t s;
  uint32_t operator()() {
    s = s * 1664525u + 1013904223u;
    return s >> 8;
  }
};

using Docs = std::vector<std::vector<std::string>>;

Docs MainTexts() {
  Lcg r{12345};
  Docs out;
  for (int d = 0; d < 6000; ++d) {
    std::vector<std::string> words;
    const uint32_t n = 1 + r() % 24;
    for (uint32_t i = 0; i < n; ++i) {
      const uint32_t a = r() % 40, b = r() % 40;
      words.push_back("w" + std::to_string(std::min(a, b)));
    }
    if (d % 9 != 0) {
      uint32_t k = 1;
      if (r() % 4 == 0) k += r() % 6;
      if (d % 500 == 7 || d == 5998) k += 300;
      for (uint32_t i = 0; i < k; ++i) words.insert(words.begin() + r() % (words.size() + 1), "x");
    }
    out.push_back(std::move(words));
  }
  return out;
}

Docs EdgeTexts() {
  Docs out;
  for (int d = 0; d < 300; ++d) {
    std::vector<std::string> words;
    if (d < 128) words.push_back("e128");
    if (d < 256) words.insert(words.end(), d % 3 + 1, "e256");
    if (d == 5) words.push_back("one");
    if (d >= 256 && d < 299) words.push_back("filler");
    if (d == 299) {
      words.insert(words.end(), 70000, "pad");
      words.push_back("far");
    }
    out.push_back(std::move(words));
  }
  return out;
}

struct Expected {
  std::string token;
  PostingList list;  // no block scores
  std::vector<uint32_t> doc_lengths;
};

// Token ids in order of first appearance; doc ids are row numbers.
std::vector<Expected> Derive(const Docs& docs) {
  std::map<std::string, size_t> ids;
  std::vector<Expected> out;
  for (uint32_t d = 0; d < docs.size(); ++d) {
    std::map<size_t, std::vector<uint32_t>> at;
    for (uint32_t p = 0; p < docs[d].size(); ++p) {
      auto [it, added] = ids.emplace(docs[d][p], out.size());
      if (added) out.push_back({docs[d][p], {}, {}});
      at[it->second].push_back(p);
    }
    for (const auto& [tid, positions] : at) {
      Expected& e = out[tid];
      e.list.doc_ids.push_back(d);
      e.list.frequencies.push_back(static_cast<uint32_t>(positions.size()));
      e.list.positions.insert(e.list.positions.end(), positions.begin(), positions.end());
      e.doc_lengths.push_back(static_cast<uint32_t>(docs[d].size()));
    }
  }
  return out;
}

// ---- The fixture's rows.

struct Row {
  uint32_t token_id = 0;
  std::string token;
  uint32_t length = 0;
  uint32_t max_score_bits = 0;
  std::vector<std::string> posting, impacts;
  std::string positions;
  std::vector<uint32_t> offsets;
};

std::map<std::string, std::vector<Row>> ReadFixture() {
  std::ifstream in(std::filesystem::path(LANCE_TEST_FIXTURES_DIR) / "posting" / "postings.txt");
  EXPECT_TRUE(in.good());
  std::map<std::string, std::vector<Row>> cases;
  std::vector<Row>* rows = nullptr;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string tag;
    ls >> tag;
    if (tag == "case") {
      std::string name;
      ls >> name;
      rows = &cases[name];
    } else if (tag == "row") {
      Row r;
      ls >> r.token_id >> r.token >> r.length >> std::hex >> r.max_score_bits;
      rows->push_back(std::move(r));
    } else if (tag == "p" || tag == "i" || tag == "c") {
      std::string hex;
      ls >> hex;
      std::string bytes = hex == "-" ? "" : Hex(hex);
      if (tag == "p") rows->back().posting.push_back(bytes);
      if (tag == "i") rows->back().impacts.push_back(bytes);
      if (tag == "c") rows->back().positions = bytes;
    } else if (tag == "o") {
      uint32_t o;
      while (ls >> o) rows->back().offsets.push_back(o);
    }
  }
  return cases;
}

const std::map<std::string, std::vector<Row>>& Fixture() {
  static const auto* cases = new std::map<std::string, std::vector<Row>>(ReadFixture());
  return *cases;
}

uint64_t TotalTokens(const Docs& docs) {
  uint64_t t = 0;
  for (const auto& d : docs) t += d.size();
  return t;
}

// What an impact entry must hold, by brute force: the last doc id, and the
// distinct (frequency, quantized length) of postings [begin, begin + n) that
// no other is as frequent as at a norm as low.
ImpactEntry ParetoEntry(const Expected& e, size_t begin, size_t n) {
  std::set<std::pair<uint32_t, uint8_t>> pairs;
  for (size_t i = begin; i < begin + n; ++i) {
    pairs.emplace(e.list.frequencies[i], QuantizeDocLength(e.doc_lengths[i]));
  }
  ImpactEntry entry{e.list.doc_ids[begin + n - 1], {}};
  for (const auto& p : pairs) {
    const bool dominated = std::any_of(pairs.begin(), pairs.end(), [&](const auto& q) {
      return q != p && q.first >= p.first && q.second <= p.second;
    });
    if (!dominated) entry.frontier.push_back({p.first, p.second});
  }
  return entry;
}

// Decodes every row of a case, checks it against the texts, and encodes the
// texts' postings back to pylance's bytes.
void CheckCase(const std::string& name, const Docs& docs) {
  SCOPED_TRACE(name);
  const auto& rows = Fixture().at(name);
  const auto expected = Derive(docs);
  ASSERT_EQ(rows.size(), expected.size());
  for (const Row& row : rows) {
    const Expected& e = expected.at(row.token_id);
    const std::string context = name + " row " + std::to_string(row.token_id) + " (" + row.token + ")";
    SCOPED_TRACE(context);
    ASSERT_EQ(row.token, e.token);
    ASSERT_EQ(row.length, e.list.doc_ids.size());

    const auto blocks = Views(row.posting);
    auto list = DecodePostingList(blocks, row.length, context);
    ASSERT_TRUE(list.ok()) << list.status().ToString();
    EXPECT_EQ(list->doc_ids, e.list.doc_ids);
    EXPECT_EQ(list->frequencies, e.list.frequencies);
    ASSERT_EQ(list->block_max_scores.size(), (row.length + 127) / 128);
    const float max = *std::max_element(list->block_max_scores.begin(), list->block_max_scores.end());
    EXPECT_EQ(Bits(max), row.max_score_bits);
    ASSERT_TRUE(DecodePositions(row.positions, row.offsets, &*list, context).ok());
    EXPECT_EQ(list->positions, e.list.positions);

    // pylance's scores, recomputed from the texts alone.
    const auto scores = Bm25BlockMaxScores(e.list.frequencies, e.doc_lengths, docs.size(), TotalTokens(docs));
    ASSERT_EQ(scores.size(), list->block_max_scores.size());
    for (size_t k = 0; k < scores.size(); ++k) EXPECT_EQ(Bits(scores[k]), Bits(list->block_max_scores[k])) << k;

    auto impacts = DecodeImpacts(Views(row.impacts), row.length, context);
    ASSERT_TRUE(impacts.ok()) << impacts.status().ToString();
    ASSERT_EQ(impacts->level1.size(), (impacts->level0.size() + 31) / 32);
    for (size_t level : {0, 1}) {
      const auto& entries = level == 0 ? impacts->level0 : impacts->level1;
      const size_t span = level == 0 ? 128 : 128 * 32;
      for (size_t k = 0; k < entries.size(); ++k) {
        const size_t b = k * span, n = std::min<size_t>(span, row.length - b);
        EXPECT_EQ(entries[k], ParetoEntry(e, b, n)) << "level " << level << " entry " << k;
      }
    }

    PostingList from_texts = e.list;
    from_texts.block_max_scores = scores;
    auto encoded = EncodePostingRow(from_texts, e.doc_lengths, true);
    ASSERT_TRUE(encoded.ok()) << encoded.status().ToString();
    EXPECT_EQ(encoded->posting, row.posting);
    EXPECT_EQ(Bits(encoded->max_score), row.max_score_bits);
    EXPECT_EQ(encoded->length, row.length);
    EXPECT_EQ(encoded->impacts, row.impacts);
    EXPECT_EQ(encoded->positions.stream, row.positions);
    EXPECT_EQ(encoded->positions.block_offsets, row.offsets);
  }
}

TEST(PostingCodecTest, FixtureCoversTheLayouts) {
  const auto& main = Fixture().at("main");
  const auto& edge = Fixture().at("edge");
  std::map<std::string, const Row*> by_token;
  for (const auto* rows : {&main, &edge}) {
    for (const Row& r : *rows) by_token[r.token] = &r;
  }
  // 5333 postings: 41 full blocks and a tail, 42 level-0 and 2 level-1
  // impact entries; docs of 300+ positions make packed delta groups.
  EXPECT_EQ(by_token.at("x")->length, 5333u);
  EXPECT_EQ(by_token.at("x")->posting.size(), 42u);
  EXPECT_EQ(by_token.at("x")->impacts.size(), 44u);
  EXPECT_EQ(by_token.at("w38")->length, 127u);  // one tail block, just short of full
  EXPECT_EQ(by_token.at("e128")->posting.size(), 1u);  // exactly one full block
  // Doc id deltas 0, 1, 1, ... and frequencies 1: a bit each.
  EXPECT_EQ(by_token.at("e128")->posting[0].size(), 4u + 4 + 1 + 16 + 1 + 16);
  EXPECT_EQ(by_token.at("e256")->posting.size(), 2u);
  EXPECT_EQ(by_token.at("pad")->length, 1u);  // 70000 positions in a doc of 70001 tokens
}

TEST(PostingCodecTest, DecodesAndEncodesPylanceMain) { CheckCase("main", MainTexts()); }
TEST(PostingCodecTest, DecodesAndEncodesPylanceEdge) { CheckCase("edge", EdgeTexts()); }

TEST(PostingCodecTest, SmallIndexByteForByte) {
  // pylance 14.0.2 over "a b a", "b c", "a" (ids a=0, b=1, c=2; doc lengths
  // 3, 2, 1): one tail block each; impacts [level 0, level 1].
  const std::vector<std::string> posting[3] = {{Hex("b742173f00020201")}, {Hex("51a4f03e00010101")},
                                               {Hex("9f177b3f0101")}};
  const std::string impact[3] = {Hex("0202000102"), Hex("01010102"), Hex("01010102")};
  const std::string positions[3] = {Hex("000200"), Hex("0100"), Hex("01")};
  const std::vector<uint32_t> docs[3] = {{0, 2}, {0, 1}, {1}};
  const std::vector<uint32_t> freqs[3] = {{2, 1}, {1, 1}, {1}};
  const std::vector<uint32_t> pos[3] = {{0, 2, 0}, {1, 0}, {1}};
  const std::vector<uint32_t> lens[3] = {{3, 1}, {3, 2}, {2}};
  for (int t = 0; t < 3; ++t) {
    SCOPED_TRACE(t);
    auto list = DecodePostingList(Views(posting[t]), static_cast<uint32_t>(docs[t].size()), "small");
    ASSERT_TRUE(list.ok()) << list.status().ToString();
    EXPECT_EQ(list->doc_ids, docs[t]);
    EXPECT_EQ(list->frequencies, freqs[t]);
    const uint32_t zero = 0;
    ASSERT_TRUE(DecodePositions(positions[t], std::span(&zero, 1), &*list, "small").ok());
    EXPECT_EQ(list->positions, pos[t]);
    EXPECT_EQ(Bits(Bm25BlockMaxScores(freqs[t], lens[t], 3, 6)[0]), Bits(list->block_max_scores[0]));
    auto row = EncodePostingRow(*list, lens[t], true);
    ASSERT_TRUE(row.ok());
    EXPECT_EQ(row->posting, posting[t]);
    EXPECT_EQ(row->impacts, (std::vector<std::string>{impact[t], impact[t]}));
    EXPECT_EQ(row->positions.stream, positions[t]);
    EXPECT_EQ(row->positions.block_offsets, std::vector<uint32_t>{0});
  }
  // "a": docs (freq 2, length 3) and (1, 1): both on the frontier; the
  // first pair's norm delta 1 is implicit, the second's (2) explicit.
  auto entry = DecodeImpactEntry(impact[0], "small");
  ASSERT_TRUE(entry.ok());
  EXPECT_EQ(entry->doc_up_to, 2u);
  EXPECT_EQ(entry->frontier, (std::vector<ImpactPair>{{1, 1}, {2, 3}}));
}

// ---- BitPacker4x

TEST(PostingCodecTest, BitPackerLaneLayout) {
  // Value i is lane i % 4's value i / 4; lane j's word k is word 4k + j.
  std::array<uint32_t, 128> v{};
  v[5] = 1;  // lane 1, value 1: bit 1 of word 1
  std::string out;
  ASSERT_TRUE(BitPack(v, 1, &out).ok());
  ASSERT_EQ(out.size(), 16u);
  EXPECT_EQ(out, std::string("\0\0\0\0\x02\0\0\0\0\0\0\0\0\0\0\0", 16));
  // 3 bits: lane 2's value 11 spans bits 33..35, word 1 of lane 2 = word 6.
  v = {};
  v[4 * 11 + 2] = 7;
  out.clear();
  ASSERT_TRUE(BitPack(v, 3, &out).ok());
  ASSERT_EQ(out.size(), 48u);
  for (size_t i = 0; i < out.size(); ++i) EXPECT_EQ(out[i], i == 24 ? '\x0E' : '\0') << i;
  // Lane 3's value 10 at bits 30..32 of 3 bits: straddles words 3 and 7.
  v = {};
  v[4 * 10 + 3] = 7;
  out.clear();
  ASSERT_TRUE(BitPack(v, 3, &out).ok());
  EXPECT_EQ(static_cast<uint8_t>(out[15]), 0xC0);
  EXPECT_EQ(static_cast<uint8_t>(out[28]), 0x01);
}

TEST(PostingCodecTest, BitPackerNumBitsAndRoundTrips) {
  std::mt19937 rng(7);
  for (int bits = 0; bits <= 32; ++bits) {
    for (size_t pos : {size_t{0}, size_t{37}, size_t{127}}) {
      std::array<uint32_t, 128> v{};
      if (bits > 0) v[pos] = uint32_t{1} << (bits - 1);
      EXPECT_EQ(BitPackNumBits(v), bits);
    }
    std::array<uint32_t, 128> v, back;
    const uint32_t mask = bits == 32 ? ~0u : (uint32_t{1} << bits) - 1;
    for (auto& x : v) x = rng() & mask;
    std::string out;
    ASSERT_TRUE(BitPack(v, static_cast<uint8_t>(bits), &out).ok());
    ASSERT_EQ(out.size(), BitPackedBytes(static_cast<uint8_t>(bits)));
    ASSERT_TRUE(BitUnpack(out, static_cast<uint8_t>(bits), back, "t").ok());
    EXPECT_EQ(back, v) << bits;
    // Sorted: deltas from `initial`, wrapping.
    std::array<uint32_t, 128> s;
    uint32_t acc = rng();
    const uint32_t initial = acc;
    for (auto& x : s) x = acc += rng() & mask;
    const uint8_t sb = BitPackNumBitsSorted(initial, s);
    EXPECT_LE(sb, bits);
    out.clear();
    ASSERT_TRUE(BitPackSorted(initial, s, sb, &out).ok());
    ASSERT_TRUE(BitUnpackSorted(initial, out, sb, back, "t").ok());
    EXPECT_EQ(back, s) << bits;
  }
  std::array<uint32_t, 128> v{}, back{};
  v[3] = 8;
  std::string out;
  EXPECT_FALSE(BitPack(v, 3, &out).ok());   // 8 needs 4 bits
  EXPECT_FALSE(BitPack(v, 33, &out).ok());
  EXPECT_FALSE(BitUnpack(std::string(47, '\0'), 3, back, "t").ok());
  EXPECT_FALSE(BitUnpack(std::string(600, '\0'), 33, back, "t").ok());
  // Zero bits: no bytes, all values the initial one.
  ASSERT_TRUE(BitUnpackSorted(9, "", 0, back, "t").ok());
  EXPECT_EQ(back[127], 9u);
}

// ---- Random round trips

// `big`: doc ids and frequencies near 2^32 and no positions; else small
// ones with positions.
PostingList RandomList(std::mt19937& rng, size_t n, bool big) {
  PostingList l;
  uint32_t doc = big ? std::numeric_limits<uint32_t>::max() - static_cast<uint32_t>(n) * 1000 : rng() % 10;
  for (size_t i = 0; i < n; ++i) {
    doc += 1 + rng() % (big ? 1000 : 3);
    l.doc_ids.push_back(doc);
    uint32_t f = 1 + rng() % 4;
    if (rng() % 8 == 0) f = big ? 1 + rng() % 0xFFFFFFFEu : 1 + rng() % 300;
    l.frequencies.push_back(f);
    if (!big) {
      uint32_t p = rng() % 50;
      for (uint32_t j = 0; j < f; ++j, p += rng() % 100) l.positions.push_back(p);
    }
  }
  for (size_t i = 0; i < (n + 127) / 128; ++i) l.block_max_scores.push_back(static_cast<float>(rng()) / 7.0f);
  return l;
}

TEST(PostingCodecTest, RandomRoundTrips) {
  std::mt19937 rng(11);
  for (size_t n : {1, 2, 127, 128, 129, 255, 256, 257, 1000, 4097}) {
    for (bool big : {false, true}) {
      SCOPED_TRACE(std::to_string(n) + (big ? " big" : ""));
      const PostingList l = RandomList(rng, n, big);
      std::vector<uint32_t> lens(n);
      for (auto& x : lens) x = big ? rng() : rng() % 300;
      auto row = EncodePostingRow(l, lens, !big);
      ASSERT_TRUE(row.ok()) << row.status().ToString();
      auto back = DecodePostingList(Views(row->posting), row->length, "rt");
      ASSERT_TRUE(back.ok()) << back.status().ToString();
      EXPECT_EQ(back->doc_ids, l.doc_ids);
      EXPECT_EQ(back->frequencies, l.frequencies);
      EXPECT_EQ(back->block_max_scores, l.block_max_scores);
      if (!big) {
        ASSERT_TRUE(DecodePositions(row->positions.stream, row->positions.block_offsets, &*back, "rt").ok());
        EXPECT_EQ(back->positions, l.positions);
      }
      auto impacts = DecodeImpacts(Views(row->impacts), row->length, "rt");
      ASSERT_TRUE(impacts.ok()) << impacts.status().ToString();
      ASSERT_EQ(impacts->level1.size(), ((n + 127) / 128 + 31) / 32);
      // Every posting is bounded by a frontier pair: as frequent at a norm
      // no greater; and no pair bounds another.
      for (size_t k = 0; k < impacts->level0.size(); ++k) {
        const auto& f = impacts->level0[k].frontier;
        EXPECT_EQ(impacts->level0[k].doc_up_to, l.doc_ids[std::min(n, (k + 1) * 128) - 1]);
        for (size_t i = 1; i < f.size(); ++i) {
          EXPECT_TRUE(f[i].frequency > f[i - 1].frequency && f[i].norm > f[i - 1].norm);
        }
        for (size_t i = k * 128; i < std::min(n, (k + 1) * 128); ++i) {
          const uint8_t norm = QuantizeDocLength(lens[i]);
          EXPECT_TRUE(std::any_of(f.begin(), f.end(), [&](const ImpactPair& p) {
            return p.frequency >= l.frequencies[i] && p.norm <= norm;
          })) << i;
        }
        for (const auto& p : f) {
          EXPECT_TRUE(std::any_of(l.frequencies.begin() + k * 128, l.frequencies.begin() + std::min(n, (k + 1) * 128),
                                  [&](uint32_t freq) { return freq == p.frequency; }));
        }
        auto again = EncodeImpactEntry(impacts->level0[k]);
        ASSERT_TRUE(again.ok());
        EXPECT_EQ(*again, row->impacts[k]);
      }
    }
  }
}

TEST(PostingCodecTest, QuantizesDocLengths) {
  for (uint32_t v = 0; v < 8; ++v) EXPECT_EQ(DequantizeDocLength(QuantizeDocLength(v)), v);
  EXPECT_EQ(QuantizeDocLength(16), 16);
  EXPECT_EQ(QuantizeDocLength(17), 16);
  EXPECT_EQ(QuantizeDocLength(70001), 112);  // as pylance's "pad" impact has it
  EXPECT_EQ(DequantizeDocLength(112), 65536u);
  EXPECT_EQ(QuantizeDocLength(std::numeric_limits<uint32_t>::max()), 239);
  EXPECT_EQ(DequantizeDocLength(239), 0xF0000000u);
  EXPECT_EQ(DequantizeDocLength(255), std::numeric_limits<uint32_t>::max());
  uint8_t prev = 0;
  for (uint64_t v = 1; v <= std::numeric_limits<uint32_t>::max(); v = v * 9 / 8 + 1) {
    const uint8_t q = QuantizeDocLength(static_cast<uint32_t>(v));
    EXPECT_GE(q, prev);
    EXPECT_LE(DequantizeDocLength(q), v);
    EXPECT_GT(DequantizeDocLength(q) * 1.0, v * 0.875);
    prev = q;
  }
}

// ---- Bad input

const Row& FixtureRow(const std::string& token) {
  for (const auto& [name, rows] : Fixture()) {
    for (const Row& r : rows) {
      if (r.token == token) return r;
    }
  }
  throw std::runtime_error("no row " + token);
}

TEST(PostingCodecTest, CorruptPostingsAreErrors) {
  const Row& x = FixtureRow("x");
  auto decode = [&](std::vector<std::string> blocks, uint32_t length) {
    return DecodePostingList(Views(blocks), length, "x").status();
  };
  ASSERT_TRUE(decode(x.posting, x.length).ok());
  EXPECT_FALSE(decode(x.posting, x.length + 128).ok());  // a block missing
  EXPECT_FALSE(decode(x.posting, x.length - 85).ok());   // no tail, one block too many
  EXPECT_FALSE(decode(x.posting, x.length + 1).ok());    // a tail of 86 in 85's bytes
  for (size_t k : {size_t{0}, x.posting.size() - 1}) {
    auto blocks = x.posting;
    blocks[k].pop_back();
    EXPECT_FALSE(decode(blocks, x.length).ok()) << k;
    blocks = x.posting;
    blocks[k].push_back('\0');
    EXPECT_FALSE(decode(blocks, x.length).ok()) << k;
    blocks = x.posting;
    blocks[k].resize(3);
    EXPECT_FALSE(decode(blocks, x.length).ok()) << k;
  }
  auto blocks = x.posting;
  blocks[0][8] = 33;  // doc id bit width
  EXPECT_FALSE(decode(blocks, x.length).ok());
  blocks = x.posting;
  blocks[1][4] = 0;  // block 1 starts before block 0 ends
  blocks[1][5] = 0;
  EXPECT_FALSE(decode(blocks, x.length).ok());
  // Tails: a delta of 0 (not ascending), a varint past 2^32, an unended one.
  const std::string score("\0\0\0\0", 4);
  EXPECT_TRUE(decode({score + Hex("0501") + Hex("0101")}, 2).ok());
  auto status = decode({score + Hex("0500") + Hex("0101")}, 2);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("not ascending"), std::string::npos) << status.ToString();
  EXPECT_FALSE(decode({score + Hex("ffffffff1f") + Hex("01")}, 1).ok());
  EXPECT_TRUE(decode({score + Hex("ffffffff0f") + Hex("01")}, 1).ok());
  EXPECT_FALSE(decode({score + Hex("ff")}, 1).ok());
  EXPECT_FALSE(decode({score + Hex("ffffffff0f01") + Hex("0101")}, 2).ok());  // overflow
  status = decode({score}, 1);
  EXPECT_NE(status.message().find("x: posting block 0"), std::string::npos) << status.ToString();

  // Every single-byte change and truncation: an error or a list, never a
  // crash or a read out of bounds (ASan runs this).
  std::mt19937 rng(3);
  for (const Row* r : {&x, &FixtureRow("w38"), &FixtureRow("e256")}) {
    for (int trial = 0; trial < 3000; ++trial) {
      auto b = r->posting;
      auto& blk = b[rng() % b.size()];
      if (blk.empty()) continue;
      if (trial % 5 == 0) {
        blk.resize(rng() % blk.size());
      } else {
        blk[rng() % blk.size()] = static_cast<char>(rng());
      }
      auto list = DecodePostingList(Views(b), r->length, "fuzz");
      if (list.ok()) {
        EXPECT_EQ(list->doc_ids.size(), r->length);
        std::string stream = r->positions;
        if (!stream.empty() && trial % 2) stream[rng() % stream.size()] = static_cast<char>(rng());
        (void)DecodePositions(stream, r->offsets, &*list, "fuzz");
      }
    }
  }
}

TEST(PostingCodecTest, CorruptPositionsAreErrors) {
  const Row& x = FixtureRow("x");
  auto list = DecodePostingList(Views(x.posting), x.length, "x");
  ASSERT_TRUE(list.ok());
  auto decode = [&](const std::string& stream, std::vector<uint32_t> offsets) {
    PostingList l = *list;
    return DecodePositions(stream, offsets, &l, "x");
  };
  ASSERT_TRUE(decode(x.positions, x.offsets).ok());
  auto offsets = x.offsets;
  offsets.pop_back();
  EXPECT_FALSE(decode(x.positions, offsets).ok());
  offsets = x.offsets;
  std::swap(offsets[3], offsets[4]);
  EXPECT_FALSE(decode(x.positions, offsets).ok());
  offsets = x.offsets;
  offsets.back() = static_cast<uint32_t>(x.positions.size() + 1);
  EXPECT_FALSE(decode(x.positions, offsets).ok());
  offsets = x.offsets;
  offsets[0] = 1;
  EXPECT_FALSE(decode(x.positions, offsets).ok());
  EXPECT_FALSE(decode(x.positions.substr(0, x.positions.size() - 1), x.offsets).ok());
  EXPECT_FALSE(decode(x.positions + '\0', x.offsets).ok());
  EXPECT_FALSE(decode("", x.offsets).ok());
  // A frequency no bytes could hold: an error before any allocation.
  PostingList l = *list;
  l.frequencies[0] = 4000000000u;
  EXPECT_FALSE(DecodePositions(x.positions, x.offsets, &l, "x").ok());
  // A position past 2^32 within a doc.
  PostingList one{{0}, {2}, {0}, {}};
  EXPECT_FALSE(DecodePositions(Hex("ffffffff0f01"), std::vector<uint32_t>{0}, &one, "x").ok());
  EXPECT_TRUE(DecodePositions(Hex("feffffff0f01"), std::vector<uint32_t>{0}, &one, "x").ok());
  EXPECT_EQ(one.positions, (std::vector<uint32_t>{0xFFFFFFFEu, 0xFFFFFFFFu}));
}

TEST(PostingCodecTest, CorruptImpactsAreErrors) {
  EXPECT_TRUE(DecodeImpactEntry(Hex("0202000102"), "i").ok());
  // Truncated, no pairs, a missing or zero norm delta, trailing bytes, more
  // pairs than bytes, a varint past 2^64.
  for (const char* bad : {"", "02", "0200", "020200", "02020001", "020200010200", "0202000100", "02010000",
                          "0205000000", "0201ffffffffffffffffff7f"}) {
    EXPECT_FALSE(DecodeImpactEntry(Hex(bad), "i").ok()) << bad;
  }
  // A norm past 255: ff then another 1.
  EXPECT_FALSE(DecodeImpactEntry(Hex("010201ff00"), "i").ok());
  EXPECT_TRUE(DecodeImpactEntry(Hex("010201fe00"), "i").ok());
  // A frequency past 2^32.
  EXPECT_FALSE(DecodeImpactEntry(Hex("0102fcffffff1f00"), "i").ok());
  const Row& x = FixtureRow("x");
  auto views = Views(x.impacts);
  EXPECT_TRUE(DecodeImpacts(views, x.length, "x").ok());
  views.pop_back();
  EXPECT_FALSE(DecodeImpacts(views, x.length, "x").ok());
  auto impacts = x.impacts;
  impacts[43].push_back('\0');
  auto status = DecodeImpacts(Views(impacts), x.length, "x").status();
  EXPECT_NE(status.message().find("level 1 entry 1"), std::string::npos) << status.ToString();
  std::mt19937 rng(5);
  for (int trial = 0; trial < 3000; ++trial) {
    std::string e = x.impacts[rng() % x.impacts.size()];
    if (trial % 4 == 0) {
      e.resize(rng() % e.size());
    } else {
      e[rng() % e.size()] = static_cast<char>(rng());
    }
    (void)DecodeImpactEntry(e, "fuzz");
  }
}

TEST(PostingCodecTest, EncodeRejectsBadInput) {
  const std::vector<uint32_t> ids{1, 2, 3}, freqs{1, 1, 1};
  const std::vector<float> one{1.0f};
  EXPECT_TRUE(EncodePostingBlocks(ids, freqs, one).ok());
  EXPECT_FALSE(EncodePostingBlocks(std::vector<uint32_t>{1, 3, 3}, freqs, one).ok());
  EXPECT_FALSE(EncodePostingBlocks(std::vector<uint32_t>{1, 2}, freqs, one).ok());
  EXPECT_FALSE(EncodePostingBlocks(ids, freqs, std::vector<float>{1.0f, 2.0f}).ok());
  EXPECT_FALSE(EncodePositions(freqs, std::vector<uint32_t>{1, 2}).ok());
  EXPECT_FALSE(EncodePositions(std::vector<uint32_t>{2}, std::vector<uint32_t>{5, 4}).ok());
  EXPECT_TRUE(EncodePositions(std::vector<uint32_t>{2}, std::vector<uint32_t>{4, 4}).ok());
  EXPECT_FALSE(EncodeImpacts(ids, std::vector<uint32_t>{1, 0, 1}, std::vector<uint32_t>{1, 1, 1}).ok());
  EXPECT_FALSE(EncodeImpacts(ids, freqs, std::vector<uint32_t>{1, 1}).ok());
  EXPECT_FALSE(MakeImpactEntry({}, {}, {}).ok());
  EXPECT_FALSE(EncodeImpactEntry({0, {{2, 3}, {2, 4}}}).ok());
  EXPECT_FALSE(EncodeImpactEntry({0, {{2, 3}, {3, 3}}}).ok());
  EXPECT_FALSE(EncodeImpactEntry({0, {{0, 3}}}).ok());
  EXPECT_TRUE(EncodeImpactEntry({0, {{1, 0}, {3, 3}}}).ok());
}

}  // namespace
}  // namespace lance::index
