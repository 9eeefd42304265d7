// UpdateConfig (config, table/schema/field metadata), its conflict rules
// against concurrent commits, inline-only transactions (flag 32), and the
// automatic cleanup's config parsing (humantime durations, the policy).
#include <gtest/gtest.h>

#include <arrow/api.h>

#include <filesystem>
#include <functional>
#include <limits>
#include <map>

#include "lance/dataset.h"
#include "lance/dataset_ops.h"
#include "lance/io/object_store.h"
#include "lance/ops/auto_cleanup.h"
#include "lance/status.h"
#include "lance/table/manifest_file.h"
#include "lance/table/manifest_location.h"
#include "lance/write.h"

namespace lance {
namespace {

namespace fs = std::filesystem;

std::shared_ptr<arrow::RecordBatchReader> Rows(int64_t from, int64_t to) {
  arrow::Int64Builder id;
  arrow::StringBuilder name;
  for (int64_t i = from; i < to; ++i) {
    EXPECT_TRUE(id.Append(i).ok());
    EXPECT_TRUE(name.Append("n" + std::to_string(i)).ok());
  }
  auto schema = arrow::schema({arrow::field("id", arrow::int64()), arrow::field("name", arrow::utf8())});
  auto batch = arrow::RecordBatch::Make(schema, to - from, {*id.Finish(), *name.Finish()});
  return *arrow::RecordBatchReader::Make({batch}, schema);
}

UpdateMap Set(std::vector<std::pair<std::string, std::string>> kv, bool replace = false) {
  UpdateMap m;
  for (auto& [k, v] : kv) m.entries.emplace_back(k, v);
  m.replace = replace;
  return m;
}

UpdateMap Unset(std::vector<std::string> keys) {
  UpdateMap m;
  for (auto& k : keys) m.entries.emplace_back(k, std::nullopt);
  return m;
}

class UpdateConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("lance_update_config_test_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    uri_ = (dir_ / "ds").string();
    WriteParams params;
    params.max_rows_per_file = 10;
    auto ds = WriteDataset(Rows(0, 20), uri_, params);
    ASSERT_TRUE(ds.ok()) << ds.status().ToString();
    v1_ = *ds;
  }
  void TearDown() override { fs::remove_all(dir_); }

  table::ManifestFile ManifestOf(uint64_t version) {
    auto store = *io::ObjectStore::Open(uri_);
    auto loc = table::FindManifest(*store, version);
    EXPECT_TRUE(loc.ok());
    auto bytes = store->ReadAll(loc->path);
    EXPECT_TRUE(bytes.ok());
    auto file = table::ParseManifestFile(*bytes, loc->path);
    EXPECT_TRUE(file.ok()) << file.status().ToString();
    return *file;
  }

  fs::path dir_;
  std::string uri_;
  std::shared_ptr<Dataset> v1_;
};

TEST_F(UpdateConfigTest, AppliesEveryMap) {
  auto v2 = v1_->NewUpdateConfig()
                .Config(Set({{"a", "1"}, {"b", "2"}}))
                .TableMetadata(Set({{"owner", "me"}}))
                .SchemaMetadata(Set({{"s", "x"}}))
                .FieldMetadata("name", Set({{"f", "y"}}))
                .Commit();
  ASSERT_TRUE(v2.ok()) << v2.status().ToString();
  const Manifest& m = (*v2)->manifest();
  EXPECT_EQ(m.version, 2u);
  EXPECT_EQ(m.config, (std::map<std::string, std::string>{{"a", "1"}, {"b", "2"}}));
  EXPECT_EQ(m.table_metadata, (std::map<std::string, std::string>{{"owner", "me"}}));
  EXPECT_EQ(m.schema.metadata, (std::map<std::string, std::string>{{"s", "x"}}));
  EXPECT_EQ(m.schema.fields[1].metadata, (std::map<std::string, std::string>{{"f", "y"}}));
  EXPECT_EQ(m.writer_feature_flags & 8, 8u);  // table config

  auto v3 = (*v2)->NewUpdateConfig().Config(Unset({"a", "b"})).SchemaMetadata(Set({}, /*replace=*/true)).Commit();
  ASSERT_TRUE(v3.ok()) << v3.status().ToString();
  EXPECT_TRUE((*v3)->manifest().config.empty());
  EXPECT_TRUE((*v3)->manifest().schema.metadata.empty());
  EXPECT_EQ((*v3)->manifest().writer_feature_flags & 8, 0u);  // no config, no bit
  EXPECT_EQ((*v3)->manifest().table_metadata.size(), 1u);     // untouched

  auto bad = (*v3)->NewUpdateConfig().FieldMetadata("name.x", Set({{"k", "v"}})).Commit();
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("field 'name.x' not found"), std::string::npos) << bad.status().message();
}

