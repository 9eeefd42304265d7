#include "lance/index/vector/distance.h"

#include <cctype>
#include <cmath>

namespace lance::index::vector {
namespace {

// Eight independent partial sums: the loop vectorizes without -ffast-math
// (the order of additions is fixed by the code, not by the compiler).
constexpr size_t kLanes = 8;

template <typename Term>
float Sum(size_t dim, Term term) {
  float acc[kLanes] = {};
  size_t i = 0;
  for (; i + kLanes <= dim; i += kLanes) {
    for (size_t l = 0; l < kLanes; ++l) acc[l] += term(i + l);
  }
  float tail = 0.0f;
  for (; i < dim; ++i) tail += term(i);
  float total = 0.0f;
  for (size_t l = 0; l < kLanes; ++l) total += acc[l];
  return total + tail;
}

}  // namespace

std::optional<Metric> ParseMetric(std::string_view name) {
  std::string lower;
  for (char c : name) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower == "l2" || lower == "euclidean") return Metric::kL2;
  if (lower == "cosine") return Metric::kCosine;
  if (lower == "dot") return Metric::kDot;
  return std::nullopt;
}

const char* MetricName(Metric metric) {
  switch (metric) {
    case Metric::kL2:
      return "l2";
    case Metric::kCosine:
      return "cosine";
    case Metric::kDot:
      return "dot";
  }
  return "?";
}

float L2Squared(const float* a, const float* b, size_t dim) {
  return Sum(dim, [&](size_t i) {
    const float d = a[i] - b[i];
    return d * d;
  });
}

float Dot(const float* a, const float* b, size_t dim) {
  return Sum(dim, [&](size_t i) { return a[i] * b[i]; });
}

float Norm(const float* a, size_t dim) { return std::sqrt(Dot(a, a, dim)); }

float CosineDistance(const float* a, float norm_a, const float* b, size_t dim) {
  const float ab = Dot(a, b, dim);
  const float bb = Dot(b, b, dim);
  return 1.0f - ab / (norm_a * std::sqrt(bb));
}

}  // namespace lance::index::vector
