// Which runs of rows (a BTREE's pages, a ZONEMAP's zones) a predicate may
// have a match in, from each run's bounds: min and max of its values (null
// when the run holds only nulls; a BTREE page's min is also null when the
// page starts with nulls) and its null count. Only shapes whose answer the
// bounds decide are pruned (comparisons of the column with a literal of its
// type, IN, IS NULL, and AND/OR of those); anything else keeps every run.
// Floats are never pruned: their predicates compare in total order (NaN
// last), which Arrow's comparisons of the bounds do not.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <arrow/api.h>
#include <arrow/compute/expression.h>

#include "lance/status.h"

namespace lance::index {

class BoundsPruner {
 public:
  BoundsPruner(std::shared_ptr<arrow::Array> min, std::shared_ptr<arrow::Array> max,
               std::shared_ptr<arrow::UInt32Array> null_count)
      : min_(std::move(min)), max_(std::move(max)), null_count_(std::move(null_count)) {}

  /// Runs that may match, or nullopt when the predicate is not a shape the
  /// bounds decide. An AND prunes by the sides it decides.
  Result<std::optional<std::vector<bool>>> Pages(const arrow::compute::Expression& e) const;

 private:
  static bool Prunable(const arrow::DataType& t);
  // Runs that may hold a value v with `v op c`.
  Result<std::vector<bool>> Compare(const std::string& op, const std::shared_ptr<arrow::Scalar>& c) const;

  std::shared_ptr<arrow::Array> min_, max_;
  std::shared_ptr<arrow::UInt32Array> null_count_;
};

}  // namespace lance::index
