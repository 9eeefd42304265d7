// Compaction on small datasets written with WriteDataset: the plan's rules,
// the rewrite (rows, order, stable row ids and lineage), the distributed
// form through JSON, the Rewrite and ReserveFragments manifests, refusals,
// and a compaction that loses to a concurrent delete.
#include <gtest/gtest.h>

#include <arrow/api.h>

#include "lance/file_reader.h"

#include <algorithm>
#include <filesystem>
#include <tuple>

#include "lance/compaction.h"
#include "lance/dataset.h"
#include "lance/full_text.h"
#include "lance/index_ops.h"
#include "lance/operations.h"
#include "lance/scanner.h"
#include "lance/status.h"
#include "lance/txn/conflict_resolver.h"
#include "lance/txn/manifest_builder.h"
#include "lance/write.h"

namespace lance {
namespace {

namespace fs = std::filesystem;

std::shared_ptr<arrow::RecordBatchReader> Rows(int64_t start, int64_t n) {
  arrow::Int64Builder id;
  arrow::StringBuilder s;
  for (int64_t i = start; i < start + n; ++i) {
    EXPECT_TRUE(id.Append(i).ok());
    EXPECT_TRUE(s.Append("row" + std::to_string(i)).ok());
  }
  auto schema = arrow::schema({arrow::field("id", arrow::int64()), arrow::field("s", arrow::utf8())});
  auto batch = arrow::RecordBatch::Make(schema, n, {*id.Finish(), *s.Finish()});
  return *arrow::RecordBatchReader::Make({batch}, schema);
}

class CompactionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("lance_compaction_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // One fragment per entry of `sizes`, ids 0.. in order.
  void Build(const std::vector<int64_t>& sizes, bool stable = false) {
    int64_t start = 0;
    for (size_t i = 0; i < sizes.size(); ++i) {
      WriteParams params;
      params.mode = i == 0 ? WriteMode::kCreate : WriteMode::kAppend;
      params.max_rows_per_file = static_cast<uint64_t>(sizes[i]);
      params.enable_stable_row_ids = stable;
      params.data_storage_version = "2.1";
      auto written = WriteDataset(Rows(start, sizes[i]), uri(), params);
      ASSERT_TRUE(written.ok()) << written.status().ToString();
      start += sizes[i];
    }
  }
  void Delete(const std::string& predicate) {
    auto deleted = DeleteRows(uri(), predicate);
    ASSERT_TRUE(deleted.ok()) << deleted.status().ToString();
  }
  std::string uri() const { return dir_.string(); }
  std::shared_ptr<Dataset> Latest() { return *Dataset::Open(uri()); }

  // (id, _rowid) in scan order.
  std::vector<std::pair<int64_t, uint64_t>> Scan() {
    auto table = *ScanBuilder(Latest()).Project({"id"}).WithRowId().ToTable();
    std::vector<std::pair<int64_t, uint64_t>> out;
    auto combined = *table->CombineChunksToBatch();
    auto id = std::static_pointer_cast<arrow::Int64Array>(combined->column(0));
    auto row_id = std::static_pointer_cast<arrow::UInt64Array>(combined->column(1));
    for (int64_t i = 0; i < combined->num_rows(); ++i) out.emplace_back(id->Value(i), row_id->Value(i));
    return out;
  }

  static std::vector<std::vector<uint64_t>> Tasks(const CompactionPlan& plan) {
    std::vector<std::vector<uint64_t>> out;
    for (const auto& t : plan.tasks) out.push_back(t.fragment_ids);
    return out;
  }

  fs::path dir_;
};

TEST_F(CompactionTest, PlanRules) {
  // Small neighbours merge, a large fragment ends the run, a lone small one
  // is dropped, a large one with 30% deleted is compacted on its own.
  Build({40, 40, 200, 30, 200, 200});
  Delete("id >= 510 and id < 570");
  CompactionOptions options;
  options.target_rows_per_fragment = 100;
  auto plan = PlanCompaction(uri(), options);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->read_version, 7u);
  EXPECT_EQ(Tasks(*plan), (std::vector<std::vector<uint64_t>>{{0, 1}, {5}}));
  options.materialize_deletions = false;
  EXPECT_EQ(Tasks(*PlanCompaction(uri(), options)), (std::vector<std::vector<uint64_t>>{{0, 1}}));
  options.materialize_deletions = true;
  options.excluded_fragment_ids = {1};
  EXPECT_EQ(Tasks(*PlanCompaction(uri(), options)), (std::vector<std::vector<uint64_t>>{{5}}));
}

TEST_F(CompactionTest, PlanSplitsBySizeAndBudgets) {
  Build({40, 40, 40, 40, 40, 40});
  CompactionOptions options;
  options.target_rows_per_fragment = 100;
  EXPECT_EQ(Tasks(*PlanCompaction(uri(), options)), (std::vector<std::vector<uint64_t>>{{0, 1, 2}, {3, 4, 5}}));
  options.max_source_fragments = 5;
  EXPECT_EQ(Tasks(*PlanCompaction(uri(), options)), (std::vector<std::vector<uint64_t>>{{0, 1, 2}}));
  options.max_source_fragments = 0;
  auto refused = PlanCompaction(uri(), options);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("max_source_fragments"), std::string::npos);
}

