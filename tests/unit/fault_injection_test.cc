// Every write path against a filesystem that fails each of its I/O calls in
// turn (tests/unit/fault_fs.h). Whatever call fails, and however (an error,
// a torn write, an error on every call after it), the dataset is left at
// the version before or the version after, with that version's rows; it
// opens, `Verify` finds nothing, the next commit works, and a cleanup
// afterwards removes every file the failed attempt left behind.
#include <gtest/gtest.h>

#include <arrow/api.h>
#include <arrow/filesystem/localfs.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <set>

#include "fault_fs.h"
#include "lance/compaction.h"
#include "lance/dataset.h"
#include "lance/dataset_ops.h"
#include "lance/index_ops.h"
#include "lance/row_ops.h"
#include "lance/scanner.h"
#include "lance/verify.h"
#include "lance/write.h"

namespace lance {
namespace {

namespace stdfs = std::filesystem;
using fault::FaultInjectingFileSystem;
using fault::FaultKind;

std::shared_ptr<arrow::RecordBatchReader> Rows(int64_t from, int64_t to, const std::string& prefix = "row-") {
  arrow::Int64Builder id;
  arrow::StringBuilder name;
  for (int64_t i = from; i < to; ++i) {
    EXPECT_TRUE(id.Append(i).ok());
    EXPECT_TRUE(name.Append(prefix + std::to_string(i)).ok());
  }
  auto schema = arrow::schema({arrow::field("id", arrow::int64()), arrow::field("name", arrow::utf8())});
  auto batch = arrow::RecordBatch::Make(schema, to - from, {*id.Finish(), *name.Finish()});
  return *arrow::RecordBatchReader::Make({batch}, schema);
}

// What a reader sees of the latest version.
struct State {
  uint64_t version = 0;
  std::vector<std::string> rows;  // "id:name", sorted
  std::set<std::string> tags;
  size_t indices = 0;
  size_t versions = 0;
  bool operator==(const State&) const = default;
};

std::string Describe(const State& s) {
  return "version " + std::to_string(s.version) + ", " + std::to_string(s.rows.size()) + " rows, " +
         std::to_string(s.tags.size()) + " tags, " + std::to_string(s.indices) + " indices, " +
         std::to_string(s.versions) + " versions";
}

Result<State> Snapshot(const std::string& uri) {
  LANCE_ASSIGN_OR_RAISE(auto ds, Dataset::Open(uri));
  State s;
  s.version = ds->version();
  s.indices = ds->indices().size();
  LANCE_ASSIGN_OR_RAISE(auto table, ScanBuilder(ds).ToTable());
  LANCE_ASSIGN_OR_RAISE(auto combined, table->CombineChunksToBatch());
  auto ids = std::static_pointer_cast<arrow::Int64Array>(combined->GetColumnByName("id"));
  auto names = std::static_pointer_cast<arrow::StringArray>(combined->GetColumnByName("name"));
  for (int64_t i = 0; i < combined->num_rows(); ++i) {
    s.rows.push_back(std::to_string(ids->Value(i)) + ":" + std::string(names->GetView(i)));
  }
  std::sort(s.rows.begin(), s.rows.end());
  LANCE_ASSIGN_OR_RAISE(auto tags, ds->Tags());
  for (const auto& [name, info] : tags) s.tags.insert(name);
  LANCE_ASSIGN_OR_RAISE(auto versions, ds->Versions());
  s.versions = versions.size();
  return s;
}

// Files below the dataset root that no remaining version references.
Result<std::vector<std::string>> Unreferenced(const std::string& uri) {
  LANCE_ASSIGN_OR_RAISE(auto latest, Dataset::Open(uri));
  LANCE_ASSIGN_OR_RAISE(auto versions, latest->Versions());
  std::set<std::string> referenced;
  std::set<std::string> index_dirs;
  for (const auto& v : versions) {
    LANCE_ASSIGN_OR_RAISE(auto ds, latest->Checkout(std::to_string(v.version)));
    const Manifest& m = ds->manifest();
    for (const auto& frag : m.fragments) {
      for (const auto& file : frag.files) referenced.insert("data/" + file.path);
      if (frag.deletion_file) referenced.insert(frag.deletion_file->RelativePath(frag.id));
    }
    if (!m.transaction_file.empty()) referenced.insert("_transactions/" + m.transaction_file);
    for (const auto& index : ds->indices()) index_dirs.insert("_indices/" + index.UuidString() + "/");
  }
  std::vector<std::string> out;
  size_t manifests = 0;
  for (const auto& entry : stdfs::recursive_directory_iterator(uri)) {
    if (!entry.is_regular_file()) continue;
    const std::string rel = stdfs::relative(entry.path(), uri).generic_string();
    if (rel.starts_with("_versions/")) {
      if (rel.ends_with(".manifest") && rel.find("/.tmp") == std::string::npos) {
        ++manifests;
      } else if (rel != "_versions/latest_version_hint.json") {
        out.push_back(rel);
      }
      continue;
    }
    if (rel.starts_with("_refs/")) continue;
    if (referenced.count(rel)) continue;
    bool in_index = false;
    for (const auto& dir : index_dirs) in_index = in_index || rel.starts_with(dir);
    if (!in_index) out.push_back(rel);
  }
  if (manifests != versions.size()) {
    out.push_back("_versions/: " + std::to_string(manifests) + " manifests for " + std::to_string(versions.size()) +
                  " versions");
  }
  return out;
}

using Op = std::function<Status(const std::shared_ptr<Dataset>&)>;

struct Case {
  const char* name;
  Op op;
  // Compaction commits a ReserveFragments version before its Rewrite (as
  // pylance does): a failure between the two leaves that version, whose
  // rows are the ones before.
  bool reserves_first = false;
};

const Case kCases[] = {
    {"append", [](const auto& ds) { return ds->NewAppend().Commit(Rows(100, 120)).status(); }},
    {"overwrite", [](const auto& ds) { return ds->NewOverwrite().Commit(Rows(500, 530)).status(); }},
    {"delete", [](const auto& ds) { return ds->NewDelete("id < 30").Commit().status(); }},
    {"update",
     [](const auto& ds) {
       return ds->NewUpdate().Set("name", "'updated'").Where("id >= 45 AND id < 60").Commit().status();
     }},
    {"merge_insert",
     [](const auto& ds) {
       return ds->NewMergeInsert({"id"})
           .WhenMatchedUpdateAll()
           .WhenNotMatchedInsertAll()
           .Commit(Rows(90, 110, "merged-"))
           .status();
     }},
    {"compaction",
     [](const auto& ds) {
       CompactionOptions options;
       options.target_rows_per_fragment = 1000;
       return ds->NewCompaction().Options(options).Commit().status();
     },
     /*reserves_first=*/true},
    {"index_build", [](const auto& ds) { return CreateIndexBuilder(ds, "id", "BTREE").Commit().status(); }},
    {"cleanup",
     [](const auto& ds) {
       CleanupOptions options;
       options.error_if_tagged_old_versions = false;
       return ds->CleanupOldVersions(0, /*delete_unverified=*/true, options).status();
     }},
    {"restore", [](const auto& ds) { return ds->NewRestore(1).Commit().status(); }},
    {"tag", [](const auto& ds) { return ds->CreateTag("t1", 1); }},
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class FaultInjectionTest : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    std::string name = GetParam().name;
    dir_ = stdfs::temp_directory_path() / ("lance_fault_test_" + std::to_string(::getpid()) + "_" + name);
    stdfs::remove_all(dir_);
    base_ = (dir_ / "base").string();
    // Four fragments, one with deletions, an older version to clean up or
    // restore, a tag on none yet.
    WriteParams params;
    params.max_rows_per_file = 25;
    params.data_storage_version = "2.1";
    ASSERT_TRUE(WriteDataset(Rows(0, 100), base_, params).ok());
    auto ds = Dataset::Open(base_);
    ASSERT_TRUE(ds.ok()) << ds.status().ToString();
    auto deleted = (*ds)->NewDelete("id % 10 = 3").Commit();
    ASSERT_TRUE(deleted.ok()) << deleted.status().ToString();
  }
  void TearDown() override {
    if (!HasFailure()) stdfs::remove_all(dir_);
  }

