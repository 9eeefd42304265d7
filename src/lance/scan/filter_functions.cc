// The float total-order key kernel and one-time compute registration.
#include "lance/scan/filter_functions.h"

#include <cstring>
#include <functional>
#include <memory>
#include <string_view>
#include <type_traits>
#include <vector>

#include <arrow/compute/api.h>
#include <arrow/compute/initialize.h>
#include <arrow/compute/registry.h>
#include <arrow/array.h>
#include <arrow/builder.h>
#include <arrow/type.h>
#include <arrow/util/bit_util.h>

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

// Key's inverse: the map is its own inverse on the bits (the XOR leaves
// the sign bit, which decides it, as it was).
template <typename Float, typename Int>
Float FromKey(Int key) {
  Float as_float;
  std::memcpy(&as_float, &key, sizeof key);
  const Int bits = Key<Float, Int>(as_float);
  Float value;
  std::memcpy(&value, &bits, sizeof bits);
  return value;
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

// ------------------------------------------------------------ list membership

enum class ListMatch { kSingle, kAny, kAll };

struct ListHasState : cp::KernelState {
  std::shared_ptr<arrow::Array> set;  // distinct, float values as totalOrder keys
  cp::SetLookupOptions::NullMatchingBehavior null_matching = cp::SetLookupOptions::MATCH;
};

// Floats compare by totalOrder key, everything else by value.
arrow::Result<std::shared_ptr<arrow::Array>> Comparable(std::shared_ptr<arrow::Array> values) {
  const arrow::Type::type id = values->type_id();
  if (id != arrow::Type::FLOAT && id != arrow::Type::DOUBLE) return values;
  ARROW_ASSIGN_OR_RAISE(arrow::Datum keys, cp::CallFunction(kTotalOrderKeyFunction, {values}));
  return keys.make_array();
}

arrow::Result<std::unique_ptr<cp::KernelState>> InitListHas(cp::KernelContext*,
                                                            const cp::KernelInitArgs& args) {
  const auto* options = static_cast<const cp::SetLookupOptions*>(args.options);
  if (options == nullptr || !options->value_set.is_array()) {
    return arrow::Status::Invalid(args.kernel->signature->ToString(),
                                  ": needs SetLookupOptions with an array value_set");
  }
  auto state = std::make_unique<ListHasState>();
  ARROW_ASSIGN_OR_RAISE(auto keyed, Comparable(options->value_set.make_array()));
  ARROW_ASSIGN_OR_RAISE(state->set, cp::Unique(keyed));
  state->null_matching = options->null_matching_behavior;
  return state;
}

// The element ranges of a list array: bounds[i]..bounds[i + 1] are row i's elements,
// as positions in `*values`.
arrow::Status ListBounds(const arrow::Array& input, std::vector<int64_t>* bounds,
                         std::shared_ptr<arrow::Array>* values) {
  const int64_t n = input.length();
  bounds->resize(static_cast<size_t>(n) + 1);
  auto fill = [&](const auto& list) {
    for (int64_t i = 0; i <= n; ++i) (*bounds)[i] = list.value_offset(i);
    *values = list.values();
  };
  switch (input.type_id()) {
    case arrow::Type::LIST: fill(static_cast<const arrow::ListArray&>(input)); break;
    case arrow::Type::LARGE_LIST: fill(static_cast<const arrow::LargeListArray&>(input)); break;
    case arrow::Type::FIXED_SIZE_LIST:
      fill(static_cast<const arrow::FixedSizeListArray&>(input));
      break;
    default:
      return arrow::Status::TypeError("not a list: ", input.type()->ToString());
  }
  return arrow::Status::OK();
}

// array_has(list, value per row): each element compared with its row's value.
arrow::Status ListHasValueExec(cp::KernelContext*, const cp::ExecSpan& batch,
                               cp::ExecResult* out) {
  if (!batch[0].is_array() || !batch[1].is_array()) {
    return arrow::Status::NotImplemented("scalar input");
  }
  const std::shared_ptr<arrow::Array> input = batch[0].array.ToArray();
  const std::shared_ptr<arrow::Array> needles = batch[1].array.ToArray();
  const int64_t n = input->length();
  std::vector<int64_t> bounds;
  std::shared_ptr<arrow::Array> values;
  ARROW_RETURN_NOT_OK(ListBounds(*input, &bounds, &values));
  const int64_t first = bounds[0];
  // Each element's row, to line the values up with the elements.
  arrow::Int64Builder rows;
  ARROW_RETURN_NOT_OK(rows.Reserve(bounds[n] - first));
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = bounds[i]; j < bounds[i + 1]; ++j) rows.UnsafeAppend(i);
  }
  ARROW_ASSIGN_OR_RAISE(auto row_of_element, rows.Finish());
  ARROW_ASSIGN_OR_RAISE(arrow::Datum wanted, cp::Take(needles, row_of_element));
  ARROW_ASSIGN_OR_RAISE(auto elements, Comparable(values->Slice(first, bounds[n] - first)));
  ARROW_ASSIGN_OR_RAISE(auto wanted_keys, Comparable(wanted.make_array()));
  ARROW_ASSIGN_OR_RAISE(arrow::Datum equal, cp::CallFunction("equal", {elements, wanted_keys}));
  const std::shared_ptr<arrow::Array> equal_array = equal.make_array();
  const auto& matches = static_cast<const arrow::BooleanArray&>(*equal_array);

  arrow::ArraySpan* result = out->array_span_mutable();
  uint8_t* bits = result->buffers[1].data;
  for (int64_t i = 0; i < n; ++i) {
    bool value = false;
    for (int64_t j = bounds[i] - first; j < bounds[i + 1] - first && !value; ++j) {
      value = matches.IsValid(j) && matches.Value(j);
    }
    arrow::bit_util::SetBitTo(bits, result->offset + i, value);
  }
  return arrow::Status::OK();
}

