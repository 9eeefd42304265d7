// Manifest names under _versions/ in both naming schemes, and listing them.
#include "lance/table/manifest_location.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include <unistd.h>

namespace lance::table {
namespace {

namespace fs = std::filesystem;
constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// ---------------------------------------------------------------------------
// Names.

TEST(ManifestFileNameTest, V1IsTheDecimalVersion) {
  EXPECT_EQ(ManifestFileName(0, ManifestNamingScheme::kV1), "0.manifest");
  EXPECT_EQ(ManifestFileName(1, ManifestNamingScheme::kV1), "1.manifest");
  EXPECT_EQ(ManifestFileName(10, ManifestNamingScheme::kV1), "10.manifest");
  EXPECT_EQ(ManifestFileName(12345, ManifestNamingScheme::kV1), "12345.manifest");
}

TEST(ManifestFileNameTest, V2IsInvertedAndZeroPadded) {
  EXPECT_EQ(ManifestFileName(1, ManifestNamingScheme::kV2), "18446744073709551614.manifest");
  EXPECT_EQ(ManifestFileName(0, ManifestNamingScheme::kV2), "18446744073709551615.manifest");
  EXPECT_EQ(ManifestFileName(2, ManifestNamingScheme::kV2), "18446744073709551613.manifest");
  EXPECT_EQ(ManifestFileName(10, ManifestNamingScheme::kV2), "18446744073709551605.manifest");
  EXPECT_EQ(ManifestFileName(12345, ManifestNamingScheme::kV2), "18446744073709539270.manifest");
  EXPECT_EQ(ManifestFileName(kMax - 1, ManifestNamingScheme::kV2), "00000000000000000001.manifest");
  EXPECT_EQ(ManifestFileName(kMax, ManifestNamingScheme::kV2), "00000000000000000000.manifest");
  for (uint64_t v : {uint64_t{0}, uint64_t{1}, uint64_t{12345}, kMax - 1}) {
    EXPECT_EQ(ManifestFileName(v, ManifestNamingScheme::kV2).size(), 29u);
  }
  // Lexical order of V2 names is newest first.
  EXPECT_LT(ManifestFileName(10, ManifestNamingScheme::kV2), ManifestFileName(9, ManifestNamingScheme::kV2));
}

TEST(ManifestFileNameTest, RoundTripsInBothDirections) {
  for (auto scheme : {ManifestNamingScheme::kV1, ManifestNamingScheme::kV2}) {
    for (uint64_t v : {uint64_t{0}, uint64_t{1}, uint64_t{2}, uint64_t{10}, uint64_t{12345}, kMax - 1}) {
      if (scheme == ManifestNamingScheme::kV1 && v == kMax - 1) continue;  // see below
      SCOPED_TRACE(std::string(NamingSchemeName(scheme)) + " " + std::to_string(v));
      const std::string name = ManifestFileName(v, scheme);
      auto loc = ParseManifestFileName(name);
      ASSERT_TRUE(loc.has_value()) << name;
      EXPECT_EQ(loc->version, v);
      EXPECT_EQ(loc->naming, scheme);
      EXPECT_EQ(loc->path, "_versions/" + name);
      EXPECT_EQ(loc->size, -1);
    }
  }
  // Names first: a parsed name prints back as itself.
  for (const char* name : {"1.manifest", "12345.manifest", "18446744073709551614.manifest",
                           "00000000000000000001.manifest"}) {
    auto loc = ParseManifestFileName(name);
    ASSERT_TRUE(loc.has_value()) << name;
    EXPECT_EQ(ManifestFileName(loc->version, loc->naming), name);
  }
}

TEST(ManifestFileNameTest, SchemeIsToldApartByLengthAlone) {
  // As the reference does: a 29-character name is V2 even when it was meant
  // as a V1 name of a 20-digit version.
  auto loc = ParseManifestFileName(ManifestFileName(kMax - 1, ManifestNamingScheme::kV1));
  ASSERT_TRUE(loc.has_value());
  EXPECT_EQ(loc->naming, ManifestNamingScheme::kV2);
  EXPECT_EQ(loc->version, 1u);
  // 19 digits is still V1.
  loc = ParseManifestFileName("1000000000000000000.manifest");
  ASSERT_TRUE(loc.has_value());
  EXPECT_EQ(loc->naming, ManifestNamingScheme::kV1);
  EXPECT_EQ(loc->version, 1000000000000000000u);
  // Unpadded short V2 forms don't exist: read as V1.
  loc = ParseManifestFileName("0001.manifest");
  ASSERT_TRUE(loc.has_value());
  EXPECT_EQ(loc->naming, ManifestNamingScheme::kV1);
  EXPECT_EQ(loc->version, 1u);
}

TEST(ManifestFileNameTest, IgnoresWhatIsNotACommittedManifest) {
  for (const char* name : {
           "d123.manifest",                                       // detached
           "d18446744073709551614.manifest",                      // detached
           "3.manifest-0b1c2d3e-aaaa-bbbb-cccc-123456789abc",     // staging
           "18446744073709551612.manifest-0b1c2d3e-aaaa-bbbb-cccc-123456789abc",
           ".tmp_x",                                              // temp files
           ".tmp_3.manifest",
           "_latest.manifest",                                    // legacy pointer
           "abc.manifest",
           ".manifest",
           "manifest",
           "3.manifes",
           "3.MANIFEST",
           "3",
           "3.txn",
           "-1.manifest",
           "+1.manifest",
           " 1.manifest",
           "1 .manifest",
           "1.5.manifest",
           "0x10.manifest",
           "99999999999999999999.manifest",                       // 29 chars, > u64::MAX
           "184467440737095516150.manifest",                      // 21 digits, overflows
           "",
       }) {
    EXPECT_FALSE(ParseManifestFileName(name).has_value()) << "'" << name << "' was accepted";
  }
}

// ---------------------------------------------------------------------------
// Listing a directory.

class ManifestListingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    static std::atomic<int> counter{0};
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    root_ = fs::temp_directory_path() /
            ("lance_manifest_location_" + std::to_string(::getpid()) + "_" + info->name() + "_" +
             std::to_string(counter++));
    fs::remove_all(root_);
    fs::create_directories(root_);
    auto store = io::ObjectStore::Open(root_.string());
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = *store;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }

