// Errors as values. lance-cpp speaks Arrow at its API, so it uses Arrow's
// Status and Result<T> directly; these aliases and macros are the one place
// that decision is written down.
#pragma once

#include <arrow/result.h>
#include <arrow/status.h>

namespace lance {

using Status = arrow::Status;
template <typename T>
using Result = arrow::Result<T>;

}  // namespace lance

#define LANCE_RETURN_NOT_OK(expr) ARROW_RETURN_NOT_OK(expr)
#define LANCE_ASSIGN_OR_RAISE(lhs, rexpr) ARROW_ASSIGN_OR_RAISE(lhs, rexpr)
