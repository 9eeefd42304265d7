// update, merge-insert and cleanup on small datasets made with the commit
// machinery directly: rows, row ids, counts, errors, and what cleanup keeps.
#include <gtest/gtest.h>

#include <arrow/api.h>

#include <filesystem>
#include <map>
#include <mutex>
#include <thread>

#include "lance/dataset.h"
#include "lance/io/object_store.h"
#include "lance/operations.h"
#include "lance/ops/fragment_writer.h"
#include "lance/ops/row_rewrite.h"
#include "lance/row_ops.h"
#include "lance/scanner.h"
#include "lance/txn/commit.h"
#include "lance/write.h"

namespace lance {
namespace {

namespace fs = std::filesystem;

std::shared_ptr<arrow::RecordBatch> Rows(const std::vector<int64_t>& ids, int32_t offset) {
  arrow::Int64Builder id;
  arrow::Int32Builder v;
  arrow::StringBuilder s;
  for (int64_t i : ids) {
    EXPECT_TRUE(id.Append(i).ok());
    EXPECT_TRUE(v.Append(static_cast<int32_t>(i) + offset).ok());
    EXPECT_TRUE(s.Append("row" + std::to_string(i)).ok());
  }
  auto schema = arrow::schema({arrow::field("id", arrow::int64()), arrow::field("v", arrow::int32()),
                               arrow::field("s", arrow::utf8())});
  return arrow::RecordBatch::Make(schema, static_cast<int64_t>(ids.size()),
                                  {*id.Finish(), *v.Finish(), *s.Finish()});
}

class RowOpsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("lance_row_ops_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    store_ = *io::ObjectStore::Open(dir_.string());
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Two fragments of 10 rows (ids 0..19), stable row ids on.
  void Create() {
    auto batch = Rows([] {
      std::vector<int64_t> ids;
      for (int64_t i = 0; i < 20; ++i) ids.push_back(i);
      return ids;
    }(), 0);
    auto schema = *Schema::FromArrow(*batch->schema());
    ops::FragmentWriterOptions writer_options;
    writer_options.storage_version = "2.1";
    writer_options.max_rows_per_file = 10;
    ops::FragmentWriter writer(*store_, schema, writer_options);
    ASSERT_TRUE(writer.Write(batch).ok());
    auto fragments = writer.Finish();
    ASSERT_TRUE(fragments.ok()) << fragments.status().ToString();
    ASSERT_EQ(fragments->size(), 2u);
    txn::Overwrite op;
    op.fragments = *fragments;
    op.schema = schema;
    txn::CommitOptions options;
    options.enable_stable_row_ids = true;
    options.data_storage_version = "2.1";
    auto committed = txn::Commit(*store_, txn::Transaction::Make(0, op), options);
    ASSERT_TRUE(committed.ok()) << committed.status().ToString();
  }

  // id -> (v, _rowid) of the latest version.
  std::map<int64_t, std::pair<int32_t, uint64_t>> Read() {
    auto ds = *Dataset::Open(dir_.string());
    ScanOptions scan;
    scan.columns = {"id", "v"};
    scan.with_row_id = true;
    auto table = *ScanBuilder(ds).Options(scan).ToTable();
    auto batch = *table->CombineChunksToBatch();
    std::map<int64_t, std::pair<int32_t, uint64_t>> out;
    const auto& id = static_cast<const arrow::Int64Array&>(*batch->column(0));
    const auto& v = static_cast<const arrow::Int32Array&>(*batch->column(1));
    const auto& rid = static_cast<const arrow::UInt64Array&>(*batch->column(2));
    for (int64_t i = 0; i < batch->num_rows(); ++i) out[id.Value(i)] = {v.Value(i), rid.Value(i)};
    return out;
  }

  fs::path dir_;
  std::shared_ptr<io::ObjectStore> store_;
};

TEST_F(RowOpsTest, UpdateRewritesMatchingRowsKeepingRowIds) {
  Create();
  auto before = Read();
  auto result = UpdateRows(dir_.string(), {{"v", "v * 10"}}, "id >= 5 AND id < 15");
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->num_rows_updated, 10u);
  EXPECT_EQ(result->version, 2u);
  auto after = Read();
  ASSERT_EQ(after.size(), 20u);
  for (const auto& [id, row] : after) {
    const int32_t want = (id >= 5 && id < 15) ? static_cast<int32_t>(id) * 10 : static_cast<int32_t>(id);
    EXPECT_EQ(row.first, want) << "id " << id;
    EXPECT_EQ(row.second, before[id].second) << "row id of " << id;
  }
  auto ds = *Dataset::Open(dir_.string());
  ASSERT_EQ(ds->manifest().fragments.size(), 3u);
  const auto& added = ds->manifest().fragments.back();
  auto updated = *ds->RowLastUpdatedAtVersions(added);
  ASSERT_TRUE(updated.has_value());
  EXPECT_EQ(*updated, std::vector<uint64_t>(10, 2));
}

TEST_F(RowOpsTest, ConcurrentUpdatesRetryAndLoseNothing) {
  Create();
  auto before = Read();
  constexpr int kPerThread = 3;
  std::vector<Status> failures;
  std::mutex mu;
  auto work = [&] {
    for (int i = 0; i < kPerThread; ++i) {
      auto r = UpdateRows(dir_.string(), {{"v", "v + 1"}}, "");
      if (!r.ok()) {
        std::lock_guard<std::mutex> lock(mu);
        failures.push_back(r.status());
      }
    }
  };
  std::thread a(work), b(work);
  a.join();
  b.join();
  for (const auto& f : failures) ADD_FAILURE() << f.ToString();
  auto after = Read();
  ASSERT_EQ(after.size(), before.size());
  for (const auto& [id, row] : after) {
    EXPECT_EQ(row.first, before[id].first + 2 * kPerThread) << "id " << id;
    EXPECT_EQ(row.second, before[id].second) << "row id of " << id;
  }
  EXPECT_EQ((*Dataset::Open(dir_.string()))->version(), 1u + 2 * kPerThread);
}

TEST_F(RowOpsTest, UpdateErrorsNameTheProblem) {
  Create();
  auto missing = UpdateRows(dir_.string(), {{"nope", "1"}}, "");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("nope"), std::string::npos);
  auto overflow = UpdateRows(dir_.string(), {{"v", "'abc'"}}, "");
  EXPECT_FALSE(overflow.ok());
  EXPECT_EQ((*Dataset::Open(dir_.string()))->version(), 1u);
}