// The conflict matrix's UpdateConfig row and column (c3): a commit from v1
// after another one committed v2.
struct ConflictCase {
  const char* name;
  std::function<Result<std::shared_ptr<Dataset>>(const std::shared_ptr<Dataset>&)> theirs;
  std::function<Result<std::shared_ptr<Dataset>>(const std::shared_ptr<Dataset>&)> mine;
  bool compatible;
};

TEST_F(UpdateConfigTest, ConflictsAsTheReference) {
  auto config = [](UpdateMap m) {
    return [m](const std::shared_ptr<Dataset>& d) { return d->NewUpdateConfig().Config(m).Commit(); };
  };
  auto schema_md = [](UpdateMap m) {
    return [m](const std::shared_ptr<Dataset>& d) { return d->NewUpdateConfig().SchemaMetadata(m).Commit(); };
  };
  auto field_md = [](std::string f, UpdateMap m) {
    return [f, m](const std::shared_ptr<Dataset>& d) { return d->NewUpdateConfig().FieldMetadata(f, m).Commit(); };
  };
  auto append = [](const std::shared_ptr<Dataset>& d) { return d->NewAppend().Commit(Rows(100, 105)); };
  auto del = [](const std::shared_ptr<Dataset>& d) { return d->NewDelete("id = 3").Commit(); };
  auto overwrite = [](std::map<std::string, std::string> cfg) {
    return [cfg](const std::shared_ptr<Dataset>& d) {
      WriteParams p;
      p.config = cfg;
      return d->NewOverwrite().Options(p).Commit(Rows(0, 5));
    };
  };
  const std::vector<ConflictCase> cases = {
      {"same key set twice", config(Set({{"k", "1"}})), config(Set({{"k", "2"}})), false},
      {"key set, then removed", config(Set({{"k", "1"}})), config(Unset({"k"})), false},
      {"key removed, then set", config(Unset({"k"})), config(Set({{"k", "2"}})), false},
      {"both remove a key", config(Unset({"k"})), config(Unset({"k"})), true},
      {"different keys", config(Set({{"a", "1"}})), config(Set({{"b", "2"}})), true},
      {"schema metadata twice", schema_md(Set({{"a", "1"}})), schema_md(Set({{"b", "2"}})), false},
      {"schema metadata and a config key", schema_md(Set({{"a", "1"}})), config(Set({{"a", "1"}})), true},
      {"same field", field_md("id", Set({{"a", "1"}})), field_md("id", Set({{"b", "1"}})), false},
      {"different fields", field_md("id", Set({{"a", "1"}})), field_md("name", Set({{"a", "1"}})), true},
      {"config after an append", append, config(Set({{"k", "1"}})), true},
      {"config after a delete", del, config(Set({{"k", "1"}})), true},
      {"append after a config change", config(Set({{"k", "1"}})), append, true},
      {"delete after a config change", config(Set({{"k", "1"}})), del, true},
      {"config after an overwrite setting another key", overwrite({{"x", "1"}}), config(Set({{"k", "1"}})), true},
      // The reference reads a committed Overwrite's config upserts back as
      // none, so they conflict with nothing.
      {"config after an overwrite setting the key", overwrite({{"k", "1"}}), config(Set({{"k", "2"}})), true},
      {"schema metadata after an overwrite", overwrite({}), schema_md(Set({{"a", "1"}})), false},
      {"overwrite setting a key after it was removed", config(Unset({"k"})), overwrite({{"k", "1"}}), false},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    fs::remove_all(uri_);
    WriteParams params;
    params.max_rows_per_file = 10;
    auto base = WriteDataset(Rows(0, 20), uri_, params);
    ASSERT_TRUE(base.ok());
    auto theirs = c.theirs(*base);
    ASSERT_TRUE(theirs.ok()) << theirs.status().ToString();
    auto mine = c.mine(*base);  // read at v1, v2 committed since
    if (c.compatible) {
      ASSERT_TRUE(mine.ok()) << mine.status().ToString();
      EXPECT_EQ((*mine)->version(), 3u);
    } else {
      ASSERT_FALSE(mine.ok());
      EXPECT_EQ(GetErrorKind(mine.status()), ErrorKind::kCommitConflict) << mine.status().ToString();
    }
  }
}

