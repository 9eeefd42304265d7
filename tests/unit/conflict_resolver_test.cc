// The conflict matrix as a table of cases (every operation against every
// operation, then each condition c1-c7 where it changes the answer), the
// parsing of other writers' transactions, and the row-level rebase of a
// delete over concurrent deletes and a compaction on a real dataset.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <thread>

#include <arrow/api.h>
#include <arrow/array/concatenate.h>

#include "lance/dataset.h"
#include "lance/io/object_store.h"
#include "lance/operations.h"
#include "lance/row_ops.h"
#include "lance/scanner.h"
#include "lance/write.h"
#include "lance/ops/retry.h"
#include "lance/table/deletion_file.h"
#include "lance/table/manifest_location.h"
#include "lance/table/manifest_proto.h"
#include "lance/transaction.pb.h"
#include "lance/txn/commit.h"
#include "lance/txn/conflict_resolver.h"

namespace lance {
namespace {

namespace fs = std::filesystem;
using txn::OperationFacts;
using txn::OperationKind;
using txn::Verdict;
using K = OperationKind;

constexpr K kAll[] = {K::kAppend,         K::kDelete,        K::kUpdate,          K::kOverwrite,
                      K::kCreateIndex,    K::kRewrite,       K::kMerge,           K::kProject,
                      K::kRestore,        K::kReserveFragments, K::kUpdateConfig, K::kDataReplacement,
                      K::kUpdateMemWalState, K::kClone,      K::kUpdateBases,     K::kDataOverlay};

Fragment Frag(uint64_t id, const std::string& file, std::optional<uint64_t> deletion_id = std::nullopt) {
  Fragment f;
  f.id = id;
  DataFile d;
  d.path = file;
  d.fields = {0, 1};
  d.column_indices = {0, 1};
  d.file_major_version = 2;
  f.files.push_back(d);
  f.physical_rows = 100;
  if (deletion_id) {
    DeletionFile del;
    del.type = DeletionFile::Type::kBitmap;
    del.read_version = 1;
    del.id = *deletion_id;
    del.num_deleted_rows = 1;
    f.deletion_file = del;
  }
  return f;
}

// An operation of `kind` touching only fragment `frag` (and field 10+frag
// where fields matter), with nothing else that would trigger a condition.
OperationFacts Plain(K kind, uint64_t frag) {
  OperationFacts f;
  f.kind = kind;
  switch (kind) {
    case K::kDelete: f.updated_fragments = {Frag(frag, "f" + std::to_string(frag), 7)}; break;
    case K::kUpdate:
      f.updated_fragments = {Frag(frag, "f" + std::to_string(frag), 7)};
      f.has_new_fragments = true;
      break;
    case K::kMerge: f.updated_fragments = {Frag(frag, "m")}; break;
    case K::kRewrite: f.rewritten_fragment_ids = {frag}; break;
    case K::kDataReplacement:
    case K::kDataOverlay: f.replaced_fields = {{frag, {static_cast<int32_t>(10 + frag)}}}; break;
    case K::kCreateIndex:
      f.new_indices = {{"idx" + std::to_string(frag), {static_cast<int32_t>(20 + frag)},
                        std::set<uint32_t>{static_cast<uint32_t>(frag)}}};
      break;
    case K::kUpdateConfig:
    case K::kOverwrite: f.config_upserts = {"key" + std::to_string(frag)}; break;
    case K::kUpdateBases: f.new_bases = {{static_cast<uint32_t>(frag), "b" + std::to_string(frag), "/p" + std::to_string(frag)}}; break;
    default: break;
  }
  return f;
}

// The reference's matrix (rows: mine, columns: theirs) for operations that
// share nothing: y = compatible, R = retryable, X = incompatible. The
// condition cells c1-c7 are compatible here; the cases below flip them.
// Column order is kAll's; the last column (DataOverlay, newer than the
// notes' table) follows the reference's newer resolver.
const std::map<K, std::string> kPlainMatrix = {
    //                          App Del Upd Ovw CrI Rew Mrg Prj Rst Rsv UCf DRp MWS Cln Bas DOv
    {K::kAppend,              "y   y   y   X   y   y   y   y   X   y   y   y   X   y   y   y"},
    {K::kDelete,              "y   y   y   X   y   y   R   y   X   y   y   y   X   y   y   y"},
    {K::kUpdate,              "y   y   y   X   y   y   R   y   X   y   y   y   y   y   y   y"},
    {K::kOverwrite,           "y   y   y   y   y   y   y   y   y   y   y   y   X   y   y   y"},
    {K::kCreateIndex,         "y   y   y   X   y   y   y   y   X   y   y   y   X   y   y   y"},
    {K::kRewrite,             "y   y   y   X   y   y   R   y   X   y   y   y   y   y   y   y"},
    {K::kMerge,               "R   R   R   X   y   R   R   X   X   y   y   R   X   y   y   R"},
    {K::kProject,             "y   y   y   X   y   y   R   R   X   y   y   y   X   y   y   y"},
    {K::kRestore,             "y   y   y   y   y   y   y   y   y   y   y   y   X   y   y   y"},
    {K::kReserveFragments,    "y   y   y   X   y   y   y   y   X   y   y   y   y   y   y   y"},
    {K::kUpdateConfig,        "y   y   y   y   y   y   y   y   y   y   y   y   y   y   y   y"},
    {K::kDataReplacement,     "y   y   y   X   y   y   y   y   X   y   y   y   X   y   y   y"},
    {K::kUpdateMemWalState,   "X   X   X   X   y   y   X   X   X   y   y   X   y   X   y   X"},
    {K::kClone,               "y   y   y   y   y   y   y   y   y   y   y   y   y   y   y   y"},
    {K::kUpdateBases,         "y   y   y   y   y   y   y   y   y   y   y   y   y   y   y   y"},
    {K::kDataOverlay,         "y   y   y   X   y   y   R   y   X   y   y   y   X   y   y   y"},
};

char Letter(Verdict v) {
  switch (v) {
    case Verdict::kCompatible: return 'y';
    case Verdict::kRebase: return 'b';
    case Verdict::kRetryable: return 'R';
    case Verdict::kIncompatible: return 'X';
  }
  return '?';
}

Verdict Check(const OperationFacts& mine, const OperationFacts& theirs, bool known = true,
              std::set<uint64_t>* rebase = nullptr) {
  std::map<uint64_t, Fragment> initial;
  for (uint64_t id : mine.ModifiedFragmentIds()) initial[id] = Frag(id, "f" + std::to_string(id));
  return txn::CheckConflict(mine, theirs, initial, known, rebase);
}

TEST(ConflictMatrix, EveryOperationAgainstEveryOperation) {
  ASSERT_EQ(kPlainMatrix.size(), std::size(kAll));
  for (K mine : kAll) {
    std::string row = kPlainMatrix.at(mine);
    std::erase(row, ' ');
    ASSERT_EQ(row.size(), std::size(kAll)) << txn::OperationKindName(mine);
    for (size_t j = 0; j < std::size(kAll); ++j) {
      const K theirs = kAll[j];
      const Verdict v = Check(Plain(mine, 1), Plain(theirs, 2));
      EXPECT_EQ(Letter(v), row[j]) << txn::OperationKindName(mine) << " vs " << txn::OperationKindName(theirs);
    }
  }
}

struct Case {
  const char* name;
  OperationFacts mine;
  OperationFacts theirs;
  bool affected_rows_known;
  Verdict expected;
};

OperationFacts With(OperationFacts f, const std::function<void(OperationFacts&)>& change) {
  change(f);
  return f;
}

std::vector<Case> ConditionCases() {
  std::vector<Case> cases;
  auto add = [&](const char* name, OperationFacts mine, OperationFacts theirs, Verdict v, bool known = true) {
    cases.push_back({name, std::move(mine), std::move(theirs), known, v});
  };
  // c1: Delete/Update against Delete/Update of the same fragment.
  for (K mine : {K::kDelete, K::kUpdate}) {
    for (K theirs : {K::kDelete, K::kUpdate}) {
      add("c1 deletion file changed: rebase", Plain(mine, 1), Plain(theirs, 1), Verdict::kRebase);
      add("c1 affected rows unknown", Plain(mine, 1), Plain(theirs, 1), Verdict::kRetryable, false);
      add("c1 data files changed",
          Plain(mine, 1), With(Plain(theirs, 1), [](auto& f) { f.updated_fragments[0].files[0].path = "new"; }),
          Verdict::kRetryable);
      add("c1 they removed our fragment", Plain(mine, 1),
          With(Plain(theirs, 2), [](auto& f) { f.removed_fragment_ids = {1}; }), Verdict::kRetryable);
      add("c1 disjoint fragments", Plain(mine, 1), Plain(theirs, 2), Verdict::kCompatible, false);
      add("c1 same deletion file as read", Plain(mine, 1),
          With(Plain(theirs, 1), [](auto& f) { f.updated_fragments[0].deletion_file.reset(); }),
          Verdict::kCompatible);
    }
    // c2: against a Rewrite (compaction) or DataReplacement of our fragment.
    add("c2 rewrite of our fragment", Plain(mine, 1), Plain(K::kRewrite, 1), Verdict::kRetryable);
    add("c2 data replacement of our fragment", Plain(mine, 1), Plain(K::kDataReplacement, 1), Verdict::kRetryable);
  }
  add("c2 rewrite vs delete of its fragment", Plain(K::kRewrite, 1), Plain(K::kDelete, 1), Verdict::kRetryable);
  add("c2 rewrite vs update of its fragment", Plain(K::kRewrite, 1), Plain(K::kUpdate, 1), Verdict::kRetryable);
  add("c2 rewrite vs rewrite, shared fragment", Plain(K::kRewrite, 1), Plain(K::kRewrite, 1), Verdict::kRetryable);
  add("c2 rewrite vs rewrite, both with a reuse index",
      With(Plain(K::kRewrite, 1), [](auto& f) { f.has_frag_reuse_index = true; }),
      With(Plain(K::kRewrite, 2), [](auto& f) { f.has_frag_reuse_index = true; }), Verdict::kRetryable);
  add("c2 rewrite vs data replacement", Plain(K::kRewrite, 1), Plain(K::kDataReplacement, 1), Verdict::kRetryable);
  add("c2 data replacement vs rewrite", Plain(K::kDataReplacement, 1), Plain(K::kRewrite, 1), Verdict::kRetryable);
  // c3: config keys and metadata.
  add("c3 overwrite vs config upsert of its key", Plain(K::kOverwrite, 1), Plain(K::kUpdateConfig, 1),
      Verdict::kIncompatible);
  add("c3 overwrite vs config delete of its key", Plain(K::kOverwrite, 1),
      With(Plain(K::kUpdateConfig, 2), [](auto& f) { f.config_deletes = {"key1"}; }), Verdict::kIncompatible);
  add("c3 overwrite vs overwrite, same key", Plain(K::kOverwrite, 1), Plain(K::kOverwrite, 1),
      Verdict::kIncompatible);
  add("c3 config vs config, same key", Plain(K::kUpdateConfig, 1), Plain(K::kUpdateConfig, 1),
      Verdict::kIncompatible);
  add("c3 config schema metadata vs overwrite",
      With(Plain(K::kUpdateConfig, 1), [](auto& f) { f.changes_schema_metadata = true; }),
      Plain(K::kOverwrite, 2), Verdict::kIncompatible);
  add("c3 config field metadata vs overwrite",
      With(Plain(K::kUpdateConfig, 1), [](auto& f) { f.field_metadata_changes = {3}; }), Plain(K::kOverwrite, 2),
      Verdict::kIncompatible);
  add("c3 both change schema metadata",
      With(Plain(K::kUpdateConfig, 1), [](auto& f) { f.changes_schema_metadata = true; }),
      With(Plain(K::kUpdateConfig, 2), [](auto& f) { f.changes_schema_metadata = true; }), Verdict::kIncompatible);
  add("c3 same field's metadata",
      With(Plain(K::kUpdateConfig, 1), [](auto& f) { f.field_metadata_changes = {3}; }),
      With(Plain(K::kUpdateConfig, 2), [](auto& f) { f.field_metadata_changes = {3}; }), Verdict::kIncompatible);
  add("c3 different fields' metadata",
      With(Plain(K::kUpdateConfig, 1), [](auto& f) { f.field_metadata_changes = {3}; }),
      With(Plain(K::kUpdateConfig, 2), [](auto& f) { f.field_metadata_changes = {4}; }), Verdict::kCompatible);
  // c4: two fragment reuse indices.
  auto fri = [](OperationFacts f) {
    f.new_indices = {{"__lance_frag_reuse", {}, std::set<uint32_t>{}}};
    f.num_removed_indices = 1;
    return f;
  };
  add("c4 both write the fragment reuse index", fri(Plain(K::kCreateIndex, 1)), fri(Plain(K::kCreateIndex, 2)),
      Verdict::kRetryable);
  // c5: indices against compaction.
  add("c5 index bitmap missing", With(Plain(K::kCreateIndex, 1), [](auto& f) { f.new_indices[0].fragments.reset(); }),
      Plain(K::kRewrite, 2), Verdict::kRetryable);
  add("c5 index covers rewritten fragment", Plain(K::kCreateIndex, 1), Plain(K::kRewrite, 1), Verdict::kRetryable);
  add("c5 rewrite vs index covering it", Plain(K::kRewrite, 1), Plain(K::kCreateIndex, 1), Verdict::kRetryable);
  add("c5 rewrite with reuse index vs index", With(Plain(K::kRewrite, 1), [](auto& f) { f.has_frag_reuse_index = true; }),
      Plain(K::kCreateIndex, 1), Verdict::kCompatible);
  // c6: replaced fields being indexed; the same field replaced twice.
  add("c6 replacement of an indexed field",
      With(Plain(K::kDataReplacement, 1), [](auto& f) { f.replaced_fields[0].second = {22}; }),
      Plain(K::kCreateIndex, 2), Verdict::kRetryable);
  add("c6 index of a replaced field", Plain(K::kCreateIndex, 1),
      With(Plain(K::kDataReplacement, 2), [](auto& f) { f.replaced_fields[0].second = {21}; }), Verdict::kRetryable);
  add("c6 same fragment and field replaced twice", Plain(K::kDataReplacement, 1), Plain(K::kDataReplacement, 1),
      Verdict::kRetryable);
  add("c6 same fragment, other field", Plain(K::kDataReplacement, 1),
      With(Plain(K::kDataReplacement, 1), [](auto& f) { f.replaced_fields[0].second = {99}; }), Verdict::kCompatible);
  // c7: MemWAL state.
  auto memwal = [](std::vector<std::string> added) {
    OperationFacts f = Plain(K::kUpdateMemWalState, 0);
    f.mem_wals_added = std::move(added);
    return f;
  };
  add("c7 the same MemWAL", memwal({"region-a"}), memwal({"region-a"}), Verdict::kIncompatible);
  add("c7 different MemWALs", memwal({"region-a"}), memwal({"region-b"}), Verdict::kCompatible);
  add("c7 trim only", memwal({}), memwal({"region-a"}), Verdict::kCompatible);
  add("c7 vs update merging a MemWAL", memwal({"region-a"}),
      With(Plain(K::kUpdate, 1), [](auto& f) { f.mem_wal_to_merge = "region-a"; }), Verdict::kCompatible);
  add("c7 update merging the MemWAL they change",
      With(Plain(K::kUpdate, 1), [](auto& f) { f.mem_wal_to_merge = "region-a"; }), memwal({"region-a"}),
      Verdict::kIncompatible);
  // UpdateBases: the same id, name or path.
  add("bases same id", Plain(K::kUpdateBases, 1),
      With(Plain(K::kUpdateBases, 2), [](auto& f) { f.new_bases[0].id = 1; }), Verdict::kIncompatible);
  add("bases same name", Plain(K::kUpdateBases, 1),
      With(Plain(K::kUpdateBases, 2), [](auto& f) { f.new_bases[0].name = "b1"; }), Verdict::kIncompatible);
  add("bases same path", Plain(K::kUpdateBases, 1),
      With(Plain(K::kUpdateBases, 2), [](auto& f) { f.new_bases[0].path = "/p1"; }), Verdict::kIncompatible);
  add("bases both id 0, other names and paths", With(Plain(K::kUpdateBases, 1), [](auto& f) { f.new_bases[0].id = 0; }),
      With(Plain(K::kUpdateBases, 2), [](auto& f) { f.new_bases[0].id = 0; }), Verdict::kCompatible);
  // DataOverlay on shared fragments.
  add("update moving rows out of an overlaid fragment", Plain(K::kUpdate, 1), Plain(K::kDataOverlay, 1),
      Verdict::kRetryable);
  add("delete under an overlay", Plain(K::kDelete, 1), Plain(K::kDataOverlay, 1), Verdict::kCompatible);
  add("overlay vs removal of its fragment", Plain(K::kDataOverlay, 1),
      With(Plain(K::kDelete, 2), [](auto& f) { f.removed_fragment_ids = {1}; }), Verdict::kRetryable);
  add("overlay vs compaction of its fragment", Plain(K::kDataOverlay, 1), Plain(K::kRewrite, 1), Verdict::kRetryable);
  // pylance 14: schema changes that may tighten nullability, and Merge
  // against metadata updates, in either order.
  auto altering = [](K kind) { return With(Plain(kind, 3), [](auto& f) { f.may_alter_nullability = true; }); };
  for (K writer : {K::kAppend, K::kUpdate, K::kDataReplacement, K::kDataOverlay}) {
    add("nullability: value write vs projection", Plain(writer, 1), altering(K::kProject), Verdict::kRetryable);
    add("nullability: projection vs value write", altering(K::kProject), Plain(writer, 1), Verdict::kRetryable);
    add("nullability: value write vs merge", Plain(writer, 1), altering(K::kMerge), Verdict::kRetryable);
  }
  add("nullability: delete vs projection", Plain(K::kDelete, 1), altering(K::kProject), Verdict::kCompatible);
  auto metadata = With(Plain(K::kUpdateConfig, 5), [](auto& f) { f.changes_schema_metadata = true; });
  add("merge vs schema metadata update", Plain(K::kMerge, 1), metadata, Verdict::kRetryable);
  add("schema metadata update vs merge", metadata, Plain(K::kMerge, 1), Verdict::kRetryable);
  return cases;
}

TEST(ConflictMatrix, Conditions) {
  for (const auto& c : ConditionCases()) {
    std::set<uint64_t> rebase;
    const Verdict v = Check(c.mine, c.theirs, c.affected_rows_known, &rebase);
    EXPECT_EQ(txn::VerdictName(v), std::string(txn::VerdictName(c.expected)))
        << c.name << ": " << txn::OperationKindName(c.mine.kind) << " vs " << txn::OperationKindName(c.theirs.kind);
    if (v == Verdict::kRebase) {
      EXPECT_EQ(rebase, std::set<uint64_t>{1}) << c.name;
    }
  }
}

// Other writers' transactions are recognized by their protobuf form.
TEST(ConflictMatrix, ParsesEveryOperation) {
  using T = pb::table::Transaction;
  std::vector<std::pair<K, std::function<void(T&)>>> makers = {
      {K::kAppend, [](T& t) { t.mutable_append(); }},
      {K::kDelete, [](T& t) {
         auto* d = t.mutable_delete_();
         table::FragmentToProto(Frag(3, "x", 5), d->add_updated_fragments());
         d->add_deleted_fragment_ids(4);
       }},
      {K::kUpdate, [](T& t) { t.mutable_update()->add_removed_fragment_ids(4); }},
      {K::kOverwrite, [](T& t) { (*t.mutable_overwrite()->mutable_config_upsert_values())["k"] = "v"; }},
      {K::kCreateIndex, [](T& t) { t.mutable_create_index()->add_new_indices()->set_name("i"); }},
      {K::kRewrite, [](T& t) { t.mutable_rewrite()->add_groups()->add_old_fragments()->set_id(3); }},
      {K::kMerge, [](T& t) { t.mutable_merge(); }},
      {K::kProject, [](T& t) { t.mutable_project(); }},
      {K::kRestore, [](T& t) { t.mutable_restore()->set_version(2); }},
      {K::kReserveFragments, [](T& t) { t.mutable_reserve_fragments()->set_num_fragments(2); }},
      {K::kUpdateConfig, [](T& t) {
         auto* e = t.mutable_update_config()->mutable_config_updates()->add_update_entries();
         e->set_key("a");
       }},
      {K::kDataReplacement, [](T& t) {
         auto* r = t.mutable_data_replacement()->add_replacements();
         r->set_fragment_id(3);
         r->mutable_new_file()->add_fields(7);
       }},
      {K::kDataOverlay, [](T& t) {
         auto* g = t.mutable_data_overlay()->add_groups();
         g->set_fragment_id(3);
         g->add_overlays()->mutable_data_file()->add_fields(8);
       }},
      {K::kUpdateMemWalState, [](T& t) { t.mutable_update_mem_wal_state()->add_added("m"); }},
      {K::kClone, [](T& t) { t.mutable_clone(); }},
      {K::kUpdateBases, [](T& t) { t.mutable_update_bases()->add_new_bases()->set_path("/x"); }},
  };
  ASSERT_EQ(makers.size(), std::size(kAll));
  for (const auto& [kind, make] : makers) {
    T t;
    t.set_read_version(1);
    make(t);
    auto facts = txn::ParseOperationFacts(t.SerializeAsString(), "test");
    ASSERT_TRUE(facts.ok()) << facts.status().ToString();
    EXPECT_EQ(facts->kind, kind) << txn::OperationKindName(kind);
    switch (kind) {
      case K::kDelete:
        EXPECT_EQ(facts->ModifiedFragmentIds(), (std::set<uint64_t>{3, 4}));
        ASSERT_TRUE(facts->updated_fragments[0].deletion_file.has_value());
        break;
      case K::kOverwrite: EXPECT_TRUE(facts->config_upserts.empty()) << "the reference's read-back quirk"; break;
      case K::kCreateIndex: EXPECT_FALSE(facts->new_indices[0].fragments.has_value()); break;
      case K::kRewrite: EXPECT_EQ(facts->rewritten_fragment_ids, std::vector<uint64_t>{3}); break;
      case K::kUpdateConfig: EXPECT_EQ(facts->config_deletes, std::set<std::string>{"a"}); break;
      case K::kDataOverlay: EXPECT_EQ(facts->replaced_fields[0].second, std::vector<int32_t>{8}); break;
      default: break;
    }
  }
}

TEST(ConflictMatrix, UnknownOperationIsRefused) {
  pb::table::Transaction t;
  t.set_read_version(1);
  auto facts = txn::ParseOperationFacts(t.SerializeAsString(), "v9.txn");
  ASSERT_FALSE(facts.ok());
  EXPECT_TRUE(facts.status().IsNotImplemented()) << facts.status().ToString();
  EXPECT_NE(facts.status().message().find("v9.txn"), std::string::npos);
}

// The rebase on a dataset on disk: hand-made fragments with deletion files.
class RebaseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("lance_rebase_test_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    store_ = *io::ObjectStore::Open(dir_.string());
    Schema s;
    Field a;
    a.name = "a";
    a.id = 0;
    a.logical_type = "int64";
    s.fields = {a};
    Fragment f = Frag(0, "f0.lance");
    f.files[0].fields = {0};
    f.files[0].column_indices = {0};
    f.physical_rows = 10;
    ASSERT_TRUE(txn::Commit(*store_, txn::Transaction::Make(0, txn::Overwrite{{f}, s, {}})).ok());
  }
  void TearDown() override { fs::remove_all(dir_); }

