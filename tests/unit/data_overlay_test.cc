// Data overlay files in the fragment model: the manifest round trip, the
// newest-last order on load, and the refusals of malformed overlays.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <arrow/api.h>

#include "lance/dataset.h"
#include "lance/dataset_ops.h"
#include "lance/file_writer.h"
#include "lance/scanner.h"
#include "lance/table/feature_flags.h"
#include "lance/write.h"
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

// ---------------------------------------------------------------------------
// Dataset::NewDataOverlay(): written, read back, refused where pylance refuses.

class DataOverlayBuilderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("data_overlay_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    if (const char* old = std::getenv(kEnableDataOverlayFilesEnv)) saved_ = old;
    setenv(kEnableDataOverlayFilesEnv, "1", 1);
  }
  void TearDown() override {
    if (saved_) setenv(kEnableDataOverlayFilesEnv, saved_->c_str(), 1);
    else unsetenv(kEnableDataOverlayFilesEnv);
    std::filesystem::remove_all(dir_);
  }
  // Ten rows (id, x = id) in one fragment.
  std::shared_ptr<Dataset> Create() {
    arrow::Int64Builder ids;
    arrow::DoubleBuilder xs;
    for (int i = 0; i < 10; ++i) {
      EXPECT_TRUE(ids.Append(i).ok());
      EXPECT_TRUE(xs.Append(i).ok());
    }
    auto schema = arrow::schema({arrow::field("id", arrow::int64()), arrow::field("x", arrow::float64())});
    auto batch = arrow::RecordBatch::Make(schema, 10, {*ids.Finish(), *xs.Finish()});
    WriteParams params;
    params.data_storage_version = "2.1";
    auto ds = WriteDataset(*arrow::RecordBatchReader::Make({batch}, schema), uri(), params);
    EXPECT_TRUE(ds.ok()) << ds.status().ToString();
    return *ds;
  }
  // An overlay file of x values under data/.
  DataFile OverlayFile(const std::string& name, const std::vector<double>& values) {
    auto schema = arrow::schema({arrow::field("x", arrow::float64())});
    arrow::DoubleBuilder b;
    EXPECT_TRUE(b.AppendValues(values).ok());
    auto batch = arrow::RecordBatch::Make(schema, static_cast<int64_t>(values.size()), {*b.Finish()});
    FileWriterOptions options;
    options.version = "2.1";
    auto w = FileWriter::Open(uri() + "/data/" + name, *schema, options);
    EXPECT_TRUE(w.ok()) << w.status().ToString();
    EXPECT_TRUE((*w)->Write(*batch).ok());
    EXPECT_TRUE((*w)->Finish().ok());
    DataFile f;
    f.path = name;
    f.fields = {1};
    f.column_indices = {0};
    f.file_major_version = 2;
    f.file_minor_version = 1;
    return f;
  }
  std::vector<double> Xs(const std::shared_ptr<Dataset>& ds) {
    ScanOptions o;
    o.columns = {"x"};
    auto t = ScanBuilder(ds).Options(o).ToTable();
    EXPECT_TRUE(t.ok()) << t.status().ToString();
    auto col = std::static_pointer_cast<arrow::DoubleArray>((*t)->column(0)->chunk(0));
    return std::vector<double>(col->raw_values(), col->raw_values() + col->length());
  }
  std::string uri() const { return dir_.string() + "/ds"; }

  std::filesystem::path dir_;
  std::optional<std::string> saved_;
};

TEST_F(DataOverlayBuilderTest, NewestOverlayWinsAndCommittedVersionIsStamped) {
  auto ds = Create();
  auto v2 = ds->NewDataOverlay()
                .AddDense(0, OverlayFile("a.lance", {107.0, 101.0}), {7, 1})  // any order
                .AddDense(0, OverlayFile("b.lance", {201.0}), {1})
                .Commit();
  ASSERT_TRUE(v2.ok()) << v2.status().ToString();
  EXPECT_EQ((*v2)->version(), 2u);
  EXPECT_EQ(Xs(*v2), (std::vector<double>{0, 201, 2, 3, 4, 5, 6, 101, 8, 9}));
  const auto& overlays = (*v2)->manifest().fragments[0].overlays;
  ASSERT_EQ(overlays.size(), 2u);
  EXPECT_EQ(overlays[0].committed_version, 2u);
  EXPECT_EQ(overlays[1].committed_version, 2u);
  EXPECT_EQ((*v2)->manifest().reader_feature_flags & kFlagUnstableDataOverlayFiles, kFlagUnstableDataOverlayFiles);
  EXPECT_EQ(Xs(ds), (std::vector<double>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));  // the old handle reads v1
}

TEST_F(DataOverlayBuilderTest, RefusesWithoutTheOptInRepeatsAndMissingFragments) {
  auto ds = Create();
  auto file = OverlayFile("a.lance", {1.0, 2.0});
  auto dup = ds->NewDataOverlay().AddDense(0, file, {3, 3}).Commit();
  ASSERT_FALSE(dup.ok());
  EXPECT_NE(dup.status().message().find("offset 3 is given twice"), std::string::npos) << dup.status().ToString();
  auto missing = ds->NewDataOverlay().AddDense(7, file, {1, 2}).Commit();
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("fragment 7, which does not exist"), std::string::npos)
      << missing.status().ToString();
  auto sparse = ds->NewDataOverlay().AddSparse(0, file, {{1}, {2}}).Commit();  // two sets, one field
  ASSERT_FALSE(sparse.ok());
  unsetenv(kEnableDataOverlayFilesEnv);
  auto off = ds->NewDataOverlay().AddDense(0, file, {1, 2}).Commit();
  ASSERT_FALSE(off.ok());
  EXPECT_TRUE(off.status().IsNotImplemented());
  EXPECT_NE(off.status().message().find(kEnableDataOverlayFilesEnv), std::string::npos);
  auto latest = Dataset::Open(uri());
  ASSERT_TRUE(latest.ok());
  EXPECT_EQ((*latest)->version(), 1u);  // nothing committed
}

}  // namespace
}  // namespace lance::table