TEST_F(CompactionTest, RewritesLiveRowsInOrderWithStableRowIds) {
  Build({30, 30, 30, 30}, /*stable=*/true);
  Delete("id % 4 = 1");
  const auto before = Scan();
  CompactionOptions options;
  options.target_rows_per_fragment = 50;
  options.batch_size = 7;  // batches smaller than fragments
  auto result = CompactFiles(uri(), options);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_TRUE(result->committed);
  EXPECT_EQ(result->metrics.fragments_removed, 4u);
  EXPECT_EQ(result->metrics.files_removed, 8u);  // 4 data + 4 deletion files
  auto ds = Latest();
  EXPECT_EQ(ds->version(), result->version);
  // 90 live rows hold one target's worth (50): one fragment of all of
  // them, as pylance 14 spreads rows, with the reserved id.
  ASSERT_EQ(ds->manifest().fragments.size(), 1u);
  EXPECT_EQ(ds->manifest().fragments[0].id, 4u);
  EXPECT_EQ(ds->manifest().fragments[0].physical_rows, 90u);
  EXPECT_FALSE(ds->manifest().fragments[0].deletion_file);
  EXPECT_EQ(Scan(), before);  // same rows, same order, same row ids
  // Lineage kept: every row was created in version 1..4 (one per append).
  auto created = *ds->RowCreatedAtVersions(ds->manifest().fragments[0]);
  ASSERT_TRUE(created);
  EXPECT_EQ((*created)[0], 1u);
  EXPECT_EQ(created->back(), 4u);  // its last rows come from the fourth append
  auto take = TakeRows(ds, {before[10].second}, {"id"});
  ASSERT_TRUE(take.ok()) << take.status().ToString();
  EXPECT_EQ(std::static_pointer_cast<arrow::Int64Array>((*take)->column(0)->chunk(0))->Value(0), before[10].first);
  // Version before the Rewrite is the reservation.
  auto versions = *ds->Versions();
  ASSERT_GE(versions.size(), 2u);
  EXPECT_EQ(versions[versions.size() - 2].operation, "ReserveFragments");
  EXPECT_EQ(versions.back().operation, "Rewrite");
}

TEST_F(CompactionTest, SpreadsRowsEvenlyOverFiles) {
  Build({1000});
  Delete("id % 5 = 0");
  CompactionOptions options;
  options.target_rows_per_fragment = 300;
  options.max_rows_per_group = 64;
  auto result = CompactFiles(uri(), options);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  // 800 live rows, two targets' worth: two files of 400, not 300 + 300 + 200.
  auto ds = Latest();
  ASSERT_EQ(ds->manifest().fragments.size(), 2u);
  EXPECT_EQ(ds->manifest().fragments[0].physical_rows, 400u);
  EXPECT_EQ(ds->manifest().fragments[1].physical_rows, 400u);
  EXPECT_EQ(*ScanBuilder(ds).CountRows(), 800);
}

