// The operations a Dataset starts (lance/dataset_ops.h): each one through its
// builder, commits from a handle at an old version (rebased or re-run on the
// latest), and the filesystem seam: a counting, failure-injecting
// arrow::fs::FileSystem that every operation must go through.
#include <gtest/gtest.h>

#include <arrow/api.h>
#include <arrow/filesystem/localfs.h>
#include <arrow/filesystem/filesystem.h>

#include <atomic>
#include <filesystem>
#include <map>

#include "lance/blob.h"
#include "lance/compaction.h"
#include "lance/dataset.h"
#include "lance/dataset_ops.h"
#include "lance/scanner.h"
#include "lance/status.h"
#include "lance/io/object_store.h"
#include "lance/table/manifest_file.h"
#include "lance/table/manifest_location.h"
#include "lance/txn/commit.h"
#include "lance/write.h"

namespace lance {
namespace {

namespace fs = std::filesystem;
using arrow::fs::FileInfo;
using arrow::fs::FileInfoVector;
using arrow::fs::FileSelector;

// Forwards every call to `base`, counting them; can fail the Nth file
// opened for writing or reading from the moment it is armed.
class CountingFileSystem : public arrow::fs::FileSystem {
 public:
  explicit CountingFileSystem(std::shared_ptr<arrow::fs::FileSystem> base) : base_(std::move(base)) {}

  std::atomic<int64_t> infos{0}, lists{0}, opens{0}, writes{0}, deletes{0}, dirs{0};
  // Fail the write (OpenOutputStream) / open (OpenInputFile, OpenInputStream)
  // with this 1-based number counted from arming; 0 = never.
  std::atomic<int64_t> fail_write_at{0}, fail_open_at{0};
  std::atomic<int64_t> writes_since_arm{0}, opens_since_arm{0};
  std::string last_failed;

  void ArmWriteFailure(int64_t n) {
    writes_since_arm = 0;
    fail_write_at = n;
  }
  void ArmOpenFailure(int64_t n) {
    opens_since_arm = 0;
    fail_open_at = n;
  }
  void Disarm() {
    fail_write_at = 0;
    fail_open_at = 0;
  }
  int64_t Total() const { return infos + lists + opens + writes + deletes + dirs; }

  std::string type_name() const override { return "counting"; }
  bool Equals(const FileSystem& other) const override { return &other == this; }
  arrow::Result<FileInfo> GetFileInfo(const std::string& path) override {
    ++infos;
    return base_->GetFileInfo(path);
  }
  arrow::Result<FileInfoVector> GetFileInfo(const FileSelector& select) override {
    ++lists;
    return base_->GetFileInfo(select);
  }
  arrow::Status CreateDir(const std::string& path, bool recursive) override {
    ++dirs;
    return base_->CreateDir(path, recursive);
  }
  arrow::Status DeleteDir(const std::string& path) override {
    ++deletes;
    return base_->DeleteDir(path);
  }
  arrow::Status DeleteDirContents(const std::string& path, bool missing_dir_ok) override {
    ++deletes;
    return base_->DeleteDirContents(path, missing_dir_ok);
  }
  arrow::Status DeleteRootDirContents() override { return arrow::Status::NotImplemented("not in tests"); }
  arrow::Status DeleteFile(const std::string& path) override {
    ++deletes;
    return base_->DeleteFile(path);
  }
  arrow::Status Move(const std::string& src, const std::string& dest) override {
    ++writes;
    return base_->Move(src, dest);
  }
  arrow::Status CopyFile(const std::string& src, const std::string& dest) override {
    ++writes;
    return base_->CopyFile(src, dest);
  }
  arrow::Result<std::shared_ptr<arrow::io::InputStream>> OpenInputStream(const std::string& path) override {
    ARROW_RETURN_NOT_OK(CountOpen(path));
    return base_->OpenInputStream(path);
  }
  arrow::Result<std::shared_ptr<arrow::io::RandomAccessFile>> OpenInputFile(const std::string& path) override {
    ARROW_RETURN_NOT_OK(CountOpen(path));
    return base_->OpenInputFile(path);
  }
  arrow::Result<std::shared_ptr<arrow::io::OutputStream>> OpenOutputStream(
      const std::string& path, const std::shared_ptr<const arrow::KeyValueMetadata>& metadata) override {
    ++writes;
    if (fail_write_at > 0 && ++writes_since_arm == fail_write_at) {
      last_failed = path;
      return arrow::Status::IOError("injected failure writing ", path);
    }
    return base_->OpenOutputStream(path, metadata);
  }
  arrow::Result<std::shared_ptr<arrow::io::OutputStream>> OpenAppendStream(
      const std::string&, const std::shared_ptr<const arrow::KeyValueMetadata>&) override {
    return arrow::Status::NotImplemented("not in tests");
  }