TEST_F(RowOpsTest, MergeInsertUpsertsAndDeletes) {
  Create();
  auto before = Read();
  auto source = Rows({3, 4, 25, 26, 27}, 100);
  auto reader = *arrow::RecordBatchReader::Make({source});
  MergeInsertParams params;
  params.on = {"id"};
  params.when_matched_update_all = true;
  params.when_not_matched_insert_all = true;
  params.when_not_matched_by_source_delete = true;
  params.when_not_matched_by_source_predicate = "id >= 18";
  auto result = MergeInsert(dir_.string(), reader, params);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->num_updated_rows, 2u);
  EXPECT_EQ(result->num_inserted_rows, 3u);
  EXPECT_EQ(result->num_deleted_rows, 2u);
  auto after = Read();
  EXPECT_EQ(after.size(), 21u);
  EXPECT_EQ(after[3].first, 103);
  EXPECT_EQ(after[3].second, before[3].second);
  EXPECT_EQ(after[25].first, 125);
  EXPECT_EQ(after.count(18), 0u);
  EXPECT_EQ(after[17].first, 17);
}

TEST_F(RowOpsTest, MergeInsertGathersRowsFromEveryBatchOfTheSource) {
  Create();
  auto before = Read();
  // Matched rows come in target order (2, 7, 19), not the source's, so they
  // are taken; the new rows are two runs (30..69, 70) in two batches, so
  // they go out as slices.
  std::vector<int64_t> run;
  for (int64_t i = 30; i < 70; ++i) run.push_back(i);
  auto reader = *arrow::RecordBatchReader::Make({Rows({19, 2}, 100), Rows(run, 100), Rows({7, 70}, 100)});
  MergeInsertParams params;
  params.on = {"id"};
  params.when_matched_update_all = true;
  params.when_not_matched_insert_all = true;
  auto result = MergeInsert(dir_.string(), reader, params);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->num_updated_rows, 3u);
  EXPECT_EQ(result->num_inserted_rows, 41u);
  auto after = Read();
  EXPECT_EQ(after.size(), 61u);
  for (int64_t id : {2, 7, 19}) {
    EXPECT_EQ(after[id].first, id + 100) << id;
    EXPECT_EQ(after[id].second, before[id].second) << id;  // stable row id kept
  }
  for (int64_t id = 30; id <= 70; ++id) EXPECT_EQ(after[id].first, id + 100) << id;
  EXPECT_EQ(after[5].first, 5);
}