TEST_F(CompactionTest, ParallelTasksKeepThePlansOrder) {
  Build({40, 40, 40, 40, 40, 40});
  const auto before = Scan();
  CompactionOptions options;
  options.target_rows_per_fragment = 100;
  options.num_threads = 2;
  auto result = CompactFiles(uri(), options);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  auto ds = Latest();
  ASSERT_EQ(ds->manifest().fragments.size(), 2u);
  EXPECT_EQ(ds->manifest().fragments[0].id, 6u);
  EXPECT_EQ(ds->manifest().fragments[1].id, 7u);
  auto after = Scan();
  ASSERT_EQ(after.size(), before.size());
  for (size_t i = 0; i < after.size(); ++i) {
    EXPECT_EQ(after[i].first, before[i].first);
    // New addresses: the first 120 rows in fragment 6, the rest in 7.
    EXPECT_EQ(after[i].second >> 32, i < 120 ? 6u : 7u);
  }
}

TEST_F(CompactionTest, ScanOfChosenFragments) {
  Build({10, 10, 10});
  ScanOptions scan;
  scan.fragment_ids = std::vector<uint64_t>{2, 0};
  auto table = ScanBuilder(Latest()).Options(scan).Project({"id"}).ToTable();
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  auto batch = *(*table)->CombineChunksToBatch();
  auto id = std::static_pointer_cast<arrow::Int64Array>(batch->column(0));
  ASSERT_EQ(id->length(), 20);
  EXPECT_EQ(id->Value(0), 20);
  EXPECT_EQ(id->Value(10), 0);
  EXPECT_EQ(*ScanBuilder(Latest()).Options(scan).CountRows(), 20);
  scan.fragment_ids = std::vector<uint64_t>{7};
  EXPECT_TRUE(ScanBuilder(Latest()).Options(scan).ToReader().status().IsKeyError());
}

TEST_F(CompactionTest, DistributedThroughJson) {
  Build({20, 20, 20, 20, 20, 20});
  Delete("id = 3");
  const auto before = Scan();
  CompactionOptions options;
  options.target_rows_per_fragment = 40;
  auto plan = PlanCompaction(uri(), options);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  // 19 + 20 + 20 live rows reach the target and so do the other 60.
  ASSERT_EQ(plan->tasks.size(), 2u);
  std::vector<RewriteResult> results;
  for (const auto& task : plan->tasks) {
    CompactionOptions worker;
    auto parsed = CompactionTaskFromJson(CompactionTaskToJson(task, options), &worker);
    ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
    EXPECT_EQ(worker.target_rows_per_fragment, 40u);
    auto r = ExecuteCompactionTask(uri(), *parsed, worker);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    auto back = RewriteResultFromJson(RewriteResultToJson(*r));
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ(back->new_fragments.size(), r->new_fragments.size());
    results.push_back(std::move(*back));
  }
  EXPECT_EQ(Latest()->version(), plan->read_version);  // executing commits nothing
  auto committed = CommitCompaction(uri(), results);
  ASSERT_TRUE(committed.ok()) << committed.status().ToString();
  EXPECT_EQ(committed->metrics.fragments_added, 2u);
  EXPECT_EQ(Latest()->manifest().fragments.size(), 2u);
  // Without stable row ids the row ids are new addresses; the rows are the same.
  auto after = Scan();
  ASSERT_EQ(after.size(), before.size());
  for (size_t i = 0; i < after.size(); ++i) EXPECT_EQ(after[i].first, before[i].first);
}

TEST_F(CompactionTest, ConcurrentDeleteOfARewrittenFragmentIsRetryable) {
  Build({20, 20, 20});
  auto plan = PlanCompaction(uri());
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  ASSERT_EQ(plan->tasks.size(), 1u);
  auto result = ExecuteCompactionTask(uri(), plan->tasks[0]);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  Delete("id = 25");
  auto committed = CommitCompaction(uri(), {*result});
  ASSERT_FALSE(committed.ok());
  EXPECT_EQ(GetErrorKind(committed.status()), ErrorKind::kRetryableCommitConflict)
      << committed.status().ToString();
  // CompactFiles plans again on the new latest.
  auto again = CompactFiles(uri());
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(*ScanBuilder(Latest()).CountRows(), 59);
  EXPECT_EQ(Latest()->manifest().fragments.size(), 1u);
}