  // A fresh copy of the base dataset, opened through `fs`.
  std::string Copy(const std::string& name) {
    const stdfs::path target = dir_ / name;
    stdfs::remove_all(target);
    stdfs::copy(base_, target, stdfs::copy_options::recursive);
    return target.string();
  }

  struct Opened {
    std::string uri;
    std::shared_ptr<FaultInjectingFileSystem> fs;  // unarmed
    std::shared_ptr<Dataset> dataset;
  };
  // A fresh copy named `name`, opened through a fault-injecting filesystem.
  Result<Opened> CopyAndOpen(const std::string& name) {
    Opened out;
    out.uri = Copy(name);
    out.fs = std::make_shared<FaultInjectingFileSystem>(std::make_shared<arrow::fs::LocalFileSystem>());
    OpenOptions open;
    open.filesystem = out.fs;
    LANCE_ASSIGN_OR_RAISE(out.dataset, Dataset::Open(out.uri, open));
    return out;
  }

  // Runs the case with call `n` failing as `kind` says; checks what is left.
  void RunFaulted(int64_t n, FaultKind kind, bool sticky, const State& before, const State& after) {
    const std::string label = std::string(GetParam().name) + " call " + std::to_string(n) +
                              (kind == FaultKind::kShortWrite ? " torn" : kind == FaultKind::kStall ? " stall" : "") +
                              (sticky ? " sticky" : "");
    SCOPED_TRACE(label);
    auto opened = CopyAndOpen("run");
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    const std::string uri = opened->uri;
    auto& fs = opened->fs;
    fs->Arm(n, kind, sticky);
    const Status st = GetParam().op(opened->dataset);
    const std::string fired = fs->fired_call();
    fs->Disarm();
    SCOPED_TRACE("faulted call: " + fired + "; operation: " + st.ToString());
    if (kind == FaultKind::kStall) ASSERT_TRUE(st.ok()) << st.ToString();

    auto state = Snapshot(uri);
    ASSERT_TRUE(state.ok()) << "the dataset does not open: " << state.status().ToString();
    if (st.ok()) {
      EXPECT_EQ(*state, after) << Describe(*state) << " vs after: " << Describe(after);
    } else {
      State reserved = before;
      reserved.version += 1;
      reserved.versions += 1;
      EXPECT_TRUE(*state == before || *state == after || (GetParam().reserves_first && *state == reserved))
          << Describe(*state) << "; before: " << Describe(before) << "; after: " << Describe(after);
    }
    auto report = Verify(uri);
    ASSERT_TRUE(report.ok()) << report.status().ToString();
    for (const auto& f : report->findings) ADD_FAILURE() << "verify: " << f.path << ": " << f.message;
    if (kind == FaultKind::kFail) {
      // For pylance to open too, once per test (see CheckWithPylance).
      const stdfs::path kept = dir_ / "kept" / std::to_string(n);
      stdfs::create_directories(kept.parent_path());
      stdfs::copy(uri, kept, stdfs::copy_options::recursive);
      kept_.push_back({kept.string(), *state});
    }

    // The next commit works, and a cleanup leaves only referenced files.
    auto reopened = Dataset::Open(uri);
    ASSERT_TRUE(reopened.ok());
    auto appended = (*reopened)->NewAppend().Commit(Rows(1000, 1005));
    ASSERT_TRUE(appended.ok()) << "the next commit: " << appended.status().ToString();
    CleanupOptions options;
    options.error_if_tagged_old_versions = false;
    auto cleaned = (*appended)->CleanupOldVersions(0, /*delete_unverified=*/true, options);
    ASSERT_TRUE(cleaned.ok()) << cleaned.status().ToString();
    auto left = Unreferenced(uri);
    ASSERT_TRUE(left.ok()) << left.status().ToString();
    for (const auto& f : *left) ADD_FAILURE() << "left after cleanup: " << f;
    auto final_state = Snapshot(uri);
    ASSERT_TRUE(final_state.ok()) << final_state.status().ToString();
    EXPECT_EQ(final_state->rows.size(), state->rows.size() + 5);
    report = Verify(uri);
    ASSERT_TRUE(report.ok()) << report.status().ToString();
    EXPECT_TRUE(report->ok());
  }

