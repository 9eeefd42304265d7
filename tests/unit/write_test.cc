// WriteDataset, DeleteRows, RestoreVersion and tags, end to end on a local
// directory, read back through Dataset and the scanner.
#include <gtest/gtest.h>

#include <filesystem>

#include <arrow/api.h>

#include "lance/dataset.h"
#include "lance/operations.h"
#include "lance/scanner.h"
#include "lance/write.h"

namespace lance {
namespace {

namespace fs = std::filesystem;

std::shared_ptr<arrow::Table> Rows(int64_t start, int64_t n) {
  arrow::Int64Builder ids;
  arrow::StringBuilder names;
  for (int64_t i = start; i < start + n; ++i) {
    EXPECT_TRUE(ids.Append(i).ok());
    EXPECT_TRUE((i % 5 == 0 ? names.AppendNull() : names.Append("n" + std::to_string(i))).ok());
  }
  auto schema = arrow::schema({arrow::field("id", arrow::int64()), arrow::field("name", arrow::utf8())});
  return arrow::Table::Make(schema, {*ids.Finish(), *names.Finish()});
}

std::shared_ptr<arrow::RecordBatchReader> Reader(const std::shared_ptr<arrow::Table>& t) {
  auto reader = std::make_shared<arrow::TableBatchReader>(t);
  reader->set_chunksize(33);
  return reader;
}

class WriteTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("lance_write_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    uri_ = dir_.string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A write that must succeed (null, with the failure recorded, if not).
  std::shared_ptr<Dataset> WriteOk(const std::shared_ptr<arrow::Table>& t, WriteParams params) {
    auto ds = WriteDataset(Reader(t), uri_, params);
    EXPECT_TRUE(ds.ok()) << ds.status().ToString();
    return ds.ok() ? *ds : nullptr;
  }

  std::shared_ptr<arrow::Table> ScanAll(const std::string& filter = "") {
    auto ds = Dataset::Open(uri_);
    EXPECT_TRUE(ds.ok()) << ds.status().ToString();
    ScanBuilder scan(*ds);
    if (!filter.empty()) scan.Filter(filter);
    auto t = scan.ToTable();
    EXPECT_TRUE(t.ok()) << t.status().ToString();
    return *(*t)->CombineChunks();
  }

  fs::path dir_;
  std::string uri_;
};

TEST_F(WriteTest, CreateAppendOverwriteDeleteRestoreTag) {
  WriteParams params;
  params.data_storage_version = "2.0";
  params.max_rows_per_file = 40;
  auto ds = WriteOk(Rows(0, 100), params);
  ASSERT_NE(ds, nullptr);
  EXPECT_EQ(ds->version(), 1u);
  ASSERT_EQ(ds->manifest().fragments.size(), 3u);
  EXPECT_EQ(*ds->manifest().fragments[2].physical_rows, 20u);
  const DataFile& file = ds->manifest().fragments[0].files[0];
  EXPECT_EQ(file.path.size(), 50u + 6u);  // 24 bits + 26 hex digits + ".lance"
  EXPECT_EQ(file.fields, (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(file.file_major_version, 2u);
  EXPECT_EQ(file.file_minor_version, 0u);
  EXPECT_EQ(file.file_size_bytes, fs::file_size(dir_ / "data" / file.path));
  EXPECT_TRUE(ScanAll()->Equals(*Rows(0, 100)));

  params.mode = WriteMode::kCreate;
  EXPECT_FALSE(WriteDataset(Reader(Rows(0, 1)), uri_, params).ok());  // exists

  params.mode = WriteMode::kAppend;
  params.data_storage_version.reset();
  ds = WriteOk(Rows(100, 10), params);
  ASSERT_NE(ds, nullptr);
  EXPECT_EQ(ds->version(), 2u);
  EXPECT_EQ(ds->manifest().fragments.back().id, 3u);
  EXPECT_TRUE(ScanAll()->Equals(*Rows(0, 110)));

  auto del = DeleteRows(uri_, "id >= 40 AND id < 80 OR id = 3");
  ASSERT_TRUE(del.ok()) << del.status().ToString();
  EXPECT_EQ(del->num_deleted_rows, 41u);
  EXPECT_EQ(del->version, 3u);
  auto v3 = *Dataset::Open(uri_);
  ASSERT_EQ(v3->manifest().fragments.size(), 3u);  // fragment 1 is gone
  EXPECT_EQ(v3->manifest().fragments[0].deletion_file->num_deleted_rows, 1u);
  EXPECT_EQ(ScanAll()->num_rows(), 69);
  auto none = DeleteRows(uri_, "id > 1000");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->committed);  // an empty Delete, as pylance 14
  EXPECT_EQ(none->version, 4u);

  auto restored = RestoreVersion(uri_, 1);
  ASSERT_TRUE(restored.ok()) << restored.status().ToString();
  EXPECT_EQ(*restored, 5u);
  EXPECT_TRUE(ScanAll()->Equals(*Rows(0, 100)));

  ASSERT_TRUE(CreateTag(uri_, "v-two", 2).ok());
  EXPECT_FALSE(CreateTag(uri_, "v-two", 1).ok());
  EXPECT_FALSE(CreateTag(uri_, "x", 9).ok());
  EXPECT_FALSE(CreateTag(uri_, ".hidden", 1).ok());
  OpenOptions tagged;
  tagged.version = "v-two";
  EXPECT_EQ((*Dataset::Open(uri_, tagged))->version(), 2u);
  ASSERT_TRUE(DeleteTag(uri_, "v-two").ok());
  EXPECT_FALSE(DeleteTag(uri_, "v-two").ok());

  auto other = arrow::Table::Make(arrow::schema({arrow::field("z", arrow::float64())}),
                                  {*arrow::MakeArrayFromScalar(arrow::DoubleScalar(1.5), 3)});
  params.mode = WriteMode::kOverwrite;
  ds = WriteOk(other, params);
  ASSERT_NE(ds, nullptr);
  EXPECT_EQ(ds->version(), 6u);
  EXPECT_EQ(ds->manifest().schema.fields.size(), 1u);
  EXPECT_EQ(ds->manifest().schema.fields[0].id, 0);
  EXPECT_EQ(ds->manifest().data_storage_version, "2.0");
  EXPECT_TRUE(ScanAll()->Equals(*other));
}

TEST_F(WriteTest, AppendWithAnotherSchemaIsRefusedAndLeavesNoFiles) {
  WriteParams params;
  params.data_storage_version = "2.0";
  auto ds = WriteOk(Rows(0, 10), params);
  ASSERT_NE(ds, nullptr);
  params.mode = WriteMode::kAppend;
  auto bad = arrow::Table::Make(arrow::schema({arrow::field("id", arrow::utf8())}),
                                {*arrow::MakeArrayFromScalar(arrow::StringScalar("x"), 2)});
  auto r = WriteDataset(Reader(bad), uri_, params);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("'id'"), std::string::npos) << r.status().ToString();
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_ / "data"), {}), 1);
}

