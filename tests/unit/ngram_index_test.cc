// The NGRAM tokenizer, posting-list decoder and reader against an index
// pylance 14.0.2 built (tests/fixtures/scalar_index/gen_ngram.py): fragments
// 0 and 1 hold kValues[0..5] and kValues[6..11], fragment 2 is not indexed.
#include "lance/index/ngram.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>

#include <arrow/api.h>
#include <arrow/compute/api.h>

#include "lance/file_reader.h"
#include "lance/index/filter_plan.h"
#include "lance/index/scalar_index.h"
#include "lance/scan/filter_parser.h"

namespace lance::index {
namespace {

namespace cp = arrow::compute;

// gen_ngram.py's VALUES.
const std::optional<std::string> kValues[] = {
    "Hello World", std::nullopt, "ab",           "",       "x-y_z abc", "HELLO hello",
    "r2d2 C3PO",   "abcabc",     "café Ünïcode", "Straße", std::nullopt, "zzz ΩΩΩ日本語 abc"};

std::shared_ptr<Dataset> Open() {
  auto ds = Dataset::Open((std::filesystem::path(LANCE_TEST_FIXTURES_DIR) / "scalar_index" / "ngram.lance").string());
  EXPECT_TRUE(ds.ok()) << ds.status().ToString();
  return *ds;
}

// Row (index into kValues) -> the tokens pylance's index lists it under.
std::map<size_t, std::set<uint32_t>> PylanceTokens(const Dataset& ds) {
  std::map<size_t, std::set<uint32_t>> out;
  auto file = OpenIndexFile(ds, ds.indices().front(), "ngram_postings.lance");
  EXPECT_TRUE(file.ok() && *file != nullptr);
  auto table = (*file)->ReadAll({"tokens", "posting_list"}).ValueOrDie()->CombineChunksToBatch().ValueOrDie();
  const auto& tokens = static_cast<const arrow::UInt32Array&>(*table->column(0));
  const auto& lists = static_cast<const arrow::BinaryArray&>(*table->column(1));
  for (int64_t i = 0; i < table->num_rows(); ++i) {
    auto ids = DecodeRoaringTreemap(lists.GetView(i), "test");
    EXPECT_TRUE(ids.ok()) << ids.status().ToString();
    for (uint64_t id : *ids) out[(id >> 32) * 6 + (id & 0xFFFFFFFFu)].insert(tokens.Value(i));
  }
  return out;
}

TEST(NGramIndexTest, RegistryKnowsNGram) {
  const ScalarIndexType* t = FindScalarIndexType("/lance.table.NGramIndexDetails");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->name, "NGram");
}

TEST(NGramIndexTest, TokenizerGivesPylanceTokens) {
  auto ds = Open();
  const auto pylance = PylanceTokens(*ds);
  for (size_t k = 0; k < std::size(kValues); ++k) {
    const auto found = pylance.count(k) ? pylance.at(k) : std::set<uint32_t>{};
    if (!kValues[k]) {
      EXPECT_EQ(found, std::set<uint32_t>{ngram::kNullToken}) << "null row " << k;
      continue;
    }
    std::vector<uint32_t> tokens;
    bool unknown = false;
    ngram::Tokenize(*kValues[k], &tokens, &unknown);
    const std::set<uint32_t> ours(tokens.begin(), tokens.end());
    // Latin letters fold as pylance's; windows over the Greek and CJK ones
    // (which fold to no letter here) are left out: the same tokens.
    EXPECT_EQ(ours, found) << *kValues[k];
    EXPECT_EQ(unknown, k == 11) << *kValues[k];
  }
  // Spot checks of the encoding.
  std::vector<uint32_t> abc;
  bool unknown = false;
  ngram::Tokenize("aBc", &abc, &unknown);
  EXPECT_EQ(abc, std::vector<uint32_t>{11 * 37 * 37 + 12 * 37 + 13});
  EXPECT_EQ(ngram::TokenText(abc[0]), "abc");
  EXPECT_FALSE(unknown);
  EXPECT_EQ(ngram::CharCount("café"), 4u);
  // Folds to several letters; invalid UTF-8 is an unknown character.
  std::vector<uint32_t> folded;
  ngram::Tokenize("Æß", &folded, &unknown);
  std::vector<std::string> texts;
  for (uint32_t t : folded) texts.push_back(ngram::TokenText(t));
  EXPECT_EQ(texts, (std::vector<std::string>{"aes", "ess", }));
  EXPECT_FALSE(unknown);
  folded.clear();
  ngram::Tokenize(std::string("ab\xC3", 3), &folded, &unknown);
  EXPECT_TRUE(folded.empty());
  EXPECT_TRUE(unknown);
}

TEST(NGramIndexTest, RoaringTreemapDecoding) {
  // pylance's posting list of rows 0 and 1 << 32 | 0.
  std::string two;
  const char hex[] =
      "0200000000000000000000003a3000000100000000000000100000000000010000003a3000000100000000000000100000000000";
  for (size_t i = 0; hex[i] && hex[i + 1]; i += 2) two.push_back(static_cast<char>(std::stoi(std::string(hex + i, 2), nullptr, 16)));
  auto ids = DecodeRoaringTreemap(two, "t");
  ASSERT_TRUE(ids.ok()) << ids.status().ToString();
  EXPECT_EQ(*ids, (RowIds{0, uint64_t{1} << 32}));
  EXPECT_TRUE(DecodeRoaringTreemap(two.substr(0, two.size() - 1), "t").status().IsInvalid());
  EXPECT_TRUE(DecodeRoaringTreemap(two + "x", "t").status().IsInvalid());
  EXPECT_TRUE(DecodeRoaringTreemap(two.substr(0, 5), "t").status().IsInvalid());
  std::string many = two;
  many[0] = '\x7f';
  EXPECT_TRUE(DecodeRoaringTreemap(many, "t").status().IsInvalid());
  // Every shorter prefix is refused; no change of one byte crashes it.
  for (size_t n = 0; n < two.size(); ++n) EXPECT_FALSE(DecodeRoaringTreemap(two.substr(0, n), "t").ok()) << n;
  for (size_t i = 0; i < two.size(); ++i) {
    for (int v : {0x00, 0x01, 0x7f, 0xff}) {
      std::string bad = two;
      bad[i] = static_cast<char>(v);
      (void)DecodeRoaringTreemap(bad, "t");
    }
  }
}

cp::Expression Filter(const Dataset& ds, const std::string& sql) {
  auto e = scan::ParseFilter(sql, *ds.ArrowSchema().ValueOrDie());
  EXPECT_TRUE(e.ok()) << e.status().ToString();
  return *e;
}

constexpr uint64_t Addr(uint64_t frag, uint64_t off) { return (frag << 32) | off; }

TEST(NGramIndexTest, SearchGivesCandidatesOfTheNeedle) {
  auto ds = Open();
  auto index = OpenScalarIndex(*ds, ds->indices().front());
  ASSERT_TRUE(index.ok() && *index != nullptr) << index.status().ToString();
  struct Case {
    const char* sql;
    std::optional<RowIds> rows;  // nullopt: not answered
  };
  const Case cases[] = {
      // Case-folded candidates: HELLO too; the scan rechecks.
      {"contains(s, 'llo')", RowIds{Addr(0, 0), Addr(0, 5)}},
      {"contains(s, 'bcab')", RowIds{Addr(1, 1)}},
      {"contains(s, 'qqq')", RowIds{}},
      // 3+ characters but no trigram: every row of the segment.
      {"contains(s, 'a b')", std::nullopt /* checked below */},
      {"contains(s, 'ab')", std::nullopt},
      {"s LIKE '%ell%'", RowIds{Addr(0, 0), Addr(0, 5)}},
      {"s LIKE 'a_c%'", std::nullopt},
      {"s LIKE 'zzz'", std::nullopt},  // an equality to pylance
      {"s ILIKE '%ell%'", std::nullopt},
      {"starts_with(s, 'Hel')", RowIds{Addr(0, 0), Addr(0, 5)}},
      {"ends_with(s, 'llo')", std::nullopt},
      {"NOT contains(s, 'llo')", std::nullopt},
      {"contains(s, 'llo') OR contains(s, 'zzz')", RowIds{Addr(0, 0), Addr(0, 5), Addr(1, 5)}},
      {"s = 'abc'", std::nullopt},
  };
  for (const auto& c : cases) {
    auto e = Filter(*ds, c.sql);
    const bool can = (*index)->CanSearch(e, "s");
    if (std::string(c.sql) == "contains(s, 'a b')") {
      ASSERT_TRUE(can);
      auto rows = (*index)->Search(e, "s");
      ASSERT_TRUE(rows.ok());
      EXPECT_EQ(rows->size(), 12u);
      continue;
    }
    EXPECT_EQ(can, c.rows.has_value()) << c.sql;
    if (!can || !c.rows) continue;
    EXPECT_FALSE((*index)->IsExact(e));
    auto rows = (*index)->Search(e, "s");
    ASSERT_TRUE(rows.ok()) << rows.status().ToString();
    EXPECT_EQ(*rows, *c.rows) << c.sql;
  }
}

TEST(NGramIndexTest, PlannerRechecksAndLeavesTheUnindexedFragment) {
  auto ds = Open();
  std::vector<const Fragment*> fragments;
  for (const auto& f : ds->manifest().fragments) fragments.push_back(&f);
  auto plan = IndexedFilter::Plan(ds, Filter(*ds, "contains(s, 'llo')"), fragments);
  ASSERT_TRUE(plan.ok() && plan->has_value()) << plan.status().ToString();
  EXPECT_TRUE((*plan)->needs_refine());
  EXPECT_NE((*plan)->Describe().find("s_idx (NGram)"), std::string::npos) << (*plan)->Describe();
  EXPECT_TRUE((*plan)->Covers(0) && (*plan)->Covers(1) && !(*plan)->Covers(2));
  // BTREE / BITMAP style indices are not asked text questions.
  auto none = IndexedFilter::Plan(ds, Filter(*ds, "contains(s, 'ab')"), fragments);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
}

TEST(NGramIndexTest, OtherVersionsOpenAsNotUsable) {
  auto ds = Open();
  for (std::optional<int32_t> version : {std::optional<int32_t>(1), std::optional<int32_t>()}) {
    IndexMetadata m = ds->indices().front();
    m.index_version = version;
    auto index = OpenScalarIndex(*ds, m);
    ASSERT_TRUE(index.ok()) << index.status().ToString();
    EXPECT_EQ(*index, nullptr);
  }
}

}  // namespace
}  // namespace lance::index
