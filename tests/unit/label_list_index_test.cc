// The LABEL_LIST index reader and the planner over it, on a dataset pylance
// 14.0.2 indexed (tests/fixtures/scalar_index/gen_label_list.py):
//   fragment 0: [a, b]  [b]        null  []    [a, null]
//   fragment 1: [null]  [c, a, a]  [d]   null  [b, c]
//   fragment 2: [a]     null                          (not indexed)
#include "lance/index/filter_plan.h"
#include "lance/index/scalar_index.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include <arrow/compute/api.h>

#include "lance/scan/filter_parser.h"

namespace lance::index {
namespace {

namespace cp = arrow::compute;

constexpr uint64_t Addr(uint64_t frag, uint64_t off) { return (frag << 32) | off; }

std::shared_ptr<Dataset> Open() {
  auto ds =
      Dataset::Open((std::filesystem::path(LANCE_TEST_FIXTURES_DIR) / "scalar_index" / "label_list.lance").string());
  EXPECT_TRUE(ds.ok()) << ds.status().ToString();
  return *ds;
}

cp::Expression Filter(const Dataset& ds, const std::string& sql) {
  auto schema = ds.ArrowSchema();
  EXPECT_TRUE(schema.ok());
  auto e = scan::ParseFilter(sql, **schema);
  EXPECT_TRUE(e.ok()) << e.status().ToString();
  return *e;
}

std::unique_ptr<ScalarIndex> OpenTags(const Dataset& ds) {
  EXPECT_EQ(ds.indices().size(), 1u);
  auto index = OpenScalarIndex(ds, ds.indices().front());
  EXPECT_TRUE(index.ok()) << index.status().ToString();
  return index.ok() ? std::move(*index) : nullptr;
}

TEST(LabelListIndexTest, RegistryKnowsLabelList) {
  const ScalarIndexType* t = FindScalarIndexType("/lance.table.LabelListIndexDetails");  // as pylance 14 writes it
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->name, "LabelList");
}

TEST(LabelListIndexTest, OtherVersionsOpenAsNotUsable) {
  auto ds = Open();
  for (std::optional<int32_t> version : {std::optional<int32_t>(0), std::optional<int32_t>(2), std::optional<int32_t>()}) {
    IndexMetadata m = ds->indices().front();
    m.index_version = version;
    auto index = OpenScalarIndex(*ds, m);
    ASSERT_TRUE(index.ok()) << index.status().ToString();
    EXPECT_EQ(*index, nullptr) << version.value_or(-1);
  }
}

TEST(LabelListIndexTest, SearchAnswersMembershipAsTheScan) {
  auto ds = Open();
  auto index = OpenTags(*ds);
  ASSERT_NE(index, nullptr);
  EXPECT_STREQ(index->type_name(), "LabelList");
  EXPECT_TRUE(index->value_type()->Equals(*ds->ArrowSchema().ValueOrDie()->GetFieldByName("tags")->type()));
  struct Case {
    const char* sql;
    RowIds rows;
  };
  const Case cases[] = {
      {"array_has_any(tags, ['a', 'c'])", {Addr(0, 0), Addr(0, 4), Addr(1, 1), Addr(1, 4)}},
      {"array_has(tags, 'a')", {Addr(0, 0), Addr(0, 4), Addr(1, 1)}},
      {"array_has_all(tags, ['a', 'b'])", {Addr(0, 0)}},
      {"array_has_any(tags, ['zz'])", {}},
      // A null needle value matches null elements.
      {"array_has_any(tags, ['a', NULL])", {Addr(0, 0), Addr(0, 4), Addr(1, 0), Addr(1, 1)}},
      {"array_has_all(tags, ['a', NULL])", {Addr(0, 4)}},
      // A null list (0:2, 1:3) is null under NOT too; the empty list is not.
      {"NOT array_has(tags, 'b')", {Addr(0, 3), Addr(0, 4), Addr(1, 0), Addr(1, 1), Addr(1, 2)}},
      {"NOT (array_has(tags, 'a') OR array_has(tags, 'd'))", {Addr(0, 1), Addr(0, 3), Addr(1, 0), Addr(1, 4)}},
      {"array_has(tags, 'b') AND NOT array_has(tags, 'a')", {Addr(0, 1), Addr(1, 4)}},
  };
  for (const auto& c : cases) {
    auto e = Filter(*ds, c.sql);
    ASSERT_TRUE(index->CanSearch(e, "tags")) << c.sql;
    auto hits = index->Search(e, "tags");
    ASSERT_TRUE(hits.ok()) << c.sql << ": " << hits.status().ToString();
    EXPECT_EQ(*hits, c.rows) << c.sql;
  }
}

TEST(LabelListIndexTest, CannotSearchOtherPredicates) {
  auto ds = Open();
  auto index = OpenTags(*ds);
  ASSERT_NE(index, nullptr);
  for (const char* sql : {"tags IS NULL", "tags IS NOT NULL", "array_has_any(tags, ['a']) OR tags IS NULL"}) {
    auto e = Filter(*ds, sql);
    EXPECT_FALSE(index->CanSearch(e, "tags")) << sql;
    EXPECT_FALSE(index->Search(e, "tags").ok()) << sql;
  }
}

TEST(LabelListIndexTest, PlanCoversIndexedFragments) {
  auto ds = Open();
  std::vector<const Fragment*> all;
  for (const auto& f : ds->manifest().fragments) all.push_back(&f);
  auto plan = IndexedFilter::Plan(ds, Filter(*ds, "NOT array_has(tags, 'b')"), all);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  ASSERT_TRUE(plan->has_value());
  const IndexedFilter& q = **plan;
  EXPECT_FALSE(q.needs_refine());
  EXPECT_EQ(q.covered_fragments(), (std::vector<uint64_t>{0, 1}));
  EXPECT_NE(q.Describe().find("@tags_idx (LabelList)"), std::string::npos) << q.Describe();
  auto rows = q.Execute();
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  EXPECT_EQ(rows->candidates.at(0), (std::vector<uint64_t>{3, 4}));
  EXPECT_EQ(rows->candidates.at(1), (std::vector<uint64_t>{0, 1, 2}));
  EXPECT_EQ(rows->candidates.count(2), 0u);
  // What the index does not answer is left to the scan.
  for (const char* sql : {"tags IS NULL", "array_has_all(tags, [])", "array_has(tags, 'a') OR id > 3"}) {
    auto none = IndexedFilter::Plan(ds, Filter(*ds, sql), all);
    ASSERT_TRUE(none.ok()) << none.status().ToString();
    EXPECT_FALSE(none->has_value()) << sql;
  }
  auto refine = IndexedFilter::Plan(ds, Filter(*ds, "array_has(tags, 'a') AND id > 3"), all);
  ASSERT_TRUE(refine.ok());
  ASSERT_TRUE(refine->has_value());
  EXPECT_TRUE((*refine)->needs_refine());
}

}  // namespace
}  // namespace lance::index
