// Where a manifest's files live through their base ids: the one rule every
// reader and writer uses (no base id = the root; a dataset-root base gets
// data/, _deletions/, _indices/; another base holds the files directly).
#include "lance/table/file_locations.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

namespace lance::table {
namespace {

namespace fs = std::filesystem;

Manifest WithBases() {
  Manifest m;
  m.version = 7;
  m.base_paths = {BasePath{0, std::nullopt, true, "/mnt/source"},
                  BasePath{4, std::string("files"), false, "/mnt/files"}};
  return m;
}

const std::vector<std::pair<FileKind, std::string>> kKindDirs = {
    {FileKind::kData, "data"}, {FileKind::kDeletion, "_deletions"}, {FileKind::kIndex, "_indices"}};

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

TEST(FileLocationsTest, NoBaseIdIsTheRootSubdirectoryOfTheKind) {
  const Manifest m = WithBases();
  for (const auto& [kind, dir] : kKindDirs) {
    auto d = DirectoryOf(m, kind, std::nullopt, "x");
    ASSERT_TRUE(d.ok()) << d.status().ToString();
    EXPECT_EQ(d->base, nullptr);
    EXPECT_EQ(d->dir, dir);
  }
}

TEST(FileLocationsTest, DatasetRootBaseGetsTheSubdirectory) {
  // Base id 0 is a real id (pylance's shallow clones use it), not "none".
  const Manifest m = WithBases();
  for (const auto& [kind, dir] : kKindDirs) {
    auto d = DirectoryOf(m, kind, 0u, "x");
    ASSERT_TRUE(d.ok()) << d.status().ToString();
    ASSERT_NE(d->base, nullptr);
    EXPECT_EQ(d->base->path, "/mnt/source");
    EXPECT_EQ(d->dir, dir);
  }
}

TEST(FileLocationsTest, OtherBaseHoldsFilesDirectly) {
  const Manifest m = WithBases();
  for (FileKind kind : {FileKind::kData, FileKind::kIndex}) {
    auto d = DirectoryOf(m, kind, 4u, "x");
    ASSERT_TRUE(d.ok()) << d.status().ToString();
    EXPECT_EQ(d->base->path, "/mnt/files");
    EXPECT_EQ(d->dir, "");
  }
  // Deletion files may only live under dataset roots.
  auto del = DirectoryOf(m, FileKind::kDeletion, 4u, "deletion file 3-1-9.arrow of fragment 3");
  ASSERT_FALSE(del.ok());
  EXPECT_TRUE(Contains(del.status().message(), "3-1-9.arrow")) << del.status().ToString();
  EXPECT_TRUE(Contains(del.status().message(), "not a dataset root")) << del.status().ToString();
}

TEST(FileLocationsTest, UnlistedBaseIdIsAnError) {
  const Manifest m = WithBases();
  auto d = DirectoryOf(m, FileKind::kData, 9u, "data file a.lance");
  ASSERT_FALSE(d.ok());
  EXPECT_TRUE(d.status().IsInvalid());
  EXPECT_TRUE(Contains(d.status().message(), "data file a.lance")) << d.status().ToString();
  EXPECT_TRUE(Contains(d.status().message(), "base path 9")) << d.status().ToString();
  EXPECT_TRUE(Contains(d.status().message(), "0, 4")) << d.status().ToString();
  EXPECT_FALSE(DirectoryOf(Manifest{}, FileKind::kDeletion, 0u, "x").ok());  // no bases at all
}

TEST(FileLocationsTest, JoinPathLeavesNoLeadingSlash) {
  EXPECT_EQ(JoinPath("", "a.lance"), "a.lance");
  EXPECT_EQ(JoinPath("data", "a.lance"), "data/a.lance");
}

class FileLocatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("lance_file_locations_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "root" / "data");
    fs::create_directories(dir_ / "source" / "data");
    fs::create_directories(dir_ / "source" / "_deletions");
    fs::create_directories(dir_ / "flat");
    Put("root/data/r.lance", "root");
    Put("source/data/s.lance", "source");
    Put("source/_deletions/2-1-5.arrow", "deletions");
    Put("flat/f.lance", "flat");
    manifest_.base_paths = {BasePath{0, std::nullopt, true, (dir_ / "source").string()},
                            BasePath{1, std::nullopt, false, (dir_ / "flat").string()}};
    auto root = io::ObjectStore::Open((dir_ / "root").string());
    ASSERT_TRUE(root.ok());
    root_ = *root;
  }
  void TearDown() override { fs::remove_all(dir_); }

