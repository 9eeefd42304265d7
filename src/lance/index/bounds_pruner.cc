#include "lance/index/bounds_pruner.h"

#include <map>

#include <arrow/compute/api.h>

namespace lance::index {

Result<std::optional<std::vector<bool>>> BoundsPruner::Pages(const arrow::compute::Expression& e) const {
  namespace cp = arrow::compute;
  const auto* call = e.call();
  if (call == nullptr) return std::nullopt;
  const std::string& f = call->function_name;
  const size_t n = static_cast<size_t>(min_->length());
  if (f == "and" || f == "and_kleene" || f == "or" || f == "or_kleene") {
    const bool conj = f == "and" || f == "and_kleene";
    std::optional<std::vector<bool>> acc;
    for (const auto& arg : call->arguments) {
      LANCE_ASSIGN_OR_RAISE(auto pages, Pages(arg));
      if (!pages) {
        if (conj) continue;  // the other sides still bound an AND
        return std::nullopt;
      }
      if (!acc) {
        acc = std::move(pages);
        continue;
      }
      for (size_t i = 0; i < n; ++i) (*acc)[i] = conj ? ((*acc)[i] && (*pages)[i]) : ((*acc)[i] || (*pages)[i]);
    }
    return acc;
  }
  if (f == "is_null" && call->arguments.size() == 1 && call->arguments[0].field_ref()) {
    std::vector<bool> out(n);
    for (size_t i = 0; i < n; ++i) out[i] = null_count_->Value(static_cast<int64_t>(i)) > 0;
    return out;
  }
  if (f == "is_in" && call->arguments.size() == 1 && call->arguments[0].field_ref() && call->options) {
    const auto& opts = static_cast<const cp::SetLookupOptions&>(*call->options);
    if (!opts.value_set.is_array()) return std::nullopt;
    auto values = opts.value_set.make_array();
    if (values->null_count() > 0 || !Prunable(*values->type()) || !values->type()->Equals(*min_->type())) {
      return std::nullopt;
    }
    std::vector<bool> out(n, false);
    for (int64_t v = 0; v < values->length(); ++v) {
      LANCE_ASSIGN_OR_RAISE(auto scalar, values->GetScalar(v));
      LANCE_ASSIGN_OR_RAISE(auto pages, Compare("equal", scalar));
      for (size_t i = 0; i < n; ++i) out[i] = out[i] || pages[i];
    }
    return out;
  }
  static const std::map<std::string, std::string> kFlipped = {
      {"equal", "equal"}, {"less", "greater"}, {"less_equal", "greater_equal"},
      {"greater", "less"}, {"greater_equal", "less_equal"}};
  auto op = kFlipped.find(f);
  if (op == kFlipped.end() || call->arguments.size() != 2) return std::nullopt;
  const auto& a = call->arguments[0];
  const auto& b = call->arguments[1];
  std::string name = f;
  const arrow::Datum* literal = nullptr;
  if (a.field_ref() && b.literal()) {
    literal = b.literal();
  } else if (a.literal() && b.field_ref()) {
    literal = a.literal();
    name = op->second;  // c < col  is  col > c
  } else {
    return std::nullopt;
  }
  if (!literal->is_scalar() || !literal->scalar()->is_valid) return std::nullopt;
  if (!Prunable(*literal->type()) || !literal->type()->Equals(*min_->type())) return std::nullopt;
  LANCE_ASSIGN_OR_RAISE(auto pages, Compare(name, literal->scalar()));
  return pages;
}

bool BoundsPruner::Prunable(const arrow::DataType& t) { return !arrow::is_floating(t.id()) && t.id() != arrow::Type::DICTIONARY; }

Result<std::vector<bool>> BoundsPruner::Compare(const std::string& op, const std::shared_ptr<arrow::Scalar>& c) const {
  namespace cp = arrow::compute;
  const size_t n = static_cast<size_t>(min_->length());
  std::vector<bool> out(n, true);
  // A page whose max is null holds only nulls: no comparison is true there.
  for (size_t i = 0; i < n; ++i) out[i] = max_->IsValid(static_cast<int64_t>(i));
  auto narrow = [&](const std::shared_ptr<arrow::Array>& bound, const char* fn) -> Status {
    LANCE_ASSIGN_OR_RAISE(auto r, cp::CallFunction(fn, {bound, arrow::Datum(c)}));
    auto mask = std::static_pointer_cast<arrow::BooleanArray>(r.make_array());
    // A null min: the page starts with nulls and its least value is unknown.
    for (size_t i = 0; i < n; ++i) {
      const auto k = static_cast<int64_t>(i);
      if (mask->IsValid(k) && !mask->Value(k)) out[i] = false;
    }
    return Status::OK();
  };
  if (op == "equal") {
    LANCE_RETURN_NOT_OK(narrow(min_, "less_equal"));
    LANCE_RETURN_NOT_OK(narrow(max_, "greater_equal"));
  } else if (op == "less") {
    LANCE_RETURN_NOT_OK(narrow(min_, "less"));
  } else if (op == "less_equal") {
    LANCE_RETURN_NOT_OK(narrow(min_, "less_equal"));
  } else if (op == "greater") {
    LANCE_RETURN_NOT_OK(narrow(max_, "greater"));
  } else if (op == "greater_equal") {
    LANCE_RETURN_NOT_OK(narrow(max_, "greater_equal"));
  }
  return out;
}

}  // namespace lance::index