TEST_F(WriteTest, AppendWithConfigIsRefusedAndLeavesNoFiles) {
  WriteParams params;
  params.data_storage_version = "2.0";
  auto ds = WriteOk(Rows(0, 10), params);
  ASSERT_NE(ds, nullptr);
  params.mode = WriteMode::kAppend;
  params.config["my.key"] = "v";
  auto r = WriteDataset(Reader(Rows(10, 5)), uri_, params);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("my.key"), std::string::npos) << r.status().ToString();
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_ / "data"), {}), 1);
  // Overwriting with the same entries sets them.
  params.mode = WriteMode::kOverwrite;
  auto over = WriteOk(Rows(0, 3), params);
  ASSERT_NE(over, nullptr);
  EXPECT_EQ(over->manifest().config.at("my.key"), "v");
}

TEST_F(WriteTest, StableRowIdsAreAssignedAtCommit) {
  WriteParams params;
  params.data_storage_version = "2.0";
  params.enable_stable_row_ids = true;
  params.max_rows_per_file = 6;
  auto ds = WriteOk(Rows(0, 10), params);
  ASSERT_NE(ds, nullptr);
  params.mode = WriteMode::kAppend;
  ds = WriteOk(Rows(10, 5), params);
  ASSERT_NE(ds, nullptr);
  EXPECT_EQ(ds->manifest().next_row_id, 15u);
  std::vector<uint64_t> all;
  for (const auto& f : ds->manifest().fragments) {
    auto ids = ds->RowIds(f);
    ASSERT_TRUE(ids.ok()) << ids.status().ToString();
    all.insert(all.end(), ids->begin(), ids->end());
  }
  std::vector<uint64_t> expected(15);
  for (uint64_t i = 0; i < 15; ++i) expected[i] = i;
  EXPECT_EQ(all, expected);
}

}  // namespace
}  // namespace lance