template <ListMatch kMatch>
arrow::Status ListHasExec(cp::KernelContext* ctx, const cp::ExecSpan& batch, cp::ExecResult* out) {
  if (!batch[0].is_array()) return arrow::Status::NotImplemented("scalar list input");
  const auto& state = static_cast<const ListHasState&>(*ctx->state());
  const std::shared_ptr<arrow::Array> input = batch[0].array.ToArray();
  const int64_t n = input->length();
  std::vector<int64_t> bounds;
  std::shared_ptr<arrow::Array> values;
  ARROW_RETURN_NOT_OK(ListBounds(*input, &bounds, &values));
  const int64_t first = bounds[0];
  ARROW_ASSIGN_OR_RAISE(auto keyed, Comparable(values->Slice(first, bounds[n] - first)));
  // Which value of the set each element equals (null: none).
  ARROW_ASSIGN_OR_RAISE(
      arrow::Datum found,
      cp::IndexIn(keyed, cp::SetLookupOptions(state.set, state.null_matching)));
  const std::shared_ptr<arrow::Array> found_array = found.make_array();
  const auto& index = static_cast<const arrow::Int32Array&>(*found_array);

  arrow::ArraySpan* result = out->array_span_mutable();
  uint8_t* bits = result->buffers[1].data;
  const int64_t wanted = state.set->length();
  std::vector<int64_t> seen_in_row(static_cast<size_t>(wanted), -1);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t begin = bounds[i] - first, end = bounds[i + 1] - first;
    bool value = false;
    if constexpr (kMatch == ListMatch::kAll) {
      int64_t distinct = 0;
      for (int64_t j = begin; j < end; ++j) {
        if (!index.IsValid(j)) continue;
        int64_t& seen = seen_in_row[static_cast<size_t>(index.Value(j))];
        if (seen != i) {
          seen = i;
          ++distinct;
        }
      }
      value = distinct == wanted;
    } else {
      for (int64_t j = begin; j < end && !value; ++j) value = index.IsValid(j);
    }
    arrow::bit_util::SetBitTo(bits, result->offset + i, value);
  }
  return arrow::Status::OK();
}

// ------------------------------------------------------------ per-row string patterns

enum class StringMatch { kContains, kStartsWith, kEndsWith };

template <StringMatch kMatch, typename ArrayType>
arrow::Status StringMatchExec(cp::KernelContext*, const cp::ExecSpan& batch, cp::ExecResult* out) {
  // A side may be a scalar (a constant text against a pattern column).
  auto views = [&](int k) -> std::function<std::string_view(int64_t)> {
    if (batch[k].is_scalar()) {
      const auto& scalar = static_cast<const arrow::BaseBinaryScalar&>(*batch[k].scalar);
      const std::string_view view = scalar.is_valid ? scalar.view() : std::string_view();
      return [view](int64_t) { return view; };
    }
    auto array = std::make_shared<ArrayType>(batch[k].array.ToArrayData());
    return [array](int64_t i) { return array->GetView(i); };
  };
  const auto text = views(0), pattern = views(1);
  arrow::ArraySpan* result = out->array_span_mutable();
  uint8_t* bits = result->buffers[1].data;
  for (int64_t i = 0; i < batch.length; ++i) {
    const std::string_view t = text(i), p = pattern(i);
    bool value;
    if constexpr (kMatch == StringMatch::kContains) {
      value = t.find(p) != std::string_view::npos;
    } else if constexpr (kMatch == StringMatch::kStartsWith) {
      value = t.substr(0, p.size()) == p;
    } else {
      value = t.size() >= p.size() && t.substr(t.size() - p.size()) == p;
    }
    arrow::bit_util::SetBitTo(bits, result->offset + i, value);
  }
  return arrow::Status::OK();
}

