#include "lance/index/vector/pq.h"

namespace lance::index::vector {

std::vector<float> ProductQuantizer::DistanceTable(const float* q, Metric metric) const {
  const size_t sub_dim = dim_ / m_;
  std::vector<float> table(static_cast<size_t>(m_) * 256);
  for (uint32_t s = 0; s < m_; ++s) {
    const float* qs = q + s * sub_dim;
    for (uint32_t c = 0; c < 256; ++c) {
      table[s * 256 + c] = metric == Metric::kDot ? Dot(qs, Codeword(s, c), sub_dim)
                                                   : L2Squared(qs, Codeword(s, c), sub_dim);
    }
  }
  return table;
}

void ProductQuantizer::Distances(const std::vector<float>& table, Metric metric, const uint8_t* codes, size_t rows,
                                 float* out) const {
  for (size_t i = 0; i < rows; ++i) out[i] = 0.0f;
  for (uint32_t s = 0; s < m_; ++s) {
    const float* t = table.data() + s * 256;
    const uint8_t* c = codes + s * rows;
    for (size_t i = 0; i < rows; ++i) out[i] += t[c[i]];
  }
  if (metric == Metric::kDot) {
    for (size_t i = 0; i < rows; ++i) out[i] = 1.0f - out[i];
  }
}

}  // namespace lance::index::vector
