// lance::Verify (lance/verify.h) on datasets lance-cpp writes: clean ones
// give no findings, damaged files are findings naming them, and only a
// dataset that does not open is an error.
#include <gtest/gtest.h>

#include <arrow/api.h>

#include <filesystem>
#include <fstream>

#include "lance/dataset.h"
#include "lance/dataset_ops.h"
#include "lance/verify.h"
#include "lance/write.h"

namespace lance {
namespace {

namespace fs = std::filesystem;

std::shared_ptr<arrow::RecordBatchReader> Rows(int64_t from, int64_t to) {
  arrow::Int64Builder id;
  arrow::StringBuilder name;
  for (int64_t i = from; i < to; ++i) {
    EXPECT_TRUE(id.Append(i).ok());
    EXPECT_TRUE(name.Append("row-" + std::to_string(i)).ok());
  }
  auto schema = arrow::schema({arrow::field("id", arrow::int64()), arrow::field("name", arrow::utf8())});
  auto batch = arrow::RecordBatch::Make(schema, to - from, {*id.Finish(), *name.Finish()});
  return *arrow::RecordBatchReader::Make({batch}, schema);
}

class VerifyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("lance_verify_test_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    uri_ = (dir_ / "ds.lance").string();
    WriteParams params;
    params.max_rows_per_file = 40;
    params.data_storage_version = "2.1";
    ASSERT_TRUE(WriteDataset(Rows(0, 100), uri_, params).ok());
    auto ds = Dataset::Open(uri_);
    ASSERT_TRUE(ds.ok()) << ds.status().ToString();
    auto deleted = (*ds)->NewDelete("id % 3 = 0").Commit();
    ASSERT_TRUE(deleted.ok()) << deleted.status().ToString();
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::vector<fs::path> DataFiles() const {
    std::vector<fs::path> out;
    for (const auto& e : fs::directory_iterator(fs::path(uri_) / "data")) out.push_back(e.path());
    std::sort(out.begin(), out.end());
    return out;
  }

  fs::path dir_;
  std::string uri_;
};

TEST_F(VerifyTest, CleanDatasetHasNoFindings) {
  VerifyOptions options;
  options.deep = true;
  auto report = Verify(uri_, options);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_TRUE(report->ok());
  EXPECT_EQ(report->versions_checked, std::vector<uint64_t>({2}));
  options.all_versions = true;
  report = Verify(uri_, options);
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE(report->ok());
  EXPECT_EQ(report->versions_checked, std::vector<uint64_t>({1, 2}));
}

TEST_F(VerifyTest, MissingAndTruncatedFilesAreFindings) {
  const auto files = DataFiles();
  ASSERT_EQ(files.size(), 3u);
  fs::remove(files[0]);
  fs::resize_file(files[1], fs::file_size(files[1]) / 2);
  auto report = Verify(uri_, {});
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  ASSERT_FALSE(report->ok());
  bool missing = false, truncated = false;
  for (const auto& f : report->findings) {
    EXPECT_EQ(f.version, 2u);
    if (f.path.find(files[0].filename().string()) != std::string::npos && f.check == "data_file" &&
        f.message == "missing") {
      missing = true;
    }
    if (f.path.find(files[1].filename().string()) != std::string::npos && f.check == "data_file") truncated = true;
  }
  EXPECT_TRUE(missing);
  EXPECT_TRUE(truncated);
}

TEST_F(VerifyTest, MissingDeletionFileIsAFinding) {
  for (const auto& e : fs::directory_iterator(fs::path(uri_) / "_deletions")) fs::remove(e.path());
  auto report = Verify(uri_, {});
  ASSERT_TRUE(report.ok());
  ASSERT_FALSE(report->findings.empty());
  for (const auto& f : report->findings) {
    EXPECT_EQ(f.check, "deletion_file");
    EXPECT_NE(f.path.find("_deletions/"), std::string::npos);
  }
  // The version before the delete has no deletion files.
  VerifyOptions v1;
  v1.version = "1";
  report = Verify(uri_, v1);
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE(report->ok());
}

TEST_F(VerifyTest, UnopenableDatasetIsAnError) {
  EXPECT_FALSE(Verify((dir_ / "nothing").string(), {}).ok());
  for (const auto& e : fs::directory_iterator(fs::path(uri_) / "_versions")) {
    std::ofstream(e.path(), std::ios::trunc) << "garbage";
  }
  EXPECT_FALSE(Verify(uri_, {}).ok());
  VerifyOptions all;
  all.all_versions = true;
  EXPECT_FALSE(Verify(uri_, all).ok());
}

}  // namespace
}  // namespace lance