TEST_F(CompactionTest, CompactFilesRunsAgainAfterLosingToADelete) {
  Build({20, 20, 20});
  bool deleted = false;
  CompactionOptions options;
  options.batch_size = 5;
  // A delete of a row being compacted commits while the first run rewrites.
  options.progress = [&](const Progress&) {
    if (deleted) return;
    deleted = true;
    ASSERT_TRUE(DeleteRows(uri(), "id = 33").ok());
  };
  auto result = CompactFiles(uri(), options);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_TRUE(deleted);
  auto ds = Latest();
  EXPECT_EQ(*ScanBuilder(ds).CountRows(), 59);
  ASSERT_EQ(ds->manifest().fragments.size(), 1u);
  // The first run's file is gone: data/ holds the three old files (older
  // versions use them until a cleanup) and the new fragment's.
  size_t files = 0;
  for (const auto& entry : fs::directory_iterator(dir_ / "data")) files += entry.is_regular_file() ? 1 : 0;
  EXPECT_EQ(files, 4u);
}

// compaction_mode force/try_binary_copy: pages copied where the task has
// no deletions (the new file holds the old files' pages), the distributed
// form carrying it; refused under force_binary_copy where a task has them.
TEST_F(CompactionTest, BinaryCopy) {
  Build({20, 20, 20, 20});
  Delete("id = 65");
  const auto before = Scan();
  CompactionOptions options;
  options.compaction_mode = CompactionMode::kForceBinaryCopy;
  options.target_rows_per_fragment = 1000;
  auto refused = CompactFiles(uri(), options);
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(refused.status().IsNotImplemented());
  EXPECT_NE(refused.status().message().find("binary copy is not supported"), std::string::npos)
      << refused.status().ToString();
  EXPECT_EQ(Latest()->version(), 5u);

  // Without fragment 3 (the deletion) the task is copied.
  options.excluded_fragment_ids = {3};
  auto plan = PlanCompaction(uri(), options);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  ASSERT_EQ(Tasks(*plan), (std::vector<std::vector<uint64_t>>{{0, 1, 2}}));
  CompactionOptions worker;
  auto task = CompactionTaskFromJson(CompactionTaskToJson(plan->tasks[0], options), &worker);
  ASSERT_TRUE(task.ok()) << task.status().ToString();
  EXPECT_EQ(worker.compaction_mode, CompactionMode::kForceBinaryCopy);
  auto r = ExecuteCompactionTask(uri(), *task, worker);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->binary_copy);
  ASSERT_EQ(r->new_fragments.size(), 1u);
  auto back = RewriteResultFromJson(RewriteResultToJson(*r));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_TRUE(back->binary_copy);
  auto committed = CommitCompaction(uri(), {*back}, worker);
  ASSERT_TRUE(committed.ok()) << committed.status().ToString();
  auto ds = Latest();
  ASSERT_EQ(ds->manifest().fragments.size(), 2u);
  EXPECT_GT(ds->manifest().fragments[1].files[0].file_size_bytes, 0u);  // in the manifest
  auto reader = ds->OpenDataFileReader(ds->manifest().fragments[1].files[0]);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  EXPECT_EQ((*reader)->num_rows(), 60u);
  // One page per column per old file: copied, not re-encoded into one.
  for (const auto& column : (*reader)->layout().columns) EXPECT_EQ(column.pages.size(), 3u);
  auto after = Scan();
  ASSERT_EQ(after.size(), before.size());
  std::vector<int64_t> ids_before, ids_after;
  for (const auto& [id, row_id] : before) ids_before.push_back(id);
  for (const auto& [id, row_id] : after) ids_after.push_back(id);
  std::sort(ids_after.begin(), ids_after.end());
  EXPECT_EQ(ids_after, ids_before);

  // try_binary_copy re-encodes the task with the deletion.
  options = {};
  options.compaction_mode = CompactionMode::kTryBinaryCopy;
  options.target_rows_per_fragment = 1000;
  auto tried = CompactFiles(uri(), options);
  ASSERT_TRUE(tried.ok()) << tried.status().ToString();
  EXPECT_EQ(Latest()->manifest().fragments.size(), 1u);
  EXPECT_EQ(*ScanBuilder(Latest()).CountRows(), 79);
}

