// Progress reports of the long operations through their options' callback:
// stages in order, totals where known, done never going back and reaching
// the total at the end of each stage.
#include <gtest/gtest.h>

#include <arrow/api.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "lance/dataset.h"
#include "lance/operations.h"
#include "lance/row_ops.h"
#include "lance/write.h"

namespace lance {
namespace {

namespace fs = std::filesystem;

struct Report {
  std::string stage, unit;
  uint64_t done;
  std::optional<uint64_t> total;
};

std::shared_ptr<arrow::RecordBatch> Rows(int64_t start, int64_t n) {
  arrow::Int64Builder id;
  arrow::Int32Builder v;
  for (int64_t i = start; i < start + n; ++i) {
    EXPECT_TRUE(id.Append(i).ok());
    EXPECT_TRUE(v.Append(static_cast<int32_t>(i % 100)).ok());
  }
  auto schema = arrow::schema({arrow::field("id", arrow::int64()), arrow::field("v", arrow::int32())});
  return arrow::RecordBatch::Make(schema, n, {*id.Finish(), *v.Finish()});
}

std::shared_ptr<arrow::RecordBatchReader> Reader(int64_t start, int64_t n) {
  return *arrow::RecordBatchReader::Make({Rows(start, n)});
}

class ProgressTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("lance_progress_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  ProgressCallback Record() {
    reports_.clear();
    return [this](const Progress& p) {
      reports_.push_back({std::string(p.stage), std::string(p.unit), p.done, p.total});
    };
  }

  // The stages seen, in order, each checked: one unit, one total, done
  // never decreasing and ending at the total.
  std::vector<std::string> Stages() {
    std::vector<std::string> stages;
    for (size_t i = 0; i < reports_.size(); ++i) {
      const Report& r = reports_[i];
      if (stages.empty() || stages.back() != r.stage) {
        stages.push_back(r.stage);
        continue;
      }
      const Report& prev = reports_[i - 1];
      EXPECT_EQ(r.unit, prev.unit) << r.stage;
      EXPECT_EQ(r.total, prev.total) << r.stage;
      EXPECT_GE(r.done, prev.done) << r.stage;
    }
    return stages;
  }

  // The last report of `stage`.
  Report Last(const std::string& stage) {
    for (auto it = reports_.rbegin(); it != reports_.rend(); ++it) {
      if (it->stage == stage) return *it;
    }
    ADD_FAILURE() << "no report of stage " << stage;
    return {};
  }

  void Create(int64_t rows, uint64_t per_file) {
    WriteParams params;
    params.max_rows_per_file = per_file;
    ASSERT_TRUE(WriteDataset(Reader(0, rows), dir_.string(), params).ok());
  }

