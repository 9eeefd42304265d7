// The fragment reuse index: its details written and read back (inline and
// in the external file), the row address mapping of one and of chained
// compactions, fragment bitmaps as the reference reads them, and corrupt
// details refused. Byte equality with pylance's entries is
// tests/interop/test_frag_reuse_index.py.
#include <gtest/gtest.h>

#include <filesystem>

#include "lance/index/frag_reuse.h"
#include "lance/index/scalar_index.h"
#include "lance/io/object_store.h"
#include "lance/table/frag_reuse.h"

namespace lance {
namespace {

namespace fs = std::filesystem;
using table::FragReuseDetails;
using table::FragReuseGroup;
using table::FragReuseVersion;

uint64_t Addr(uint64_t fragment, uint64_t offset) { return (fragment << 32) | offset; }

// A group of old fragments (id, physical rows, survivors) into new ones.
FragReuseGroup Group(const std::vector<std::tuple<uint64_t, uint64_t, std::vector<uint64_t>>>& old,
                     const std::vector<std::pair<uint64_t, uint64_t>>& fresh) {
  FragReuseGroup g;
  index::RowIds kept;
  for (const auto& [id, rows, survivors] : old) {
    g.old_fragments.push_back({id, rows, rows - survivors.size()});
    for (uint64_t off : survivors) kept.push_back(Addr(id, off));
  }
  for (const auto& [id, rows] : fresh) g.new_fragments.push_back({id, rows, 0});
  g.changed_row_addrs = index::EncodeRoaringTreemap(kept, /*run_optimize=*/true);
  return g;
}

bool SameDetails(const FragReuseDetails& a, const FragReuseDetails& b) {
  if (a.versions.size() != b.versions.size()) return false;
  for (size_t v = 0; v < a.versions.size(); ++v) {
    const auto& x = a.versions[v];
    const auto& y = b.versions[v];
    if (x.dataset_version != y.dataset_version || x.groups.size() != y.groups.size()) return false;
    for (size_t g = 0; g < x.groups.size(); ++g) {
      const auto& p = x.groups[g];
      const auto& q = y.groups[g];
      if (p.changed_row_addrs != q.changed_row_addrs || p.old_fragments.size() != q.old_fragments.size() ||
          p.new_fragments.size() != q.new_fragments.size()) {
        return false;
      }
      for (size_t i = 0; i < p.old_fragments.size(); ++i) {
        if (p.old_fragments[i].id != q.old_fragments[i].id ||
            p.old_fragments[i].physical_rows != q.old_fragments[i].physical_rows ||
            p.old_fragments[i].num_deleted_rows != q.old_fragments[i].num_deleted_rows) {
          return false;
        }
      }
    }
  }
  return true;
}

class FragReuseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("lance_frag_reuse_test_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    store_ = *io::ObjectStore::Open(dir_.string());
  }
  void TearDown() override { fs::remove_all(dir_); }

  // An index entry holding `details`, its external file written if needed.
  IndexMetadata Entry(const FragReuseDetails& details, bool* external_used = nullptr) {
    IndexMetadata m;
    m.uuid[0] = 1;
    m.name = table::kFragReuseIndexName;
    m.index_details_type_url = table::kFragReuseDetailsTypeUrl;
    std::string external;
    m.index_details_value = table::FragReuseDetailsValue(details, &external);
    if (!external.empty()) {
      EXPECT_TRUE(store_->Write("_indices/" + m.UuidString() + "/" + table::kFragReuseDetailsFile, external).ok());
    }
    if (external_used) *external_used = !external.empty();
    return m;
  }