  Manifest Latest() {
    auto base = txn::LoadLatestForWrite(*store_);
    EXPECT_TRUE(base.ok() && base->has_value());
    return (*base)->file.manifest;
  }

  // A delete of `rows` of fragment 0 read at `read_version`, as DeleteRows
  // builds it: the fragment with a new deletion file, and its affected rows.
  Result<txn::CommitResult> DeleteAt(uint64_t read_version, const Manifest& read, std::vector<uint32_t> rows,
                                     bool with_affected_rows = true) {
    Fragment f = read.fragments.at(0);
    table::DeletionVector dv;
    if (f.deletion_file) {
      LANCE_ASSIGN_OR_RAISE(dv, table::ReadDeletionFile(table::FileLocator(store_, read), 0, *f.deletion_file));
    }
    auto affected = std::make_shared<txn::AffectedRows>();
    for (uint32_t r : rows) {
      dv.Add(r);
      (*affected)[0].Add(r);
    }
    txn::Transaction t;
    if (dv.Cardinality() >= 10) {
      t = txn::Transaction::Make(read_version, txn::Delete{{}, {0}, "p"});
    } else {
      LANCE_ASSIGN_OR_RAISE(auto file, table::WriteDeletionFile(*store_, 0, read_version, dv,
                                                                DeletionFile::Type::kArrowArray));
      f.deletion_file = file;
      t = txn::Transaction::Make(read_version, txn::Delete{{f}, {}, "p"});
    }
    txn::CommitOptions options;
    if (with_affected_rows) options.affected_rows = affected;
    return txn::Commit(*store_, std::move(t), options);
  }