template <StringMatch kMatch>
arrow::Status AddStringMatchFunction(cp::FunctionRegistry* registry, const char* name,
                                     const char* summary) {
  auto function = std::make_shared<cp::ScalarFunction>(
      name, cp::Arity::Binary(),
      cp::FunctionDoc(summary, "Null when either is; see filter_functions.h.",
                      {"text", "pattern"}));
  cp::ScalarKernel utf8({arrow::utf8(), arrow::utf8()}, arrow::boolean(),
                        StringMatchExec<kMatch, arrow::StringArray>);
  cp::ScalarKernel large({arrow::large_utf8(), arrow::large_utf8()}, arrow::boolean(),
                         StringMatchExec<kMatch, arrow::LargeStringArray>);
  for (auto* kernel : {&utf8, &large}) {
    kernel->null_handling = cp::NullHandling::INTERSECTION;
    kernel->mem_allocation = cp::MemAllocation::PREALLOCATE;
    ARROW_RETURN_NOT_OK(function->AddKernel(std::move(*kernel)));
  }
  return registry->AddFunction(std::move(function));
}

arrow::Status AddListHasFunction(cp::FunctionRegistry* registry, const char* name,
                                 cp::ArrayKernelExec exec, const char* summary) {
  auto function = std::make_shared<cp::ScalarFunction>(
      name, cp::Arity::Unary(),
      cp::FunctionDoc(summary, "Null lists give null; see filter_functions.h.", {"list"},
                      "SetLookupOptions"));
  for (arrow::Type::type id :
       {arrow::Type::LIST, arrow::Type::LARGE_LIST, arrow::Type::FIXED_SIZE_LIST}) {
    cp::ScalarKernel kernel({cp::InputType(id)}, arrow::boolean(), exec, InitListHas);
    kernel.null_handling = cp::NullHandling::INTERSECTION;
    kernel.mem_allocation = cp::MemAllocation::PREALLOCATE;
    ARROW_RETURN_NOT_OK(function->AddKernel(std::move(kernel)));
  }
  return registry->AddFunction(std::move(function));
}

Status Register() {
  LANCE_RETURN_NOT_OK(cp::Initialize());
  cp::FunctionRegistry* registry = cp::GetFunctionRegistry();
  if (registry->GetFunction(kTotalOrderKeyFunction).ok()) return Status::OK();
  LANCE_RETURN_NOT_OK(AddListHasFunction(registry, kArrayHasFunction,
                                         ListHasExec<ListMatch::kSingle>,
                                         "Whether a list holds the value"));
  LANCE_RETURN_NOT_OK(AddListHasFunction(registry, kArrayHasAnyFunction,
                                         ListHasExec<ListMatch::kAny>,
                                         "Whether a list holds any of the values"));
  LANCE_RETURN_NOT_OK(AddListHasFunction(registry, kArrayHasAllFunction,
                                         ListHasExec<ListMatch::kAll>,
                                         "Whether a list holds all of the values"));
  LANCE_RETURN_NOT_OK(AddStringMatchFunction<StringMatch::kContains>(
      registry, kContainsFunction, "Whether the text holds its row's pattern"));
  LANCE_RETURN_NOT_OK(AddStringMatchFunction<StringMatch::kStartsWith>(
      registry, kStartsWithFunction, "Whether the text starts with its row's pattern"));
  LANCE_RETURN_NOT_OK(AddStringMatchFunction<StringMatch::kEndsWith>(
      registry, kEndsWithFunction, "Whether the text ends with its row's pattern"));
  {
    auto has_value = std::make_shared<cp::ScalarFunction>(
        kArrayHasValueFunction, cp::Arity::Binary(),
        cp::FunctionDoc("Whether a list holds its row's value",
                        "Null when either is; see filter_functions.h.", {"list", "value"}));
    for (arrow::Type::type id :
         {arrow::Type::LIST, arrow::Type::LARGE_LIST, arrow::Type::FIXED_SIZE_LIST}) {
      cp::ScalarKernel kernel({cp::InputType(id), cp::InputType()}, arrow::boolean(),
                              ListHasValueExec);
      kernel.null_handling = cp::NullHandling::INTERSECTION;
      kernel.mem_allocation = cp::MemAllocation::PREALLOCATE;
      LANCE_RETURN_NOT_OK(has_value->AddKernel(std::move(kernel)));
    }
    LANCE_RETURN_NOT_OK(registry->AddFunction(std::move(has_value)));
  }
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

float FloatFromTotalOrderKey(int32_t key) { return FromKey<float, int32_t>(key); }
double DoubleFromTotalOrderKey(int64_t key) { return FromKey<double, int64_t>(key); }

}  // namespace lance::scan::filter
