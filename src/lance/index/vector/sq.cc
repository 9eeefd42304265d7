#include "lance/index/vector/sq.h"

#include <algorithm>
#include <cmath>

namespace lance::index::vector {
namespace {

// Values per block of SquaredCodeDistance: their squares, at most 255^2
// each, fit 32 bits.
constexpr uint32_t kBlock = 65536;

// sum (a[i] - b[i])^2 over n <= kBlock codes, exact (so in any order).
// GCC's -O2 cost model leaves this widening loop scalar; -O3's vectorizes it
// (clang vectorizes at -O2).
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("O3")))
#endif
uint32_t SquaredCodeDistance(const uint8_t* a, const uint8_t* b, uint32_t n) {
  uint32_t sum = 0;
  for (uint32_t i = 0; i < n; ++i) {
    const int32_t d = static_cast<int32_t>(a[i]) - static_cast<int32_t>(b[i]);
    sum += static_cast<uint32_t>(d * d);
  }
  return sum;
}

}  // namespace

uint8_t ScalarQuantizer::Quantize(float value) const {
  const double range = hi_ - lo_;
  if (!(range > 0)) return 0;
  const double scaled = std::floor((static_cast<double>(value) - lo_) / range * 255.0);
  if (!(scaled > 0)) return 0;
  if (scaled >= 255.0) return 255;
  return static_cast<uint8_t>(scaled);
}

std::vector<uint8_t> ScalarQuantizer::Quantize(const float* values) const {
  std::vector<uint8_t> out(dim_);
  for (uint32_t i = 0; i < dim_; ++i) out[i] = Quantize(values[i]);
  return out;
}

float ScalarQuantizer::Distance(Metric metric, const uint8_t* q_code, const float* q, const uint8_t* code) const {
  const float value_scale = static_cast<float>(hi_ - lo_) / 255.0f;
  if (metric == Metric::kDot) {
    float dot = 0.0f, q_sum = 0.0f;
    for (uint32_t i = 0; i < dim_; ++i) {
      dot += q[i] * static_cast<float>(code[i]);
      q_sum += q[i];
    }
    return 1.0f - (dot * value_scale + q_sum * static_cast<float>(lo_));
  }
  uint64_t sum = 0;
  for (uint32_t start = 0; start < dim_; start += kBlock) {
    sum += SquaredCodeDistance(q_code + start, code + start, std::min(kBlock, dim_ - start));
  }
  return static_cast<float>(sum) * (value_scale * value_scale);
}

}  // namespace lance::index::vector