  std::vector<uint32_t> DeletedNow() {
    const Manifest m = Latest();
    if (m.fragments.empty() || !m.fragments[0].deletion_file) return {};
    auto dv = table::ReadDeletionFile(table::FileLocator(store_, m), 0, *m.fragments[0].deletion_file);
    EXPECT_TRUE(dv.ok()) << dv.status().ToString();
    return dv->ToVector();
  }

  fs::path dir_;
  std::shared_ptr<io::ObjectStore> store_;
};

TEST_F(RebaseTest, DisjointRowsAreMerged) {
  const Manifest v1 = Latest();
  ASSERT_TRUE(DeleteAt(1, v1, {2}).ok());
  // Read at version 1, committed after version 2: merged, not lost.
  auto r = DeleteAt(1, v1, {5, 6});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->version, 3u);
  EXPECT_EQ(DeletedNow(), (std::vector<uint32_t>{2, 5, 6}));
  const Manifest v3 = Latest();
  const DeletionFile& file = *v3.fragments[0].deletion_file;
  EXPECT_EQ(file.type, DeletionFile::Type::kBitmap) << "rebased vectors are bitmaps";
  EXPECT_EQ(file.read_version, 2u) << "written at the latest version";
  EXPECT_EQ(file.num_deleted_rows, 3u);
  EXPECT_EQ(v3.fragments[0].files[0].path, "f0.lance");
}

