// Product quantization as pylance 14 stores it (IVF_PQ's auxiliary.idx):
// M sub-vectors of dim / M values, 256 codewords each (8 bits), the
// codebook laid out [M][256][dim / M], and a partition's codes transposed
// (sub-vector major: code s of row i at s * L + i for L rows).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "lance/index/vector/distance.h"
#include "lance/status.h"

namespace lance::index::vector {

class ProductQuantizer {
 public:
  /// REQUIRES: codebook.size() == 256 * dim; dim % num_sub_vectors == 0.
  ProductQuantizer(uint32_t num_sub_vectors, uint32_t dim, std::vector<float> codebook)
      : m_(num_sub_vectors), dim_(dim), codebook_(std::move(codebook)) {}

  uint32_t num_sub_vectors() const { return m_; }
  uint32_t dim() const { return dim_; }
  const float* Codeword(uint32_t sub, uint32_t code) const {
    return codebook_.data() + (static_cast<size_t>(sub) * 256 + code) * (dim_ / m_);
  }

  /// The table of a query: [M][256] partial distances, squared L2 of the
  /// query's sub-vectors to each codeword (kL2, kCosine: `q` is the
  /// residual of the normalized query), or their dot products (kDot).
  std::vector<float> DistanceTable(const float* q, Metric metric) const;

  /// The distance of each of `rows` rows from `table`, codes transposed:
  /// kL2/kCosine the sum of partials, kDot 1 - the sum.
  void Distances(const std::vector<float>& table, Metric metric, const uint8_t* codes, size_t rows,
                 float* out) const;

 private:
  uint32_t m_;
  uint32_t dim_;
  std::vector<float> codebook_;
};

}  // namespace lance::index::vector
