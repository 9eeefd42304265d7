// Typing of a parsed SQL filter against a schema. Internal to src/lance/scan/filter_*.
#pragma once

#include <cstddef>

#include <arrow/compute/expression.h>
#include <arrow/type_fwd.h>

#include "lance/scan/filter_ast.h"
#include "lance/status.h"

namespace lance::scan::filter {

/// Resolves columns and types `root` the way pylance does (see filter_parser.h):
/// first Lance's conversion of literals compared with columns (marking
/// `Node::coerce_to`), then DataFusion's coercion rules for the rest. Returns an
/// unbound boolean expression, or Invalid with `*error_pos` set to the offending
/// position in the SQL text.
Result<arrow::compute::Expression> BindFilter(Node* root, const arrow::Schema& schema,
                                              size_t* error_pos);

/// Binds `root` as a value (not a predicate) and casts it to `target`, the
/// type of the column it is assigned to (UPDATE ... SET col = value).
Result<arrow::compute::Expression> BindValue(Node* root, const arrow::Schema& schema,
                                             const std::shared_ptr<arrow::DataType>& target,
                                             size_t* error_pos);

}  // namespace lance::scan::filter
