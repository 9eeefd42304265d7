// k-means training of IVF centroids, as pylance 14 trains them
// (lance-index's KMeansParams defaults: at most 50 iterations, stop when the
// loss changes by less than 1e-4 relative, one run), on an in-memory sample.
#pragma once

#include <cstdint>
#include <vector>

#include "lance/index/vector/distance.h"
#include "lance/status.h"

namespace lance::index::vector {

struct KMeansOptions {
  /// Number of centroids (k >= 1).
  uint32_t k = 1;
  /// At most this many Lloyd iterations (pylance's max_iters, default 50).
  uint32_t max_iterations = 50;
  /// Stop when |loss - previous| / previous < tolerance (pylance: 1e-4).
  double tolerance = 1e-4;
  /// kL2 / kCosine: Euclidean k-means (for cosine the caller passes
  /// normalized data; centroids are not re-normalized, as pylance's).
  /// kDot: spherical k-means (assignment by largest inner product,
  /// centroids normalized to unit length), as pylance 14's dot centroids are.
  Metric metric = Metric::kL2;
  /// Seed of the initial choice of k distinct training vectors (pylance
  /// seeds from the OS; lance-cpp is deterministic).
  uint64_t seed = 42;
};

struct KMeansResult {
  std::vector<float> centroids;  // [k][dim]
  double loss = 0;               // sum over the data of the distance to its centroid
  uint32_t iterations = 0;
};

/// Trains k centroids on `data` ([n][dim], row-major).
/// REQUIRES: n >= 1. With n < k, centroids past n repeat training vectors.
Result<KMeansResult> TrainKMeans(const float* data, size_t n, uint32_t dim, const KMeansOptions& options);

/// The index of the centroid nearest to `x` under `metric` (squared L2 for
/// kL2 / kCosine, 1 - x.c for kDot) and that distance; ties to the lower index.
std::pair<uint32_t, float> NearestCentroid(const float* x, const float* centroids, uint32_t k, uint32_t dim,
                                           Metric metric);

}  // namespace lance::index::vector