TEST_F(RebaseTest, OverlappingRowsAreRetryable) {
  const Manifest v1 = Latest();
  ASSERT_TRUE(DeleteAt(1, v1, {2, 3}).ok());
  auto r = DeleteAt(1, v1, {3, 4});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(GetErrorKind(r.status()), ErrorKind::kRetryableCommitConflict) << r.status().ToString();
  EXPECT_NE(r.status().message().find("3]"), std::string::npos) << r.status().ToString();
  EXPECT_NE(r.status().message().find("Delete based on version 1 and the Delete committed concurrently as version 2"),
            std::string::npos)
      << r.status().ToString();
  EXPECT_EQ(DeletedNow(), (std::vector<uint32_t>{2, 3}));
}

TEST_F(RebaseTest, UnknownAffectedRowsAreRetryable) {
  const Manifest v1 = Latest();
  ASSERT_TRUE(DeleteAt(1, v1, {2}).ok());
  auto r = DeleteAt(1, v1, {5}, /*with_affected_rows=*/false);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(GetErrorKind(r.status()), ErrorKind::kRetryableCommitConflict) << r.status().ToString();
  EXPECT_NE(r.status().message().find("Delete based on version 1"), std::string::npos) << r.status().ToString();
  EXPECT_NE(r.status().message().find("Delete committed concurrently as version 2"), std::string::npos);
}

