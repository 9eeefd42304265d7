// The split-block Bloom filter against the reference's own facts (sizes
// for ndv/fpp, the xxHash64 of ""), and a BLOOMFILTER index built through
// lance/index_ops.h whose searches prune to the zones holding the value.
#include <gtest/gtest.h>

#include <arrow/api.h>
#include <arrow/compute/api.h>

#include <filesystem>

#include "lance/dataset.h"
#include "lance/index/bloom_filter.h"
#include "lance/index/scalar_index.h"
#include "lance/index_ops.h"
#include "lance/write.h"

namespace lance {
namespace {

namespace cp = arrow::compute;
namespace fs = std::filesystem;
using index::SplitBlockBloomFilter;

TEST(BloomFilterTest, SizedAsTheReference) {
  // (ndv, fpp, bytes): the reference's test_num_of_bits_from_ndv_fpp
  // (log2 sizes, clamped to one 32-byte block) and pylance 14's default.
  const std::tuple<uint64_t, double, size_t> cases[] = {
      {10, 0.1, 32},      {10, 0.001, 32},    {100, 0.1, 128},     {100, 0.01, 256},  {100, 0.001, 256},
      {1000, 0.1, 1024},  {1000, 0.01, 2048}, {1000, 0.001, 4096}, {8192, 0.00057, 32768}};
  for (const auto& [ndv, fpp, bytes] : cases) {
    auto f = SplitBlockBloomFilter::ForItems(ndv, fpp);
    ASSERT_TRUE(f.ok());
    EXPECT_EQ(f->size_bytes(), bytes) << ndv << " " << fpp;
  }
  EXPECT_FALSE(SplitBlockBloomFilter::ForItems(10, 1.0).ok());
  EXPECT_FALSE(SplitBlockBloomFilter::ForItems(10, -0.1).ok());
}

TEST(BloomFilterTest, HashesInsertsAndRoundTrips) {
  arrow::StringBuilder sb;
  ASSERT_TRUE(sb.Append("").ok());
  ASSERT_TRUE(sb.AppendNull().ok());
  auto strings = *sb.Finish();
  EXPECT_EQ(index::BloomHash(*strings, 0), std::optional<uint64_t>(17241709254077376921ull));
  EXPECT_EQ(index::BloomHash(*strings, 1), std::nullopt);

  auto f = *SplitBlockBloomFilter::ForItems(1000, 0.01);
  arrow::Int32Builder ib;
  for (int32_t i = 0; i < 2000; ++i) ASSERT_TRUE(ib.Append(i).ok());
  auto ints = *ib.Finish();
  for (int64_t i = 0; i < 1000; ++i) f.InsertHash(*index::BloomHash(*ints, i));
  auto g = SplitBlockBloomFilter::FromBytes(f.ToBytes(), "test");
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->ToBytes(), f.ToBytes());
  int false_positives = 0;
  for (int64_t i = 0; i < 2000; ++i) {
    const bool hit = g->CheckHash(*index::BloomHash(*ints, i));
    if (i < 1000) {
      EXPECT_TRUE(hit) << i;  // never a false negative
    }
    if (i >= 1000 && hit) ++false_positives;
  }
  EXPECT_LT(false_positives, 50);
  EXPECT_FALSE(SplitBlockBloomFilter::FromBytes("", "test").ok());
  EXPECT_FALSE(SplitBlockBloomFilter::FromBytes(std::string(33, '\0'), "test").ok());
}

TEST(BloomFilterTest, IndexPrunesToTheZonesHoldingTheValue) {
  const fs::path dir = fs::temp_directory_path() / ("bloom_filter_test_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  arrow::Int64Builder id;
  for (int64_t i = 0; i < 400; ++i) ASSERT_TRUE(id.Append(i).ok());
  auto schema = arrow::schema({arrow::field("id", arrow::int64())});
  auto batch = arrow::RecordBatch::Make(schema, 400, {*id.Finish()});
  WriteParams params;
  params.max_rows_per_file = 150;
  auto v1 = WriteDataset(*arrow::RecordBatchReader::Make({batch}, schema), (dir / "ds").string(), params);
  ASSERT_TRUE(v1.ok()) << v1.status().ToString();
  CreateIndexBuilder build(*v1, "id", "BLOOMFILTER");
  auto v2 = build.NumberOfItems(50).Probability(0.001).Commit();
  ASSERT_TRUE(v2.ok()) << v2.status().ToString();
  EXPECT_EQ(build.result().index_details_type_url, "/lance.index.pb.BloomFilterIndexDetails");
  auto opened = index::OpenScalarIndex(**v2, (*v2)->indices()[0]);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  ASSERT_NE(*opened, nullptr);
  EXPECT_STREQ((*opened)->type_name(), "BloomFilter");
  auto eq = [](int64_t v) { return cp::equal(cp::field_ref("id"), cp::literal(v)); };
  // 7 is in fragment 0's first zone (offsets 0..49): that zone only.
  auto rows = (*opened)->Search(eq(7), "id");
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_EQ(rows->size(), 50u);
  EXPECT_EQ(rows->front(), 0u);
  // 160 is fragment 1's offset 10.
  rows = (*opened)->Search(eq(160), "id");
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 50u);
  EXPECT_EQ(rows->front(), uint64_t{1} << 32);
  rows = (*opened)->Search(cp::or_({eq(7), eq(160)}), "id");
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(rows->size(), 100u);
  EXPECT_FALSE((*opened)->CanSearch(cp::greater(cp::field_ref("id"), cp::literal(int64_t{3})), "id"));
  EXPECT_FALSE((*opened)->IsExact(eq(7)));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace lance
