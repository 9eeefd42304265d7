// Vector search's building blocks against hand-computed values: the
// distance kernels (l2 squared, cosine, dot as pylance defines `_distance`),
// PQ tables over a [M][256][dim/M] codebook with transposed codes, SQ
// quantization and distances, the IVF probe counts, and the TopK order.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include "lance/index/vector/distance.h"
#include "lance/index/vector/ivf_index.h"
#include "lance/index/vector/pq.h"
#include "lance/index/vector/sq.h"

namespace lance::index::vector {
namespace {

// float64 references.
double L2Ref(const std::vector<float>& a, const std::vector<float>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
  return s;
}
double DotRef(const std::vector<float>& a, const std::vector<float>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += double(a[i]) * b[i];
  return s;
}

std::vector<float> Ramp(size_t n, float start, float step) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = start + step * static_cast<float>(i);
  return v;
}

TEST(VectorKernelsTest, DistancesOfEveryLengthAroundTheLanes) {
  for (size_t dim : {1u, 3u, 7u, 8u, 9u, 16u, 17u, 31u, 128u, 130u}) {
    const auto a = Ramp(dim, 0.5f, 0.25f);
    const auto b = Ramp(dim, -1.0f, 0.125f);
    EXPECT_NEAR(L2Squared(a.data(), b.data(), dim), L2Ref(a, b), 1e-5 * L2Ref(a, b)) << dim;
    EXPECT_NEAR(Dot(a.data(), b.data(), dim), DotRef(a, b), 1e-5 * std::abs(DotRef(a, b)) + 1e-6) << dim;
    const double cos = DotRef(a, b) / std::sqrt(DotRef(a, a) * DotRef(b, b));
    EXPECT_NEAR(Distance(Metric::kCosine, a.data(), Norm(a.data(), dim), b.data(), dim), 1.0 - cos, 1e-5) << dim;
    EXPECT_NEAR(Distance(Metric::kDot, a.data(), 0.0f, b.data(), dim), 1.0 - DotRef(a, b),
                1e-5 * std::abs(DotRef(a, b)) + 1e-5)
        << dim;
    EXPECT_EQ(Distance(Metric::kL2, a.data(), 0.0f, b.data(), dim), L2Squared(a.data(), b.data(), dim));
  }
  // Squared: no square root.
  const float x[2] = {0, 0}, y[2] = {3, 4};
  EXPECT_EQ(L2Squared(x, y, 2), 25.0f);
  // Cosine of a zero vector is not a number, as pylance's division gives.
  EXPECT_TRUE(std::isnan(CosineDistance(y, Norm(y, 2), x, 2)));
}

TEST(VectorKernelsTest, MetricNames) {
  EXPECT_EQ(ParseMetric("l2"), Metric::kL2);
  EXPECT_EQ(ParseMetric("Euclidean"), Metric::kL2);
  EXPECT_EQ(ParseMetric("COSINE"), Metric::kCosine);
  EXPECT_EQ(ParseMetric("dot"), Metric::kDot);
  EXPECT_FALSE(ParseMetric("hamming").has_value());
  EXPECT_FALSE(ParseMetric("").has_value());
  EXPECT_STREQ(MetricName(Metric::kCosine), "cosine");
}

// A codebook [M][256][dsub] with codeword j of sub-vector s = (s + j / 256) repeated.
std::vector<float> Codebook(uint32_t m, uint32_t dsub) {
  std::vector<float> cb(static_cast<size_t>(m) * 256 * dsub);
  for (uint32_t s = 0; s < m; ++s) {
    for (uint32_t j = 0; j < 256; ++j) {
      for (uint32_t d = 0; d < dsub; ++d) cb[(s * 256 + j) * dsub + d] = float(s) + float(j) / 256.0f + float(d);
    }
  }
  return cb;
}

TEST(ProductQuantizerTest, CodebookIsSubVectorMajor) {
  ProductQuantizer pq(4, 8, Codebook(4, 2));
  EXPECT_EQ(pq.Codeword(0, 0)[0], 0.0f);
  EXPECT_EQ(pq.Codeword(2, 128)[1], 2.0f + 0.5f + 1.0f);
  EXPECT_EQ(pq.Codeword(3, 255)[0], 3.0f + 255.0f / 256.0f);
}

TEST(ProductQuantizerTest, TransposedCodesGiveEachRowsSum) {
  const uint32_t m = 4, dsub = 2, dim = m * dsub;
  ProductQuantizer pq(m, dim, Codebook(m, dsub));
  const auto q = Ramp(dim, 0.1f, 0.3f);
  // Three rows; row i's code of sub-vector s.
  const uint8_t row_codes[3][4] = {{0, 1, 2, 3}, {255, 128, 7, 0}, {10, 20, 30, 40}};
  std::vector<uint8_t> transposed(3 * m);
  for (uint32_t s = 0; s < m; ++s) {
    for (size_t i = 0; i < 3; ++i) transposed[s * 3 + i] = row_codes[i][s];
  }
  for (Metric metric : {Metric::kL2, Metric::kDot}) {
    const auto table = pq.DistanceTable(q.data(), metric);
    ASSERT_EQ(table.size(), m * 256u);
    float out[3];
    pq.Distances(table, metric, transposed.data(), 3, out);
    for (size_t i = 0; i < 3; ++i) {
      // The reconstruction: concatenated codewords.
      std::vector<float> rec;
      for (uint32_t s = 0; s < m; ++s) {
        const float* c = pq.Codeword(s, row_codes[i][s]);
        rec.insert(rec.end(), c, c + dsub);
      }
      const double want = metric == Metric::kL2 ? L2Ref(q, rec) : 1.0 - DotRef(q, rec);
      EXPECT_NEAR(out[i], want, 1e-4 * std::abs(want) + 1e-5) << "row " << i;
    }
  }
}

TEST(ScalarQuantizerTest, FloorOfTheScaledValueClipped) {
  ScalarQuantizer sq(-1.0, 1.0, 4);
  EXPECT_EQ(sq.Quantize(-1.0f), 0);
  EXPECT_EQ(sq.Quantize(-2.0f), 0);
  EXPECT_EQ(sq.Quantize(1.0f), 255);
  EXPECT_EQ(sq.Quantize(5.0f), 255);
  EXPECT_EQ(sq.Quantize(0.0f), 127);  // floor(127.5)
  EXPECT_EQ(sq.Quantize(0.999f), 254);
  ScalarQuantizer flat(0.5, 0.5, 1);
  EXPECT_EQ(flat.Quantize(0.7f), 0);  // an empty range: no division by zero
}

TEST(ScalarQuantizerTest, Distances) {
  ScalarQuantizer sq(0.0, 2.55, 3);
  const float q[3] = {0.5f, 1.0f, 2.0f};
  const auto q_code = sq.Quantize(q);
  EXPECT_EQ(q_code, (std::vector<uint8_t>{50, 100, 200}));
  const uint8_t code[3] = {52, 97, 200};
  // (2^2 + 3^2 + 0) * (2.55 / 255)^2
  EXPECT_NEAR(sq.Distance(Metric::kL2, q_code.data(), q, code), 13 * 0.0001, 1e-7);
  EXPECT_NEAR(sq.Distance(Metric::kCosine, q_code.data(), q, code), 13 * 0.0001, 1e-7);
  // 1 - q . (code * 0.01 + 0)
  EXPECT_NEAR(sq.Distance(Metric::kDot, q_code.data(), q, code), 1.0 - (0.5 * 0.52 + 0.97 + 2.0 * 2.0), 1e-5);
}

TEST(IvfProbesTest, FixedCountIsExact) {
  const std::vector<float> d = {0.1f, 0.2f, 0.3f, 0.4f, 0.5f};
  EXPECT_EQ(PlanProbes(d, Metric::kL2, 10, 2, 2u, std::nullopt).initial, 2u);
  EXPECT_EQ(PlanProbes(d, Metric::kL2, 10, 2, 2u, std::nullopt).maximum, 2u);
  EXPECT_EQ(PlanProbes(d, Metric::kL2, 10, 9, 9u, std::nullopt).initial, 5u);  // clipped to the partitions
}

TEST(IvfProbesTest, AdaptiveBudgetByMetricAndK) {
  // 100 partitions at distances 1.00, 1.01, 1.02, ...
  std::vector<float> d(100);
  for (size_t i = 0; i < d.size(); ++i) d[i] = 1.0f + 0.01f * static_cast<float>(i);
  // l2, k = 10: margin 0.265 -> 27 partitions within the gap, capped at 24.
  auto plan = PlanProbes(d, Metric::kL2, 10, 1, std::nullopt, std::nullopt);
  EXPECT_EQ(plan.initial, 24u);
  EXPECT_EQ(plan.maximum, 100u);
  // l2, k = 1: margin 0.2175 -> 22 within the gap, capped at 19.
  EXPECT_EQ(PlanProbes(d, Metric::kL2, 1, 1, std::nullopt, std::nullopt).initial, 19u);
  // cosine, k = 1: 0.235 -> 24 (cap 50).
  EXPECT_EQ(PlanProbes(d, Metric::kCosine, 1, 1, std::nullopt, std::nullopt).initial, 24u);
  // Far apart partitions: the floor (l2 k <= 10: 6).
  std::vector<float> far(100);
  for (size_t i = 0; i < far.size(); ++i) far[i] = 1.0f + static_cast<float>(i);
  EXPECT_EQ(PlanProbes(far, Metric::kL2, 5, 1, std::nullopt, std::nullopt).initial, 6u);
  // A caller minimum above the budget wins; a maximum clips it.
  EXPECT_EQ(PlanProbes(far, Metric::kL2, 5, 30, std::nullopt, std::nullopt).initial, 30u);
  EXPECT_EQ(PlanProbes(far, Metric::kL2, 5, 2, 4u, std::nullopt).initial, 4u);
  // dot: the floor (k <= 10: 144) exceeds 100 partitions.
  EXPECT_EQ(PlanProbes(far, Metric::kDot, 10, 1, std::nullopt, std::nullopt).initial, 100u);
}

TEST(NeighborOrderTest, NearestFirstThenRowIdThenNaN) {
  std::vector<Neighbor> v = {{2.0f, 1}, {1.0f, 9}, {std::numeric_limits<float>::quiet_NaN(), 0}, {1.0f, 3}};
  std::sort(v.begin(), v.end(), Nearer);
  EXPECT_EQ(v[0].row_id, 3u);
  EXPECT_EQ(v[1].row_id, 9u);
  EXPECT_EQ(v[2].row_id, 1u);
  EXPECT_TRUE(std::isnan(v[3].distance));
}

}  // namespace
}  // namespace lance::index::vector
