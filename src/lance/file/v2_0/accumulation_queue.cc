#include "lance/file/v2_0/array_encoder.h"
#include "lance/file/v2_0/field_encoders.h"

namespace lance::file::v2_0 {

std::optional<arrow::ArrayVector> AccumulationQueue::Insert(std::shared_ptr<arrow::Array> array, uint64_t memory) {
  current_bytes_ += memory;
  arrays_.push_back(std::move(array));
  if (current_bytes_ <= cache_bytes_) return std::nullopt;
  current_bytes_ = 0;
  return std::exchange(arrays_, {});
}

std::optional<arrow::ArrayVector> AccumulationQueue::Flush() {
  if (arrays_.empty()) return std::nullopt;
  current_bytes_ = 0;
  return std::exchange(arrays_, {});
}

}  // namespace lance::file::v2_0