 private:
  arrow::Status CountOpen(const std::string& path) {
    ++opens;
    if (fail_open_at > 0 && ++opens_since_arm == fail_open_at) {
      last_failed = path;
      return arrow::Status::IOError("injected failure opening ", path);
    }
    return arrow::Status::OK();
  }

  std::shared_ptr<arrow::fs::FileSystem> base_;
};

std::shared_ptr<arrow::RecordBatchReader> Rows(const std::vector<int64_t>& ids, int32_t offset) {
  arrow::Int64Builder id;
  arrow::Int32Builder v;
  for (int64_t i : ids) {
    EXPECT_TRUE(id.Append(i).ok());
    EXPECT_TRUE(v.Append(static_cast<int32_t>(i) + offset).ok());
  }
  auto schema = arrow::schema({arrow::field("id", arrow::int64()), arrow::field("v", arrow::int32())});
  auto batch = arrow::RecordBatch::Make(schema, static_cast<int64_t>(ids.size()), {*id.Finish(), *v.Finish()});
  return *arrow::RecordBatchReader::Make({batch}, schema);
}

std::vector<int64_t> Range(int64_t from, int64_t to) {
  std::vector<int64_t> out;
  for (int64_t i = from; i < to; ++i) out.push_back(i);
  return out;
}

// id -> v of a dataset's version.
std::map<int64_t, int32_t> Read(const std::shared_ptr<Dataset>& ds) {
  std::map<int64_t, int32_t> out;
  auto table = ScanBuilder(ds).Project({"id", "v"}).ToTable();
  EXPECT_TRUE(table.ok()) << table.status().ToString();
  if (!table.ok()) return out;
  auto combined = *(*table)->CombineChunksToBatch();
  auto ids = std::static_pointer_cast<arrow::Int64Array>(combined->column(0));
  auto vs = std::static_pointer_cast<arrow::Int32Array>(combined->column(1));
  for (int64_t i = 0; i < combined->num_rows(); ++i) out[ids->Value(i)] = vs->Value(i);
  return out;
}

class DatasetOpsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("lance_dataset_ops_test_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    // The dataset is "ds" inside a subtree of dir_: a path that means
    // nothing on the local disk, so a file access bypassing the filesystem
    // fails or shows up outside dir_.
    counting_ = std::make_shared<CountingFileSystem>(std::make_shared<arrow::fs::SubTreeFileSystem>(
        dir_.string(), std::make_shared<arrow::fs::LocalFileSystem>()));
  }
  void TearDown() override { fs::remove_all(dir_); }

  // 20 rows (ids 0..19, v = id) in two fragments, through the filesystem.
  std::shared_ptr<Dataset> Create() {
    WriteParams params;
    params.filesystem = counting_;
    params.max_rows_per_file = 10;
    params.data_storage_version = "2.1";
    auto ds = WriteDataset(Rows(Range(0, 20), 0), "ds", params);
    EXPECT_TRUE(ds.ok()) << ds.status().ToString();
    return ds.ok() ? *ds : nullptr;
  }
  Result<std::shared_ptr<Dataset>> OpenDs(const std::string& version = "") {
    OpenOptions options;
    options.version = version;
    options.filesystem = counting_;
    return Dataset::Open("ds", options);
  }