  fs::path dir_;
  std::shared_ptr<io::ObjectStore> store_;
};

TEST_F(FragReuseTest, DetailsRoundTripInline) {
  FragReuseDetails d;
  d.versions.push_back({3, {Group({{0, 5, {0, 2, 4}}, {1, 3, {1}}}, {{7, 4}})}});
  d.versions.push_back({6, {Group({{7, 4, {0, 3}}}, {{9, 2}}), Group({{2, 2, {0, 1}}}, {{10, 2}})}});
  bool external = true;
  auto entry = Entry(d, &external);
  EXPECT_FALSE(external);
  auto back = table::LoadFragReuseDetails(*store_, entry);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_TRUE(SameDetails(d, *back));
}

TEST_F(FragReuseTest, LargeDetailsGoToTheExternalFile) {
  FragReuseDetails d;
  FragReuseVersion v{4, {}};
  // Scattered survivors make big bitmaps: well past the inline limit.
  for (uint64_t f = 0; f < 40; ++f) {
    std::vector<uint64_t> survivors;
    for (uint64_t off = 0; off < 20000; off += 3) survivors.push_back(off);
    v.groups.push_back(Group({{f, 20000, survivors}}, {{100 + f, survivors.size()}}));
  }
  d.versions.push_back(std::move(v));
  bool external = false;
  auto entry = Entry(d, &external);
  EXPECT_TRUE(external);
  EXPECT_LT(entry.index_details_value.size(), 64u);
  auto back = table::LoadFragReuseDetails(*store_, entry);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_TRUE(SameDetails(d, *back));
}

TEST_F(FragReuseTest, RowAddressesMappedThroughEveryCompaction) {
  FragReuseDetails d;
  // Fragments 0 (5 rows) and 1 (3 rows) into 7; then 2 and 7 into 9 and 10.
  d.versions.push_back({3, {Group({{0, 5, {0, 2, 4}}, {1, 3, {1}}}, {{7, 4}})}});
  d.versions.push_back({6, {Group({{2, 2, {0, 1}}, {7, 4, {0, 1, 3}}}, {{9, 2}, {10, 3}})}});
  auto map = index::FragReuseMap::Make(d);
  ASSERT_TRUE(map.ok()) << map.status().ToString();
  EXPECT_EQ((*map)(Addr(0, 0)), Addr(10, 0));
  EXPECT_EQ((*map)(Addr(0, 2)), Addr(10, 1));
  EXPECT_EQ((*map)(Addr(0, 4)), std::nullopt);  // 7:2, deleted before the second compaction
  EXPECT_EQ((*map)(Addr(1, 1)), Addr(10, 2));
  EXPECT_EQ((*map)(Addr(0, 1)), std::nullopt);
  EXPECT_EQ((*map)(Addr(2, 0)), Addr(9, 0));
  EXPECT_EQ((*map)(Addr(2, 1)), Addr(9, 1));
  EXPECT_EQ((*map)(Addr(5, 8)), Addr(5, 8));    // never compacted
  EXPECT_EQ((*map)(Addr(7, 3)), Addr(10, 2));   // already a new address after the first
  EXPECT_EQ(map->MapSorted({Addr(0, 0), Addr(0, 1), Addr(2, 1), Addr(5, 8)}),
            (std::vector<uint64_t>{Addr(5, 8), Addr(9, 1), Addr(10, 0)}));
}

TEST_F(FragReuseTest, FragmentBitmapsAsTheReferenceReadsThem) {
  FragReuseDetails d;
  d.versions.push_back({3, {Group({{0, 5, {0}}, {1, 3, {1}}}, {{7, 2}})}});
  std::vector<uint32_t> ids = {0, 1, 5};
  table::RemapFragmentBitmap(d, &ids);
  EXPECT_EQ(ids, (std::vector<uint32_t>{5, 7}));
  // An index covering part of a group loses it and gains nothing.
  std::vector<uint32_t> split = {0, 5};
  table::RemapFragmentBitmap(d, &split);
  EXPECT_EQ(split, (std::vector<uint32_t>{5}));
}

TEST_F(FragReuseTest, CorruptDetailsAreErrors) {
  FragReuseDetails d;
  d.versions.push_back({3, {Group({{0, 5, {0, 2, 4}}}, {{7, 3}})}});
  auto entry = Entry(d);
  for (size_t cut = 0; cut < entry.index_details_value.size(); ++cut) {
    IndexMetadata bad = entry;
    bad.index_details_value.resize(cut);
    auto details = table::LoadFragReuseDetails(*store_, bad);
    if (details.ok()) continue;  // a shorter message can still parse
    EXPECT_NE(details.status().message().find("fragment reuse index"), std::string::npos);
  }
  // Survivors beyond the new fragments' rows, or outside the old fragments.
  FragReuseDetails over;
  over.versions.push_back({3, {Group({{0, 5, {0, 1, 2}}}, {{7, 2}})}});
  EXPECT_FALSE(index::FragReuseMap::Make(over).ok());
  FragReuseDetails outside;
  outside.versions.push_back({3, {Group({{0, 5, {7}}}, {{7, 1}})}});
  EXPECT_FALSE(index::FragReuseMap::Make(outside).ok());
  IndexMetadata other = entry;
  other.index_details_type_url = "type.googleapis.com/lance.table.BTreeIndexDetails";
  EXPECT_FALSE(table::LoadFragReuseDetails(*store_, other).ok());
}

}  // namespace
}  // namespace lance
