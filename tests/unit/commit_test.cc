// The commit machinery on hand-built fragments: transactions, manifests of
// each operation, naming, flags, the atomic put, and racing writers.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <thread>

#include "lance/io/object_store.h"
#include "lance/table/feature_flags.h"
#include "lance/table/manifest_file.h"
#include "lance/table/manifest_location.h"
#include "lance/table/row_id_sequence.h"
#include "lance/transaction.pb.h"
#include "lance/txn/commit.h"
#include "lance/txn/transaction.h"

namespace lance {
namespace {

namespace fs = std::filesystem;

class CommitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("lance_commit_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    store_ = *io::ObjectStore::Open(dir_.string());
  }
  void TearDown() override { fs::remove_all(dir_); }

  static Schema TwoColumns() {
    Schema s;
    Field a;
    a.name = "a";
    a.id = 0;
    a.logical_type = "int64";
    Field b = a;
    b.name = "b";
    b.id = 1;
    b.logical_type = "string";
    s.fields = {a, b};
    s.metadata["origin"] = "test";
    return s;
  }

  static Fragment HandMade(const std::string& name, uint64_t rows) {
    Fragment f;
    DataFile file;
    file.path = name + ".lance";
    file.fields = {0, 1};
    file.column_indices = {0, 1};
    file.file_major_version = 2;
    file.file_minor_version = 2;  // the default data storage version: no mixed versions (bit 256)
    file.file_size_bytes = 100;
    f.files.push_back(file);
    f.physical_rows = rows;
    return f;
  }

  Result<txn::CommitResult> Create(std::vector<Fragment> frags, txn::CommitOptions options = {}) {
    return txn::Commit(*store_, txn::Transaction::Make(0, txn::Overwrite{std::move(frags), TwoColumns(), {}}),
                       options);
  }

  table::ManifestFile Load(uint64_t version) {
    auto loc = table::FindManifest(*store_, version);
    EXPECT_TRUE(loc.ok()) << loc.status().ToString();
    auto bytes = store_->ReadAll(loc->path);
    auto mf = table::ParseManifestFile(*bytes, loc->path);
    EXPECT_TRUE(mf.ok()) << mf.status().ToString();
    return *mf;
  }

  fs::path dir_;
  std::shared_ptr<io::ObjectStore> store_;
};

TEST_F(CommitTest, TransactionSerializesAsTheProtoSays) {
  Fragment f = HandMade("x", 7);
  f.id = 3;
  auto t = txn::Transaction::Make(4, txn::Delete{{f}, {5, 6}, "a > 1"});
  t.properties["k"] = "v";
  EXPECT_EQ(t.uuid.size(), 36u);
  EXPECT_EQ(t.uuid[14], '4');
  EXPECT_EQ(t.FileName(), "4-" + t.uuid + ".txn");
  pb::table::Transaction proto;
  ASSERT_TRUE(proto.ParseFromString(t.Serialize()));
  EXPECT_EQ(proto.read_version(), 4u);
  EXPECT_EQ(proto.uuid(), t.uuid);
  ASSERT_TRUE(proto.has_delete_());
  EXPECT_EQ(proto.delete_().predicate(), "a > 1");
  ASSERT_EQ(proto.delete_().updated_fragments_size(), 1);
  EXPECT_EQ(proto.delete_().updated_fragments(0).id(), 3u);
  EXPECT_EQ(proto.delete_().deleted_fragment_ids_size(), 2);
  auto summary = txn::ParseTransaction(t.Serialize(), "t");
  ASSERT_TRUE(summary.ok());
  EXPECT_EQ(summary->operation, "Delete");
  EXPECT_EQ(summary->properties.at("k"), "v");

  auto o = txn::Transaction::Make(0, txn::Overwrite{{HandMade("y", 1)}, TwoColumns(), {{"c", "d"}}});
  ASSERT_TRUE(proto.ParseFromString(o.Serialize()));
  ASSERT_TRUE(proto.has_overwrite());
  EXPECT_EQ(proto.overwrite().schema_size(), 2);
  EXPECT_EQ(proto.overwrite().fragments(0).id(), 0u);  // unassigned until the commit
  EXPECT_EQ(proto.overwrite().config_upsert_values().at("c"), "d");
  EXPECT_TRUE(proto.overwrite().schema_metadata().empty());
}

TEST_F(CommitTest, CreateWritesVersionOneWithInlineAndFileTransaction) {
  auto r = Create({HandMade("f0", 10), HandMade("f1", 5)});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->version, 1u);
  EXPECT_EQ(r->manifest_path, "_versions/18446744073709551614.manifest");  // V2 naming by default
  auto mf = Load(1);
  const Manifest& m = mf.manifest;
  ASSERT_EQ(m.fragments.size(), 2u);
  EXPECT_EQ(m.fragments[0].id, 0u);
  EXPECT_EQ(m.fragments[1].id, 1u);
  EXPECT_EQ(m.max_fragment_id, 1u);
  EXPECT_EQ(m.writer_version->library, "lance-cpp");
  EXPECT_EQ(m.data_storage_version, "2.2");
  EXPECT_EQ(m.schema.metadata.at("origin"), "test");
  EXPECT_EQ(m.reader_feature_flags, 0u);
  EXPECT_EQ(m.writer_feature_flags, 0u);
  EXPECT_TRUE(m.config.empty());
  EXPECT_TRUE(m.timestamp_nanos.has_value());
  ASSERT_TRUE(mf.transaction_bytes.has_value());
  auto on_disk = store_->ReadAll("_transactions/" + m.transaction_file);
  ASSERT_TRUE(on_disk.ok()) << on_disk.status().ToString();
  EXPECT_EQ(*on_disk, *mf.transaction_bytes);
  EXPECT_TRUE(m.transaction_file.starts_with("0-"));
  // A second create loses: the dataset exists.
  auto again = Create({HandMade("g", 1)});
  EXPECT_FALSE(again.ok());
}