  fs::path dir_;
  std::shared_ptr<CountingFileSystem> counting_;
};

// An append that commits over another writer's append reports its own rows
// and fragments only.
TEST_F(DatasetOpsTest, AppendReportsOnlyWhatItWrote) {
  auto v1 = Create();
  ASSERT_TRUE(v1);
  auto other = v1->NewAppend().Commit(Rows(Range(100, 107), 0));
  ASSERT_TRUE(other.ok()) << other.status().ToString();
  auto mine = v1->NewAppend();  // still on version 1
  auto v3 = mine.Commit(Rows({200, 201, 202}, 0));
  ASSERT_TRUE(v3.ok()) << v3.status().ToString();
  EXPECT_EQ((*v3)->version(), 3u);
  EXPECT_EQ(mine.result().version, 3u);
  EXPECT_EQ(mine.result().rows_written, 3u);
  EXPECT_EQ(mine.result().fragments_written, 1u);
  EXPECT_EQ(Read(*v3).size(), 20u + 7u + 3u);

  auto overwrite = (*v3)->NewOverwrite();
  auto v4 = overwrite.Commit(Rows(Range(0, 4), 0));
  ASSERT_TRUE(v4.ok()) << v4.status().ToString();
  EXPECT_EQ(overwrite.result().rows_written, 4u);
  EXPECT_EQ(overwrite.result().fragments_written, 1u);
}

TEST_F(DatasetOpsTest, EveryOperationThroughItsBuilder) {
  auto v1 = Create();
  ASSERT_TRUE(v1);
  ASSERT_EQ(v1->version(), 1u);

  auto v2 = v1->NewAppend().Commit(Rows(Range(20, 25), 0));
  ASSERT_TRUE(v2.ok()) << v2.status().ToString();
  EXPECT_EQ((*v2)->version(), 2u);
  EXPECT_EQ(Read(*v2).size(), 25u);

  auto del = (*v2)->NewDelete("id < 3");
  auto v3 = del.Commit();
  ASSERT_TRUE(v3.ok()) << v3.status().ToString();
  EXPECT_EQ((*v3)->version(), 3u);
  EXPECT_EQ(del.result().num_deleted_rows, 3u);
  EXPECT_TRUE(del.result().committed);

  // Nothing matches: still a commit of an empty Delete, as pylance 14.
  auto none = (*v3)->NewDelete("id > 1000");
  auto same = none.Commit();
  ASSERT_TRUE(same.ok()) << same.status().ToString();
  EXPECT_EQ((*same)->version(), 4u);
  EXPECT_TRUE(none.result().committed);

  auto update = (*same)->NewUpdate();
  auto v4 = update.Set("v", "v + 100").Where("id >= 20").Commit();
  ASSERT_TRUE(v4.ok()) << v4.status().ToString();
  EXPECT_EQ((*v4)->version(), 5u);
  EXPECT_EQ(update.result().num_rows_updated, 5u);
  EXPECT_EQ(Read(*v4).at(21), 121);

  auto merge = (*v4)->NewMergeInsert({"id"});
  auto v5 = merge.WhenMatchedUpdateAll().WhenNotMatchedInsertAll().Commit(Rows({5, 6, 100}, 1000));
  ASSERT_TRUE(v5.ok()) << v5.status().ToString();
  EXPECT_EQ((*v5)->version(), 6u);
  EXPECT_EQ(merge.result().num_updated_rows, 2u);
  EXPECT_EQ(merge.result().num_inserted_rows, 1u);
  auto rows5 = Read(*v5);
  EXPECT_EQ(rows5.size(), 23u);
  EXPECT_EQ(rows5.at(5), 1005);
  EXPECT_EQ(rows5.at(100), 1100);

  auto v6 = (*v5)->NewOverwrite().Commit(Rows({7, 8}, 0));
  ASSERT_TRUE(v6.ok()) << v6.status().ToString();
  EXPECT_EQ((*v6)->version(), 7u);
  EXPECT_EQ(Read(*v6).size(), 2u);

  auto v7 = (*v6)->NewRestore(2).Commit();
  ASSERT_TRUE(v7.ok()) << v7.status().ToString();
  EXPECT_EQ((*v7)->version(), 8u);
  EXPECT_EQ(Read(*v7), Read(*v2));

  // Every old handle still reads its own version.
  EXPECT_EQ(v1->version(), 1u);
  EXPECT_EQ(Read(v1).size(), 20u);
  EXPECT_EQ(Read(*v3).size(), 22u);

  ASSERT_TRUE((*v7)->CreateTag("before", 3).ok());
  auto tags = (*v7)->Tags();
  ASSERT_TRUE(tags.ok());
  EXPECT_EQ(tags->at("before").version, 3u);
  auto tagged = OpenDs("before");
  ASSERT_TRUE(tagged.ok()) << tagged.status().ToString();
  EXPECT_EQ((*tagged)->version(), 3u);
  ASSERT_TRUE((*v7)->DeleteTag("before").ok());
  EXPECT_FALSE((*v7)->DeleteTag("before").ok());

  auto cleaned = (*v7)->CleanupOldVersions(0, /*delete_unverified=*/true);
  ASSERT_TRUE(cleaned.ok()) << cleaned.status().ToString();
  EXPECT_EQ(cleaned->old_versions, 7u);
  auto latest = OpenDs();
  ASSERT_TRUE(latest.ok()) << latest.status().ToString();
  EXPECT_EQ((*latest)->version(), 8u);
  EXPECT_EQ(Read(*latest), Read(*v2));
}

// The handle a builder's Commit returns is made from the commit, without
// reading the new manifest back: it must be the version as opening it gives.
void ExpectSameAsOpened(const std::shared_ptr<Dataset>& committed, const std::shared_ptr<Dataset>& opened) {
  ASSERT_TRUE(committed && opened);
  EXPECT_EQ(committed->version(), opened->version());
  EXPECT_EQ(committed->latest_version(), opened->latest_version());
  EXPECT_STREQ(committed->manifest_naming(), opened->manifest_naming());
  EXPECT_EQ(committed->uri(), opened->uri());
  EXPECT_EQ(committed->branch(), opened->branch());
  EXPECT_EQ(table::SerializeManifestFile(committed->manifest(), committed->indices(), nullptr),
            table::SerializeManifestFile(opened->manifest(), opened->indices(), nullptr));
  auto ours = committed->Versions();
  auto theirs = opened->Versions();
  ASSERT_TRUE(ours.ok() && theirs.ok());
  ASSERT_EQ(ours->size(), theirs->size());
  for (size_t i = 0; i < ours->size(); ++i) {
    EXPECT_EQ((*ours)[i].version, (*theirs)[i].version);
    EXPECT_EQ((*ours)[i].timestamp_nanos, (*theirs)[i].timestamp_nanos);
    EXPECT_EQ((*ours)[i].operation, (*theirs)[i].operation);
  }
  EXPECT_EQ(Read(committed), Read(opened));
}

TEST_F(DatasetOpsTest, CommittedHandleIsTheVersionAsOpened) {
  auto v1 = Create();
  ASSERT_TRUE(v1);
  auto check = [&](const Result<std::shared_ptr<Dataset>>& committed, const char* what) {
    SCOPED_TRACE(what);
    ASSERT_TRUE(committed.ok()) << committed.status().ToString();
    auto opened = OpenDs(std::to_string((*committed)->version()));
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    ExpectSameAsOpened(*committed, *opened);
  };
  check(v1, "create");
  auto v2 = v1->NewAppend().Commit(Rows(Range(20, 25), 0));
  check(v2, "append");
  // A delete reads no listing of the versions: the new one is known.
  const int64_t lists = counting_->lists;
  auto v3 = (*v2)->NewDelete("id < 3").Commit();
  EXPECT_EQ(counting_->lists, lists);
  check(v3, "delete");
  // Others committed between the handle's version and the new one: the
  // versions between are listed too.
  auto stale = (*v2)->NewAppend().Commit(Rows({50}, 0));
  check(stale, "append rebased over a later version");
  EXPECT_EQ((*stale)->version(), 4u);
  EXPECT_EQ((*stale)->Versions()->size(), 4u);
  check((*v3)->NewUpdate().Set("v", "v + 100").Where("id >= 20").Commit(), "update");
  auto v4 = OpenDs();
  ASSERT_TRUE(v4.ok());
  auto v5 = (*v4)->NewMergeInsert({"id"}).WhenMatchedUpdateAll().WhenNotMatchedInsertAll().Commit(Rows({5, 100}, 9));
  check(v5, "merge-insert");
  check((*v5)->NewRestore(2).Commit(), "restore");
  check((*v5)->NewOverwrite().Commit(Rows({7, 8}, 0)), "overwrite on a stale handle");
}

TEST_F(DatasetOpsTest, BuildersRefuseWhatTheyCannotDo) {
  auto v1 = Create();
  ASSERT_TRUE(v1);
  EXPECT_FALSE(v1->NewUpdate().Commit().ok());  // no SET
  EXPECT_FALSE(v1->NewMergeInsert({}).Commit(Rows({1}, 0)).ok());
  EXPECT_FALSE(v1->NewAppend().Commit(nullptr).ok());
  WriteParams other;
  other.filesystem = std::make_shared<arrow::fs::LocalFileSystem>();
  auto refused = v1->NewAppend().Options(other).Commit(Rows({1}, 0));
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("filesystem"), std::string::npos) << refused.status().ToString();
  EXPECT_FALSE(v1->NewRestore(99).Commit().ok());
  auto latest = OpenDs();
  ASSERT_TRUE(latest.ok());
  EXPECT_EQ((*latest)->version(), 1u);
}

