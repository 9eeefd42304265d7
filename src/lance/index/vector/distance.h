// Distance kernels of vector search, over float32 vectors, and the metric
// names pylance uses. Plain loops with several accumulators, which the
// compiler vectorizes at -O2; the sums are in float32 as pylance's.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace lance::index::vector {

/// pylance's distance types (lance_linalg::DistanceType) that lance-cpp
/// searches with. `_distance` is, for vectors q and x:
///   kL2: the squared Euclidean distance |q - x|^2 (no square root);
///   kCosine: 1 - q.x / (|q| |x|);
///   kDot: 1 - q.x.
enum class Metric { kL2, kCosine, kDot };

/// "l2" (also "euclidean"), "cosine", "dot", case-insensitive; nullopt else.
std::optional<Metric> ParseMetric(std::string_view name);
const char* MetricName(Metric metric);

float L2Squared(const float* a, const float* b, size_t dim);
float Dot(const float* a, const float* b, size_t dim);
/// |a|, the Euclidean norm.
float Norm(const float* a, size_t dim);

/// 1 - a.b / (|a| |b|), with |a| given (a query's norm, computed once).
/// NaN when a norm is 0, as pylance's division gives.
float CosineDistance(const float* a, float norm_a, const float* b, size_t dim);

/// The metric's `_distance` between a query and a vector (the query's norm
/// is used by kCosine only).
inline float Distance(Metric metric, const float* q, float q_norm, const float* x, size_t dim) {
  switch (metric) {
    case Metric::kL2:
      return L2Squared(q, x, dim);
    case Metric::kCosine:
      return CosineDistance(q, q_norm, x, dim);
    case Metric::kDot:
      return 1.0f - Dot(q, x, dim);
  }
  return 0.0f;
}

}  // namespace lance::index::vector
