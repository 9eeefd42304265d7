// Scalar quantization as pylance 14 stores it (IVF_SQ's auxiliary.idx):
// each value v becomes floor((v - lo) / (hi - lo) * 255), clipped to
// [0, 255], with the bounds [lo, hi] of the training data (raw values; for
// cosine the normalized ones). Distances (lance-index's SQ storage):
//   kL2, kCosine: sum of (query code - code)^2 * ((hi - lo) / 255)^2;
//   kDot: 1 - q . (code * (hi - lo) / 255 + lo).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "lance/index/vector/distance.h"

namespace lance::index::vector {

class ScalarQuantizer {
 public:
  ScalarQuantizer(double lo, double hi, uint32_t dim) : lo_(lo), hi_(hi), dim_(dim) {}

  uint32_t dim() const { return dim_; }
  uint8_t Quantize(float value) const;
  std::vector<uint8_t> Quantize(const float* values) const;

  /// The distance of a query (its codes `q_code` and values `q`) to a row's
  /// codes.
  float Distance(Metric metric, const uint8_t* q_code, const float* q, const uint8_t* code) const;

 private:
  double lo_;
  double hi_;
  uint32_t dim_;
};

}  // namespace lance::index::vector
