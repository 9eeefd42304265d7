// Building BTREE and BITMAP indices through lance/index_ops.h: the files a
// build writes are read back by lance-cpp's own readers, and commits from
// a handle at an old version follow the reference's conflict rules
// (CreateIndex is compatible with an append, and a concurrent create of the
// same name replaces rather than doubles it).
#include <gtest/gtest.h>

#include <arrow/api.h>

#include <filesystem>

#include "lance/dataset.h"
#include "lance/dataset_ops.h"
#include "lance/index/index_writer.h"
#include "lance/index/scalar_index.h"
#include "lance/index_ops.h"
#include "lance/scanner.h"
#include "lance/write.h"

namespace lance {
namespace {

namespace fs = std::filesystem;

std::shared_ptr<arrow::RecordBatchReader> Rows(int64_t from, int64_t to) {
  arrow::Int64Builder id;
  arrow::StringBuilder s;
  for (int64_t i = from; i < to; ++i) {
    EXPECT_TRUE(id.Append(i).ok());
    EXPECT_TRUE((i % 5 == 0 ? s.AppendNull() : s.Append(std::string(1, static_cast<char>('a' + i % 3)))).ok());
  }
  auto schema = arrow::schema({arrow::field("id", arrow::int64()), arrow::field("s", arrow::utf8())});
  auto batch = arrow::RecordBatch::Make(schema, to - from, {*id.Finish(), *s.Finish()});
  return *arrow::RecordBatchReader::Make({batch}, schema);
}

class IndexBuildTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("index_build_test_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::shared_ptr<Dataset> Make(bool stable) {
    WriteParams params;
    params.enable_stable_row_ids = stable;
    auto ds = WriteDataset(Rows(0, 50), (dir_ / "ds").string(), params);
    EXPECT_TRUE(ds.ok()) << ds.status().ToString();
    return *ds;
  }
  int64_t Count(const std::shared_ptr<Dataset>& ds, const std::string& filter, bool index) {
    auto n = ScanBuilder(ds).Filter(filter).UseScalarIndex(index).CountRows();
    EXPECT_TRUE(n.ok()) << n.status().ToString();
    return n.ValueOr(-1);
  }
  fs::path dir_;
};

TEST_F(IndexBuildTest, BuiltIndicesAreUsedAndAnswerAsTheScan) {
  for (bool stable : {false, true}) {
    SCOPED_TRACE(stable);
    fs::remove_all(dir_);
    auto v1 = Make(stable);
    CreateIndexBuilder btree(v1, "id", "btree");
    auto v2 = btree.Commit();
    ASSERT_TRUE(v2.ok()) << v2.status().ToString();
    EXPECT_EQ(btree.result().name, "id_idx");
    EXPECT_EQ(btree.result().index_version, stable ? 1 : 0);
    auto v3 = CreateIndexBuilder(*v2, "s", "BITMAP").Commit();
    ASSERT_TRUE(v3.ok()) << v3.status().ToString();
    ASSERT_EQ((*v3)->indices().size(), 2u);
    for (const char* f : {"id < 7", "id >= 40 AND id != 44", "s = 'b'", "s IS NULL", "s IN ('a', 'c') AND id > 10"}) {
      SCOPED_TRACE(f);
      auto plan = ScanBuilder(*v3).Filter(f).ExplainPlan();
      ASSERT_TRUE(plan.ok());
      EXPECT_NE(plan->find("ScalarIndexQuery"), std::string::npos) << *plan;
      EXPECT_EQ(Count(*v3, f, true), Count(*v3, f, false));
    }
    auto described = DescribeIndices(**v3);
    ASSERT_TRUE(described.ok());
    ASSERT_EQ(described->size(), 2u);
    EXPECT_EQ((*described)[0].type, "BTree");
    EXPECT_EQ((*described)[1].type, "Bitmap");
    EXPECT_EQ((*described)[1].num_indexed_rows, 50u);
    auto dropped = DropIndexBuilder(*v3, "id_idx").Commit();
    ASSERT_TRUE(dropped.ok());
    EXPECT_EQ((*dropped)->indices().size(), 1u);
    EXPECT_TRUE(DropIndexBuilder(*dropped, "id_idx").Commit().status().IsKeyError());
  }
}

TEST_F(IndexBuildTest, RefusesWithoutWriting) {
  auto v1 = Make(false);
  EXPECT_TRUE(CreateIndexBuilder(v1, "nope", "BTREE").Commit().status().IsInvalid());
  EXPECT_TRUE(CreateIndexBuilder(v1, "id", "INVERTED").Commit().status().IsInvalid());  // not a string column
  EXPECT_TRUE(CreateIndexBuilder(v1, "id", "IVF_PQ").Commit().status().IsNotImplemented());
  EXPECT_TRUE(CreateIndexBuilder(v1, "id", "NGRAM").Commit().status().IsInvalid());  // not a string column
  EXPECT_TRUE(CreateIndexBuilder(v1, "id", "FOO").Commit().status().IsInvalid());
  auto v2 = CreateIndexBuilder(v1, "id", "BTREE").Commit();
  ASSERT_TRUE(v2.ok());
  EXPECT_TRUE(CreateIndexBuilder(*v2, "id", "BITMAP").Commit().status().IsAlreadyExists());
  auto v3 = CreateIndexBuilder(*v2, "id", "BITMAP").Replace().Commit();
  ASSERT_TRUE(v3.ok());
  ASSERT_EQ((*v3)->indices().size(), 1u);
  EXPECT_EQ((*v3)->indices()[0].index_details_type_url, "/lance.table.BitmapIndexDetails");
  EXPECT_EQ((*v3)->version(), 3u);
}

TEST_F(IndexBuildTest, CommitsFromAnOldVersion) {
  auto v1 = Make(false);
  // An append since: the index covers the fragments it read.
  auto v2 = v1->NewAppend().Commit(Rows(50, 60));
  ASSERT_TRUE(v2.ok());
  auto v3 = CreateIndexBuilder(v1, "id", "BTREE").Commit();
  ASSERT_TRUE(v3.ok()) << v3.status().ToString();
  ASSERT_EQ((*v3)->indices().size(), 1u);
  EXPECT_EQ((*v3)->indices()[0].fragment_ids, std::vector<uint32_t>{0});
  EXPECT_EQ((*v3)->manifest().fragments.size(), 2u);
  EXPECT_EQ(Count(*v3, "id >= 45", true), 15);
  // Two creates of the same name from the same version: the later wins.
  auto a = CreateIndexBuilder(*v3, "s", "BITMAP").Commit();
  ASSERT_TRUE(a.ok());
  auto b = CreateIndexBuilder(*v3, "s", "BTREE").Commit();
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  int named = 0;
  for (const auto& i : (*b)->indices()) named += i.name == "s_idx";
  EXPECT_EQ(named, 1);
  EXPECT_EQ(Count(*b, "s = 'a'", true), Count(*b, "s = 'a'", false));
}

TEST(RowIdTreeMapTest, RoundTripsThroughTheReader) {
  const std::vector<uint64_t> ids = {0, 1, 7, (1ull << 32) | 3, (5ull << 32) | 65536};
  auto back = index::DecodeRowIdTreeMap(index::EncodeRowIdTreeMap(ids), "test");
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, ids);
}

}  // namespace
}  // namespace lance
