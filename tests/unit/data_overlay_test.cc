// Data overlay files in the fragment model: the manifest round trip, the
// newest-last order on load, and the refusals of malformed overlays.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "lance/table.pb.h"
#include "lance/table/deletion_vector.h"
#include "lance/table/manifest_proto.h"

namespace lance::table {
namespace {

std::string Bitmap(const std::vector<uint32_t>& offsets) {
  return DeletionVector::FromOffsets(offsets).ToRoaringPortable();
}

pb::table::DataOverlayFile DenseOverlay(const std::string& path, std::vector<int32_t> fields,
                                        const std::vector<uint32_t>& offsets, uint64_t version) {
  pb::table::DataOverlayFile o;
  auto* f = o.mutable_data_file();
  f->set_path(path);
  for (size_t i = 0; i < fields.size(); ++i) {
    f->add_fields(fields[i]);
    f->add_column_indices(static_cast<int32_t>(i));
  }
  f->set_file_major_version(2);
  f->set_file_minor_version(1);
  o.set_shared_offset_bitmap(Bitmap(offsets));
  o.set_committed_version(version);
  return o;
}

pb::table::DataFragment Fragment0() {
  pb::table::DataFragment frag;
  frag.set_id(0);
  frag.set_physical_rows(10);
  return frag;
}

TEST(DataOverlayTest, RoundTripsDenseAndSparseAsStored) {
  auto frag = Fragment0();
  *frag.add_overlays() = DenseOverlay("a.lance", {1, 2}, {0, 3}, 2);
  auto* sparse = frag.add_overlays();
  *sparse = DenseOverlay("b.lance", {1, 3}, {}, 3);
  sparse->mutable_field_coverage()->add_offset_bitmaps(Bitmap({3, 8}));
  sparse->mutable_field_coverage()->add_offset_bitmaps(Bitmap({0}));
  auto parsed = FragmentFromProto(frag, "test");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  ASSERT_EQ(parsed->overlays.size(), 2u);
  EXPECT_EQ(parsed->overlays[0].data_file.path, "a.lance");
  EXPECT_EQ(parsed->overlays[0].shared_offsets, Bitmap({0, 3}));
  EXPECT_FALSE(parsed->overlays[0].field_offsets.has_value());
  ASSERT_TRUE(parsed->overlays[1].field_offsets.has_value());
  EXPECT_EQ(*parsed->overlays[1].field_offsets, (std::vector<std::string>{Bitmap({3, 8}), Bitmap({0})}));
  EXPECT_EQ(parsed->overlays[1].committed_version, 3u);
  pb::table::DataFragment back;
  FragmentToProto(*parsed, &back);
  EXPECT_EQ(back.SerializeAsString(), frag.SerializeAsString());
}

TEST(DataOverlayTest, LoadSortsNewestLastKeepingListOrderForTies) {
  auto frag = Fragment0();
  *frag.add_overlays() = DenseOverlay("v5.lance", {1}, {0}, 5);
  *frag.add_overlays() = DenseOverlay("v3-first.lance", {1}, {0}, 3);
  *frag.add_overlays() = DenseOverlay("v3-second.lance", {1}, {0}, 3);
  auto parsed = FragmentFromProto(frag, "test");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  std::vector<std::string> order;
  for (const auto& o : parsed->overlays) order.push_back(o.data_file.path);
  EXPECT_EQ(order, (std::vector<std::string>{"v3-first.lance", "v3-second.lance", "v5.lance"}));
}

TEST(DataOverlayTest, MalformedOverlaysAreRefusedNamingTheFile) {
  {
    auto frag = Fragment0();
    auto* o = frag.add_overlays();
    *o = DenseOverlay("no-coverage.lance", {1}, {0}, 2);
    o->clear_shared_offset_bitmap();
    auto parsed = FragmentFromProto(frag, "m.manifest");
    ASSERT_FALSE(parsed.ok());
    EXPECT_NE(parsed.status().message().find("no-coverage.lance"), std::string::npos);
    EXPECT_NE(parsed.status().message().find("missing its coverage"), std::string::npos);
  }
  {
    auto frag = Fragment0();
    auto* o = frag.add_overlays();
    o->set_shared_offset_bitmap(Bitmap({0}));
    auto parsed = FragmentFromProto(frag, "m.manifest");
    ASSERT_FALSE(parsed.ok());
    EXPECT_NE(parsed.status().message().find("missing its data_file"), std::string::npos);
  }
  {
    auto frag = Fragment0();
    auto* o = frag.add_overlays();
    *o = DenseOverlay("short.lance", {1, 2}, {}, 2);
    o->mutable_field_coverage()->add_offset_bitmaps(Bitmap({0}));  // one bitmap, two fields
    auto parsed = FragmentFromProto(frag, "m.manifest");
    ASSERT_FALSE(parsed.ok());
    EXPECT_NE(parsed.status().message().find("1 coverage bitmaps for 2 fields"), std::string::npos);
  }
  {
    auto frag = Fragment0();
    auto* o = frag.add_overlays();
    *o = DenseOverlay("garbage.lance", {1}, {0}, 2);
    o->set_shared_offset_bitmap("not a bitmap");
    auto parsed = FragmentFromProto(frag, "m.manifest");
    ASSERT_FALSE(parsed.ok());
    EXPECT_NE(parsed.status().message().find("garbage.lance"), std::string::npos);
  }
}

}  // namespace
}  // namespace lance::table
