// Branch metadata as pylance 14 keeps it: names, file paths, the JSON and
// the lineage that says which branches were made from which.
#include "lance/table/branches.h"

#include <gtest/gtest.h>

namespace lance::table {
namespace {

TEST(BranchesTest, NamesFollowPylanceRules) {
  for (const char* ok : {"feature/login", "bugfix/issue-123", "release/v1.2.3", "normal", "with_underscore",
                         "with.dot"}) {
    EXPECT_TRUE(CheckBranchName(ok).ok()) << ok;
  }
  for (const char* bad : {"", "/start", "end/", "a//b", "a..b", "a\\b", "name.lock", "bad@char", "bad segment",
                          "main"}) {
    Status st = CheckBranchName(bad);
    EXPECT_FALSE(st.ok()) << bad;
    EXPECT_NE(st.message().find("Ref is invalid"), std::string::npos) << st.message();
  }
  EXPECT_EQ(StandardizeBranch("main"), std::nullopt);
  EXPECT_EQ(StandardizeBranch(""), std::nullopt);
  EXPECT_EQ(StandardizeBranch("dev"), std::optional<std::string>("dev"));
}

TEST(BranchesTest, PathsEncodeSlashesInTheMetadataName) {
  EXPECT_EQ(BranchFilePath("a/b"), "_refs/branches/a%2Fb.json");
  EXPECT_EQ(BranchDirectory("a/b"), "tree/a/b");
}

TEST(BranchesTest, JsonRoundTripsAsPylanceWritesIt) {
  BranchContents b;
  b.parent_branch = "dev";
  b.version_mapping = {{2, "81aeb77f5dc84a30a72c6cbd4375c872"}, {3, "0fc9ac9cf8d44bb79aead4e23d1bfe06"}};
  b.parent_version = 3;
  b.create_at = 1796190368;
  b.manifest_size = 702;
  const std::string json = SerializeBranch(b);
  EXPECT_EQ(json.substr(0, 25), "{\n  \"parentBranch\": \"dev\"");
  auto back = ParseBranch(json, "dev/fix", "x.json");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->parent_branch, b.parent_branch);
  EXPECT_EQ(back->version_mapping, b.version_mapping);
  EXPECT_EQ(back->parent_version, 3u);
  EXPECT_EQ(back->manifest_size, 702u);
  EXPECT_FALSE(ParseBranch("[]", "x", "x.json").ok());
  EXPECT_FALSE(ParseBranch("{\"parentBranch\":null}", "x", "x.json").ok());
}

TEST(BranchesTest, LegacyFilesGetTheReferenceDeterministicId) {
  const std::string legacy = R"({"parentBranch":"main","parentVersion":42,"createAt":1234567890,"manifestSize":1024})";
  auto a = ParseBranch(legacy, "legacy_branch", "a.json");
  auto again = ParseBranch(legacy, "legacy_branch", "a.json");
  auto other = ParseBranch(legacy, "legacy_branch_other", "b.json");
  ASSERT_TRUE(a.ok() && again.ok() && other.ok());
  ASSERT_EQ(a->version_mapping.size(), 1u);
  EXPECT_EQ(a->version_mapping[0].first, 0u);
  EXPECT_EQ(a->version_mapping[0].second.size(), 32u);
  EXPECT_EQ(a->version_mapping, again->version_mapping);
  EXPECT_NE(a->version_mapping, other->version_mapping);
}

TEST(BranchesTest, ReferencedVersionFollowsTheLineage) {
  BranchContents dev, fix;
  dev.version_mapping = {{2, "a"}};
  fix.version_mapping = {{2, "a"}, {5, "b"}};
  EXPECT_EQ(dev.ReferencedVersionOf({}), std::optional<uint64_t>(2));  // main's version 2
  EXPECT_EQ(fix.ReferencedVersionOf({}), std::optional<uint64_t>(2));
  EXPECT_EQ(fix.ReferencedVersionOf(dev.version_mapping), std::optional<uint64_t>(5));
  EXPECT_EQ(dev.ReferencedVersionOf(dev.version_mapping), std::nullopt);
  EXPECT_EQ(fix.ReferencedVersionOf({{2, "other"}}), std::nullopt);
}

}  // namespace
}  // namespace lance::table
