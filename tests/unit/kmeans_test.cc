// k-means training of IVF centroids (index/vector/kmeans.h).
#include "lance/index/vector/kmeans.h"

#include <cmath>
#include <random>

#include <gtest/gtest.h>

namespace lance::index::vector {
namespace {

// `clusters` well-separated blobs in `dim` dimensions, `per` points each.
std::vector<float> Blobs(uint32_t clusters, uint32_t per, uint32_t dim, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> noise(0.0f, 0.05f);
  std::vector<float> out;
  for (uint32_t p = 0; p < per; ++p) {
    for (uint32_t c = 0; c < clusters; ++c) {
      for (uint32_t j = 0; j < dim; ++j) out.push_back((j == c % dim ? 10.0f * (1 + c / dim) : 0.0f) + noise(rng));
    }
  }
  return out;
}

TEST(KMeans, FindsSeparatedClusters) {
  const uint32_t dim = 8, k = 8;
  auto data = Blobs(k, 100, dim, 1);
  KMeansOptions o;
  o.k = k;
  auto r = TrainKMeans(data.data(), data.size() / dim, dim, o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  // Each blob's points share one centroid, distinct per blob.
  std::vector<int> owner(k, -1);
  for (size_t i = 0; i < data.size() / dim; ++i) {
    auto [c, d] = NearestCentroid(data.data() + i * dim, r->centroids.data(), k, dim, Metric::kL2);
    const uint32_t blob = static_cast<uint32_t>(i % k);
    if (owner[blob] < 0) owner[blob] = static_cast<int>(c);
    EXPECT_EQ(owner[blob], static_cast<int>(c)) << "row " << i;
    EXPECT_LT(d, 1.0f);
  }
  std::sort(owner.begin(), owner.end());
  EXPECT_EQ(std::unique(owner.begin(), owner.end()), owner.end());
  EXPECT_LE(r->iterations, 50u);
  EXPECT_GT(r->loss, 0.0);
}

TEST(KMeans, DeterministicForASeed) {
  const uint32_t dim = 4;
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<float> u(0, 1);
  std::vector<float> data(1000 * dim);
  for (auto& x : data) x = u(rng);
  KMeansOptions o;
  o.k = 5;
  auto a = TrainKMeans(data.data(), 1000, dim, o);
  auto b = TrainKMeans(data.data(), 1000, dim, o);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->centroids, b->centroids);
  o.seed = 43;
  auto c = TrainKMeans(data.data(), 1000, dim, o);
  ASSERT_TRUE(c.ok());
  EXPECT_NE(a->centroids, c->centroids);
}

TEST(KMeans, DotGivesUnitCentroids) {
  const uint32_t dim = 6;
  auto data = Blobs(6, 50, dim, 2);
  KMeansOptions o;
  o.k = 6;
  o.metric = Metric::kDot;
  auto r = TrainKMeans(data.data(), data.size() / dim, dim, o);
  ASSERT_TRUE(r.ok());
  for (uint32_t c = 0; c < 6; ++c) EXPECT_NEAR(Norm(r->centroids.data() + c * dim, dim), 1.0f, 1e-5f);
}

TEST(KMeans, FewerVectorsThanCentroidsAndOneIteration) {
  std::vector<float> data = {0, 0, 1, 1};
  KMeansOptions o;
  o.k = 3;
  o.max_iterations = 1;
  auto r = TrainKMeans(data.data(), 2, 2, o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->centroids.size(), 6u);
  EXPECT_EQ(r->iterations, 1u);
}

TEST(KMeans, RefusesEmptyInput) {
  KMeansOptions o;
  EXPECT_FALSE(TrainKMeans(nullptr, 0, 4, o).ok());
  o.k = 0;
  float x[4] = {0, 0, 0, 0};
  EXPECT_FALSE(TrainKMeans(x, 1, 4, o).ok());
}

TEST(KMeans, NearestCentroidTiesToLowerIndex) {
  std::vector<float> cen = {1, 0, 1, 0, 0, 1};
  float x[2] = {1, 0};
  EXPECT_EQ(NearestCentroid(x, cen.data(), 3, 2, Metric::kL2).first, 0u);
  EXPECT_EQ(NearestCentroid(x, cen.data(), 3, 2, Metric::kDot).first, 0u);
}

}  // namespace
}  // namespace lance::index::vector