TEST_F(UpdateConfigTest, InlineOnlyTransactions) {
  UpdateConfigOptions options;
  options.disable_transaction_file = true;
  auto v2 = v1_->NewUpdateConfig().Config(Set({{"k", "1"}})).Options(options).Commit();
  ASSERT_TRUE(v2.ok()) << v2.status().ToString();
  auto file = ManifestOf(2);
  EXPECT_TRUE(file.manifest.transaction_file.empty());
  EXPECT_TRUE(file.transaction_bytes.has_value());
  EXPECT_EQ(file.manifest.writer_feature_flags, 8u | 32u);
  size_t txn_files = 0;
  for (const auto& e : fs::directory_iterator(fs::path(uri_) / "_transactions")) txn_files += e.is_regular_file();
  EXPECT_EQ(txn_files, 1u);  // version 1's only

  // A delete read at v1 is checked against v2's inline transaction, and
  // also with no transaction file anywhere.
  for (const auto& e : fs::directory_iterator(fs::path(uri_) / "_transactions")) fs::remove(e.path());
  DeleteOptions del;
  del.disable_transaction_file = true;
  auto v3 = v1_->NewDelete("id = 1").Options(del).Commit();
  ASSERT_TRUE(v3.ok()) << v3.status().ToString();
  EXPECT_EQ((*v3)->version(), 3u);
  EXPECT_EQ((*v3)->manifest().config.at("k"), "1");
  auto versions = (*v3)->Versions();
  ASSERT_TRUE(versions.ok());
  ASSERT_EQ(versions->size(), 3u);
  EXPECT_EQ((*versions)[1].operation, "UpdateConfig");
  EXPECT_EQ((*versions)[2].operation, "Delete");
  // A normal commit writes its file again and clears the bit.
  auto v4 = (*v3)->NewUpdateConfig().Config(Unset({"k"})).Commit();
  ASSERT_TRUE(v4.ok());
  EXPECT_FALSE(ManifestOf(4).manifest.transaction_file.empty());
  EXPECT_EQ(ManifestOf(4).manifest.writer_feature_flags & 32, 0u);
}

TEST_F(UpdateConfigTest, UnimplementedLanceKeysRefusedOnWrite) {
  // Writing such a key with the rows is refused as well as writing to a
  // dataset that has it; setting it through UpdateConfig is allowed (it
  // changes nothing but the config), and so is removing it.
  WriteParams params;
  params.mode = WriteMode::kAppend;
  params.config = {{"lance.row_lineage.spill", "true"}};
  auto appended = WriteDataset(Rows(50, 52), uri_, params);
  ASSERT_FALSE(appended.ok());
  EXPECT_NE(appended.status().message().find("lance.row_lineage.spill"), std::string::npos);
  auto v2 = v1_->NewUpdateConfig().Config(Set({{"lance.auto_cleanup.referenced_branch", "true"}})).Commit();
  ASSERT_TRUE(v2.ok()) << v2.status().ToString();
  auto del = (*v2)->NewDelete("id = 1").Commit();
  ASSERT_FALSE(del.ok());
  EXPECT_NE(del.status().message().find("lance.auto_cleanup.referenced_branch"), std::string::npos);
  auto v3 = (*v2)->NewUpdateConfig().Config(Set({{"lance.auto_cleanup.referenced_branch", "false"}})).Commit();
  ASSERT_TRUE(v3.ok());
  EXPECT_TRUE((*v3)->NewDelete("id = 1").Commit().ok());
}