TEST_F(RowOpsTest, MergeInsertWritesUpdatedThenInsertedRowsIntoOneFragment) {
  Create();
  auto before = Read();
  // Matched rows in target order (2, 19), then new rows in source order
  // (31, 30), all in one new fragment, as pylance writes them.
  auto reader = *arrow::RecordBatchReader::Make({Rows({19, 31, 2, 30}, 100)});
  MergeInsertParams params;
  params.on = {"id"};
  params.when_matched_update_all = true;
  params.when_not_matched_insert_all = true;
  auto result = MergeInsert(dir_.string(), reader, params);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  auto ds = *Dataset::Open(dir_.string());
  ASSERT_EQ(ds->manifest().fragments.size(), 3u);
  const Fragment& added = ds->manifest().fragments.back();
  EXPECT_EQ(added.physical_rows, 4u);
  ASSERT_EQ(added.files.size(), 1u);
  EXPECT_EQ(added.files[0].file_major_version, 2u);
  EXPECT_EQ(added.files[0].file_minor_version, 1u);
  ScanOptions scan;
  scan.columns = {"id"};
  auto batch = *(*ScanBuilder(ds).Options(scan).ToTable())->CombineChunksToBatch();
  const auto& ids = static_cast<const arrow::Int64Array&>(*batch->column(0));
  std::vector<int64_t> order;  // the new fragment's rows come last
  for (int64_t i = ids.length() - 4; i < ids.length(); ++i) order.push_back(ids.Value(i));
  EXPECT_EQ(order, (std::vector<int64_t>{2, 19, 31, 30}));
  // Old row ids for the updated rows, then new ones from next_row_id.
  EXPECT_EQ(*ds->RowIds(added), (std::vector<uint64_t>{before[2].second, before[19].second, 20, 21}));
  EXPECT_EQ(ds->manifest().next_row_id, 22u);
  EXPECT_EQ(**ds->RowCreatedAtVersions(added), (std::vector<uint64_t>{1, 1, 2, 2}));
  EXPECT_EQ(**ds->RowLastUpdatedAtVersions(added), (std::vector<uint64_t>(4, 2)));
}

TEST_F(RowOpsTest, RewrittenRowsOfA20DatasetRecordFileVersion20AsAppendDoes) {
  WriteParams params;
  params.data_storage_version = "2.0";
  auto created = WriteDataset(*arrow::RecordBatchReader::Make({Rows({0, 1, 2, 3}, 0)}), dir_.string(), params);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  ASSERT_TRUE(UpdateRows(dir_.string(), {{"v", "v + 1"}}, "id = 1").ok());
  MergeInsertParams merge;
  merge.on = {"id"};
  merge.when_matched_update_all = true;
  merge.when_not_matched_insert_all = true;
  ASSERT_TRUE(MergeInsert(dir_.string(), *arrow::RecordBatchReader::Make({Rows({2, 9}, 5)}), merge).ok());
  auto ds = *Dataset::Open(dir_.string());
  EXPECT_EQ(ds->manifest().fragments.size(), 3u);
  for (const auto& fragment : ds->manifest().fragments) {
    ASSERT_EQ(fragment.files.size(), 1u);
    const DataFile& file = fragment.files[0];
    // The footer of a 2.0 file says 0.3; the manifest says 2.0.
    EXPECT_EQ(std::make_pair(file.file_major_version, file.file_minor_version), std::make_pair(2u, 0u))
        << "fragment " << fragment.id;
    EXPECT_EQ(file.fields, (std::vector<int32_t>{0, 1, 2})) << "fragment " << fragment.id;
  }
}