TEST_F(CommitTest, V1NamingIsKeptByLaterCommits) {
  txn::CommitOptions v1;
  v1.new_dataset_naming = table::ManifestNamingScheme::kV1;
  ASSERT_TRUE(Create({HandMade("f0", 10)}, v1).ok());
  auto r = txn::Commit(*store_, txn::Transaction::Make(1, txn::Append{{HandMade("f1", 3)}}));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->manifest_path, "_versions/2.manifest");
  EXPECT_TRUE(fs::exists(dir_ / "_versions/1.manifest"));
}

TEST_F(CommitTest, AppendAssignsIdsAndStableRowIds) {
  txn::CommitOptions options;
  options.enable_stable_row_ids = true;
  ASSERT_TRUE(Create({HandMade("f0", 10)}, options).ok());
  auto r = txn::Commit(*store_, txn::Transaction::Make(1, txn::Append{{HandMade("f1", 4), HandMade("f2", 6)}}));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const Manifest& m = Load(2).manifest;
  ASSERT_EQ(m.fragments.size(), 3u);
  EXPECT_EQ(m.fragments[2].id, 2u);
  EXPECT_EQ(m.next_row_id, 20u);
  EXPECT_EQ(m.reader_feature_flags & table::kFlagStableRowIds, table::kFlagStableRowIds);
  auto ids = table::RowIdSequence::Parse(*m.fragments[1].row_ids.inline_bytes, "f1");
  ASSERT_TRUE(ids.ok());
  EXPECT_EQ(ids->ToVector(), (std::vector<uint64_t>{10, 11, 12, 13}));
  auto created = table::RowVersionSequence::Parse(*m.fragments[1].created_at_versions.inline_bytes, "f1");
  ASSERT_TRUE(created.ok());
  EXPECT_EQ(created->ToVector(), (std::vector<uint64_t>{2, 2, 2, 2}));
}