TEST_F(RebaseTest, FragmentLeftWithoutRowsIsRemoved) {
  const Manifest v1 = Latest();
  ASSERT_TRUE(DeleteAt(1, v1, {0, 1, 2, 3, 4}).ok());
  auto r = DeleteAt(1, v1, {5, 6, 7, 8, 9});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(Latest().fragments.empty());
}

TEST_F(RebaseTest, DeleteAgainstCompactionOfItsFragmentIsRetryable) {
  const Manifest v1 = Latest();
  // Another writer compacts fragment 0 into fragment 1 (a Rewrite, as
  // pylance's compact_files commits it), written here by hand.
  pb::table::Transaction rewrite;
  rewrite.set_read_version(1);
  rewrite.set_uuid("rewrite-test");
  auto* group = rewrite.mutable_rewrite()->add_groups();
  table::FragmentToProto(v1.fragments[0], group->add_old_fragments());
  Fragment compacted = v1.fragments[0];
  compacted.id = 1;
  compacted.files[0].path = "compacted.lance";
  table::FragmentToProto(compacted, group->add_new_fragments());
  const std::string txn_bytes = rewrite.SerializeAsString();
  ASSERT_TRUE(store_->Write("_transactions/1-rewrite-test.txn", txn_bytes).ok());
  auto base = txn::LoadLatestForWrite(*store_);
  ASSERT_TRUE(base.ok() && base->has_value());
  Manifest m2 = (*base)->file.manifest;
  m2.version = 2;
  m2.fragments = {compacted};
  m2.max_fragment_id = 1;
  m2.transaction_file = "1-rewrite-test.txn";
  const auto naming = (*base)->location.naming;
  ASSERT_TRUE(store_->PutIfNotExists("_versions/" + table::ManifestFileName(2, naming),
                                     table::SerializeManifestFile(m2, {}, &txn_bytes))
                  .ok());
  auto r = DeleteAt(1, v1, {4});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(GetErrorKind(r.status()), ErrorKind::kRetryableCommitConflict) << r.status().ToString();
  EXPECT_NE(r.status().message().find("Rewrite"), std::string::npos) << r.status().ToString();
}