  void Put(const std::string& rel, const std::string& text) { std::ofstream(dir_ / rel) << text; }

  std::string Read(const FileLocation& loc) {
    auto bytes = loc.store->ReadAll(loc.path);
    return bytes.ok() ? *bytes : bytes.status().ToString();
  }

  fs::path dir_;
  Manifest manifest_;
  std::shared_ptr<io::ObjectStore> root_;
};

TEST_F(FileLocatorTest, EachFileIsReadFromItsBase) {
  const FileLocator files(root_, manifest_);
  DataFile in_root;
  in_root.path = "r.lance";
  DataFile in_source = in_root;
  in_source.path = "s.lance";
  in_source.base_id = 0;
  DataFile in_flat = in_root;
  in_flat.path = "f.lance";
  in_flat.base_id = 1;
  auto r = files.Data(in_root);
  auto s = files.Data(in_source);
  auto f = files.Data(in_flat);
  ASSERT_TRUE(r.ok() && s.ok() && f.ok());
  EXPECT_EQ(Read(*r), "root");
  EXPECT_EQ(Read(*s), "source");
  EXPECT_EQ(Read(*f), "flat");
  EXPECT_EQ(r->store.get(), root_.get());
  EXPECT_EQ(s->FullPath(), (dir_ / "source" / "data" / "s.lance").string());
  // A base's store is opened once.
  auto again = files.Data(in_source);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->store.get(), s->store.get());

  DeletionFile del;
  del.read_version = 1;
  del.id = 5;
  del.base_id = 0;
  auto d = files.Deletion(2, del);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(Read(*d), "deletions");
  del.base_id = 1;  // not a dataset root
  EXPECT_FALSE(files.Deletion(2, del).ok());

  auto base = files.BaseStore(1, "external blob");
  ASSERT_TRUE(base.ok());
  EXPECT_EQ((*base)->FullPath(""), (dir_ / "flat").string());
  EXPECT_FALSE(files.BaseStore(3, "external blob").ok());
}

TEST_F(FileLocatorTest, IndexFilesAndBlobSidecarsFollowTheirBase) {
  const FileLocator files(root_, manifest_);
  IndexMetadata index;
  index.name = "id_idx";
  index.uuid[0] = 0xab;
  const std::string uuid = index.UuidString();
  auto in_root = files.Index(index, "page_data.lance");
  ASSERT_TRUE(in_root.ok()) << in_root.status().ToString();
  EXPECT_EQ(in_root->FullPath(), (dir_ / "root" / "_indices" / uuid / "page_data.lance").string());
  index.base_id = 0;  // a shallow clone's index: under the source's _indices/
  auto in_source = files.Index(index, "page_data.lance");
  ASSERT_TRUE(in_source.ok()) << in_source.status().ToString();
  EXPECT_EQ(in_source->FullPath(), (dir_ / "source" / "_indices" / uuid / "page_data.lance").string());
  auto dir = files.Index(index, "");
  ASSERT_TRUE(dir.ok());
  EXPECT_EQ(dir->FullPath(), (dir_ / "source" / "_indices" / uuid).string());
  index.base_id = 1;  // a flat base holds the index directory itself
  auto flat = files.Index(index, "x.idx");
  ASSERT_TRUE(flat.ok());
  EXPECT_EQ(flat->FullPath(), (dir_ / "flat" / uuid / "x.idx").string());
  index.base_id = 9;
  auto missing = files.Index(index, "x.idx");
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(Contains(missing.status().message(), "id_idx")) << missing.status().ToString();

  DataFile data;
  data.path = "s.lance";
  data.base_id = 0;
  auto sidecars = files.BlobSidecarDir(data);
  ASSERT_TRUE(sidecars.ok());
  EXPECT_EQ(sidecars->FullPath(), (dir_ / "source" / "data" / "s").string());
  data.base_id.reset();
  sidecars = files.BlobSidecarDir(data);
  ASSERT_TRUE(sidecars.ok());
  EXPECT_EQ(sidecars->FullPath(), (dir_ / "root" / "data" / "s").string());
}

}  // namespace
}  // namespace lance::table