// An Update's new fragments carry only their rewritten rows' ids, as the
// reference's transaction does; the commit looks up each row's created_at
// in the fragment it came from, and gives rows it assigns ids to (a
// merge-insert's inserts) its own version.
TEST_F(CommitTest, UpdateLooksUpCreatedAtOfRewrittenRows) {
  txn::CommitOptions options;
  options.enable_stable_row_ids = true;
  ASSERT_TRUE(Create({HandMade("f0", 4)}, options).ok());  // ids 0..3, version 1
  ASSERT_TRUE(txn::Commit(*store_, txn::Transaction::Make(1, txn::Append{{HandMade("f1", 3)}})).ok());  // 4..6, v2
  Fragment rewritten = HandMade("g", 4);
  rewritten.row_ids.inline_bytes = table::RowIdSequence::FromValues({2, 5, 6}).Serialize();
  txn::Update update;
  update.removed_fragment_ids = {1};
  update.updated_fragments = {Load(2).manifest.fragments[0]};
  update.new_fragments = {rewritten};
  ASSERT_TRUE(update.new_fragments[0].row_ids.present());
  const std::string txn_bytes = txn::Transaction::Make(2, update).Serialize();
  auto r = txn::Commit(*store_, txn::Transaction::Make(2, std::move(update)));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const Manifest& m = Load(3).manifest;
  const Fragment& g = m.fragments.back();
  auto ids = table::RowIdSequence::Parse(*g.row_ids.inline_bytes, "g");
  ASSERT_TRUE(ids.ok());
  EXPECT_EQ(ids->ToVector(), (std::vector<uint64_t>{2, 5, 6, 7}));
  auto created = table::RowVersionSequence::Parse(*g.created_at_versions.inline_bytes, "g");
  ASSERT_TRUE(created.ok());
  EXPECT_EQ(created->ToVector(), (std::vector<uint64_t>{1, 2, 2, 3}));
  auto updated = table::RowVersionSequence::Parse(*g.last_updated_at_versions.inline_bytes, "g");
  ASSERT_TRUE(updated.ok());
  EXPECT_EQ(updated->ToVector(), (std::vector<uint64_t>{3, 3, 3, 3}));
  // The transaction records no created_at of its own.
  pb::table::Transaction proto;
  ASSERT_TRUE(proto.ParseFromString(txn_bytes));
  ASSERT_EQ(proto.update().new_fragments_size(), 1);
  EXPECT_FALSE(proto.update().new_fragments(0).has_inline_created_at_versions());

  // Rewritten again: g's ids are no Range, so they are looked up one by one.
  ASSERT_NE(ids->segments()[0].kind, table::U64Segment::Kind::kRange);
  Fragment again = HandMade("h", 2);
  again.row_ids.inline_bytes = table::RowIdSequence::FromValues({7, 5}).Serialize();
  txn::Update second;
  second.removed_fragment_ids = {g.id};
  second.new_fragments = {again};
  ASSERT_TRUE(txn::Commit(*store_, txn::Transaction::Make(3, std::move(second))).ok());
  const Manifest m4 = Load(4).manifest;
  const Fragment& h = m4.fragments.back();
  auto created_h = table::RowVersionSequence::Parse(*h.created_at_versions.inline_bytes, "h");
  ASSERT_TRUE(created_h.ok());
  EXPECT_EQ(created_h->ToVector(), (std::vector<uint64_t>{3, 2}));
}

TEST_F(CommitTest, OverwriteContinuesIdsAndKeepsConfig) {
  ASSERT_TRUE(txn::Commit(*store_, txn::Transaction::Make(
                                       0, txn::Overwrite{{HandMade("f0", 1), HandMade("f1", 1), HandMade("f2", 1)},
                                                         TwoColumns(),
                                                         {{"user.key", "1"}}}))
                  .ok());
  EXPECT_EQ(Load(1).manifest.writer_feature_flags, table::kFlagTableConfig);
  auto r = txn::Commit(*store_, txn::Transaction::Make(1, txn::Overwrite{{HandMade("g", 2)}, TwoColumns(), {}}));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const Manifest& m = Load(2).manifest;
  ASSERT_EQ(m.fragments.size(), 1u);
  EXPECT_EQ(m.fragments[0].id, 3u);  // as pylance 14: no restart at 0
  EXPECT_EQ(m.max_fragment_id, 3u);
  EXPECT_EQ(m.config.at("user.key"), "1");
}

TEST_F(CommitTest, DeleteReplacesAndRemovesFragments) {
  ASSERT_TRUE(Create({HandMade("f0", 10), HandMade("f1", 5)}).ok());
  Fragment f0 = Load(1).manifest.fragments[0];
  DeletionFile del;
  del.read_version = 1;
  del.id = 42;
  del.num_deleted_rows = 2;
  f0.deletion_file = del;
  auto r = txn::Commit(*store_, txn::Transaction::Make(1, txn::Delete{{f0}, {1}, "a < 2"}));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const Manifest& m = Load(2).manifest;
  ASSERT_EQ(m.fragments.size(), 1u);
  EXPECT_EQ(m.fragments[0].deletion_file->id, 42u);
  EXPECT_EQ(m.reader_feature_flags, table::kFlagDeletionFiles);
  EXPECT_EQ(m.max_fragment_id, 1u);
}