TEST_F(CompactionTest, RefusedOptions) {
  Build({20, 20});
  CompactionOptions options;
  options.data_storage_version = "legacy";  // other v2.x versions are written (bit 256)
  auto legacy = CompactFiles(uri(), options);
  EXPECT_TRUE(legacy.status().IsNotImplemented()) << legacy.status().ToString();
  EXPECT_EQ(Latest()->version(), 2u);
}

// A deferred remap records the move in a fragment reuse index (even with no
// other index, as pylance).
TEST_F(CompactionTest, DeferredRemapWritesTheFragmentReuseIndex) {
  Build({20, 20});
  CompactionOptions options;
  options.defer_index_remap = true;
  auto done = CompactFiles(uri(), options);
  ASSERT_TRUE(done.ok()) << done.status().ToString();
  auto latest = Latest();
  ASSERT_EQ(latest->manifest().fragments.size(), 1u);
  ASSERT_EQ(latest->indices().size(), 1u);
  EXPECT_EQ(latest->indices()[0].name, "__lance_frag_reuse");
  EXPECT_EQ(latest->indices()[0].fragment_ids, std::vector<uint32_t>{static_cast<uint32_t>(latest->manifest().fragments[0].id)});
  EXPECT_EQ(*ScanBuilder(latest).CountRows(), 40);
}

// An INVERTED index over the compacted fragments is remapped: a new one
// whose documents are the live rows at their new addresses (the deleted
// rows' tokens gone), answering full-text queries through the index.
TEST_F(CompactionTest, RemapsInvertedIndex) {
  Build({20, 20});
  InvertedIndexParams params;
  params.with_position = true;
  auto indexed = CreateIndexBuilder(Latest(), "s", "INVERTED").InvertedParams(params).Commit();
  ASSERT_TRUE(indexed.ok()) << indexed.status().ToString();
  const auto old_uuid = (*indexed)->indices().at(0).uuid;
  Delete("id % 3 = 0");
  auto done = CompactFiles(uri(), CompactionOptions{});
  ASSERT_TRUE(done.ok()) << done.status().ToString();
  auto latest = Latest();
  ASSERT_EQ(latest->manifest().fragments.size(), 1u);
  const uint64_t fragment = latest->manifest().fragments[0].id;
  ASSERT_EQ(latest->indices().size(), 1u);
  EXPECT_NE(latest->indices()[0].uuid, old_uuid);
  EXPECT_EQ(latest->indices()[0].fragment_ids, std::vector<uint32_t>{static_cast<uint32_t>(fragment)});
  FullTextSearchOptions options;
  options.projection = {"id"};
  options.with_row_id = true;
  auto hits = FullTextSearch(latest, FullTextQuery::Match("row3 row4 row38 row39", "s"), options);
  ASSERT_TRUE(hits.ok()) << hits.status().ToString();
  auto batch = *(*hits)->CombineChunksToBatch();
  std::vector<std::pair<int64_t, uint64_t>> got;
  for (int64_t i = 0; i < batch->num_rows(); ++i) {
    got.emplace_back(std::static_pointer_cast<arrow::Int64Array>(batch->GetColumnByName("id"))->Value(i),
                     std::static_pointer_cast<arrow::UInt64Array>(batch->GetColumnByName("_rowid"))->Value(i));
  }
  std::sort(got.begin(), got.end());
  // Live rows before id 4: 1 and 2; before 38: 25 (0..37 less 13 multiples of 3).
  const std::vector<std::pair<int64_t, uint64_t>> want = {{4, (fragment << 32) | 2}, {38, (fragment << 32) | 25}};
  EXPECT_EQ(got, want);
  auto phrase = FullTextSearch(latest, FullTextQuery::Phrase("row38", "s"), options);
  ASSERT_TRUE(phrase.ok()) << phrase.status().ToString();
  EXPECT_EQ((*phrase)->num_rows(), 1);
}