// The handle's version is the read version: another writer's delete of
// other rows is merged in at commit (not re-run: re-runs are switched off).
TEST_F(DatasetOpsTest, StaleHandleDeleteOfOtherRowsRebases) {
  auto v1 = Create();
  ASSERT_TRUE(v1);
  auto other = OpenDs();
  ASSERT_TRUE(other.ok());
  ASSERT_TRUE((*other)->NewDelete("id = 3").Commit().ok());

  DeleteOptions options;
  options.retry.conflict_retries = 0;
  auto del = v1->NewDelete("id = 5");
  auto v3 = del.Options(options).Commit();
  ASSERT_TRUE(v3.ok()) << v3.status().ToString();
  EXPECT_EQ((*v3)->version(), 3u);
  EXPECT_EQ(del.result().num_deleted_rows, 1u);
  auto rows = Read(*v3);
  EXPECT_EQ(rows.size(), 18u);
  EXPECT_EQ(rows.count(3), 0u);
  EXPECT_EQ(rows.count(5), 0u);
  EXPECT_EQ(Read(v1).size(), 20u);
}

// Overlapping rows: a retryable conflict, so the delete runs again on the
// latest version and counts only the rows it deleted there.
TEST_F(DatasetOpsTest, StaleHandleDeleteOfTheSameRowsRunsAgainOnLatest) {
  auto v1 = Create();
  ASSERT_TRUE(v1);
  auto other = OpenDs();
  ASSERT_TRUE(other.ok());
  ASSERT_TRUE((*other)->NewDelete("id >= 3 AND id <= 5").Commit().ok());

  // Without re-runs it is the reference's too-much-contention.
  DeleteOptions once;
  once.retry.conflict_retries = 0;
  auto refused = v1->NewDelete("id >= 4 AND id <= 6").Options(once).Commit();
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(GetErrorKind(refused.status()), ErrorKind::kTooMuchWriteContention) << refused.status().ToString();

  auto del = v1->NewDelete("id >= 4 AND id <= 6");
  auto v3 = del.Commit();
  ASSERT_TRUE(v3.ok()) << v3.status().ToString();
  EXPECT_EQ((*v3)->version(), 3u);
  EXPECT_EQ(del.result().num_deleted_rows, 1u);  // only id 6 was still there
  auto rows = Read(*v3);
  EXPECT_EQ(rows.size(), 16u);
  for (int64_t id = 3; id <= 6; ++id) EXPECT_EQ(rows.count(id), 0u) << id;
}

