#include "lance/index/vector/sq.h"

#include <cmath>

namespace lance::index::vector {

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
  for (uint32_t i = 0; i < dim_; ++i) {
    const int32_t d = static_cast<int32_t>(q_code[i]) - static_cast<int32_t>(code[i]);
    sum += static_cast<uint64_t>(d * d);
  }
  return static_cast<float>(sum) * (value_scale * value_scale);
}

}  // namespace lance::index::vector