// A deferred remap leaves the INVERTED index as it was: full-text search
// maps its documents' old addresses through the fragment reuse index (the
// rows deleted before the compaction gone) and scores with the index's own
// statistics, those rows still counted, as pylance 14 does.
TEST_F(CompactionTest, DeferredRemapInvertedIndexAnswersThroughTheFragmentReuseIndex) {
  Build({20, 20});
  InvertedIndexParams params;
  params.with_position = true;
  auto indexed = CreateIndexBuilder(Latest(), "s", "INVERTED").InvertedParams(params).Commit();
  ASSERT_TRUE(indexed.ok()) << indexed.status().ToString();
  const auto old_uuid = (*indexed)->indices().at(0).uuid;
  Delete("id % 3 = 0");
  FullTextSearchOptions options;
  options.projection = {"id"};
  options.with_row_id = true;
  // (id, _rowid, _score) sorted by id.
  auto search = [&](const FullTextQuery& query) {
    auto hits = FullTextSearch(Latest(), query, options);
    EXPECT_TRUE(hits.ok()) << hits.status().ToString();
    std::vector<std::tuple<int64_t, uint64_t, float>> out;
    if (!hits.ok()) return out;
    auto batch = *(*hits)->CombineChunksToBatch();
    auto id = std::static_pointer_cast<arrow::Int64Array>(batch->GetColumnByName("id"));
    auto row = std::static_pointer_cast<arrow::UInt64Array>(batch->GetColumnByName("_rowid"));
    auto score = std::static_pointer_cast<arrow::FloatArray>(batch->GetColumnByName("_score"));
    for (int64_t i = 0; i < batch->num_rows(); ++i) out.emplace_back(id->Value(i), row->Value(i), score->Value(i));
    std::sort(out.begin(), out.end());
    return out;
  };
  const auto match = FullTextQuery::Match("row3 row4 row38 row39", "s");
  const auto before = search(match);
  CompactionOptions compact;
  compact.defer_index_remap = true;
  auto done = CompactFiles(uri(), compact);
  ASSERT_TRUE(done.ok()) << done.status().ToString();
  auto latest = Latest();
  ASSERT_EQ(latest->manifest().fragments.size(), 1u);
  const uint64_t fragment = latest->manifest().fragments[0].id;
  // The INVERTED index untouched, beside __lance_frag_reuse.
  ASSERT_EQ(latest->indices().size(), 2u);
  EXPECT_TRUE(std::any_of(latest->indices().begin(), latest->indices().end(),
                          [&](const IndexMetadata& m) { return m.uuid == old_uuid; }));
  const auto after = search(match);
  // Live rows before id 4: 1 and 2; before 38: 25 (0..37 less 13 multiples of 3).
  ASSERT_EQ(after.size(), 2u);
  ASSERT_EQ(before.size(), 2u);
  EXPECT_EQ(std::get<1>(after[0]), (fragment << 32) | 2);
  EXPECT_EQ(std::get<1>(after[1]), (fragment << 32) | 25);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(std::get<0>(after[i]), std::get<0>(before[i]));
    EXPECT_EQ(std::get<2>(after[i]), std::get<2>(before[i]));  // the same statistics
  }
  EXPECT_EQ(search(FullTextQuery::Phrase("row38", "s")).size(), 1u);
  EXPECT_TRUE(search(FullTextQuery::Phrase("row39", "s")).empty());  // deleted before the compaction
}

