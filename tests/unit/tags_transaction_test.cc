// Tag files, transaction summaries and data file format versions.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include <google/protobuf/stubs/logging.h>

#include "lance/file/version.h"
#include "lance/table/tags.h"
#include "lance/transaction.pb.h"
#include "lance/txn/transaction.h"

namespace lance {
namespace {

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

const std::string kTagPath = "/ds/_refs/tags/release.json";

// ---------------------------------------------------------------------------
// Tags.

TEST(TagTest, ParsesCamelCaseKeys) {
  auto tag = table::ParseTag(R"({"branch":null,"version":3,"manifestSize":1234})", kTagPath);
  ASSERT_TRUE(tag.ok()) << tag.status().ToString();
  EXPECT_FALSE(tag->branch.has_value());
  EXPECT_EQ(tag->version, 3u);
  EXPECT_EQ(tag->manifest_size, 1234u);

  tag = table::ParseTag(R"({"branch":"dev","version":18446744073709551615,"manifestSize":0})", kTagPath);
  ASSERT_TRUE(tag.ok()) << tag.status().ToString();
  EXPECT_EQ(tag->branch, "dev");
  EXPECT_EQ(tag->version, UINT64_MAX);
}

TEST(TagTest, SnakeCaseManifestSizeIsNotTheKey) {
  auto tag = table::ParseTag(R"({"version":3,"manifest_size":99})", kTagPath);
  ASSERT_TRUE(tag.ok()) << tag.status().ToString();
  EXPECT_EQ(tag->manifest_size, 0u);  // the reference's key is manifestSize
}

TEST(TagTest, OptionalKeysMayBeMissing) {
  auto tag = table::ParseTag(R"({"version":7})", kTagPath);
  ASSERT_TRUE(tag.ok()) << tag.status().ToString();
  EXPECT_EQ(tag->version, 7u);
  EXPECT_FALSE(tag->branch.has_value());
  EXPECT_EQ(tag->manifest_size, 0u);
}

TEST(TagTest, BadTagsAreErrorsNamingTheFile) {
  for (const char* json : {
           R"({"branch":null,"manifestSize":1234})",  // no version
           R"({"version":-3})",                       // negative
           R"({"version":"3"})",                      // a string
           R"({"version":3.5})",                      // not an integer
           R"({"version":null})",
           "not json",
           "",
           "[3]",
           "3",
           R"({"version":3)",                         // truncated
       }) {
    SCOPED_TRACE(json);
    auto tag = table::ParseTag(json, kTagPath);
    ASSERT_FALSE(tag.ok());
    EXPECT_TRUE(Contains(tag.status().message(), kTagPath)) << tag.status().ToString();
  }
}

TEST(TagTest, SerializeUsesTheReferenceKeysInOrder) {
  table::TagContents tag;
  tag.version = 3;
  tag.manifest_size = 1234;
  EXPECT_EQ(table::SerializeTag(tag), R"({"branch":null,"version":3,"manifestSize":1234})");
  tag.branch = "feature/x";
  EXPECT_EQ(table::SerializeTag(tag), R"({"branch":"feature/x","version":3,"manifestSize":1234})");
}

TEST(TagTest, SerializeRoundTrips) {
  for (const auto& branch : {std::optional<std::string>{}, std::optional<std::string>{"b\"q"}}) {
    table::TagContents tag{branch, UINT64_MAX - 1, 987654321};
    auto back = table::ParseTag(table::SerializeTag(tag), kTagPath);
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ(back->branch, tag.branch);
    EXPECT_EQ(back->version, tag.version);
    EXPECT_EQ(back->manifest_size, tag.manifest_size);
  }
}

// ---------------------------------------------------------------------------
// Transactions.

std::string Bytes(const pb::table::Transaction& t) { return t.SerializeAsString(); }

pb::table::Transaction Base() {
  pb::table::Transaction t;
  t.set_read_version(4);
  t.set_uuid("0b1c2d3e-aaaa-bbbb-cccc-123456789abc");
  return t;
}

TEST(TransactionTest, OperationNames) {
  std::vector<std::pair<pb::table::Transaction, std::string>> cases;
  {
    auto t = Base();
    auto* frag = t.mutable_append()->add_fragments();
    frag->set_id(0);
    frag->set_physical_rows(10);
    cases.emplace_back(t, "Append");
  }
  {
    auto t = Base();
    t.mutable_delete_()->set_predicate("x > 5");
    t.mutable_delete_()->add_deleted_fragment_ids(2);
    cases.emplace_back(t, "Delete");
  }
  {
    auto t = Base();
    auto* f = t.mutable_overwrite()->add_schema();
    f->set_name("x");
    f->set_logical_type("int64");
    (*t.mutable_overwrite()->mutable_config_upsert_values())["lance.auto_cleanup.interval"] = "20";
    cases.emplace_back(t, "Overwrite");
  }
  {
    auto t = Base();
    t.mutable_update()->add_removed_fragment_ids(1);
    t.mutable_update()->set_update_mode(pb::table::Transaction::REWRITE_COLUMNS);
    cases.emplace_back(t, "Update");
  }
  {
    auto t = Base();
    t.mutable_restore()->set_version(2);
    cases.emplace_back(t, "Restore");
  }
  {
    auto t = Base();
    t.mutable_create_index()->add_new_indices()->set_name("idx");
    cases.emplace_back(t, "CreateIndex");
  }
  {
    auto t = Base();
    t.mutable_rewrite()->add_groups()->add_old_fragments()->set_id(1);
    cases.emplace_back(t, "Rewrite");
  }
  {
    auto t = Base();
    t.mutable_merge();
    cases.emplace_back(t, "Merge");
  }
  {
    auto t = Base();
    t.mutable_reserve_fragments()->set_num_fragments(3);
    cases.emplace_back(t, "ReserveFragments");
  }
  {
    auto t = Base();
    t.mutable_project();
    cases.emplace_back(t, "Project");
  }
  {
    auto t = Base();
    t.mutable_update_config();
    cases.emplace_back(t, "UpdateConfig");
  }
  {
    auto t = Base();
    t.mutable_data_replacement();
    cases.emplace_back(t, "DataReplacement");
  }
  {
    auto t = Base();
    t.mutable_clone()->set_is_shallow(true);
    cases.emplace_back(t, "Clone");
  }
  {
    auto t = Base();
    t.mutable_update_bases();
    cases.emplace_back(t, "UpdateBases");
  }
  for (const auto& [t, name] : cases) {
    SCOPED_TRACE(name);
    auto summary = txn::ParseTransaction(Bytes(t), "/ds/_transactions/4-x.txn");
    ASSERT_TRUE(summary.ok()) << summary.status().ToString();
    EXPECT_EQ(summary->operation, name);
    EXPECT_EQ(summary->read_version, 4u);
    EXPECT_EQ(summary->uuid, "0b1c2d3e-aaaa-bbbb-cccc-123456789abc");
  }
}

TEST(TransactionTest, TagAndPropertiesAreRead) {
  auto t = Base();
  t.set_tag("nightly");
  (*t.mutable_transaction_properties())["__lance_commit_message"] = "hello";
  t.mutable_append();
  auto summary = txn::ParseTransaction(Bytes(t), "inline");
  ASSERT_TRUE(summary.ok());
  EXPECT_EQ(summary->tag, "nightly");
  EXPECT_EQ(summary->properties.at("__lance_commit_message"), "hello");
}

TEST(TransactionTest, NoOperationIsUnknown) {
  auto summary = txn::ParseTransaction("", "inline");
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  EXPECT_EQ(summary->operation, "Unknown");
  EXPECT_EQ(summary->read_version, 0u);

  // An operation number from a newer writer: protobuf keeps it as unknown field.
  std::string newer = Bytes(Base());
  newer += std::string("\xfa\x07\x00", 3);  // field 127, length-delimited, empty
  summary = txn::ParseTransaction(newer, "inline");
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  EXPECT_EQ(summary->operation, "Unknown");
}

TEST(TransactionTest, GarbageIsAnErrorNamingTheSource) {
  google::protobuf::LogSilencer quiet;
  const std::string source = "/ds/_transactions/9-broken.txn";
  for (const std::string& bytes : {std::string(12, '\xff'), std::string("\x0f\x00", 2),
                                   std::string("\x12\x40short", 7),
                                   Bytes(Base()).substr(0, 10)}) {
    auto summary = txn::ParseTransaction(bytes, source);
    ASSERT_FALSE(summary.ok()) << "parsed " << bytes.size() << " bytes";
    EXPECT_TRUE(Contains(summary.status().message(), source)) << summary.status().ToString();
  }
}

// ---------------------------------------------------------------------------
// Data file versions.

TEST(FileVersionTest, FromPair) {
  using file::FileVersion;
  struct Case {
    uint32_t major, minor;
    FileVersion want;
  };
  for (const auto& c : std::vector<Case>{{0, 0, FileVersion::kLegacy},
                                         {0, 1, FileVersion::kLegacy},
                                         {0, 2, FileVersion::kLegacy},
                                         {0, 3, FileVersion::kV2_0},
                                         {2, 0, FileVersion::kV2_0},
                                         {2, 1, FileVersion::kV2_1},
                                         {2, 2, FileVersion::kV2_2}}) {
    SCOPED_TRACE(std::to_string(c.major) + "." + std::to_string(c.minor));
    auto v = file::FileVersionFromPair(c.major, c.minor);
    ASSERT_TRUE(v.ok()) << v.status().ToString();
    EXPECT_EQ(*v, c.want);
  }
}

TEST(FileVersionTest, UnknownPairsAskForAnUpgrade) {
  for (auto [major, minor] : std::vector<std::pair<uint32_t, uint32_t>>{
           {0, 4}, {2, 3}, {3, 0}, {1, 0}, {1, 1}, {UINT32_MAX, 0}, {2, UINT32_MAX}}) {
    SCOPED_TRACE(std::to_string(major) + "." + std::to_string(minor));
    auto v = file::FileVersionFromPair(major, minor);
    ASSERT_FALSE(v.ok());
    EXPECT_TRUE(Contains(v.status().message(), "upgrade")) << v.status().ToString();
    EXPECT_TRUE(Contains(v.status().message(), std::to_string(major) + "." + std::to_string(minor)))
        << v.status().ToString();
  }
}

TEST(FileVersionTest, ToPairAndStringsBothWays) {
  using file::FileVersion;
  struct Case {
    FileVersion v;
    std::pair<uint32_t, uint32_t> pair;
    std::string text;
  };
  for (const auto& c : std::vector<Case>{{FileVersion::kLegacy, {0, 2}, "0.1"},
                                         {FileVersion::kV2_0, {2, 0}, "2.0"},
                                         {FileVersion::kV2_1, {2, 1}, "2.1"},
                                         {FileVersion::kV2_2, {2, 2}, "2.2"}}) {
    SCOPED_TRACE(c.text);
    EXPECT_EQ(file::FileVersionToPair(c.v), c.pair);
    EXPECT_EQ(file::FileVersionToString(c.v), c.text);
    auto from_string = file::FileVersionFromString(c.text);
    ASSERT_TRUE(from_string.ok());
    EXPECT_EQ(*from_string, c.v);
    auto from_pair = file::FileVersionFromPair(c.pair.first, c.pair.second);
    ASSERT_TRUE(from_pair.ok());
    EXPECT_EQ(*from_pair, c.v);
  }
  auto legacy = file::FileVersionFromString("legacy");
  ASSERT_TRUE(legacy.ok());
  EXPECT_EQ(*legacy, FileVersion::kLegacy);
  auto stable = file::FileVersionFromString("stable");
  ASSERT_TRUE(stable.ok());
  EXPECT_EQ(*stable, FileVersion::kV2_2);
}

TEST(FileVersionTest, UnknownStringsAskForAnUpgrade) {
  for (const char* s : {"2.3", "3.0", "0.2", "next", "", "2", "2.1 ", "V2.1"}) {
    SCOPED_TRACE(s);
    auto v = file::FileVersionFromString(s);
    ASSERT_FALSE(v.ok());
    EXPECT_TRUE(Contains(v.status().message(), "upgrade")) << v.status().ToString();
  }
}

}  // namespace
}  // namespace lance