  fs::path dir_;
  std::vector<Report> reports_;
};

TEST_F(ProgressTest, WriteReportsRowsWithTheGivenTotal) {
  WriteParams params;
  params.max_rows_per_file = 1500;
  params.progress = Record();
  params.expected_rows = 5000;
  ASSERT_TRUE(WriteDataset(Reader(0, 5000), dir_.string(), params).ok());
  EXPECT_EQ(Stages(), std::vector<std::string>{"writing"});
  EXPECT_GE(reports_.size(), 5u);  // a report per slice of at most 1024 rows
  const Report last = Last("writing");
  EXPECT_EQ(last.unit, "rows");
  EXPECT_EQ(last.done, 5000u);
  EXPECT_EQ(last.total, std::optional<uint64_t>(5000));

  // Without a total: done alone.
  params.mode = WriteMode::kAppend;
  params.expected_rows.reset();
  params.progress = Record();
  ASSERT_TRUE(WriteDataset(Reader(5000, 100), dir_.string(), params).ok());
  EXPECT_EQ(Last("writing").done, 100u);
  EXPECT_FALSE(Last("writing").total.has_value());
}

TEST_F(ProgressTest, DeleteReportsEveryPhysicalRowScanned) {
  Create(3000, 1000);
  DeleteOptions options;
  options.progress = Record();
  auto deleted = DeleteRows(dir_.string(), "id % 10 = 3", options);
  ASSERT_TRUE(deleted.ok()) << deleted.status().ToString();
  EXPECT_EQ(deleted->num_deleted_rows, 300u);
  EXPECT_EQ(Stages(), std::vector<std::string>{"scanning"});
  EXPECT_EQ(Last("scanning").done, 3000u);
  EXPECT_EQ(Last("scanning").total, std::optional<uint64_t>(3000));
  // Deleted rows still count: the scan reads them.
  options.progress = Record();
  ASSERT_TRUE(DeleteRows(dir_.string(), "id < 5", options).ok());
  EXPECT_EQ(Last("scanning").total, std::optional<uint64_t>(3000));
}

TEST_F(ProgressTest, UpdateReportsScanningThenUpdating) {
  Create(3000, 1000);
  UpdateOptions options;
  // Few rows: found on the predicate's column, then taken and rewritten.
  options.progress = Record();
  auto few = UpdateRows(dir_.string(), {{"v", "v + 1"}}, "id % 100 = 1", options);
  ASSERT_TRUE(few.ok()) << few.status().ToString();
  EXPECT_EQ(Stages(), (std::vector<std::string>{"scanning", "updating"}));
  EXPECT_EQ(Last("scanning").done, 3000u);
  EXPECT_EQ(Last("scanning").total, std::optional<uint64_t>(3000));
  EXPECT_EQ(Last("updating").done, 30u);
  EXPECT_EQ(Last("updating").total, std::optional<uint64_t>(30));
  // Every row: one scan, by position in the physical rows (now 3030).
  options.progress = Record();
  ASSERT_TRUE(UpdateRows(dir_.string(), {{"v", "0"}}, "", options).ok());
  EXPECT_EQ(Stages(), std::vector<std::string>{"updating"});
  EXPECT_EQ(Last("updating").done, 3030u);
  EXPECT_EQ(Last("updating").total, std::optional<uint64_t>(3030));
}

TEST_F(ProgressTest, MergeInsertReportsMatchingThenWriting) {
  Create(2000, 1000);
  MergeInsertParams params;
  params.on = {"id"};
  params.when_matched_update_all = true;
  params.when_not_matched_insert_all = true;
  params.progress = Record();
  auto merged = MergeInsert(dir_.string(), Reader(1900, 300), params);  // 100 matched, 200 new
  ASSERT_TRUE(merged.ok()) << merged.status().ToString();
  EXPECT_EQ(Stages(), (std::vector<std::string>{"matching", "writing"}));
  EXPECT_EQ(Last("matching").done, 2000u);
  EXPECT_EQ(Last("matching").total, std::optional<uint64_t>(2000));
  EXPECT_EQ(Last("writing").done, 300u);
  EXPECT_EQ(Last("writing").total, std::optional<uint64_t>(300));
}

TEST_F(ProgressTest, CleanupReportsVersionsThenFiles) {
  Create(100, 50);
  ASSERT_TRUE(DeleteRows(dir_.string(), "id < 10").ok());
  ASSERT_TRUE(DeleteRows(dir_.string(), "id < 20").ok());
  CleanupOptions options;
  options.progress = Record();
  auto cleaned = CleanupOldVersions(dir_.string(), 0, /*delete_unverified=*/true, options);
  ASSERT_TRUE(cleaned.ok()) << cleaned.status().ToString();
  EXPECT_EQ(Stages(), (std::vector<std::string>{"reading versions", "removing"}));
  EXPECT_EQ(Last("reading versions").unit, "versions");
  EXPECT_EQ(Last("reading versions").done, 3u);
  EXPECT_EQ(Last("reading versions").total, std::optional<uint64_t>(3));
  const Report removing = Last("removing");
  EXPECT_EQ(removing.unit, "files");
  EXPECT_EQ(cleaned->old_versions, 2u);
  const uint64_t removed = cleaned->old_versions + cleaned->data_files + cleaned->deletion_files +
                           cleaned->transaction_files + cleaned->index_files;
  EXPECT_EQ(removing.done, removed);
  EXPECT_EQ(removing.total, std::optional<uint64_t>(removed));
}

}  // namespace
}  // namespace lance
