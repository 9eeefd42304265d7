// Compute-function setup for SQL filters. Internal to src/lance/scan/filter_*.
#pragma once

#include <cstdint>

#include "lance/status.h"

namespace lance::scan::filter {

/// Name of the unary function mapping float32 -> int32 and float64 -> int64 so that
/// integer order is IEEE 754 totalOrder (Rust's f64::total_cmp): -NaN < -inf < ... <
/// -0.0 < +0.0 < ... < +inf < +NaN, equal exactly when the bits are equal. DataFusion
/// compares floats this way.
inline constexpr char kTotalOrderKeyFunction[] = "lance_float_total_order_key";

/// List membership, DataFusion's array_has / array_has_any / array_has_all over a
/// constant needle: unary functions of a list, large list or fixed-size list array
/// taking arrow::compute::SetLookupOptions, whose value_set (the needle, of the list's
/// value type) says what to look for. A null list gives null; otherwise
///  - kArrayHasFunction: true when some element equals the one value of the set;
///  - kArrayHasAnyFunction: true when some element equals some value of the set;
///  - kArrayHasAllFunction: true when every value of the set equals some element.
/// A null in the set matches a null element (null_matching_behavior MATCH); floats are
/// equal when their totalOrder keys are (NaN equals NaN, -0.0 is not 0.0), like the
/// row format DataFusion compares them in.
inline constexpr char kArrayHasFunction[] = "lance_array_has";
inline constexpr char kArrayHasAnyFunction[] = "lance_array_has_any";
inline constexpr char kArrayHasAllFunction[] = "lance_array_has_all";
/// array_has(list, value) with a value per row (a column): binary, the list and the
/// values (of the list's value type). Null when either is; null elements never match.
inline constexpr char kArrayHasValueFunction[] = "lance_array_has_value";

/// contains / starts_with / ends_with(text, pattern) with a pattern per row (Arrow's
/// kernels take one fixed pattern): binary over two strings of one type (utf8 or
/// large_utf8), null when either is, case-sensitive, byte-wise.
inline constexpr char kContainsFunction[] = "lance_contains";
inline constexpr char kStartsWithFunction[] = "lance_starts_with";
inline constexpr char kEndsWithFunction[] = "lance_ends_with";

/// Runs arrow::compute::Initialize() and registers kTotalOrderKeyFunction and the
/// list and string functions above in the default function registry, once per process.
Status EnsureFilterFunctions();

/// The keys kTotalOrderKeyFunction computes.
int32_t TotalOrderKey(float value);
int64_t TotalOrderKey(double value);
/// The float a key stands for (the key map is its own inverse on the bits).
float FloatFromTotalOrderKey(int32_t key);
double DoubleFromTotalOrderKey(int64_t key);

}  // namespace lance::scan::filter