TEST_F(RebaseTest, OverwriteIsIncompatible) {
  const Manifest v1 = Latest();
  Schema s = v1.schema;
  ASSERT_TRUE(txn::Commit(*store_, txn::Transaction::Make(1, txn::Overwrite{{Frag(0, "o.lance")}, s, {}})).ok());
  auto r = DeleteAt(1, v1, {4});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(GetErrorKind(r.status()), ErrorKind::kCommitConflict) << r.status().ToString();
}

// Writers of one process racing through the public API. Whichever way the
// race goes, every write commits and none is lost or doubled.
class ConcurrentWritersTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("lance_concurrent_test_" + std::to_string(::getpid()) + "_" +
                                        std::to_string(GetParam()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    arrow::Int64Builder ids, counts;
    for (int64_t i = 0; i < 100; ++i) {
      ASSERT_TRUE(ids.Append(i).ok());
      ASSERT_TRUE(counts.Append(0).ok());
    }
    auto schema = arrow::schema({arrow::field("id", arrow::int64()), arrow::field("c", arrow::int64())});
    auto batch = arrow::RecordBatch::Make(schema, 100, {*ids.Finish(), *counts.Finish()});
    auto reader = *arrow::RecordBatchReader::Make({batch}, schema);
    WriteParams params;
    params.enable_stable_row_ids = GetParam();
    auto ds = WriteDataset(reader, dir_.string(), params);
    ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::shared_ptr<arrow::Table> Rows() {
    auto ds = Dataset::Open(dir_.string());
    EXPECT_TRUE(ds.ok()) << ds.status().ToString();
    auto t = ScanBuilder(*ds).ToTable();
    EXPECT_TRUE(t.ok()) << t.status().ToString();
    return *t;
  }

  uint64_t LatestVersion() { return (*Dataset::Open(dir_.string()))->version(); }

  fs::path dir_;
};

TEST_P(ConcurrentWritersTest, DeletesOfDifferentRowsOfOneFragmentAllCommit) {
  const std::vector<int> victims = {1, 9, 23, 40, 55, 61, 78, 99};
  std::vector<Status> results(victims.size());
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  for (size_t i = 0; i < victims.size(); ++i) {
    threads.emplace_back([&, i] {
      while (!go) std::this_thread::yield();
      auto r = DeleteRows(dir_.string(), "id = " + std::to_string(victims[i]));
      results[i] = r.ok() ? (r->committed && r->num_deleted_rows == 1 ? Status::OK() : Status::Invalid("no-op"))
                          : r.status();
    });
  }
  go = true;
  for (auto& t : threads) t.join();
  for (const auto& st : results) EXPECT_TRUE(st.ok()) << st.ToString();
  auto rows = Rows();
  EXPECT_EQ(rows->num_rows(), 100 - static_cast<int64_t>(victims.size()));
  EXPECT_EQ(LatestVersion(), 1 + victims.size());
  auto ds = *Dataset::Open(dir_.string());
  ASSERT_EQ(ds->manifest().fragments.size(), 1u) << "deletes never rewrite data";
  EXPECT_EQ(*ds->NumDeletedRows(ds->manifest().fragments[0]), victims.size());
}

TEST_P(ConcurrentWritersTest, IncrementsOfOneRowAreCountedOnce) {
  constexpr int kWriters = 6;
  std::vector<Status> results(kWriters);
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  for (int i = 0; i < kWriters; ++i) {
    threads.emplace_back([&, i] {
      while (!go) std::this_thread::yield();
      auto r = UpdateRows(dir_.string(), {{"c", "c + 1"}}, "id = 5");
      results[i] = r.ok() ? Status::OK() : r.status();
    });
  }
  go = true;
  for (auto& t : threads) t.join();
  for (const auto& st : results) EXPECT_TRUE(st.ok()) << st.ToString();
  auto rows = Rows();
  ASSERT_EQ(rows->num_rows(), 100);
  int64_t seen = 0, total = 0;
  for (const auto& chunk : rows->GetColumnByName("c")->chunks()) {
    const auto& c = static_cast<const arrow::Int64Array&>(*chunk);
    for (int64_t i = 0; i < c.length(); ++i) total += c.Value(i);
  }
  for (const auto& chunk : rows->GetColumnByName("id")->chunks()) {
    const auto& c = static_cast<const arrow::Int64Array&>(*chunk);
    for (int64_t i = 0; i < c.length(); ++i) seen += c.Value(i) == 5;
  }
  EXPECT_EQ(seen, 1);
  EXPECT_EQ(total, kWriters);
  EXPECT_EQ(LatestVersion(), 1u + kWriters);
}

TEST_P(ConcurrentWritersTest, MergeInsertsAndDeletesOfOtherRowsAllCommit) {
  auto source = [](int64_t id, int64_t c) {
    auto schema = arrow::schema({arrow::field("id", arrow::int64()), arrow::field("c", arrow::int64())});
    arrow::Int64Builder ids, counts;
    EXPECT_TRUE(ids.Append(id).ok());
    EXPECT_TRUE(counts.Append(c).ok());
    auto batch = arrow::RecordBatch::Make(schema, 1, {*ids.Finish(), *counts.Finish()});
    return *arrow::RecordBatchReader::Make({batch}, schema);
  };
  std::vector<std::function<Status()>> writers = {
      [&] { return DeleteRows(dir_.string(), "id = 50").status(); },
      [&] { return DeleteRows(dir_.string(), "id = 60").status(); },
      [&] {
        MergeInsertParams p;
        p.on = {"id"};
        p.when_matched_update_all = true;
        return MergeInsert(dir_.string(), source(10, 100), p).status();
      },
      [&] {
        MergeInsertParams p;
        p.on = {"id"};
        p.when_matched_update_all = true;
        p.when_not_matched_insert_all = true;
        return MergeInsert(dir_.string(), source(20, 200), p).status();
      },
  };
  std::vector<Status> results(writers.size());
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  for (size_t i = 0; i < writers.size(); ++i) {
    threads.emplace_back([&, i] {
      while (!go) std::this_thread::yield();
      results[i] = writers[i]();
    });
  }
  go = true;
  for (auto& t : threads) t.join();
  for (const auto& st : results) EXPECT_TRUE(st.ok()) << st.ToString();
  auto rows = Rows();
  std::map<int64_t, int64_t> c_of;
  auto ids = *arrow::Concatenate(rows->GetColumnByName("id")->chunks());
  auto cs = *arrow::Concatenate(rows->GetColumnByName("c")->chunks());
  for (int64_t i = 0; i < ids->length(); ++i) {
    const int64_t id = static_cast<const arrow::Int64Array&>(*ids).Value(i);
    EXPECT_EQ(c_of.count(id), 0u) << "row " << id << " twice";
    c_of[id] = static_cast<const arrow::Int64Array&>(*cs).Value(i);
  }
  EXPECT_EQ(c_of.size(), 98u);
  EXPECT_EQ(c_of.count(50) + c_of.count(60), 0u);
  EXPECT_EQ(c_of[10], 100);
  EXPECT_EQ(c_of[20], 200);
  EXPECT_EQ(LatestVersion(), 1u + writers.size());
}

INSTANTIATE_TEST_SUITE_P(StableRowIds, ConcurrentWritersTest, ::testing::Bool());

TEST(SlotBackoff, FourEightSixteenSlotsOfTheUnit) {
  txn::SlotBackoff backoff;
  backoff.set_unit(std::chrono::milliseconds(3));
  for (uint64_t slots : {4, 8, 16, 32}) {
    const auto wait = backoff.Next();
    EXPECT_EQ(wait.count() % 3, 0);
    EXPECT_LT(wait.count(), static_cast<int64_t>(3 * slots));
  }
  EXPECT_EQ(backoff.attempt(), 4u);
  EXPECT_EQ(txn::SlotUnitAfter(std::chrono::milliseconds(100)).count(), 110);
}

Status Retryable() { return MakeError(ErrorKind::kRetryableCommitConflict, "retryable commit conflict: x"); }

TEST(OperationRetries, ReRunsUpToConflictRetries) {
  RetryParams params;
  params.conflict_retries = 2;
  int runs = 0;
  auto r = ops::RunWithRetries(params, "delete of t", [&]() -> Result<int> {
    ++runs;
    return Retryable();
  });
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(runs, 3);
  EXPECT_EQ(GetErrorKind(r.status()), ErrorKind::kTooMuchWriteContention) << r.status().ToString();
  EXPECT_NE(r.status().message().find("delete of t"), std::string::npos);
  EXPECT_NE(r.status().message().find("retryable commit conflict: x"), std::string::npos);
}

TEST(OperationRetries, SucceedsAfterConflicts) {
  int runs = 0;
  auto r = ops::RunWithRetries(RetryParams{}, "update of t", [&]() -> Result<int> {
    if (++runs < 3) return Retryable();
    return 7;
  });
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, 7);
}

TEST(OperationRetries, OtherErrorsAndIncompatibleConflictsAreNotRetried) {
  for (Status st : {Status::IOError("disk"), MakeError(ErrorKind::kCommitConflict, "commit conflict: y")}) {
    int runs = 0;
    auto r = ops::RunWithRetries(RetryParams{}, "t", [&]() -> Result<int> {
      ++runs;
      return st;
    });
    EXPECT_EQ(runs, 1);
    EXPECT_EQ(r.status().ToString(), st.ToString());
  }
}

TEST(OperationRetries, StopsAtTheTimeout) {
  RetryParams params;
  params.retry_timeout = std::chrono::milliseconds(30);
  int runs = 0;
  auto r = ops::RunWithRetries(params, "merge-insert into t", [&]() -> Result<int> {
    ++runs;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    return Retryable();
  });
  EXPECT_EQ(GetErrorKind(r.status()), ErrorKind::kTooMuchWriteContention) << r.status().ToString();
  EXPECT_LE(runs, 3);
  EXPECT_NE(r.status().message().find("retry timeout"), std::string::npos);
}

}  // namespace
}  // namespace lance