  void Touch(const std::string& name, size_t size = 0) {
    fs::create_directories(root_ / "_versions");
    std::ofstream out(root_ / "_versions" / name, std::ios::binary);
    out << std::string(size, 'm');
    ASSERT_TRUE(out.good()) << name;
  }

  std::vector<uint64_t> Versions() {
    auto all = ListManifests(*store_);
    EXPECT_TRUE(all.ok()) << all.status().ToString();
    std::vector<uint64_t> out;
    if (all.ok()) {
      for (const auto& loc : *all) out.push_back(loc.version);
    }
    return out;
  }

  fs::path root_;
  std::shared_ptr<io::ObjectStore> store_;
};

TEST_F(ManifestListingTest, V1ListingIsNumericallyAscending) {
  for (uint64_t v : {10u, 2u, 1u, 3u, 100u}) Touch(ManifestFileName(v, ManifestNamingScheme::kV1), v);
  EXPECT_EQ(Versions(), (std::vector<uint64_t>{1, 2, 3, 10, 100}));
  auto all = ListManifests(*store_);
  ASSERT_TRUE(all.ok());
  for (const auto& loc : *all) {
    EXPECT_EQ(loc.naming, ManifestNamingScheme::kV1);
    EXPECT_EQ(loc.path, "_versions/" + std::to_string(loc.version) + ".manifest");
    EXPECT_EQ(loc.size, -1);  // a listing reads names, not sizes
  }
}

TEST_F(ManifestListingTest, V2ListingIsAscendingToo) {
  for (uint64_t v : {1u, 2u, 3u, 11u}) Touch(ManifestFileName(v, ManifestNamingScheme::kV2), 5);
  EXPECT_EQ(Versions(), (std::vector<uint64_t>{1, 2, 3, 11}));
  auto all = ListManifests(*store_);
  ASSERT_TRUE(all.ok());
  for (const auto& loc : *all) {
    EXPECT_EQ(loc.naming, ManifestNamingScheme::kV2);
    EXPECT_EQ(loc.size, -1);
  }
  auto latest = LatestManifest(*store_);
  ASSERT_TRUE(latest.ok()) << latest.status().ToString();
  EXPECT_EQ(latest->version, 11u);
  EXPECT_EQ(latest->path, "_versions/18446744073709551604.manifest");
}

TEST_F(ManifestListingTest, IgnoresNoiseFiles) {
  Touch("1.manifest");
  Touch("2.manifest");
  Touch("_latest.manifest");
  Touch("3.manifest-0b1c2d3e-aaaa-bbbb-cccc-123456789abc");
  Touch(".tmp_x");
  Touch("d77.manifest");
  Touch("notes.txt");
  fs::create_directories(root_ / "_versions" / "4.manifest");  // a directory, not a file
  EXPECT_EQ(Versions(), (std::vector<uint64_t>{1, 2}));
  auto latest = LatestManifest(*store_);
  ASSERT_TRUE(latest.ok());
  EXPECT_EQ(latest->version, 2u);
}