// An update of a row another writer updated since: run again on the
// latest, so both increments count.
TEST_F(DatasetOpsTest, StaleHandleUpdateOfTheSameRowRunsAgainOnLatest) {
  auto v1 = Create();
  ASSERT_TRUE(v1);
  auto other = OpenDs();
  ASSERT_TRUE(other.ok());
  ASSERT_TRUE((*other)->NewUpdate().Set("v", "v + 10").Where("id = 2").Commit().ok());

  auto update = v1->NewUpdate();
  auto v3 = update.Set("v", "v + 100").Where("id = 2").Commit();
  ASSERT_TRUE(v3.ok()) << v3.status().ToString();
  EXPECT_EQ((*v3)->version(), 3u);
  EXPECT_EQ(update.result().num_rows_updated, 1u);
  auto rows = Read(*v3);
  EXPECT_EQ(rows.size(), 20u);
  EXPECT_EQ(rows.at(2), 112);
  EXPECT_EQ(Read(v1).at(2), 2);
}

TEST_F(DatasetOpsTest, StaleHandleMergeInsertRunsAgainOnLatest) {
  auto v1 = Create();
  ASSERT_TRUE(v1);
  auto other = OpenDs();
  ASSERT_TRUE(other.ok());
  ASSERT_TRUE((*other)->NewDelete("id = 4").Commit().ok());

  auto merge = v1->NewMergeInsert({"id"});
  auto v3 = merge.WhenMatchedUpdateAll().WhenNotMatchedInsertAll().Commit(Rows({4, 50}, 500));
  ASSERT_TRUE(v3.ok()) << v3.status().ToString();
  EXPECT_EQ((*v3)->version(), 3u);
  // On the latest, id 4 is gone: both source rows are inserts.
  EXPECT_EQ(merge.result().num_updated_rows, 0u);
  EXPECT_EQ(merge.result().num_inserted_rows, 2u);
  auto rows = Read(*v3);
  EXPECT_EQ(rows.size(), 21u);
  EXPECT_EQ(rows.at(4), 504);
}

