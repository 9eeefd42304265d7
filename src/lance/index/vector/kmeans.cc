#include "lance/index/vector/kmeans.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>

namespace lance::index::vector {

std::pair<uint32_t, float> NearestCentroid(const float* x, const float* centroids, uint32_t k, uint32_t dim,
                                           Metric metric) {
  uint32_t best = 0;
  float best_d = std::numeric_limits<float>::infinity();
  for (uint32_t c = 0; c < k; ++c) {
    const float* cen = centroids + static_cast<size_t>(c) * dim;
    const float d = metric == Metric::kDot ? 1.0f - Dot(x, cen, dim) : L2Squared(x, cen, dim);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  return {best, best_d};
}

namespace {

void Normalize(float* v, uint32_t dim) {
  const float n = Norm(v, dim);
  if (n > 0) {
    for (uint32_t j = 0; j < dim; ++j) v[j] /= n;
  }
}

}  // namespace

Result<KMeansResult> TrainKMeans(const float* data, size_t n, uint32_t dim, const KMeansOptions& o) {
  if (n == 0) return Status::Invalid("k-means needs at least one training vector");
  if (o.k == 0) return Status::Invalid("k-means needs k >= 1");
  if (dim == 0) return Status::Invalid("k-means needs dim >= 1");
  const uint32_t k = o.k;
  std::mt19937_64 rng(o.seed);
  // Initial centroids: k distinct training vectors chosen at random
  // (pylance's KMeanInit::Random); with fewer vectors than k, cycled.
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  for (size_t i = 0; i < std::min<size_t>(n, k); ++i) {
    std::uniform_int_distribution<size_t> pick(i, n - 1);
    std::swap(order[i], order[pick(rng)]);
  }
  KMeansResult r;
  r.centroids.resize(static_cast<size_t>(k) * dim);
  for (uint32_t c = 0; c < k; ++c) {
    std::copy_n(data + order[c % n] * dim, dim, r.centroids.data() + static_cast<size_t>(c) * dim);
  }
  // k-means++ seeding (D^2 sampling) when it is affordable (k * n * dim at
  // most kPlusPlusWork); else the random choice above, as pylance's.
  constexpr double kPlusPlusWork = 4e9;
  if (n > k && static_cast<double>(k) * static_cast<double>(n) * dim <= kPlusPlusWork) {
    std::vector<double> nearest(n, std::numeric_limits<double>::infinity());
    for (uint32_t c = 1; c < k; ++c) {
      const float* prev = r.centroids.data() + static_cast<size_t>(c - 1) * dim;
      double total = 0;
      for (size_t i = 0; i < n; ++i) {
        // Spherical (dot): the angle between the vector and the seed.
        const double d = o.metric == Metric::kDot
                             ? 1.0 - Dot(data + i * dim, prev, dim) / (double{Norm(data + i * dim, dim)} * Norm(prev, dim))
                             : L2Squared(data + i * dim, prev, dim);
        nearest[i] = std::min<double>(nearest[i], std::max(d, 0.0));
        total += nearest[i];
      }
      size_t chosen = order[c];
      if (total > 0) {
        std::uniform_real_distribution<double> u(0.0, total);
        double target = u(rng);
        for (size_t i = 0; i < n; ++i) {
          target -= nearest[i];
          if (target <= 0) {
            chosen = i;
            break;
          }
        }
      }
      std::copy_n(data + chosen * dim, dim, r.centroids.data() + static_cast<size_t>(c) * dim);
    }
  }
  if (o.metric == Metric::kDot) {
    for (uint32_t c = 0; c < k; ++c) Normalize(r.centroids.data() + static_cast<size_t>(c) * dim, dim);
  }
  std::vector<uint32_t> assign(n);
  std::vector<double> sums(static_cast<size_t>(k) * dim);
  std::vector<uint64_t> counts(k);
  double previous = std::numeric_limits<double>::infinity();
  for (uint32_t it = 0; it < o.max_iterations; ++it) {
    double loss = 0;
    for (size_t i = 0; i < n; ++i) {
      auto [c, d] = NearestCentroid(data + i * dim, r.centroids.data(), k, dim, o.metric);
      assign[i] = c;
      loss += d;
    }
    r.loss = loss;
    r.iterations = it + 1;
    std::fill(sums.begin(), sums.end(), 0.0);
    std::fill(counts.begin(), counts.end(), 0);
    for (size_t i = 0; i < n; ++i) {
      const float* x = data + i * dim;
      double* s = sums.data() + static_cast<size_t>(assign[i]) * dim;
      for (uint32_t j = 0; j < dim; ++j) s[j] += x[j];
      ++counts[assign[i]];
    }
    for (uint32_t c = 0; c < k; ++c) {
      float* cen = r.centroids.data() + static_cast<size_t>(c) * dim;
      if (counts[c] == 0) continue;  // split below
      for (uint32_t j = 0; j < dim; ++j) cen[j] = static_cast<float>(sums[static_cast<size_t>(c) * dim + j] / counts[c]);
      if (o.metric == Metric::kDot) Normalize(cen, dim);
    }
    // An empty cluster takes a slightly perturbed copy of the largest one's
    // centroid (pylance splits the largest cluster likewise).
    for (uint32_t c = 0; c < k; ++c) {
      if (counts[c] != 0) continue;
      const uint32_t big = static_cast<uint32_t>(std::max_element(counts.begin(), counts.end()) - counts.begin());
      if (counts[big] < 2) continue;
      float* cen = r.centroids.data() + static_cast<size_t>(c) * dim;
      const float* from = r.centroids.data() + static_cast<size_t>(big) * dim;
      for (uint32_t j = 0; j < dim; ++j) {
        cen[j] = from[j] * (1.0f + 1e-3f);
        r.centroids[static_cast<size_t>(big) * dim + j] = from[j] * (1.0f - 1e-3f);
      }
      if (o.metric == Metric::kDot) Normalize(cen, dim);
      counts[big] /= 2;
      counts[c] = counts[big];
    }
    if (std::isfinite(previous) && std::abs(previous - loss) <= o.tolerance * std::abs(previous)) break;
    previous = loss;
  }
  return r;
}

}  // namespace lance::index::vector