TEST(HumanDurationTest, HumantimeSyntax) {
  constexpr int64_t s = 1'000'000'000;
  const std::vector<std::pair<std::string, int64_t>> ok = {
      {"0s", 0},          {"14days", 14 * 86400 * s}, {"2h 37min", 9420 * s}, {"1h30m", 5400 * s},
      {"32ms", 32'000'000}, {"17nsec", 17},            {"78us", 78'000},      {"1 0s", 10 * s},
      {"5 s", 5 * s},     {"1week", 604800 * s},      {"12M", 31'560'192 * s}, {"1y", 31'557'600 * s},
      {" 20 min 17 nsec ", 1200 * s + 17},            {"3600sec", 3600 * s},
  };
  for (const auto& [text, nanos] : ok) {
    auto d = ops::ParseHumanDuration(text);
    ASSERT_TRUE(d.ok()) << text << ": " << d.status().ToString();
    EXPECT_EQ(*d, nanos) << text;
  }
  for (const char* bad : {"", "  ", "0", "10", "1.5h", "-1s", "5 parsecs", "h", "1h-2m", "soon"}) {
    EXPECT_FALSE(ops::ParseHumanDuration(bad).ok()) << bad;
  }
  EXPECT_EQ(*ops::ParseHumanDuration("100000000000y"), std::numeric_limits<int64_t>::max());  // saturates
  // pylance stores auto_cleanup_options' older_than in humantime's format;
  // it reads back to the same seconds.
  EXPECT_EQ(ops::FormatHumanDuration(0), "0s");
  EXPECT_EQ(ops::FormatHumanDuration(14 * 86400 + 5), "14days 5s");
  EXPECT_EQ(ops::FormatHumanDuration(3661), "1h 1m 1s");
  EXPECT_EQ(ops::FormatHumanDuration(86400), "1day");
  for (uint64_t secs : {uint64_t{1}, uint64_t{59}, uint64_t{90061}, uint64_t{31557600 * 3 + 2630016 + 7}}) {
    EXPECT_EQ(*ops::ParseHumanDuration(ops::FormatHumanDuration(secs)), static_cast<int64_t>(secs) * s) << secs;
  }
}

TEST(AutoCleanupPolicyTest, WhenAndWhat) {
  const int64_t now = 1'000'000 * int64_t{1'000'000'000};
  using Config = std::map<std::string, std::string>;
  auto policy = [&](const Config& c, uint64_t version, std::vector<uint64_t> versions = {}) {
    return ops::AutoCleanupPolicy(c, version, versions, now);
  };
  EXPECT_FALSE(policy({}, 4)->has_value());                                           // no interval
  EXPECT_FALSE(policy({{"lance.auto_cleanup.older_than", "0s"}}, 4)->has_value());  // still none
  EXPECT_FALSE(policy({{"lance.auto_cleanup.interval", "3"}}, 4)->has_value());     // not a multiple
  auto p = policy({{"lance.auto_cleanup.interval", "3"}, {"lance.auto_cleanup.older_than", "1m"}}, 6);
  ASSERT_TRUE(p.ok() && p->has_value());
  EXPECT_EQ((*p)->keep_from_version, 5u);  // the version the commit read
  EXPECT_EQ((*p)->before_timestamp_nanos, now - 60 * int64_t{1'000'000'000});
  EXPECT_FALSE((*p)->before_version.has_value());
  EXPECT_TRUE((*p)->error_if_tagged_old_versions);
  // Interval 0: every version.
  EXPECT_TRUE(policy({{"lance.auto_cleanup.interval", "0"}}, 7)->has_value());
  // retain_versions: the n-th newest version is the first kept.
  p = policy({{"lance.auto_cleanup.interval", "1"}, {"lance.auto_cleanup.retain_versions", "3"}}, 9,
             {2, 5, 6, 7, 8, 9});
  ASSERT_TRUE(p.ok() && p->has_value());
  EXPECT_EQ((*p)->before_version, 7u);
  p = policy({{"lance.auto_cleanup.interval", "1"}, {"lance.auto_cleanup.retain_versions", "10"}}, 9, {2, 9});
  EXPECT_EQ((*p)->before_version, 2u);
  p = policy({{"lance.auto_cleanup.interval", "1"}, {"lance.auto_cleanup.delete_rate_limit", "50"}}, 9);
  EXPECT_EQ((*p)->delete_rate_limit, 50u);
  // Values that do not parse: an error naming the key (pylance logs it and
  // keeps the commit).
  for (const Config& c : std::vector<Config>{
           {{"lance.auto_cleanup.interval", "abc"}},
           {{"lance.auto_cleanup.interval", "-1"}},
           {{"lance.auto_cleanup.interval", "1"}, {"lance.auto_cleanup.older_than", "14"}},
           {{"lance.auto_cleanup.interval", "1"}, {"lance.auto_cleanup.retain_versions", "x"}},
           {{"lance.auto_cleanup.interval", "1"}, {"lance.auto_cleanup.referenced_branch", "yes"}},
           {{"lance.auto_cleanup.interval", "1"}, {"lance.auto_cleanup.delete_rate_limit", "0"}},
           {{"lance.auto_cleanup.interval", "1"}, {"lance.auto_cleanup.delete_concurrency", "many"}}}) {
    // The key at fault: the one besides the interval, if any.
    std::string key = "lance.auto_cleanup.interval";
    for (const auto& [k, v] : c) {
      if (k != "lance.auto_cleanup.interval") key = k;
    }
    auto r = policy(c, 4, {1, 2, 3, 4});
    ASSERT_FALSE(r.ok()) << key;
    EXPECT_NE(r.status().message().find(key), std::string::npos) << r.status().message();
  }
}

}  // namespace
}  // namespace lance
