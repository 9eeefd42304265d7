// LABEL_LIST and ZONEMAP builds and optimize-indices through
// lance/index_ops.h, read back by lance-cpp's own readers; the zone trainer
// and the file writer's extra global buffers they rest on.
#include <gtest/gtest.h>

#include <arrow/api.h>

#include <cmath>
#include <filesystem>

#include "lance/dataset.h"
#include "lance/dataset_ops.h"
#include "lance/file_reader.h"
#include "lance/file_writer.h"
#include "lance/index/index_writer.h"
#include "lance/index_ops.h"
#include "lance/scanner.h"
#include "lance/write.h"

namespace lance {
namespace {

namespace fs = std::filesystem;

class ListZoneIndexTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("list_zone_index_test_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  static std::shared_ptr<arrow::RecordBatchReader> Rows(int64_t from, int64_t to) {
    arrow::Int64Builder id;
    arrow::DoubleBuilder f;
    auto list = std::make_shared<arrow::ListBuilder>(arrow::default_memory_pool(), std::make_shared<arrow::Int64Builder>());
    auto* items = static_cast<arrow::Int64Builder*>(list->value_builder());
    for (int64_t i = from; i < to; ++i) {
      EXPECT_TRUE(id.Append(i).ok());
      EXPECT_TRUE((i % 7 == 0 ? f.AppendNull() : f.Append(i % 11 == 0 ? std::nan("") : i * 0.5)).ok());
      if (i % 9 == 0) {
        EXPECT_TRUE(list->AppendNull().ok());
      } else {
        EXPECT_TRUE(list->Append().ok());
        for (int64_t k = 0; k < i % 3; ++k) EXPECT_TRUE(items->Append((i + k) % 5).ok());
      }
    }
    auto schema = arrow::schema({arrow::field("id", arrow::int64()), arrow::field("f", arrow::float64()),
                                 arrow::field("l", arrow::list(arrow::int64()))});
    auto batch = arrow::RecordBatch::Make(schema, to - from, {*id.Finish(), *f.Finish(), *list->Finish()});
    return *arrow::RecordBatchReader::Make({batch}, schema);
  }