// Every operation goes through the dataset's filesystem, and nothing is
// created outside it.
TEST_F(DatasetOpsTest, EveryOperationGoesThroughTheFilesystem) {
  const fs::path cwd = fs::current_path();
  ASSERT_FALSE(fs::exists(cwd / "ds"));
  std::map<std::string, int64_t> calls;
  int64_t before = counting_->Total();
  auto step = [&](const std::string& what) {
    calls[what] = counting_->Total() - before;
    before = counting_->Total();
  };
  const int64_t writes_before_create = counting_->writes;
  auto v1 = Create();
  ASSERT_TRUE(v1);
  EXPECT_GT(counting_->writes, writes_before_create);
  step("create");
  auto opened = OpenDs();
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  step("open");
  EXPECT_EQ(Read(*opened).size(), 20u);
  step("scan");
  auto appended = (*opened)->NewAppend().Commit(Rows({20}, 0));
  ASSERT_TRUE(appended.ok()) << appended.status().ToString();
  step("append");
  auto deleted = (*appended)->NewDelete("id = 1").Commit();
  ASSERT_TRUE(deleted.ok()) << deleted.status().ToString();
  step("delete");
  auto updated = (*deleted)->NewUpdate().Set("v", "0").Where("id = 2").Commit();
  ASSERT_TRUE(updated.ok()) << updated.status().ToString();
  step("update");
  auto merged = (*updated)->NewMergeInsert({"id"}).WhenNotMatchedInsertAll().Commit(Rows({30}, 0));
  ASSERT_TRUE(merged.ok()) << merged.status().ToString();
  step("merge-insert");
  auto restored = (*merged)->NewRestore(1).Commit();
  ASSERT_TRUE(restored.ok()) << restored.status().ToString();
  step("restore");
  ASSERT_TRUE((*restored)->CreateTag("t", 1).ok());
  step("tag");
  // As pylance's default: a tagged old version makes the cleanup refuse,
  // removing nothing.
  const size_t versions_before = (*restored)->Versions()->size();
  auto refused = (*restored)->CleanupOldVersions(0, /*delete_unverified=*/true);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("t (version 1)"), std::string::npos) << refused.status().ToString();
  auto still = OpenDs();
  ASSERT_TRUE(still.ok()) << still.status().ToString();
  EXPECT_EQ((*still)->Versions()->size(), versions_before);
  EXPECT_GT(versions_before, 2u);
  CleanupOptions keep_tagged;
  keep_tagged.error_if_tagged_old_versions = false;
  auto cleaned = (*restored)->CleanupOldVersions(0, /*delete_unverified=*/true, keep_tagged);
  ASSERT_TRUE(cleaned.ok()) << cleaned.status().ToString();
  EXPECT_GT(cleaned->old_versions, 0u);
  // The files only the removed versions had, found by listing through it.
  EXPECT_GT(cleaned->data_files, 0u);
  EXPECT_GT(cleaned->deletion_files, 0u);
  step("cleanup");
  for (const auto& [what, n] : calls) EXPECT_GT(n, 0) << what << " made no call through the filesystem";

  // All files are under dir_/ds, none beside it or in the working directory.
  EXPECT_FALSE(fs::exists(cwd / "ds"));
  for (const auto& entry : fs::directory_iterator(dir_)) {
    EXPECT_EQ(entry.path().filename(), "ds") << entry.path();
  }
  EXPECT_TRUE(fs::exists(dir_ / "ds" / "_versions"));
}

// Each write of an append failing in turn: a clear error, and the dataset
// still reads its previous version with no data file left behind. Past the
// last write that matters, the append commits.
TEST_F(DatasetOpsTest, InjectedWriteFailureLeavesThePreviousVersion) {
  auto v1 = Create();
  ASSERT_TRUE(v1);
  const auto rows = Read(v1);
  auto data_files = [&] {
    size_t n = 0;
    for (const auto& e : fs::directory_iterator(dir_ / "ds" / "data")) n += e.is_regular_file();
    return n;
  };
  const size_t files_before = data_files();
  bool committed = false;
  int failures = 0;
  for (int64_t n = 1; n <= 10 && !committed; ++n) {
    counting_->ArmWriteFailure(n);
    auto result = v1->NewAppend().Commit(Rows({90, 91}, 0));
    const bool hit = counting_->writes_since_arm >= n;
    counting_->Disarm();
    if (result.ok()) {
      committed = true;
      EXPECT_EQ((*result)->version(), 2u);
      EXPECT_EQ(Read(*result).size(), 22u);
      break;
    }
    ASSERT_TRUE(hit) << result.status().ToString();
    ++failures;
    EXPECT_NE(result.status().message().find("injected failure"), std::string::npos) << result.status().ToString();
    EXPECT_NE(result.status().message().find(counting_->last_failed), std::string::npos)
        << result.status().ToString();
    auto latest = OpenDs();
    ASSERT_TRUE(latest.ok()) << latest.status().ToString();
    EXPECT_EQ((*latest)->version(), 1u) << "after failing write " << n << " (" << counting_->last_failed << ")";
    EXPECT_EQ(Read(*latest), rows);
    EXPECT_EQ(data_files(), files_before) << "after failing write " << n;
  }
  EXPECT_TRUE(committed);
  EXPECT_GE(failures, 3);  // the data file, the transaction, the manifest

  // A delete whose deletion file cannot be written.
  counting_->ArmWriteFailure(1);
  auto del = v1->NewDelete("id = 0").Commit();
  counting_->Disarm();
  ASSERT_FALSE(del.ok());
  EXPECT_NE(del.status().message().find("injected failure"), std::string::npos) << del.status().ToString();
  auto latest = OpenDs();
  ASSERT_TRUE(latest.ok());
  EXPECT_EQ((*latest)->version(), 2u);
  EXPECT_EQ(Read(*latest).count(0), 1u);
}