TEST_F(RowOpsTest, MergeInsertOnAStringKey) {
  Create();
  auto reader = *arrow::RecordBatchReader::Make({Rows({4, 33}, 7)});
  MergeInsertParams params;
  params.on = {"s"};
  params.when_matched_update_all = true;
  params.when_not_matched_insert_all = true;
  auto result = MergeInsert(dir_.string(), reader, params);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->num_updated_rows, 1u);
  EXPECT_EQ(result->num_inserted_rows, 1u);
  auto after = Read();
  EXPECT_EQ(after.size(), 21u);
  EXPECT_EQ(after[4].first, 11);
  EXPECT_EQ(after[33].first, 40);
}

TEST_F(RowOpsTest, MergeInsertRefusesAmbiguousSource) {
  Create();
  auto reader = *arrow::RecordBatchReader::Make({Rows({4, 4}, 1)});
  MergeInsertParams params;
  params.on = {"id"};
  params.when_matched_update_all = true;
  auto result = MergeInsert(dir_.string(), reader, params);
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status().message().find("Ambiguous merge inserts are prohibited"), std::string::npos);
  EXPECT_NE(result.status().message().find("id = 4"), std::string::npos);
  EXPECT_EQ((*Dataset::Open(dir_.string()))->version(), 1u);
  // Nothing written: only the first version's data files.
  size_t data_files = 0;
  for (const auto& e : fs::directory_iterator(dir_ / "data")) data_files += e.is_regular_file();
  EXPECT_EQ(data_files, 2u);
}

TEST_F(RowOpsTest, TakeByAddressSkipsDeletedRowsAndRefusesThem) {
  Create();
  ASSERT_TRUE(DeleteRows(dir_.string(), "id = 2 OR id = 3 OR id = 11").ok());
  auto ds = *Dataset::Open(dir_.string());
  // Fragment 0 holds ids 0..9, fragment 1 ids 10..19, at their offsets.
  const std::vector<uint64_t> addrs = {(uint64_t{1} << 32) | 5, 4, 0, (uint64_t{1} << 32) | 0, 9};
  auto table = ops::TakeByAddress(ds, addrs, {"id", "s"});
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  auto ids = std::static_pointer_cast<arrow::Int64Array>((*table)->GetColumnByName("id")->chunk(0));
  std::vector<int64_t> got;
  for (int64_t i = 0; i < ids->length(); ++i) got.push_back(ids->Value(i));
  EXPECT_EQ(got, (std::vector<int64_t>{15, 4, 0, 10, 9}));
  auto deleted = ops::TakeByAddress(ds, {3}, {"id"});
  ASSERT_FALSE(deleted.ok());
  EXPECT_NE(deleted.status().message().find("deleted"), std::string::npos);
  auto elsewhere = ops::TakeByAddress(ds, {uint64_t{7} << 32}, {"id"});
  ASSERT_FALSE(elsewhere.ok());
  EXPECT_NE(elsewhere.status().message().find("fragment 7"), std::string::npos);
}

TEST_F(RowOpsTest, UpdateOfFewRowsAfterDeletesTakesTheRightRows) {
  Create();
  ASSERT_TRUE(DeleteRows(dir_.string(), "id < 4 OR id = 12").ok());
  auto before = Read();
  // One row in twenty: found on the predicate's column, then taken.
  auto result = UpdateRows(dir_.string(), {{"v", "v + 1000"}}, "id = 13");
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->num_rows_updated, 1u);
  auto after = Read();
  ASSERT_EQ(after.size(), before.size());
  for (const auto& [id, row] : after) {
    EXPECT_EQ(row.first, static_cast<int32_t>(id) + (id == 13 ? 1000 : 0)) << "id " << id;
    EXPECT_EQ(row.second, before[id].second) << "row id of " << id;
  }
}