  // pylance opens every dataset a failed run left, at the version and with
  // the rows lance-cpp saw, and its validate() passes.
  void CheckWithPylance() {
#ifdef LANCE_PYTHON
    if (kept_.empty()) return;
    const stdfs::path list = dir_ / "kept.txt";
    {
      std::ofstream out(list);
      for (const auto& [path, state] : kept_) out << path << "\t" << state.version << "\t" << state.rows.size() << "\n";
    }
    const stdfs::path script = dir_ / "check.py";
    {
      std::ofstream out(script);
      out << "import sys, lance\n"
             "bad = 0\n"
             "for line in open(sys.argv[1]):\n"
             "    path, version, rows = line.rstrip('\\n').split('\\t')\n"
             "    try:\n"
             "        ds = lance.dataset(path)\n"
             "        ds.validate()\n"
             "        got = (ds.version, ds.count_rows())\n"
             "    except Exception as e:\n"
             "        got = repr(e)\n"
             "    if got != (int(version), int(rows)):\n"
             "        bad += 1\n"
             "        print(f'{path}: pylance sees {got}, lance-cpp version {version} with {rows} rows')\n"
             "sys.exit(1 if bad else 0)\n";
    }
    const std::string cmd = std::string(LANCE_PYTHON) + " " + script.string() + " " + list.string();
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
#endif
  }

