// Full validation of decoded arrays before they leave the file layer.
#pragma once

#include <arrow/array.h>

#include "lance/status.h"

namespace lance::file {

/// What arrow::Array::ValidateFull checks, with the same answer, but with
/// UTF-8 checked a buffer at a time instead of a value at a time (the
/// per-value check cost as much as decoding the strings).
Status ValidateDecodedArray(const arrow::Array& array);

}  // namespace lance::file