TEST_F(RowOpsTest, MergeInsertWithPartialSourceKeepsOrNullsTheMissingColumns) {
  Create();
  auto before = Read();
  arrow::Int64Builder id;
  arrow::Int32Builder v;
  ASSERT_TRUE(id.AppendValues({30, 6}).ok());
  ASSERT_TRUE(v.AppendValues({-30, -6}).ok());
  // Columns in another order than the dataset's, `s` missing.
  auto source = arrow::RecordBatch::Make(
      arrow::schema({arrow::field("v", arrow::int32()), arrow::field("id", arrow::int64())}), 2,
      {*v.Finish(), *id.Finish()});
  MergeInsertParams params;
  params.on = {"id"};
  params.when_matched_update_all = true;
  params.when_not_matched_insert_all = true;
  auto result = MergeInsert(dir_.string(), *arrow::RecordBatchReader::Make({source}), params);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->num_updated_rows, 1u);
  EXPECT_EQ(result->num_inserted_rows, 1u);
  auto ds = *Dataset::Open(dir_.string());
  ScanOptions scan;
  scan.columns = {"id", "v", "s"};
  scan.filter = "id = 6 OR id = 30";
  scan.with_row_id = true;
  auto table = *(*ScanBuilder(ds).Options(scan).ToTable())->CombineChunksToBatch();
  ASSERT_EQ(table->num_rows(), 2);
  for (int64_t i = 0; i < 2; ++i) {
    const int64_t key = std::static_pointer_cast<arrow::Int64Array>(table->column(0))->Value(i);
    const auto& s = static_cast<const arrow::StringArray&>(*table->column(2));
    EXPECT_EQ(std::static_pointer_cast<arrow::Int32Array>(table->column(1))->Value(i), -key);
    if (key == 6) {
      EXPECT_EQ(s.GetString(i), "row6");
      EXPECT_EQ(std::static_pointer_cast<arrow::UInt64Array>(table->column(3))->Value(i), before[6].second);
    } else {
      EXPECT_TRUE(s.IsNull(i));
    }
  }
  // A source column the dataset lacks, or no key column: refused.
  auto alien = arrow::RecordBatch::Make(arrow::schema({arrow::field("id", arrow::int64()),
                                                       arrow::field("zz", arrow::int32())}),
                                        0, {*arrow::MakeEmptyArray(arrow::int64()),
                                            *arrow::MakeEmptyArray(arrow::int32())});
  auto refused = MergeInsert(dir_.string(), *arrow::RecordBatchReader::Make({alien}), params);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("'zz'"), std::string::npos);
  auto keyless = arrow::RecordBatch::Make(arrow::schema({arrow::field("v", arrow::int32())}), 0,
                                          {*arrow::MakeEmptyArray(arrow::int32())});
  refused = MergeInsert(dir_.string(), *arrow::RecordBatchReader::Make({keyless}), params);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("no key column 'id'"), std::string::npos);
  EXPECT_EQ((*Dataset::Open(dir_.string()))->version(), 2u);
}

TEST_F(RowOpsTest, CleanupKeepsLatestAndRemovesOnlyOldFiles) {
  Create();
  ASSERT_TRUE(UpdateRows(dir_.string(), {{"v", "0"}}, "id < 10").ok());  // fragment 0 fully rewritten
  // Every file of the dataset now; what cleanup removes is counted in bytes,
  // the old manifest's included.
  std::map<std::string, uint64_t> sizes;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir_)) {
    if (e.is_regular_file()) sizes[e.path().string()] = e.file_size();
  }
  auto result = CleanupOldVersions(dir_.string(), 0, false);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  uint64_t removed_bytes = 0;
  for (const auto& [path, size] : sizes) {
    if (!std::filesystem::exists(path)) removed_bytes += size;
  }
  EXPECT_EQ(result->bytes_removed, removed_bytes);
  EXPECT_EQ(result->old_versions, 1u);
  EXPECT_EQ(result->data_files, 1u);  // fragment 0's file, only version 1 had it
  EXPECT_EQ(result->transaction_files, 1u);
  auto ds = Dataset::Open(dir_.string());
  ASSERT_TRUE(ds.ok());
  EXPECT_EQ((*ds)->Versions()->size(), 1u);
  EXPECT_EQ(Read().size(), 20u);
  auto again = CleanupOldVersions(dir_.string(), 0, false);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->old_versions, 0u);
  EXPECT_EQ(again->data_files, 0u);
}

}  // namespace
}  // namespace lance
