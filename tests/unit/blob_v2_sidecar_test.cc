#include <gtest/gtest.h>

#include "lance/file/blob_v2.h"
#include "lance/ops/blob_v2_sidecars.h"

namespace lance {
namespace {

// pylance names a .blob file by its id's 32 bits, least significant first.
TEST(BlobV2SidecarTest, PathSpellsTheIdLeastSignificantBitFirst) {
  EXPECT_EQ(ops::BlobV2SidecarPath("data", "abc", 1), "data/abc/10000000000000000000000000000000.blob");
  EXPECT_EQ(ops::BlobV2SidecarPath("data", "abc", 6), "data/abc/01100000000000000000000000000000.blob");
}

TEST(BlobV2SidecarTest, ThresholdsComeFromMetadataOrDefaults) {
  Field f;
  f.metadata["lance-encoding:blob-inline-size-threshold"] = "16";
  f.metadata["lance-encoding:blob-pack-file-size-threshold"] = "not a number";
  const auto t = file::BlobV2ThresholdsOf(f);
  EXPECT_EQ(t.inline_max, 16u);
  EXPECT_EQ(t.dedicated, 4u * 1024 * 1024);
  EXPECT_EQ(t.pack_file, 1024u * 1024 * 1024);
}

}  // namespace
}  // namespace lance
