#include "lance/index/bloom_filter.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include <arrow/api.h>
#include <xxhash.h>

namespace lance::index {
namespace {

constexpr uint32_t kSalt[8] = {0x47b6137bu, 0x44974d91u, 0x8824ad5bu, 0xa2b7289du,
                               0x705495c7u, 0x2df1424bu, 0x9efc4947u, 0x5c6bfb31u};
constexpr int kMinLog2Bytes = 5;   // one block
constexpr int kMaxLog2Bytes = 27;  // 128 MiB

// Putze et al.'s estimate (equation 3) of the false-positive rate of a
// filter of 2^log2_bytes bytes holding `ndv` values, summed as the
// reference sums it (750 terms, from the highest) so that the size chosen
// is the same.
double FalsePositiveRate(uint64_t ndv, int log2_bytes) {
  const double bytes = std::ldexp(1.0, log2_bytes);
  const double n = static_cast<double>(ndv);
  if (n == 0.0) return 0.0;
  if (n / (bytes * 8.0) > 2.0) return 1.0;
  const double lam = 8.0 * 32.0 / ((bytes * 8.0) / n);
  const double loglam = std::log(lam);
  double result = 0.0;
  for (int i = 749; i >= 0; --i) {
    const double logp = i * loglam - lam - std::lgamma(static_cast<double>(i + 1));
    const double logfinner = 8.0 * std::log(1.0 - std::pow(1.0 - 1.0 / 32.0, i));
    result += std::exp(logp + logfinner);
  }
  return std::min(result, 1.0);
}

}  // namespace

Result<SplitBlockBloomFilter> SplitBlockBloomFilter::ForItems(uint64_t ndv, double fpp) {
  if (!(fpp >= 0.0 && fpp < 1.0)) {
    return Status::Invalid("bloom filter probability must be in [0, 1), got ", fpp);
  }
  int low = 0, high = 64;
  while (high > low + 1) {
    const int mid = (low + high) / 2;
    if (FalsePositiveRate(ndv, mid) <= fpp) {
      high = mid;
    } else {
      low = mid;
    }
  }
  const int log2_bytes = std::clamp(high, kMinLog2Bytes, kMaxLog2Bytes);
  SplitBlockBloomFilter f;
  f.words_.assign((size_t{1} << log2_bytes) / 4, 0);
  return f;
}

Result<SplitBlockBloomFilter> SplitBlockBloomFilter::FromBytes(std::string_view bytes, const std::string& context) {
  if (bytes.empty() || bytes.size() % 32 != 0) {
    return Status::Invalid(context, ": a bloom filter of ", bytes.size(), " bytes (not a positive multiple of 32)");
  }
  SplitBlockBloomFilter f;
  f.words_.resize(bytes.size() / 4);
  for (size_t w = 0; w < f.words_.size(); ++w) {
    const auto* p = reinterpret_cast<const uint8_t*>(bytes.data()) + 4 * w;
    f.words_[w] = uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
  }
  return f;
}

size_t SplitBlockBloomFilter::Block(uint64_t hash) const {
  const uint64_t blocks = words_.size() / 8;
  // The spec's multiply-shift (the product never overflows: both < 2^32).
  return static_cast<size_t>(((hash >> 32) * blocks) >> 32);
}

void SplitBlockBloomFilter::InsertHash(uint64_t hash) {
  uint32_t* block = &words_[Block(hash) * 8];
  const auto x = static_cast<uint32_t>(hash);
  for (int i = 0; i < 8; ++i) block[i] |= uint32_t{1} << ((x * kSalt[i]) >> 27);
}

bool SplitBlockBloomFilter::CheckHash(uint64_t hash) const {
  const uint32_t* block = &words_[Block(hash) * 8];
  const auto x = static_cast<uint32_t>(hash);
  for (int i = 0; i < 8; ++i) {
    if ((block[i] & (uint32_t{1} << ((x * kSalt[i]) >> 27))) == 0) return false;
  }
  return true;
}

std::string SplitBlockBloomFilter::ToBytes() const {
  std::string out(words_.size() * 4, '\0');
  for (size_t w = 0; w < words_.size(); ++w) {
    for (int b = 0; b < 4; ++b) out[4 * w + b] = static_cast<char>((words_[w] >> (8 * b)) & 0xFF);
  }
  return out;
}

bool BloomFilterValueType(const arrow::DataType& t) {
  using arrow::Type;
  if (arrow::is_integer(t.id())) return true;
  switch (t.id()) {
    case Type::FLOAT:
    case Type::DOUBLE:
    case Type::STRING:
    case Type::LARGE_STRING:
    case Type::BINARY:
    case Type::LARGE_BINARY:
    case Type::DATE32:
    case Type::DATE64:
    case Type::TIME32:
    case Type::TIME64:
    case Type::TIMESTAMP: return true;
    default: return false;
  }
}

uint64_t BloomHashBytes(const void* data, size_t size) { return XXH64(data, size, 0); }

std::optional<uint64_t> BloomHash(const arrow::Array& values, int64_t i) {
  if (values.IsNull(i)) return std::nullopt;
  switch (values.type_id()) {
    case arrow::Type::STRING:
    case arrow::Type::BINARY: {
      const auto v = static_cast<const arrow::BinaryArray&>(values).GetView(i);
      return BloomHashBytes(v.data(), v.size());
    }
    case arrow::Type::LARGE_STRING:
    case arrow::Type::LARGE_BINARY: {
      const auto v = static_cast<const arrow::LargeBinaryArray&>(values).GetView(i);
      return BloomHashBytes(v.data(), v.size());
    }
    default: {
      // Fixed-width values: their native (little-endian) bytes, as the
      // reference's AsBytes.
      const int width = static_cast<const arrow::FixedWidthType&>(*values.type()).bit_width() / 8;
      const uint8_t* data = values.data()->buffers[1]->data() + (values.offset() + i) * width;
      return BloomHashBytes(data, static_cast<size_t>(width));
    }
  }
}

}  // namespace lance::index