// The handle was opened for reading; a writer-only flag this build cannot
// write is refused by every operation started from it, before any file is
// written (the check the latest-version load used to make).
TEST_F(DatasetOpsTest, OperationsRefuseUnknownWriterFlagsOfTheHandle) {
  auto v1 = Create();
  ASSERT_TRUE(v1);
  // Version 2: version 1 with an unknown writer-only bit.
  auto store = *io::ObjectStore::Open("ds", counting_);
  auto latest = *table::FindLatestManifest(*store);
  auto base = txn::LoadVersion(*store, *latest);
  ASSERT_TRUE(base.ok()) << base.status().ToString();
  Manifest m = base->file.manifest;
  m.version = 2;
  m.writer_feature_flags |= uint64_t{1} << 40;
  const std::string path = "_versions/" + table::ManifestFileName(2, latest->naming);
  ASSERT_TRUE(store->PutIfNotExists(path, table::SerializeManifestFile(m, {}, nullptr)).ok());
  auto v2 = OpenDs();
  ASSERT_TRUE(v2.ok()) << v2.status().ToString();
  ASSERT_EQ((*v2)->version(), 2u);
  const int64_t writes = counting_->writes;
  std::vector<Status> refused = {
      (*v2)->NewDelete("id = 1").Commit().status(),
      (*v2)->NewUpdate().Set("v", "1").Commit().status(),
      (*v2)->NewMergeInsert({"id"}).WhenNotMatchedInsertAll().Commit(Rows({99}, 0)).status(),
      (*v2)->NewAppend().Commit(Rows({99}, 0)).status(),
      (*v2)->NewOverwrite().Commit(Rows({99}, 0)).status(),
      (*v2)->NewRestore(1).Commit().status(),
  };
  for (const auto& st : refused) {
    ASSERT_FALSE(st.ok());
    EXPECT_NE(st.message().find("cannot be written"), std::string::npos) << st.ToString();
    EXPECT_NE(st.message().find(path), std::string::npos) << st.ToString();
  }
  EXPECT_EQ(counting_->writes, writes);
}

// Blob values are read from the dataset's own filesystem too.
TEST_F(DatasetOpsTest, BlobTakesGoThroughTheFilesystem) {
  arrow::Int64Builder ids;
  arrow::LargeBinaryBuilder blobs;
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(ids.Append(i).ok());
    ASSERT_TRUE(blobs.Append(std::string(100 + i, static_cast<char>('a' + i))).ok());
  }
  auto schema = arrow::schema({arrow::field("id", arrow::int64()),
                               arrow::field("b", arrow::large_binary(), true,
                                            arrow::key_value_metadata({"lance-encoding:blob"}, {"true"}))});
  auto batch = arrow::RecordBatch::Make(schema, 3, {*ids.Finish(), *blobs.Finish()});
  WriteParams params;
  params.filesystem = counting_;
  params.data_storage_version = "2.2";
  auto ds = WriteDataset(*arrow::RecordBatchReader::Make({batch}, schema), "ds", params);
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  const int64_t opens = counting_->opens;
  auto values = TakeBlobs(*ds, "b", {2, 0}, BlobRows::kIndices);
  ASSERT_TRUE(values.ok()) << values.status().ToString();
  ASSERT_EQ((*values)->length(), 2);
  EXPECT_EQ((*values)->GetString(0), std::string(102, 'c'));
  EXPECT_EQ((*values)->GetString(1), std::string(100, 'a'));
  EXPECT_GT(counting_->opens, opens);
  EXPECT_FALSE(fs::exists(fs::current_path() / "ds"));
}

TEST_F(DatasetOpsTest, InjectedOpenFailureIsAClearError) {
  auto v1 = Create();
  ASSERT_TRUE(v1);
  auto opened = OpenDs();
  ASSERT_TRUE(opened.ok());
  counting_->ArmOpenFailure(1);
  auto table = ScanBuilder(*opened).ToTable();
  counting_->Disarm();
  ASSERT_FALSE(table.ok());
  EXPECT_NE(table.status().message().find("injected failure opening"), std::string::npos)
      << table.status().ToString();
  EXPECT_EQ(Read(*opened).size(), 20u);
}