TEST_F(CommitTest, RestoreCopiesTheOldVersion) {
  ASSERT_TRUE(Create({HandMade("f0", 10)}).ok());
  ASSERT_TRUE(txn::Commit(*store_, txn::Transaction::Make(1, txn::Append{{HandMade("f1", 3)}})).ok());
  auto r = txn::Commit(dir_.string(), txn::Transaction::Make(2, txn::Restore{1}));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->version, 3u);
  const Manifest& m = Load(3).manifest;
  ASSERT_EQ(m.fragments.size(), 1u);
  EXPECT_EQ(m.fragments[0].files[0].path, "f0.lance");
  EXPECT_EQ(m.max_fragment_id, 1u);  // the latest's counter, not the old one's
  auto summary = txn::ParseTransaction(*Load(3).transaction_bytes, "v3");
  EXPECT_EQ(summary->operation, "Restore");
}

TEST_F(CommitTest, UnknownWriterFlagIsRefusedBeforeAnythingIsWritten) {
  ASSERT_TRUE(Create({HandMade("f0", 10)}).ok());
  auto mf = Load(1);
  mf.manifest.writer_feature_flags |= uint64_t{1} << 40;
  const std::string path = "_versions/18446744073709551614.manifest";
  ASSERT_TRUE(store_->Write(path, table::SerializeManifestFile(mf.manifest, {}, nullptr)).ok());
  const auto before = std::distance(fs::recursive_directory_iterator(dir_), {});
  auto r = txn::Commit(*store_, txn::Transaction::Make(1, txn::Append{{HandMade("f1", 3)}}));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("upgrade"), std::string::npos) << r.status().ToString();
  EXPECT_EQ(std::distance(fs::recursive_directory_iterator(dir_), {}), before);
  EXPECT_FALSE(txn::LoadLatestForWrite(*store_).ok());
}

TEST_F(CommitTest, PutIfNotExistsHasExactlyOneWinner) {
  constexpr int kThreads = 8;
  std::atomic<int> wins{0}, losses{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      auto s = store_->PutIfNotExists("_versions/race", std::string(1000, static_cast<char>('a' + i)));
      (s.ok() ? wins : losses)++;
      if (!s.ok()) {
        EXPECT_TRUE(s.IsAlreadyExists()) << s.ToString();
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(wins.load(), 1);
  EXPECT_EQ(losses.load(), kThreads - 1);
  EXPECT_EQ(store_->ReadAll("_versions/race")->size(), 1000u);
  for (const auto& e : fs::directory_iterator(dir_ / "_versions")) {
    EXPECT_EQ(e.path().filename(), "race");  // no temp file left behind
  }
}

// Separate handles (stores) racing for version 2.
TEST_F(CommitTest, RacingAppendsAllLandOnDistinctVersions) {
  ASSERT_TRUE(Create({HandMade("f0", 1)}).ok());
  constexpr int kWriters = 4;
  std::atomic<bool> go{false};
  std::vector<uint64_t> versions(kWriters);
  std::vector<std::thread> threads;
  for (int i = 0; i < kWriters; ++i) {
    threads.emplace_back([&, i] {
      auto store = *io::ObjectStore::Open(dir_.string());
      while (!go) std::this_thread::yield();
      auto r = txn::Commit(*store, txn::Transaction::Make(1, txn::Append{{HandMade("w" + std::to_string(i), 1)}}));
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      versions[i] = r->version;
    });
  }
  go = true;
  for (auto& t : threads) t.join();
  std::sort(versions.begin(), versions.end());
  EXPECT_EQ(versions, (std::vector<uint64_t>{2, 3, 4, 5}));
  const Manifest& m = Load(5).manifest;
  ASSERT_EQ(m.fragments.size(), 5u);
  for (size_t i = 0; i < m.fragments.size(); ++i) EXPECT_EQ(m.fragments[i].id, i);
}

TEST_F(CommitTest, RacingDeletesOfOneFragmentConflict) {
  ASSERT_TRUE(Create({HandMade("f0", 10)}).ok());
  constexpr int kWriters = 2;
  std::atomic<bool> go{false};
  std::atomic<int> ok{0}, conflicts{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kWriters; ++i) {
    threads.emplace_back([&, i] {
      auto store = *io::ObjectStore::Open(dir_.string());
      Fragment f = HandMade("f0", 10);
      f.id = 0;
      DeletionFile del;
      del.read_version = 1;
      del.id = static_cast<uint64_t>(i + 1);
      del.num_deleted_rows = 1;
      f.deletion_file = del;
      while (!go) std::this_thread::yield();
      auto r = txn::Commit(*store, txn::Transaction::Make(1, txn::Delete{{f}, {}, "a = 1"}));
      if (r.ok()) {
        ok++;
      } else {
        EXPECT_TRUE(txn::IsCommitConflict(r.status())) << r.status().ToString();
        conflicts++;
      }
    });
  }
  go = true;
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 1);
  EXPECT_EQ(conflicts.load(), 1);
  // The later one, seeing the first committed, refuses as well.
  Fragment f = Load(2).manifest.fragments[0];
  auto late = txn::Commit(*store_, txn::Transaction::Make(1, txn::Delete{{f}, {}, "a = 2"}));
  EXPECT_TRUE(txn::IsCommitConflict(late.status())) << late.status().ToString();
  // Appends based on version 1 still go through on top of the delete.
  auto append = txn::Commit(*store_, txn::Transaction::Make(1, txn::Append{{HandMade("x", 1)}}));
  ASSERT_TRUE(append.ok()) << append.status().ToString();
  EXPECT_TRUE(Load(3).manifest.fragments[0].deletion_file.has_value());
  // The losers left no transaction file behind: one per version.
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_ / "_transactions"), {}), 3);
}

