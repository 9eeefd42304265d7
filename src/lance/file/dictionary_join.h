// Joining dictionary arrays decoded from different pages. Every page has its
// own dictionary, often with the same values; the joined array must still
// fit its index type, as readers of the reference do.
#pragma once

#include <memory>

#include <arrow/array.h>
#include <arrow/memory_pool.h>

#include "lance/status.h"

namespace lance::file {

/// Joins `pieces` (dictionary arrays of `type`) into one. Pieces with equal
/// dictionaries share it; otherwise the dictionaries are appended with the
/// indices shifted, and when that would not fit the index type the values
/// are de-duplicated first. An error only when even the distinct values
/// exceed what the index type can address.
Result<std::shared_ptr<arrow::Array>> JoinDictionaryArrays(const arrow::ArrayVector& pieces,
                                                           const std::shared_ptr<arrow::DataType>& type,
                                                           arrow::MemoryPool* pool);

}  // namespace lance::file
