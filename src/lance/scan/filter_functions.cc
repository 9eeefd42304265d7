// The float total-order key kernel and one-time compute registration.
#include "lance/scan/filter_functions.h"

#include <cstring>
#include <memory>
#include <type_traits>

#include <arrow/compute/api.h>
#include <arrow/compute/initialize.h>
#include <arrow/compute/registry.h>
#include <arrow/type.h>

namespace lance::scan::filter {
namespace {

namespace cp = arrow::compute;

template <typename Float, typename Int>
Int Key(Float value) {
  static_assert(sizeof(Float) == sizeof(Int));
  using Unsigned = std::make_unsigned_t<Int>;
  Int bits;
  std::memcpy(&bits, &value, sizeof bits);
  // Negative values (sign bit set) have their other bits flipped so that they order
  // backwards; the sign bit then orders them below the positives.
  const Unsigned sign_fill = static_cast<Unsigned>(bits >> (sizeof(Int) * 8 - 1));
  return bits ^ static_cast<Int>(sign_fill >> 1);
}

template <typename Float, typename Int>
arrow::Status KeyExec(cp::KernelContext*, const cp::ExecSpan& batch, cp::ExecResult* out) {
  if (!batch[0].is_array()) return arrow::Status::NotImplemented("scalar input");
  const arrow::ArraySpan& input = batch[0].array;
  arrow::ArraySpan* output = out->array_span_mutable();
  const Float* values = input.GetValues<Float>(1);
  Int* keys = output->GetValues<Int>(1);
  for (int64_t i = 0; i < input.length; ++i) keys[i] = Key<Float, Int>(values[i]);
  return arrow::Status::OK();
}

Status Register() {
  LANCE_RETURN_NOT_OK(cp::Initialize());
  cp::FunctionRegistry* registry = cp::GetFunctionRegistry();
  if (registry->GetFunction(kTotalOrderKeyFunction).ok()) return Status::OK();
  auto function = std::make_shared<cp::ScalarFunction>(
      kTotalOrderKeyFunction, cp::Arity::Unary(),
      cp::FunctionDoc("Integer key ordering floats by IEEE 754 totalOrder",
                      "float32 -> int32, float64 -> int64; equal keys mean equal bits.",
                      {"x"}));
  LANCE_RETURN_NOT_OK(
      function->AddKernel({arrow::float32()}, arrow::int32(), KeyExec<float, int32_t>));
  LANCE_RETURN_NOT_OK(
      function->AddKernel({arrow::float64()}, arrow::int64(), KeyExec<double, int64_t>));
  return registry->AddFunction(std::move(function));
}

}  // namespace

Status EnsureFilterFunctions() {
  static const Status status = Register();
  return status;
}

int32_t TotalOrderKey(float value) { return Key<float, int32_t>(value); }
int64_t TotalOrderKey(double value) { return Key<double, int64_t>(value); }

}  // namespace lance::scan::filter