// After a deferred remap a compaction without it refuses a BTREE still on
// the old row addresses (pylance 14 would lose those rows); optimize-indices
// merges them through the fragment reuse index, and then it compacts, the
// filters answering as a full scan.
TEST_F(CompactionTest, CompactionAfterDeferredRemapNeedsTheBTreeCaughtUp) {
  Build({20, 20});
  auto indexed = CreateIndexBuilder(Latest(), "id", "BTREE").Commit();
  ASSERT_TRUE(indexed.ok()) << indexed.status().ToString();
  Delete("id % 3 = 0");
  CompactionOptions deferred;
  deferred.defer_index_remap = true;
  ASSERT_TRUE(CompactFiles(uri(), deferred).ok());
  WriteParams append;
  append.mode = WriteMode::kAppend;
  append.data_storage_version = "2.1";
  ASSERT_TRUE(WriteDataset(Rows(40, 10), uri(), append).ok());
  Delete("id % 7 = 1");
  CompactionOptions remap;
  remap.materialize_deletions_threshold = 0.01;
  const uint64_t version = Latest()->version();
  auto refused = CompactFiles(uri(), remap);
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(refused.status().IsNotImplemented());
  EXPECT_NE(refused.status().message().find("index 'id_idx'"), std::string::npos) << refused.status().ToString();
  EXPECT_EQ(Latest()->version(), version);

  auto optimized = OptimizeIndicesBuilder(Latest()).Commit();
  ASSERT_TRUE(optimized.ok()) << optimized.status().ToString();
  auto count = [&](bool use_index) {
    ScanOptions options;
    options.filter = "id < 30 OR id > 44";
    options.use_scalar_index = use_index;
    return *ScanBuilder(Latest()).Options(options).CountRows();
  };
  EXPECT_EQ(count(true), count(false));
  auto done = CompactFiles(uri(), remap);
  ASSERT_TRUE(done.ok()) << done.status().ToString();
  EXPECT_EQ(Latest()->manifest().fragments.size(), 1u);
  EXPECT_EQ(count(true), count(false));
  EXPECT_EQ(count(true), 16 + 5);  // 0..29 less 10 multiples of 3 and 1, 8, 22, 29; 45..49
}