  stdfs::path dir_;
  std::string base_;
  std::vector<std::pair<std::string, State>> kept_;
};

TEST_P(FaultInjectionTest, EveryCallFailsInTurn) {
  auto before = Snapshot(base_);
  ASSERT_TRUE(before.ok()) << before.status().ToString();

  // A clean run through the counting filesystem: how many calls, and the
  // state a successful run leaves.
  auto opened = CopyAndOpen("dry");
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  const std::string dry = opened->uri;
  auto& fs = opened->fs;
  fs->Arm(0, FaultKind::kFail);
  Status st = GetParam().op(opened->dataset);
  ASSERT_TRUE(st.ok()) << st.ToString();
  const int64_t calls = fs->calls();
  ASSERT_GT(calls, 0);
  auto after = Snapshot(dry);
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  ASSERT_FALSE(*after == *before) << "the operation changes nothing a reader sees";
  RecordProperty("io_calls", std::to_string(calls));
  std::cout << GetParam().name << ": " << calls << " I/O calls, each made to fail in turn\n";

  for (int64_t n = 1; n <= calls && !HasFatalFailure(); ++n) {
    RunFaulted(n, FaultKind::kFail, /*sticky=*/false, *before, *after);
    RunFaulted(n, FaultKind::kShortWrite, /*sticky=*/true, *before, *after);
    if (HasFailure()) break;  // one call's report is enough to act on
  }
  CheckWithPylance();
  // Stalls change nothing but timing.
  for (int64_t n = 1; n <= calls; n += std::max<int64_t>(1, calls / 8)) {
    RunFaulted(n, FaultKind::kStall, /*sticky=*/false, *before, *after);
    if (HasFailure()) break;
  }
}

INSTANTIATE_TEST_SUITE_P(WritePaths, FaultInjectionTest, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<Case>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace lance