// Links count as what they point to, as in a listing with sizes.
TEST_F(ManifestListingTest, LinksCountAsTheirTargets) {
  Touch("1.manifest", 3);
  fs::create_directories(root_ / "elsewhere");
  { std::ofstream(root_ / "elsewhere" / "m") << "m"; }
  fs::create_symlink(root_ / "elsewhere" / "m", root_ / "_versions" / "2.manifest");
  fs::create_directory_symlink(root_ / "elsewhere", root_ / "_versions" / "3.manifest");
  fs::create_symlink(root_ / "elsewhere" / "missing", root_ / "_versions" / "4.manifest");
  EXPECT_EQ(Versions(), (std::vector<uint64_t>{1, 2}));
  auto names = store_->ListFileNames("_versions");
  ASSERT_TRUE(names.ok()) << names.status().ToString();
  std::sort(names->begin(), names->end());
  EXPECT_EQ(*names, (std::vector<std::string>{"1.manifest", "2.manifest"}));
  auto none = store_->ListFileNames("no_such_dir");
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_TRUE(none->empty());
}

TEST_F(ManifestListingTest, MixedSchemesAreAnError) {
  Touch(ManifestFileName(1, ManifestNamingScheme::kV1));
  Touch(ManifestFileName(2, ManifestNamingScheme::kV2));
  auto all = ListManifests(*store_);
  ASSERT_FALSE(all.ok());
  EXPECT_TRUE(Contains(all.status().message(), "V1 and V2")) << all.status().ToString();
  EXPECT_FALSE(LatestManifest(*store_).ok());
}

TEST_F(ManifestListingTest, MissingVersionsDirIsAnError) {
  auto all = ListManifests(*store_);
  ASSERT_FALSE(all.ok());
  EXPECT_TRUE(Contains(all.status().message(), "_versions")) << all.status().ToString();
  EXPECT_FALSE(LatestManifest(*store_).ok());
}

TEST_F(ManifestListingTest, EmptyVersionsDirIsAnError) {
  fs::create_directories(root_ / "_versions");
  EXPECT_FALSE(ListManifests(*store_).ok());
  // Only non-manifests: still nothing.
  Touch("_latest.manifest");
  Touch("d5.manifest");
  auto all = ListManifests(*store_);
  ASSERT_FALSE(all.ok());
  EXPECT_TRUE(Contains(all.status().message(), "no manifest")) << all.status().ToString();
}

TEST_F(ManifestListingTest, MissingDatasetRootIsAnError) {
  auto store = io::ObjectStore::Open((root_ / "does_not_exist").string());
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  EXPECT_FALSE(ListManifests(**store).ok());
}

TEST_F(ManifestListingTest, FindManifestInBothSchemes) {
  Touch("1.manifest");
  Touch("2.manifest");
  auto v1 = FindManifest(*store_, 2);
  ASSERT_TRUE(v1.ok()) << v1.status().ToString();
  EXPECT_EQ(v1->version, 2u);
  EXPECT_EQ(v1->naming, ManifestNamingScheme::kV1);
  EXPECT_EQ(v1->path, "_versions/2.manifest");

  auto missing = FindManifest(*store_, 3);
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(Contains(missing.status().message(), "3")) << missing.status().ToString();
  EXPECT_TRUE(Contains(missing.status().message(), "does not exist")) << missing.status().ToString();
  EXPECT_FALSE(FindManifest(*store_, 0).ok());
}

TEST_F(ManifestListingTest, FindManifestV2) {
  Touch(ManifestFileName(1, ManifestNamingScheme::kV2));
  Touch(ManifestFileName(7, ManifestNamingScheme::kV2));
  auto v2 = FindManifest(*store_, 7);
  ASSERT_TRUE(v2.ok()) << v2.status().ToString();
  EXPECT_EQ(v2->version, 7u);
  EXPECT_EQ(v2->naming, ManifestNamingScheme::kV2);
  EXPECT_EQ(v2->path, "_versions/18446744073709551608.manifest");
  EXPECT_FALSE(FindManifest(*store_, 2).ok());
  // V1 name of the same version doesn't exist: no false match.
  EXPECT_FALSE(fs::exists(root_ / "_versions" / "7.manifest"));
}

}  // namespace
}  // namespace lance::table