// The manifest a Rewrite builds: new fragments in the old ones' place,
// a vanished old fragment is a conflict, index bitmaps follow with stable
// row ids and an index over rewritten rows is refused without them.
TEST(RewriteManifest, SplicesAndChecks) {
  table::ManifestFile base;
  base.manifest.version = 5;
  base.manifest.max_fragment_id = 3;
  for (uint64_t id = 0; id < 4; ++id) {
    Fragment f;
    f.id = id;
    f.physical_rows = 10;
    base.manifest.fragments.push_back(f);
  }
  txn::Rewrite op;
  txn::RewriteGroup g;
  g.old_fragments = {base.manifest.fragments[1], base.manifest.fragments[2]};
  Fragment fresh;
  fresh.id = 9;
  fresh.physical_rows = 20;
  g.new_fragments = {fresh};
  op.groups.push_back(g);
  txn::BuildInputs in;
  in.base = &base;
  auto built = txn::BuildManifest(txn::Transaction::Make(5, op), in, {});
  ASSERT_TRUE(built.ok()) << built.status().ToString();
  std::vector<uint64_t> ids;
  for (const auto& f : built->manifest.fragments) ids.push_back(f.id);
  EXPECT_EQ(ids, (std::vector<uint64_t>{0, 3, 9}));
  EXPECT_EQ(built->manifest.max_fragment_id, 9u);
  EXPECT_EQ(std::string(txn::OperationName(op)), "Rewrite");

  // Old fragments that are not next to each other: removed, the new appended.
  txn::Rewrite apart = op;
  apart.groups[0].old_fragments = {base.manifest.fragments[0], base.manifest.fragments[2]};
  auto spread = txn::BuildManifest(txn::Transaction::Make(5, apart), in, {});
  ASSERT_TRUE(spread.ok()) << spread.status().ToString();
  ids.clear();
  for (const auto& f : spread->manifest.fragments) ids.push_back(f.id);
  EXPECT_EQ(ids, (std::vector<uint64_t>{1, 3, 9}));

  IndexMetadata index;
  index.name = "id_idx";
  index.fragment_ids = std::vector<uint32_t>{0, 1, 2};
  base.indices = {index};
  auto refused = txn::BuildManifest(txn::Transaction::Make(5, op), in, {});
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(refused.status().IsNotImplemented());
  EXPECT_NE(refused.status().message().find("id_idx"), std::string::npos);

  // Rewritten: the entry takes the new uuid and files and its bitmap swaps
  // the group's old fragments for the new one. A zone map, never remapped,
  // keeps its bitmap without stable row ids.
  index.index_details_type_url = "/lance.table.BTreeIndexDetails";
  index.uuid[0] = 1;
  IndexMetadata zones;
  zones.name = "z";
  zones.uuid[0] = 2;
  zones.index_details_type_url = "/lance.table.ZoneMapIndexDetails";
  zones.fragment_ids = std::vector<uint32_t>{0, 1, 2};
  base.indices = {index, zones};
  txn::Rewrite remapped = op;
  txn::RewrittenIndex ri;
  ri.old_uuid = index.uuid;
  ri.new_uuid[0] = 3;
  ri.details_type_url = index.index_details_type_url;
  ri.files = {{"page_data.lance", 10}, {"page_lookup.lance", 5}};
  remapped.rewritten_indices = {ri};
  auto swapped = txn::BuildManifest(txn::Transaction::Make(5, remapped), in, {});
  ASSERT_TRUE(swapped.ok()) << swapped.status().ToString();
  ASSERT_EQ(swapped->indices.size(), 2u);
  EXPECT_EQ(swapped->indices[0].uuid, ri.new_uuid);
  EXPECT_EQ(swapped->indices[0].fragment_ids, (std::vector<uint32_t>{0, 9}));
  ASSERT_EQ(swapped->indices[0].files.size(), 2u);
  EXPECT_EQ(swapped->indices[0].files[1].path, "page_lookup.lance");
  EXPECT_EQ(swapped->indices[1].fragment_ids, (std::vector<uint32_t>{0, 1, 2}));
  // A group half covered by the index is a bad plan.
  base.indices[0].fragment_ids = std::vector<uint32_t>{0, 1};
  auto split = txn::BuildManifest(txn::Transaction::Make(5, remapped), in, {});
  ASSERT_FALSE(split.ok());
  EXPECT_NE(split.status().message().find("split of indexed and non-indexed"), std::string::npos);

  txn::ReserveFragments reserve{4};
  auto reserved = txn::BuildManifest(txn::Transaction::Make(5, reserve), in, {});
  ASSERT_TRUE(reserved.ok());
  EXPECT_EQ(reserved->manifest.max_fragment_id, 7u);
  EXPECT_EQ(reserved->manifest.fragments.size(), 4u);

  base.manifest.fragments.erase(base.manifest.fragments.begin() + 2);
  base.indices.clear();
  auto gone = txn::BuildManifest(txn::Transaction::Make(5, op), in, {});
  ASSERT_FALSE(gone.ok());
  EXPECT_TRUE(txn::IsCommitConflict(gone.status())) << gone.status().ToString();
}

TEST(RewriteFacts, OurRewriteAgainstTheirDelete) {
  txn::Rewrite op;
  txn::RewriteGroup g;
  Fragment f;
  f.id = 4;
  g.old_fragments = {f};
  op.groups.push_back(g);
  auto mine = txn::FactsOf(op);
  EXPECT_EQ(mine.kind, txn::OperationKind::kRewrite);
  EXPECT_EQ(mine.rewritten_fragment_ids, (std::vector<uint64_t>{4}));
  txn::OperationFacts theirs;
  theirs.kind = txn::OperationKind::kDelete;
  theirs.updated_fragments = {f};
  std::set<uint64_t> rebase;
  EXPECT_EQ(txn::CheckConflict(mine, theirs, {}, false, &rebase), txn::Verdict::kRetryable);
  theirs.updated_fragments[0].id = 5;
  EXPECT_EQ(txn::CheckConflict(mine, theirs, {}, false, &rebase), txn::Verdict::kCompatible);
  EXPECT_EQ(txn::FactsOf(txn::ReserveFragments{2}).kind, txn::OperationKind::kReserveFragments);
}

}  // namespace
}  // namespace lance
