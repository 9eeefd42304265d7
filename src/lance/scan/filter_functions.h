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

/// Runs arrow::compute::Initialize() and registers kTotalOrderKeyFunction in the
/// default function registry, once per process.
Status EnsureFilterFunctions();

/// The keys kTotalOrderKeyFunction computes.
int32_t TotalOrderKey(float value);
int64_t TotalOrderKey(double value);

}  // namespace lance::scan::filter