// Compaction through its builder on a dataset opened with a filesystem:
// every file read and written through it (the two fragments of 10 rows are
// merged into one), none created outside it; the distributed steps too.
TEST_F(DatasetOpsTest, CompactionGoesThroughTheFilesystem) {
  const fs::path cwd = fs::current_path();
  ASSERT_FALSE(fs::exists(cwd / "ds"));
  auto v1 = Create();
  ASSERT_TRUE(v1);
  const auto rows = Read(v1);
  auto opened = OpenDs();
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  CompactionOptions options;
  options.target_rows_per_fragment = 100;
  auto compaction = (*opened)->NewCompaction();
  compaction.Options(options);
  auto plan = compaction.Plan();
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  ASSERT_EQ(plan->tasks.size(), 1u);
  const int64_t opens = counting_->opens, writes = counting_->writes;
  auto compacted = compaction.Commit();
  ASSERT_TRUE(compacted.ok()) << compacted.status().ToString();
  EXPECT_GT(counting_->opens, opens);
  EXPECT_GT(counting_->writes, writes);
  EXPECT_TRUE(compaction.result().committed);
  EXPECT_EQ(compaction.result().metrics.fragments_removed, 2u);
  EXPECT_EQ(compaction.result().metrics.fragments_added, 1u);
  // ReserveFragments, then the Rewrite.
  EXPECT_EQ((*compacted)->version(), 3u);
  EXPECT_EQ(compaction.result().version, 3u);
  EXPECT_EQ((*compacted)->manifest().fragments.size(), 1u);
  EXPECT_EQ(Read(*compacted), rows);

  // Plan, execute and commit from handles: a task executed against a
  // handle at another version reads the plan's version through its store.
  auto appended = (*compacted)->NewAppend().Commit(Rows({50}, 0));
  ASSERT_TRUE(appended.ok()) << appended.status().ToString();
  auto plan2 = PlanCompaction(**appended, options);
  ASSERT_TRUE(plan2.ok()) << plan2.status().ToString();
  ASSERT_EQ(plan2->tasks.size(), 1u);
  auto more = (*appended)->NewAppend().Commit(Rows({60}, 0));
  ASSERT_TRUE(more.ok()) << more.status().ToString();
  auto rewritten = ExecuteCompactionTask(**more, plan2->tasks[0], options);
  ASSERT_TRUE(rewritten.ok()) << rewritten.status().ToString();
  EXPECT_EQ(rewritten->read_version, (*appended)->version());
  auto committed = CommitCompaction(**more, {*rewritten}, options);
  ASSERT_TRUE(committed.ok()) << committed.status().ToString();
  EXPECT_TRUE(committed->committed);
  auto latest = OpenDs();
  ASSERT_TRUE(latest.ok()) << latest.status().ToString();
  EXPECT_EQ((*latest)->version(), committed->version);
  EXPECT_EQ((*latest)->manifest().fragments.size(), 2u);  // the compacted one, and 60's
  EXPECT_EQ(Read(*latest).size(), 22u);

  EXPECT_FALSE(fs::exists(cwd / "ds"));
  for (const auto& entry : fs::directory_iterator(dir_)) {
    EXPECT_EQ(entry.path().filename(), "ds") << entry.path();
  }
}

// Each write of a compaction failing in turn: a clear error naming the
// file, the rows unchanged and no new data file left behind; a failure
// before the first commit leaves the previous version the latest.
TEST_F(DatasetOpsTest, InjectedWriteFailureDuringCompaction) {
  auto v1 = Create();
  ASSERT_TRUE(v1);
  const auto rows = Read(v1);
  auto data_files = [&] {
    size_t n = 0;
    for (const auto& e : fs::directory_iterator(dir_ / "ds" / "data")) n += e.is_regular_file();
    return n;
  };
  const size_t files_before = data_files();
  CompactionOptions options;
  options.target_rows_per_fragment = 100;
  options.retry.conflict_retries = 0;
  bool committed = false;
  int failures = 0;
  for (int64_t n = 1; n <= 12 && !committed; ++n) {
    auto latest_before = OpenDs();
    ASSERT_TRUE(latest_before.ok()) << latest_before.status().ToString();
    counting_->ArmWriteFailure(n);
    auto result = (*latest_before)->NewCompaction().Options(options).Commit();
    const bool hit = counting_->writes_since_arm >= n;
    counting_->Disarm();
    if (result.ok()) {
      committed = true;
      EXPECT_EQ((*result)->manifest().fragments.size(), 1u);
      EXPECT_EQ(Read(*result), rows);
      break;
    }
    ASSERT_TRUE(hit) << result.status().ToString();
    ++failures;
    EXPECT_NE(result.status().message().find("injected failure"), std::string::npos) << result.status().ToString();
    EXPECT_NE(result.status().message().find(counting_->last_failed), std::string::npos)
        << result.status().ToString();
    auto latest = OpenDs();
    ASSERT_TRUE(latest.ok()) << latest.status().ToString();
    if (n == 1) {
      // The new data file could not be written: nothing was committed.
      EXPECT_EQ((*latest)->version(), 1u) << counting_->last_failed;
    }
    EXPECT_EQ((*latest)->manifest().fragments.size(), 2u) << "after failing write " << n;
    EXPECT_EQ(Read(*latest), rows) << "after failing write " << n;
    EXPECT_EQ(data_files(), files_before) << "after failing write " << n << " (" << counting_->last_failed << ")";
  }
  EXPECT_TRUE(committed);
  EXPECT_GE(failures, 3);  // the data file, and the files of each of the two commits
}

}  // namespace
}  // namespace lance