TEST_F(CommitTest, GivenLatestIsUsedOnceAndReloadedWhenStale) {
  ASSERT_TRUE(Create({HandMade("f0", 10)}).ok());
  auto base = txn::LoadLatestForWrite(*store_);
  ASSERT_TRUE(base.ok() && base->has_value());
  Fragment f = (*base)->file.manifest.fragments[0];
  DeletionFile del;
  del.read_version = 1;
  del.id = 7;
  del.num_deleted_rows = 1;
  f.deletion_file = del;
  // Another writer appends after `base` was loaded: the delete must land on
  // top of it, not replace it.
  ASSERT_TRUE(txn::Commit(*store_, txn::Transaction::Make(1, txn::Append{{HandMade("x", 1)}})).ok());
  txn::CommitOptions options;
  options.latest = &**base;
  auto r = txn::Commit(*store_, txn::Transaction::Make(1, txn::Delete{{f}, {}, "a = 1"}), options);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->version, 3u);
  const Manifest& m = Load(3).manifest;
  ASSERT_EQ(m.fragments.size(), 2u);
  EXPECT_EQ(m.fragments[0].deletion_file->id, 7u);
  EXPECT_EQ(m.fragments[1].files[0].path, "x.lance");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_ / "_transactions"), {}), 3);
  // A fresh one is used as is.
  auto latest = txn::LoadLatestForWrite(*store_);
  ASSERT_TRUE(latest.ok() && latest->has_value());
  options.latest = &**latest;
  auto append = txn::Commit(*store_, txn::Transaction::Make(3, txn::Append{{HandMade("y", 2)}}), options);
  ASSERT_TRUE(append.ok()) << append.status().ToString();
  EXPECT_EQ(append->version, 4u);
  EXPECT_EQ(Load(4).manifest.fragments.size(), 3u);
}

TEST_F(CommitTest, AppendAfterOverwriteConflicts) {
  ASSERT_TRUE(Create({HandMade("f0", 1)}).ok());
  ASSERT_TRUE(txn::Commit(*store_, txn::Transaction::Make(1, txn::Overwrite{{HandMade("o", 1)}, TwoColumns(), {}})).ok());
  auto r = txn::Commit(*store_, txn::Transaction::Make(1, txn::Append{{HandMade("x", 1)}}));
  EXPECT_TRUE(txn::IsCommitConflict(r.status())) << r.status().ToString();
}

}  // namespace
}  // namespace lance