  int64_t Count(const std::shared_ptr<const Dataset>& ds, const std::string& filter, bool index) {
    auto n = ScanBuilder(ds).Filter(filter).UseScalarIndex(index).CountRows();
    EXPECT_TRUE(n.ok()) << n.status().ToString();
    return n.ValueOr(-1);
  }
  void ExpectIndexedAnswers(const std::shared_ptr<const Dataset>& ds) {
    for (const char* f : {"array_has_any(l, [1, 2])", "array_has_all(l, [0, 1])", "f IS NULL", "id < 30",
                          "id > 180 AND id < 190"}) {
      SCOPED_TRACE(f);
      auto plan = ScanBuilder(ds).Filter(f).ExplainPlan();
      ASSERT_TRUE(plan.ok()) << plan.status().ToString();
      EXPECT_NE(plan->find("ScalarIndexQuery"), std::string::npos) << *plan;
      EXPECT_EQ(Count(ds, f, true), Count(ds, f, false));
    }
  }
  fs::path dir_;
};

TEST_F(ListZoneIndexTest, FileWriterGlobalBuffersRoundTrip) {
  const std::string path = (dir_ / "g.lance").string();
  auto schema = arrow::schema({arrow::field("x", arrow::int32())});
  auto writer = FileWriter::Open(path, *schema);
  ASSERT_TRUE(writer.ok());
  arrow::Int32Builder b;
  ASSERT_TRUE(b.AppendValues({1, 2, 3}).ok());
  ASSERT_TRUE((*writer)->Write(*arrow::RecordBatch::Make(schema, 3, {*b.Finish()})).ok());
  auto first = (*writer)->AddGlobalBuffer("hello");
  auto second = (*writer)->AddGlobalBuffer(std::string(100, 'z'));
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_EQ(*first, 1u);
  EXPECT_EQ(*second, 2u);
  ASSERT_TRUE((*writer)->Finish().ok());
  auto reader = FileReader::Open(path);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  ASSERT_EQ((*reader)->layout().global_buffers.size(), 3u);
  auto one = (*reader)->ReadGlobalBuffer(1);
  auto two = (*reader)->ReadGlobalBuffer(2);
  ASSERT_TRUE(one.ok() && two.ok());
  EXPECT_EQ((*one)->ToString(), "hello");
  EXPECT_EQ((*two)->ToString(), std::string(100, 'z'));
  auto all = (*reader)->ReadAll();
  ASSERT_TRUE(all.ok());
  EXPECT_EQ((*all)->num_rows(), 3);
}

TEST_F(ListZoneIndexTest, ZoneTrainerCutsZonesAsPylance) {
  // Fragment 0 offsets 0,1,3,4,5 (2 deleted), fragment 1 offsets 0,1.
  arrow::DoubleBuilder v;
  ASSERT_TRUE(v.AppendValues({1.0, std::nan(""), 3.0}).ok());
  ASSERT_TRUE(v.AppendNull().ok());
  ASSERT_TRUE(v.AppendValues({std::nan(""), 7.0, 8.0}).ok());
  arrow::UInt64Builder a;
  ASSERT_TRUE(a.AppendValues({0, 1, 3, 4, 5, (1ull << 32), (1ull << 32) | 1}).ok());
  auto values = *v.Finish();
  auto addresses = std::static_pointer_cast<arrow::UInt64Array>(*a.Finish());
  index::ZoneMapTrainer trainer(arrow::float64(), 3);
  auto added = trainer.Add(values, *addresses);
  ASSERT_TRUE(added.ok()) << added.ToString();
  ASSERT_TRUE(trainer.Finish().ok());
  const auto& z = trainer.zones();
  ASSERT_EQ(z.size(), 3u);
  EXPECT_EQ(z.fragment_ids, (std::vector<uint64_t>{0, 0, 1}));
  EXPECT_EQ(z.starts, (std::vector<uint64_t>{0, 4, 0}));
  EXPECT_EQ(z.lengths, (std::vector<uint64_t>{4, 2, 2}));  // offsets 0..3, 4..5, 0..1
  EXPECT_EQ(z.null_counts, (std::vector<uint32_t>{0, 1, 0}));
  EXPECT_EQ(z.nan_counts, (std::vector<uint32_t>{1, 1, 0}));
  // NaN: out of the min, the max; a zone of NaN and nulls alone has no min.
  EXPECT_EQ(std::static_pointer_cast<arrow::DoubleArray>(z.mins[0])->Value(0), 1.0);
  EXPECT_TRUE(std::isnan(std::static_pointer_cast<arrow::DoubleArray>(z.maxs[0])->Value(0)));
  EXPECT_TRUE(z.mins[1]->IsNull(0));
  EXPECT_EQ(trainer.null_rows(), (std::vector<uint64_t>{4}));
}

TEST_F(ListZoneIndexTest, BuildsUsesAndOptimizes) {
  for (bool stable : {false, true}) {
    SCOPED_TRACE(stable);
    fs::remove_all(dir_ / "ds");
    WriteParams params;
    params.enable_stable_row_ids = stable;
    params.max_rows_per_file = 80;
    auto v1 = WriteDataset(Rows(0, 200), (dir_ / "ds").string(), params);
    ASSERT_TRUE(v1.ok()) << v1.status().ToString();
    auto v2 = CreateIndexBuilder(*v1, "l", "LABEL_LIST").Commit();
    ASSERT_TRUE(v2.ok()) << v2.status().ToString();
    CreateIndexBuilder zones(*v2, "f", "zonemap");
    auto v3 = zones.RowsPerZone(16).Commit();
    ASSERT_TRUE(v3.ok()) << v3.status().ToString();
    EXPECT_EQ(zones.result().index_version, 0);
    auto v4 = CreateIndexBuilder(*v3, "id", "ZONEMAP").Commit();
    ASSERT_TRUE(v4.ok()) << v4.status().ToString();
    auto described = DescribeIndices(**v4);
    ASSERT_TRUE(described.ok());
    ASSERT_EQ(described->size(), 3u);
    EXPECT_EQ((*described)[0].type, "LabelList");
    EXPECT_EQ((*described)[1].type, "ZoneMap");
    ExpectIndexedAnswers(*v4);

    auto v5 = (*v4)->NewAppend().Commit(Rows(200, 260));
    ASSERT_TRUE(v5.ok());
    auto v6 = (*v5)->NewDelete("id % 13 = 5").Commit();
    ASSERT_TRUE(v6.ok()) << v6.status().ToString();
    OptimizeIndicesBuilder optimize(*v6);
    auto v7 = optimize.Commit();
    ASSERT_TRUE(v7.ok()) << v7.status().ToString();
    EXPECT_EQ((*v7)->version(), (*v6)->version() + 1);
    EXPECT_EQ(optimize.added().size(), 3u);
    EXPECT_EQ(optimize.removed().size(), 3u);
    auto after = DescribeIndices(**v7);
    ASSERT_TRUE(after.ok());
    for (const auto& d : *after) {
      EXPECT_EQ(d.uuids.size(), 1u) << d.name;
      EXPECT_EQ(d.num_unindexed_rows, 0u) << d.name;
    }
    ExpectIndexedAnswers(*v7);
    // Nothing left: no commit.
    OptimizeIndicesBuilder again(*v7);
    auto same = again.Commit();
    ASSERT_TRUE(same.ok());
    EXPECT_EQ((*same)->version(), (*v7)->version());
    EXPECT_TRUE(again.added().empty());
  }
}

TEST_F(ListZoneIndexTest, Refusals) {
  auto v1 = WriteDataset(Rows(0, 20), (dir_ / "ds").string());
  ASSERT_TRUE(v1.ok());
  EXPECT_TRUE(CreateIndexBuilder(*v1, "id", "LABEL_LIST").Commit().status().IsInvalid());
  EXPECT_TRUE(CreateIndexBuilder(*v1, "l", "ZONEMAP").Commit().status().IsNotImplemented());
  EXPECT_TRUE(CreateIndexBuilder(*v1, "id", "BTREE").RowsPerZone(4).Commit().status().IsInvalid());
  EXPECT_TRUE(CreateIndexBuilder(*v1, "id", "ZONEMAP").RowsPerZone(0).Commit().status().IsInvalid());
  OptimizeIndicesOptions unknown;
  unknown.index_names = {"nope"};
  EXPECT_TRUE(OptimizeIndicesBuilder(*v1).Options(unknown).Commit().status().IsKeyError());
  OptimizeIndicesOptions delta;
  delta.num_indices_to_merge = 0;
  EXPECT_TRUE(OptimizeIndicesBuilder(*v1).Options(delta).Commit().status().IsNotImplemented());
  EXPECT_EQ((*v1)->version(), 1u);
  EXPECT_FALSE(fs::exists(dir_ / "ds" / "_indices"));
}

}  // namespace
}  // namespace lance
