// Clones and branches through the C++ API (lance/dataset.h): a shallow clone
// names the source's files through a base path, a deep clone stands alone,
// a branch lives under tree/{name}/ and every operation started from it
// commits there; the refusals.
#include <gtest/gtest.h>

#include <arrow/api.h>

#include <filesystem>
#include <map>

#include "lance/dataset.h"
#include "lance/dataset_ops.h"
#include "lance/scanner.h"
#include "lance/write.h"

namespace lance {
namespace {

namespace fs = std::filesystem;

std::shared_ptr<arrow::RecordBatchReader> Rows(int64_t from, int64_t to) {
  arrow::Int64Builder id;
  for (int64_t i = from; i < to; ++i) EXPECT_TRUE(id.Append(i).ok());
  auto schema = arrow::schema({arrow::field("id", arrow::int64())});
  auto batch = arrow::RecordBatch::Make(schema, to - from, {*id.Finish()});
  return *arrow::RecordBatchReader::Make({batch}, schema);
}

int64_t Count(const std::shared_ptr<Dataset>& ds) {
  auto n = ScanBuilder(ds).CountRows();
  EXPECT_TRUE(n.ok()) << n.status().ToString();
  return n.ok() ? static_cast<int64_t>(*n) : -1;
}

class CloneBranchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("lance_clone_branch_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    WriteParams params;
    params.max_rows_per_file = 5;
    auto ds = WriteDataset(Rows(0, 10), Uri("src"), params);  // version 1
    ASSERT_TRUE(ds.ok()) << ds.status().ToString();
    auto deleted = (*ds)->NewDelete("id = 3").Commit();  // version 2
    ASSERT_TRUE(deleted.ok()) << deleted.status().ToString();
    source_ = *deleted;
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Uri(const std::string& name) const { return (dir_ / name).string(); }

  fs::path dir_;
  std::shared_ptr<Dataset> source_;
};

TEST_F(CloneBranchTest, ShallowCloneNamesTheSourceFiles) {
  auto clone = source_->ShallowClone(Uri("shallow"));
  ASSERT_TRUE(clone.ok()) << clone.status().ToString();
  EXPECT_EQ((*clone)->version(), 2u);
  ASSERT_EQ((*clone)->manifest().base_paths.size(), 1u);
  EXPECT_EQ((*clone)->manifest().base_paths[0].path, source_->uri());
  EXPECT_TRUE((*clone)->manifest().base_paths[0].is_dataset_root);
  EXPECT_EQ((*clone)->manifest().reader_feature_flags & 16, 16u);
  for (const auto& f : (*clone)->manifest().fragments) {
    EXPECT_EQ(f.files[0].base_id, std::optional<uint32_t>(0));
  }
  EXPECT_FALSE(fs::exists(dir_ / "shallow" / "data"));
  EXPECT_EQ(Count(*clone), 9);
  // An older version, and writes that stay in the clone.
  CloneOptions at_1;
  at_1.reference = "1";
  auto old = source_->ShallowClone(Uri("shallow1"), at_1);
  ASSERT_TRUE(old.ok()) << old.status().ToString();
  EXPECT_EQ(Count(*old), 10);
  auto appended = (*clone)->NewAppend().Commit(Rows(10, 12));
  ASSERT_TRUE(appended.ok()) << appended.status().ToString();
  EXPECT_EQ(Count(*appended), 11);
  EXPECT_EQ(Count(*source_->CheckoutLatest()), 9);
  // A dataset already there is refused, a missing version too.
  auto again = source_->ShallowClone(Uri("shallow"));
  ASSERT_FALSE(again.ok());
  EXPECT_NE(again.status().message().find("already exists"), std::string::npos) << again.status().ToString();
  CloneOptions missing;
  missing.reference = "9";
  EXPECT_FALSE(source_->ShallowClone(Uri("none"), missing).ok());
  EXPECT_FALSE(fs::exists(dir_ / "none" / "_versions"));
}

TEST_F(CloneBranchTest, DeepCloneStandsAlone) {
  auto clone = source_->DeepClone(Uri("deep"));
  ASSERT_TRUE(clone.ok()) << clone.status().ToString();
  EXPECT_TRUE((*clone)->manifest().base_paths.empty());
  EXPECT_EQ((*clone)->manifest().reader_feature_flags & 16, 0u);
  fs::remove_all(dir_ / "src");
  auto reopened = Dataset::Open(Uri("deep"));
  ASSERT_TRUE(reopened.ok()) << reopened.status().ToString();
  EXPECT_EQ(Count(*reopened), 9);
  auto deleted = (*reopened)->NewDelete("id < 2").Commit();
  ASSERT_TRUE(deleted.ok()) << deleted.status().ToString();
  EXPECT_EQ(Count(*deleted), 7);
}

TEST_F(CloneBranchTest, BranchesLiveUnderTreeAndCommitThere) {
  auto dev = source_->CreateBranch("dev", "1");
  ASSERT_TRUE(dev.ok()) << dev.status().ToString();
  EXPECT_EQ((*dev)->branch(), std::optional<std::string>("dev"));
  EXPECT_EQ((*dev)->version(), 1u);
  EXPECT_TRUE(fs::exists(dir_ / "src" / "tree" / "dev" / "_versions"));
  EXPECT_TRUE(fs::exists(dir_ / "src" / "_refs" / "branches" / "dev.json"));
  auto appended = (*dev)->NewAppend().Commit(Rows(20, 23));
  ASSERT_TRUE(appended.ok()) << appended.status().ToString();
  EXPECT_EQ((*appended)->version(), 2u);
  EXPECT_EQ(Count(*appended), 13);
  EXPECT_EQ(Count(*source_->CheckoutLatest()), 9);  // main untouched
  ASSERT_TRUE((*appended)->CreateTag("dev-2", 2).ok());
  OpenOptions by_tag;
  by_tag.version = "dev-2";
  auto tagged = Dataset::Open(source_->uri(), by_tag);
  ASSERT_TRUE(tagged.ok()) << tagged.status().ToString();
  EXPECT_EQ((*tagged)->branch(), std::optional<std::string>("dev"));
  EXPECT_EQ(Count(*tagged), 13);
  auto branches = source_->Branches();
  ASSERT_TRUE(branches.ok());
  ASSERT_EQ(branches->size(), 1u);
  EXPECT_EQ(branches->at("dev").parent_version, 1u);
  EXPECT_FALSE(source_->CreateBranch("dev").ok());
  EXPECT_FALSE(source_->CreateBranch("main").ok());
  EXPECT_FALSE(source_->DeleteBranch("dev").ok());  // the tag points at it
  ASSERT_TRUE(source_->DeleteTag("dev-2").ok());
  ASSERT_TRUE(source_->DeleteBranch("dev").ok());
  EXPECT_FALSE(fs::exists(dir_ / "src" / "tree" / "dev"));
  OpenOptions gone;
  gone.branch = "dev";
  EXPECT_FALSE(Dataset::Open(source_->uri(), gone).ok());
}

}  // namespace
}  // namespace lance
