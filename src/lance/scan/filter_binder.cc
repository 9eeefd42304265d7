// Typing a SQL filter the way pylance (Lance's planner over DataFusion) does.
//
// Two passes, as in pylance:
//  1. Lance's `resolve_expr`: in each top-level AND/OR term, a bare literal compared
//     with a column (or an arithmetic expression made only of literals) must convert
//     to the column's type, exactly (`safe_coerce_scalar`), or the filter is an error.
//     Only comparisons, BETWEEN and IN on a plain column are looked at; NOT, IS and
//     nested terms are left to step 2.
//  2. DataFusion's type coercion: comparison operands meet at a common type (numbers
//     widen, string vs number -> number, string vs date/timestamp -> that type,
//     date vs timestamp -> timestamp, uint64 vs signed -> decimal(20, 0)), arithmetic
//     happens in the common numeric type with wrapping overflow, constants fold.
//     A timestamp literal compared with a timestamp column takes the column's unit
//     (truncating) and zone (a naive literal is wall-clock time there).
// Floats compare in IEEE totalOrder like arrow-rs, except against a zero literal,
// which Lance rewrites so -0.0 and 0.0 are the same.
#include "lance/scan/filter_binder.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <arrow/array.h>
#include <arrow/builder.h>
#include <arrow/compute/api.h>
#include <arrow/scalar.h>
#include <arrow/type.h>
#include <arrow/util/float16.h>

#include "lance/scan/filter_functions.h"
#include "lance/scan/filter_temporal.h"

namespace lance::scan::filter {
namespace {

namespace cp = arrow::compute;
using arrow::Type;
using ScalarPtr = std::shared_ptr<arrow::Scalar>;
using TypePtr = std::shared_ptr<arrow::DataType>;

// ---------------------------------------------------------------- type classes

bool IsSignedInt(Type::type id) {
  return id == Type::INT8 || id == Type::INT16 || id == Type::INT32 || id == Type::INT64;
}
bool IsUnsignedInt(Type::type id) {
  return id == Type::UINT8 || id == Type::UINT16 || id == Type::UINT32 || id == Type::UINT64;
}
bool IsInteger(Type::type id) { return IsSignedInt(id) || IsUnsignedInt(id); }
bool IsFloat(Type::type id) { return id == Type::FLOAT || id == Type::DOUBLE; }
bool IsDecimal(Type::type id) {
  return id == Type::DECIMAL32 || id == Type::DECIMAL64 || id == Type::DECIMAL128 ||
         id == Type::DECIMAL256;
}
bool IsNumeric(Type::type id) { return IsInteger(id) || IsFloat(id) || IsDecimal(id); }
bool IsString(Type::type id) {
  return id == Type::STRING || id == Type::LARGE_STRING || id == Type::STRING_VIEW;
}
bool IsBinary(Type::type id) {
  return id == Type::BINARY || id == Type::LARGE_BINARY || id == Type::BINARY_VIEW ||
         id == Type::FIXED_SIZE_BINARY;
}
bool IsTemporal(Type::type id) {
  return id == Type::DATE32 || id == Type::DATE64 || id == Type::TIMESTAMP;
}

std::string TypeName(const arrow::DataType& type) {
  return type.id() == Type::NA ? "NULL" : type.ToString();
}

// ---------------------------------------------------------------- DataFusion coercion

// binary_numeric_coercion for two integer types: the narrowest type holding both.
TypePtr IntegerCoercion(Type::type a, Type::type b) {
  auto either = [&](Type::type t) { return a == t || b == t; };
  auto pair = [&](Type::type x, Type::type y) { return (a == x && b == y) || (a == y && b == x); };
  if (either(Type::UINT64) && (IsSignedInt(a) || IsSignedInt(b))) return arrow::decimal128(20, 0);
  if (either(Type::UINT64)) return arrow::uint64();
  if (either(Type::INT64) || pair(Type::UINT32, Type::INT8) || pair(Type::UINT32, Type::INT16) ||
      pair(Type::UINT32, Type::INT32)) {
    return arrow::int64();
  }
  if (either(Type::INT32) || pair(Type::UINT16, Type::INT16) || pair(Type::UINT16, Type::INT8)) {
    return arrow::int32();
  }
  if (either(Type::UINT32)) return arrow::uint32();
  if (either(Type::INT16) || pair(Type::INT8, Type::UINT8)) return arrow::int16();
  if (either(Type::UINT16)) return arrow::uint16();
  if (either(Type::INT8)) return arrow::int8();
  return arrow::uint8();
}

// Precision and scale of a decimal, or of the decimal an integer type widens to.
void DecimalShape(const arrow::DataType& t, int* precision, int* scale) {
  if (IsDecimal(t.id())) {
    const auto& d = static_cast<const arrow::DecimalType&>(t);
    *precision = d.precision();
    *scale = d.scale();
    return;
  }
  *scale = 0;
  switch (t.id()) {
    case Type::INT8:
    case Type::UINT8: *precision = 3; break;
    case Type::INT16:
    case Type::UINT16: *precision = 5; break;
    case Type::INT32:
    case Type::UINT32: *precision = 10; break;
    default: *precision = 20; break;
  }
}

TypePtr NumericCoercion(const TypePtr& a, const TypePtr& b) {
  const Type::type x = a->id(), y = b->id();
  if (!IsNumeric(x) || !IsNumeric(y)) return nullptr;
  if (a->Equals(*b)) return a;
  if (IsDecimal(x) || IsDecimal(y)) {
    if (IsFloat(x) || IsFloat(y)) return arrow::float64();
    int p1, s1, p2, s2;
    DecimalShape(*a, &p1, &s1);
    DecimalShape(*b, &p2, &s2);
    const bool wide = x == Type::DECIMAL256 || y == Type::DECIMAL256;
    const int scale = std::max(s1, s2);
    const int range = std::max(p1 - s1, p2 - s2);
    const int precision = std::min(range + scale, wide ? 76 : 38);
    auto type = wide ? arrow::Decimal256Type::Make(precision, scale)
                     : arrow::Decimal128Type::Make(precision, scale);
    return type.ok() ? *type : nullptr;
  }
  if (x == Type::DOUBLE || y == Type::DOUBLE) return arrow::float64();
  if (x == Type::FLOAT || y == Type::FLOAT) return arrow::float32();
  return IntegerCoercion(x, y);
}

arrow::TimeUnit::type Coarser(arrow::TimeUnit::type a, arrow::TimeUnit::type b) {
  return TicksPerSecond(a) <= TicksPerSecond(b) ? a : b;
}

// DataFusion's comparison_coercion, for the types this language produces.
TypePtr ComparisonCoercion(const TypePtr& a, const TypePtr& b) {
  const Type::type x = a->id(), y = b->id();
  if (a->Equals(*b)) return a;
  if (x == Type::NA) return b;
  if (y == Type::NA) return a;
  if (auto numeric = NumericCoercion(a, b)) return numeric;
  if (x == Type::TIMESTAMP && y == Type::TIMESTAMP) {
    const auto& l = static_cast<const arrow::TimestampType&>(*a);
    const auto& r = static_cast<const arrow::TimestampType&>(*b);
    return arrow::timestamp(Coarser(l.unit(), r.unit()),
                            l.timezone().empty() ? r.timezone() : l.timezone());
  }
  if ((x == Type::TIMESTAMP && (y == Type::DATE32 || y == Type::DATE64))) return a;
  if ((y == Type::TIMESTAMP && (x == Type::DATE32 || x == Type::DATE64))) return b;
  if ((x == Type::DATE32 && y == Type::DATE64) || (x == Type::DATE64 && y == Type::DATE32)) {
    return arrow::date64();
  }
  // An integer compared with a date counts days.
  if (x == Type::DATE32 && IsInteger(y)) return a;
  if (y == Type::DATE32 && IsInteger(x)) return b;
  if (IsString(x) && IsString(y)) {
    return x == Type::LARGE_STRING || y == Type::LARGE_STRING ? arrow::large_utf8()
                                                              : arrow::utf8();
  }
  // Binaries meet in the widest (DataFusion's binary coercion).
  if (IsBinary(x) && IsBinary(y)) {
    if (x == Type::LARGE_BINARY || y == Type::LARGE_BINARY) return arrow::large_binary();
    return arrow::binary();
  }
  if (IsString(x) && (IsNumeric(y) || IsTemporal(y) || IsBinary(y))) return b;
  if (IsString(y) && (IsNumeric(x) || IsTemporal(x) || IsBinary(x))) return a;
  return nullptr;
}

// ---------------------------------------------------------------- values

struct Value {
  cp::Expression expr;
  TypePtr type;
  ScalarPtr scalar;  // set when the value is a known constant

  bool IsLiteral() const { return scalar != nullptr; }
  bool IsNullType() const { return type->id() == Type::NA; }
};

Value Literal(ScalarPtr scalar) {
  Value v;
  v.type = scalar->type;
  v.expr = cp::literal(scalar);
  v.scalar = std::move(scalar);
  return v;
}

Value NullBoolean() { return Literal(arrow::MakeNullScalar(arrow::boolean())); }

Value FalseLiteral() { return Literal(std::make_shared<arrow::BooleanScalar>(false)); }

const char* CompareFunction(BinaryOp op) {
  switch (op) {
    case BinaryOp::kEq: return "equal";
    case BinaryOp::kNotEq: return "not_equal";
    case BinaryOp::kLt: return "less";
    case BinaryOp::kLtEq: return "less_equal";
    case BinaryOp::kGt: return "greater";
    case BinaryOp::kGtEq: return "greater_equal";
    default: return "";
  }
}

const char* ArithmeticFunction(BinaryOp op) {
  switch (op) {
    case BinaryOp::kPlus: return "add";
    case BinaryOp::kMinus: return "subtract";
    case BinaryOp::kMultiply: return "multiply";
    case BinaryOp::kDivide: return "divide";
    case BinaryOp::kModulo: return "remainder";  // sign of the dividend, like SQL
    default: return "";
  }
}

// `a op b` == `b Mirror(op) a`.
BinaryOp Mirror(BinaryOp op) {
  switch (op) {
    case BinaryOp::kLt: return BinaryOp::kGt;
    case BinaryOp::kLtEq: return BinaryOp::kGtEq;
    case BinaryOp::kGt: return BinaryOp::kLt;
    case BinaryOp::kGtEq: return BinaryOp::kLtEq;
    default: return op;
  }
}

// Integer scalar of type `id` holding `v`, if it fits.
ScalarPtr IntegerScalar(Type::type id, __int128 v) {
  auto fits = [&](auto lo, auto hi) {
    return v >= static_cast<__int128>(lo) && v <= static_cast<__int128>(hi);
  };
#define LANCE_INT_CASE(ID, SCALAR, CTYPE)                                              \
  case Type::ID:                                                                       \
    if (!fits(std::numeric_limits<CTYPE>::min(), std::numeric_limits<CTYPE>::max())) { \
      return nullptr;                                                                  \
    }                                                                                  \
    return std::make_shared<arrow::SCALAR>(static_cast<CTYPE>(v));
  switch (id) {
    LANCE_INT_CASE(INT8, Int8Scalar, int8_t)
    LANCE_INT_CASE(INT16, Int16Scalar, int16_t)
    LANCE_INT_CASE(INT32, Int32Scalar, int32_t)
    LANCE_INT_CASE(INT64, Int64Scalar, int64_t)
    LANCE_INT_CASE(UINT8, UInt8Scalar, uint8_t)
    LANCE_INT_CASE(UINT16, UInt16Scalar, uint16_t)
    LANCE_INT_CASE(UINT32, UInt32Scalar, uint32_t)
    LANCE_INT_CASE(UINT64, UInt64Scalar, uint64_t)
    default:
      return nullptr;
  }
#undef LANCE_INT_CASE
}

// The type Lance converts literals to when they meet a column of type `t`:
// dictionaries compare by value.
TypePtr LiteralTargetType(TypePtr t) {
  if (t->id() == Type::DICTIONARY) {
    t = static_cast<const arrow::DictionaryType&>(*t).value_type();
  }
  return t;
}

// The type a column is computed in: its values for dictionaries, float32 for
// float16 (which Arrow's kernels barely support; every float16 is a float32).
TypePtr ComputeType(const TypePtr& t) {
  TypePtr plain = LiteralTargetType(t);
  return plain->id() == Type::HALF_FLOAT ? arrow::float32() : plain;
}

// A number rounded to float16 (as Lance converts literals for float16 columns),
// then widened to the float32 such columns are compared in. Null if it overflows.
ScalarPtr HalfFloatScalar(double v) {
  const auto half = arrow::util::Float16::FromDouble(v);
  if (half.is_infinity() && std::isfinite(v)) return nullptr;
  return std::make_shared<arrow::FloatScalar>(half.ToFloat());
}

// An integer as a decimal of `type`, if it fits its precision (Lance converts the
// value, not the type: 1 fits decimal(10, 2) even though every int64 does not).
ScalarPtr DecimalScalar(int64_t v, const TypePtr& type) {
  if (type->id() == Type::DECIMAL128) {
    const auto& t = static_cast<const arrow::Decimal128Type&>(*type);
    auto scaled = arrow::Decimal128(v).Rescale(0, t.scale());
    if (!scaled.ok() || !scaled->FitsInPrecision(t.precision())) return nullptr;
    return std::make_shared<arrow::Decimal128Scalar>(*scaled, type);
  }
  if (type->id() == Type::DECIMAL256) {
    const auto& t = static_cast<const arrow::Decimal256Type&>(*type);
    auto scaled = arrow::Decimal256(v).Rescale(0, t.scale());
    if (!scaled.ok() || !scaled->FitsInPrecision(t.precision())) return nullptr;
    return std::make_shared<arrow::Decimal256Scalar>(*scaled, type);
  }
  return nullptr;
}

std::string DescribeLiteral(const Node& n) {
  switch (n.literal) {
    case LiteralKind::kString: return "'" + n.text + "'";
    case LiteralKind::kBinary: {
      static const char* kDigits = "0123456789ABCDEF";
      std::string hex = "X'";
      for (unsigned char c : n.text) {
        hex.push_back(kDigits[c >> 4]);
        hex.push_back(kDigits[c & 15]);
      }
      return hex + "'";
    }
    case LiteralKind::kBool: return n.boolean ? "TRUE" : "FALSE";
    case LiteralKind::kNull: return "NULL";
    default: return n.text;
  }
}

bool IsLiteralNode(const Node& n) { return n.kind == NodeKind::kLiteral; }

// An arithmetic expression of literals only, which Lance converts leaf by leaf.
bool IsLiteralArithmetic(const Node& n) {
  if (n.kind != NodeKind::kBinary || !IsArithmetic(n.op)) return false;
  for (const auto& child : n.children) {
    if (!IsLiteralNode(*child) && !IsLiteralArithmetic(*child)) return false;
  }
  return true;
}

void MarkLiterals(Node* n, const TypePtr& type) {
  if (n->kind == NodeKind::kLiteral) {
    n->coerce_to = type;
    return;
  }
  for (auto& child : n->children) MarkLiterals(child.get(), type);
}

// Lance's coerce_expr: a literal, or literal-only arithmetic, takes `type`.
void CoerceLiteralTo(Node* n, const TypePtr& type) {
  if (IsLiteralNode(*n) || IsLiteralArithmetic(*n)) MarkLiterals(n, type);
}

// Canonical Arrow match_like pattern: every literal '%', '_' and '\' escaped with a
// backslash, whatever escape character the SQL used. A trailing escape character
// stands for itself (arrow-rs).
std::string CanonicalLikePattern(std::string_view pattern, std::string_view escape) {
  auto char_length = [&](size_t i) {
    size_t len = 1;
    while (i + len < pattern.size() &&
           (static_cast<unsigned char>(pattern[i + len]) & 0xC0) == 0x80) {
      ++len;
    }
    return len;
  };
  std::string out;
  auto literal = [&](std::string_view c) {
    if (c == "%" || c == "_" || c == "\\") out.push_back('\\');
    out.append(c);
  };
  for (size_t i = 0; i < pattern.size();) {
    const size_t len = char_length(i);
    const std::string_view c = pattern.substr(i, len);
    i += len;
    if (c == escape) {
      if (i < pattern.size()) {
        const size_t next = char_length(i);
        literal(pattern.substr(i, next));
        i += next;
      } else {
        literal(c);
      }
    } else if (c == "%" || c == "_") {
      out.append(c);
    } else {
      literal(c);
    }
  }
  return out;
}

// ---------------------------------------------------------------- binder

class Binder {
 public:
  explicit Binder(const arrow::Schema& schema) : schema_(schema) {}

  size_t error_pos() const { return error_pos_; }

  // Lance's resolve_expr over the top-level AND/OR terms.
  void Resolve(Node* n) {
    switch (n->kind) {
      case NodeKind::kLogical:
        for (auto& child : n->children) Resolve(child.get());
        return;
      case NodeKind::kBinary: {
        Node* left = n->children[0].get();
        Node* right = n->children[1].get();
        if (TypePtr t = ColumnType(*left)) {
          CoerceLiteralTo(right, t);
        } else if (TypePtr t = ColumnType(*right)) {
          if (IsLiteralNode(*left)) left->coerce_to = t;
        }
        return;
      }
      case NodeKind::kBetween:
        if (TypePtr t = ColumnType(*n->children[0])) {
          CoerceLiteralTo(n->children[1].get(), t);
          CoerceLiteralTo(n->children[2].get(), t);
        }
        return;
      case NodeKind::kIn:
        // Only a plain top-level column, not a nested field.
        if (n->children[0]->kind == NodeKind::kColumn && n->children[0]->path.size() == 1) {
          if (TypePtr t = ColumnType(*n->children[0])) {
            for (size_t i = 1; i < n->children.size(); ++i) {
              CoerceLiteralTo(n->children[i].get(), t);
            }
          }
        }
        return;
      default:
        return;
    }
  }

  Result<Value> Bind(const Node& n) {
    switch (n.kind) {
      case NodeKind::kColumn: return BindColumn(n);
      case NodeKind::kLiteral: return BindLiteral(n);
      case NodeKind::kTypedString: return BindTypedString(n);
      case NodeKind::kNegate: return BindNegate(n);
      case NodeKind::kNot: return BindNot(n);
      case NodeKind::kBinary: return BindBinary(n);
      case NodeKind::kLogical: return BindLogical(n);
      case NodeKind::kIs: return BindIs(n);
      case NodeKind::kIn: return BindIn(n);
      case NodeKind::kBetween: return BindBetween(n);
      case NodeKind::kLike: return BindLike(n);
      case NodeKind::kCall: return BindCall(n);
      case NodeKind::kList:
        return Fail(n.pos, "a list literal [...] is only allowed as the second argument of "
                           "array_has_any or array_has_all");
    }
    return Fail(n.pos, "unsupported expression");
  }

 private:
  // Records the first error's position; later (outer) failures keep it.
  Status Fail(size_t pos, const std::string& message) {
    if (!has_error_) {
      has_error_ = true;
      error_pos_ = pos;
    }
    return Status::Invalid(message);
  }
  Status Fail(size_t pos, const Status& status) { return Fail(pos, status.message()); }

  // ------------------------------------------------------------ columns

  // Index of the top-level field `name`: exact match first, then (unless `exact`)
  // the first field equal ignoring ASCII case, like Lance's resolve_column_name.
  int FindTopLevel(const std::string& name, bool exact) const {
    for (int i = 0; i < schema_.num_fields(); ++i) {
      if (schema_.field(i)->name() == name) return i;
    }
    if (exact) return -1;
    auto lower = [](std::string s) {
      for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      return s;
    };
    const std::string wanted = lower(name);
    for (int i = 0; i < schema_.num_fields(); ++i) {
      if (lower(schema_.field(i)->name()) == wanted) return i;
    }
    return -1;
  }

  // The field a column node names, or null.
  std::shared_ptr<arrow::Field> FindField(const Node& n, std::vector<std::string>* names,
                                          std::string* error) const {
    const int top = FindTopLevel(n.path[0], n.exact);
    if (top < 0) {
      if (error) *error = "no column named '" + n.path[0] + "'";
      return nullptr;
    }
    std::shared_ptr<arrow::Field> field = schema_.field(top);
    if (names) names->push_back(field->name());
    std::string so_far = field->name();
    for (size_t k = 1; k < n.path.size(); ++k) {
      if (field->type()->id() != Type::STRUCT) {
        if (error) {
          *error = "'" + so_far + "' is " + field->type()->ToString() +
                   ", not a struct, so it has no field '" + n.path[k] + "'";
        }
        return nullptr;
      }
      std::shared_ptr<arrow::Field> child;
      for (const auto& f : field->type()->fields()) {
        if (f->name() == n.path[k]) {
          child = f;
          break;
        }
      }
      if (!child) {
        if (error) *error = "struct '" + so_far + "' has no field '" + n.path[k] + "'";
        return nullptr;
      }
      field = child;
      so_far += "." + field->name();
      if (names) names->push_back(field->name());
    }
    return field;
  }

  // resolve_column_type: the type of a column node that names an existing field.
  TypePtr ColumnType(const Node& n) const {
    if (n.kind != NodeKind::kColumn) return nullptr;
    auto field = FindField(n, nullptr, nullptr);
    return field ? LiteralTargetType(field->type()) : nullptr;
  }

  Result<Value> BindColumn(const Node& n) {
    std::vector<std::string> names;
    std::string error;
    auto field = FindField(n, &names, &error);
    if (!field) return Fail(n.pos, error);
    std::vector<arrow::FieldRef> path(names.begin(), names.end());
    arrow::FieldRef ref = path.size() == 1 ? path[0] : arrow::FieldRef(std::move(path));
    Value v;
    v.expr = cp::field_ref(std::move(ref));
    v.type = field->type();
    TypePtr plain = ComputeType(v.type);
    if (!plain->Equals(*v.type)) {
      v.expr = cp::call("cast", {v.expr}, cp::CastOptions::Safe(plain));
      v.type = plain;
    }
    return v;
  }

  // ------------------------------------------------------------ literals

  Result<Value> BindLiteral(const Node& n) {
    if (n.coerce_to) return CoerceLiteral(n, n.coerce_to);
    switch (n.literal) {
      case LiteralKind::kInt64: return Literal(std::make_shared<arrow::Int64Scalar>(n.i64));
      case LiteralKind::kUInt64: return Literal(std::make_shared<arrow::UInt64Scalar>(n.u64));
      case LiteralKind::kFloat64: return Literal(std::make_shared<arrow::DoubleScalar>(n.f64));
      case LiteralKind::kString: return Literal(std::make_shared<arrow::StringScalar>(n.text));
      case LiteralKind::kBinary:
        return Literal(std::make_shared<arrow::BinaryScalar>(arrow::Buffer::FromString(n.text)));
      case LiteralKind::kBool: return Literal(std::make_shared<arrow::BooleanScalar>(n.boolean));
      case LiteralKind::kNull: return Literal(arrow::MakeNullScalar(arrow::null()));
    }
    return Fail(n.pos, "bad literal");
  }

  // Lance's safe_coerce_scalar: exact conversions only.
  Result<Value> CoerceLiteral(const Node& n, const TypePtr& type) {
    const Type::type id = type->id();
    ScalarPtr out;
    switch (n.literal) {
      case LiteralKind::kNull:
        return Literal(arrow::MakeNullScalar(arrow::null()));
      case LiteralKind::kBool:
        if (id == Type::BOOL) out = std::make_shared<arrow::BooleanScalar>(n.boolean);
        break;
      case LiteralKind::kString:
        if (id == Type::STRING) out = std::make_shared<arrow::StringScalar>(n.text);
        if (id == Type::LARGE_STRING) out = std::make_shared<arrow::LargeStringScalar>(n.text);
        if (id == Type::STRING_VIEW) out = std::make_shared<arrow::StringViewScalar>(n.text);
        break;
      case LiteralKind::kBinary:
        if (id == Type::BINARY) out = std::make_shared<arrow::BinaryScalar>(arrow::Buffer::FromString(n.text));
        if (id == Type::LARGE_BINARY) {
          out = std::make_shared<arrow::LargeBinaryScalar>(arrow::Buffer::FromString(n.text));
        }
        if (id == Type::BINARY_VIEW) out = std::make_shared<arrow::BinaryViewScalar>(arrow::Buffer::FromString(n.text));
        if (id == Type::FIXED_SIZE_BINARY &&
            static_cast<const arrow::FixedSizeBinaryType&>(*type).byte_width() == static_cast<int>(n.text.size())) {
          out = std::make_shared<arrow::FixedSizeBinaryScalar>(arrow::Buffer::FromString(n.text), type);
        }
        break;
      case LiteralKind::kInt64:
      case LiteralKind::kUInt64: {
        const __int128 v = n.literal == LiteralKind::kInt64 ? static_cast<__int128>(n.i64)
                                                            : static_cast<__int128>(n.u64);
        if (IsInteger(id)) {
          out = IntegerScalar(id, v);
        } else if (id == Type::FLOAT) {
          out = std::make_shared<arrow::FloatScalar>(static_cast<float>(v));
        } else if (id == Type::DOUBLE) {
          out = std::make_shared<arrow::DoubleScalar>(static_cast<double>(v));
        } else if (id == Type::HALF_FLOAT) {
          out = HalfFloatScalar(static_cast<double>(v));
        } else if (n.literal == LiteralKind::kInt64) {
          out = DecimalScalar(n.i64, type);
        }
        break;
      }
      case LiteralKind::kFloat64:
        if (id == Type::FLOAT) {
          out = std::make_shared<arrow::FloatScalar>(static_cast<float>(n.f64));
        }
        if (id == Type::DOUBLE) out = std::make_shared<arrow::DoubleScalar>(n.f64);
        if (id == Type::HALF_FLOAT) out = HalfFloatScalar(n.f64);
        break;
    }
    if (!out) {
      std::string hint;
      if (n.literal == LiteralKind::kString && (id == Type::DATE32 || id == Type::DATE64)) {
        hint = " (write DATE " + DescribeLiteral(n) + ")";
      } else if (n.literal == LiteralKind::kString && id == Type::TIMESTAMP) {
        hint = " (write TIMESTAMP " + DescribeLiteral(n) + ")";
      }
      return Fail(n.pos, "cannot convert literal " + DescribeLiteral(n) + " to " +
                             TypeName(*type) + ", the type of the column it is compared with" +
                             hint);
    }
    return Literal(std::move(out));
  }

  Result<Value> BindTypedString(const Node& n) {
    if (n.typed == TypedStringKind::kDate) {
      auto days = ParseDateString(n.text);
      if (!days.ok()) return Fail(n.pos, days.status());
      return Literal(std::make_shared<arrow::Date32Scalar>(*days));
    }
    const arrow::TimeUnit::type unit =
        n.precision == 0   ? arrow::TimeUnit::SECOND
        : n.precision == 3 ? arrow::TimeUnit::MILLI
        : n.precision == 6 ? arrow::TimeUnit::MICRO
                           : arrow::TimeUnit::NANO;
    auto parsed = ParseTimestampString(n.text);
    if (!parsed.ok()) return Fail(n.pos, parsed.status());
    auto value = TimestampStringValue(*parsed, unit, "");
    if (!value.ok()) return Fail(n.pos, value.status());
    return Literal(std::make_shared<arrow::TimestampScalar>(*value, arrow::timestamp(unit)));
  }

  // ------------------------------------------------------------ calls and casts

  // The result type of calling `function` on values of these types.
  Result<TypePtr> CallType(const std::string& function, const std::vector<Value>& args,
                           const std::shared_ptr<cp::FunctionOptions>& options) {
    arrow::FieldVector fields;
    std::vector<cp::Expression> operands;
    for (size_t i = 0; i < args.size(); ++i) {
      if (args[i].IsLiteral()) {
        operands.push_back(args[i].expr);
      } else {
        const std::string name = "arg" + std::to_string(i);
        fields.push_back(arrow::field(name, args[i].type));
        operands.push_back(cp::field_ref(name));
      }
    }
    cp::Expression call = cp::call(function, std::move(operands), options);
    LANCE_ASSIGN_OR_RAISE(auto bound, call.Bind(*arrow::schema(fields)));
    return bound.type()->GetSharedPtr();
  }

  // Calls `function`, folding it to a literal when every argument is one.
  Result<Value> Call(const std::string& function, std::vector<Value> args, size_t pos,
                     std::shared_ptr<cp::FunctionOptions> options = nullptr) {
    const bool constant =
        std::all_of(args.begin(), args.end(), [](const Value& v) { return v.IsLiteral(); });
    if (constant) {
      std::vector<arrow::Datum> datums;
      for (const auto& a : args) datums.emplace_back(a.scalar);
      auto result = cp::CallFunction(function, datums, options.get());
      if (!result.ok()) return Fail(pos, result.status());
      if (result->is_scalar()) return Literal(result->scalar());
    }
    auto type = CallType(function, args, options);
    if (!type.ok()) return Fail(pos, type.status());
    Value v;
    std::vector<cp::Expression> operands;
    for (auto& a : args) operands.push_back(std::move(a.expr));
    v.expr = cp::call(function, std::move(operands), std::move(options));
    v.type = *type;
    return v;
  }

  // A timestamp literal as a value of timestamp type `to`: unit conversion truncates
  // toward zero, and a naive value meeting a zone is wall-clock time there (arrow-rs
  // casts).
  Result<Value> TimestampLiteralTo(const Value& v, const TypePtr& to, size_t pos) {
    const auto& from_type = static_cast<const arrow::TimestampType&>(*v.type);
    const auto& to_type = static_cast<const arrow::TimestampType&>(*to);
    const int64_t raw = static_cast<const arrow::TimestampScalar&>(*v.scalar).value;
    auto value = ConvertTimeUnit(raw, from_type.unit(), to_type.unit());
    if (!value.ok()) return Fail(pos, value.status());
    int64_t out = *value;
    if (from_type.timezone().empty() && !to_type.timezone().empty()) {
      auto utc = LocalToUtc(out, to_type.unit(), to_type.timezone());
      if (!utc.ok()) return Fail(pos, utc.status());
      out = *utc;
    }
    return Literal(std::make_shared<arrow::TimestampScalar>(out, to));
  }

  // Converts `v` to type `to` as DataFusion's coercion would.
  Result<Value> CastTo(const Value& v, const TypePtr& to, size_t pos) {
    if (v.type->Equals(*to)) return v;
    if (v.IsNullType()) return Literal(arrow::MakeNullScalar(to));
    const Type::type from = v.type->id();
    if (v.IsLiteral()) {
      if (!v.scalar->is_valid) return Literal(arrow::MakeNullScalar(to));
      if (IsString(from) && IsTemporal(to->id())) {
        const std::string text(static_cast<const arrow::BaseBinaryScalar&>(*v.scalar).view());
        if (to->id() == Type::TIMESTAMP) {
          const auto& ts = static_cast<const arrow::TimestampType&>(*to);
          auto parsed = ParseTimestampString(text);
          if (!parsed.ok()) return Fail(pos, parsed.status());
          auto value = TimestampStringValue(*parsed, ts.unit(), ts.timezone());
          if (!value.ok()) return Fail(pos, value.status());
          return Literal(std::make_shared<arrow::TimestampScalar>(*value, to));
        }
        auto days = ParseDateString(text);
        if (!days.ok()) return Fail(pos, days.status());
        if (to->id() == Type::DATE32) return Literal(std::make_shared<arrow::Date32Scalar>(*days));
        return Literal(std::make_shared<arrow::Date64Scalar>(int64_t{*days} * 86400000));
      }
      if (from == Type::TIMESTAMP && to->id() == Type::TIMESTAMP) {
        return TimestampLiteralTo(v, to, pos);
      }
      if (IsInteger(from) && IsDecimal(to->id())) {
        // By value: Arrow's cast insists the type holds every value of the source type.
        auto wide = cp::Cast(arrow::Datum(v.scalar), cp::CastOptions::Safe(arrow::int64()));
        ScalarPtr out;
        if (wide.ok()) {
          out = DecimalScalar(static_cast<const arrow::Int64Scalar&>(*wide->scalar()).value, to);
        }
        if (!out) {
          return Fail(pos, "cannot convert " + v.scalar->ToString() + " to " + TypeName(*to));
        }
        return Literal(std::move(out));
      }
      if (IsInteger(from) && to->id() == Type::DATE32) {
        auto days = cp::Cast(arrow::Datum(v.scalar), cp::CastOptions::Safe(arrow::int32()));
        if (!days.ok()) return Fail(pos, "cannot convert " + v.scalar->ToString() + " to a date");
        return Literal(std::make_shared<arrow::Date32Scalar>(
            static_cast<const arrow::Int32Scalar&>(*days->scalar()).value));
      }
      auto cast = cp::Cast(arrow::Datum(v.scalar), cp::CastOptions::Safe(to));
      if (!cast.ok() || !cast->is_scalar()) {
        return Fail(pos, "cannot convert " + v.scalar->ToString() + " (" + TypeName(*v.type) +
                             ") to " + TypeName(*to) +
                             (cast.ok() ? std::string() : ": " + cast.status().message()));
      }
      return Literal(cast->scalar());
    }
    Value out;
    out.type = to;
    if (from == Type::TIMESTAMP && to->id() == Type::TIMESTAMP &&
        static_cast<const arrow::TimestampType&>(*v.type).timezone().empty() &&
        !static_cast<const arrow::TimestampType&>(*to).timezone().empty()) {
      // Naive -> zoned: the naive values are wall-clock times in the zone.
      const auto& ts = static_cast<const arrow::TimestampType&>(*to);
      cp::Expression e = v.expr;
      if (static_cast<const arrow::TimestampType&>(*v.type).unit() != ts.unit()) {
        auto options = cp::CastOptions::Safe(arrow::timestamp(ts.unit()));
        options.allow_time_truncate = true;
        e = cp::call("cast", {e}, options);
      }
      out.expr = cp::call("assume_timezone", {e},
                          cp::AssumeTimezoneOptions(ts.timezone(),
                                                    cp::AssumeTimezoneOptions::AMBIGUOUS_RAISE,
                                                    cp::AssumeTimezoneOptions::NONEXISTENT_RAISE));
      return out;
    }
    Value source = v;
    if (IsInteger(from) && to->id() == Type::DATE32 && from != Type::INT32) {
      source.expr = cp::call("cast", {v.expr}, cp::CastOptions::Safe(arrow::int32()));
      source.type = arrow::int32();
    }
    if (IsInteger(from) && IsDecimal(to->id())) {
      // Through the decimal that holds the integer type; then decimal to decimal,
      // which checks values rather than types.
      int precision, scale;
      DecimalShape(*v.type, &precision, &scale);
      TypePtr shape = to->id() == Type::DECIMAL256 ? arrow::decimal256(precision, 0)
                                                   : arrow::decimal128(precision, 0);
      if (!shape->Equals(*to)) {
        source.expr = cp::call("cast", {v.expr}, cp::CastOptions::Safe(shape));
        source.type = shape;
      }
    }
    auto options = std::make_shared<cp::CastOptions>(cp::CastOptions::Safe(to));
    options->allow_time_truncate = true;
    auto checked = CallType("cast", {source}, options);
    if (!checked.ok()) {
      return Fail(pos, "cannot convert " + TypeName(*v.type) + " to " + TypeName(*to) + ": " +
                           checked.status().message());
    }
    out.expr = cp::call("cast", {source.expr}, options);
    return out;
  }

  // ------------------------------------------------------------ comparisons

  Result<Value> TotalOrderKey(const Value& v, size_t pos) {
    const bool single = v.type->id() == Type::FLOAT;
    if (v.IsLiteral()) {
      if (!v.scalar->is_valid) {
        return Literal(arrow::MakeNullScalar(single ? arrow::int32() : arrow::int64()));
      }
      if (single) {
        const float f = static_cast<const arrow::FloatScalar&>(*v.scalar).value;
        return Literal(std::make_shared<arrow::Int32Scalar>(filter::TotalOrderKey(f)));
      }
      const double d = static_cast<const arrow::DoubleScalar&>(*v.scalar).value;
      return Literal(std::make_shared<arrow::Int64Scalar>(filter::TotalOrderKey(d)));
    }
    return Call(kTotalOrderKeyFunction, {v}, pos);
  }

  static bool IsZeroLiteral(const Value& v) {
    if (!v.IsLiteral() || !v.scalar->is_valid) return false;
    if (v.type->id() == Type::FLOAT) {
      return static_cast<const arrow::FloatScalar&>(*v.scalar).value == 0.0f;
    }
    return static_cast<const arrow::DoubleScalar&>(*v.scalar).value == 0.0;
  }

  Value FloatLiteral(const TypePtr& type, double value) {
    if (type->id() == Type::FLOAT) {
      return Literal(std::make_shared<arrow::FloatScalar>(static_cast<float>(value)));
    }
    return Literal(std::make_shared<arrow::DoubleScalar>(value));
  }

  // Compares two floats of the same type in totalOrder, with Lance's signed-zero
  // rewrite for comparisons against a zero literal.
  Result<Value> CompareFloats(BinaryOp op, Value l, Value r, size_t pos) {
    if (IsZeroLiteral(l) && !IsZeroLiteral(r)) {
      std::swap(l, r);
      op = Mirror(op);
    }
    if (IsZeroLiteral(r)) {
      const TypePtr type = r.type;
      if (op == BinaryOp::kEq || op == BinaryOp::kNotEq) {
        // x IN (-0.0, 0.0) / x NOT IN (-0.0, 0.0): the two keys are adjacent.
        LANCE_ASSIGN_OR_RAISE(Value key, TotalOrderKey(l, pos));
        LANCE_ASSIGN_OR_RAISE(Value negative, TotalOrderKey(FloatLiteral(type, -0.0), pos));
        LANCE_ASSIGN_OR_RAISE(Value positive, TotalOrderKey(FloatLiteral(type, 0.0), pos));
        if (op == BinaryOp::kEq) {
          LANCE_ASSIGN_OR_RAISE(Value low, Call("greater_equal", {key, negative}, pos));
          LANCE_ASSIGN_OR_RAISE(Value high, Call("less_equal", {key, positive}, pos));
          return Call("and_kleene", {low, high}, pos);
        }
        LANCE_ASSIGN_OR_RAISE(Value below, Call("less", {key, negative}, pos));
        LANCE_ASSIGN_OR_RAISE(Value above, Call("greater", {key, positive}, pos));
        return Call("or_kleene", {below, above}, pos);
      }
      const bool negative = op == BinaryOp::kLt || op == BinaryOp::kGtEq;
      r = FloatLiteral(type, negative ? -0.0 : 0.0);
    }
    LANCE_ASSIGN_OR_RAISE(Value lk, TotalOrderKey(l, pos));
    LANCE_ASSIGN_OR_RAISE(Value rk, TotalOrderKey(r, pos));
    return Call(CompareFunction(op), {lk, rk}, pos);
  }

  // The common type two compared values are cast to.
  Result<TypePtr> CompareType(const Value& l, const Value& r, size_t pos, const char* context) {
    // A timestamp literal meets a timestamp expression in the expression's type.
    if (l.type->id() == Type::TIMESTAMP && r.type->id() == Type::TIMESTAMP &&
        l.IsLiteral() != r.IsLiteral()) {
      return l.IsLiteral() ? r.type : l.type;
    }
    TypePtr common = ComparisonCoercion(l.type, r.type);
    if (!common) {
      return Fail(pos, std::string("cannot compare ") + TypeName(*l.type) + " with " +
                           TypeName(*r.type) + context);
    }
    return common;
  }

  Result<Value> Compare(BinaryOp op, const Value& l, const Value& r, size_t pos) {
    if (l.IsNullType() || r.IsNullType()) return NullBoolean();
    LANCE_ASSIGN_OR_RAISE(TypePtr common, CompareType(l, r, pos, ""));
    LANCE_ASSIGN_OR_RAISE(Value l2, CastTo(l, common, pos));
    LANCE_ASSIGN_OR_RAISE(Value r2, CastTo(r, common, pos));
    if (IsFloat(common->id())) return CompareFloats(op, std::move(l2), std::move(r2), pos);
    return Call(CompareFunction(op), {std::move(l2), std::move(r2)}, pos);
  }

  // ------------------------------------------------------------ operators

  Result<Value> RequireBoolean(Value v, size_t pos, const std::string& what) {
    if (v.IsNullType()) return NullBoolean();
    if (v.type->id() != Type::BOOL) {
      return Fail(pos, what + " needs a boolean operand, got " + TypeName(*v.type));
    }
    return v;
  }

  Result<Value> BindNegate(const Node& n) {
    LANCE_ASSIGN_OR_RAISE(Value v, Bind(*n.children[0]));
    if (v.IsNullType()) return v;
    if (!IsSignedInt(v.type->id()) && !IsFloat(v.type->id()) && !IsDecimal(v.type->id())) {
      return Fail(n.pos, "cannot negate a value of type " + TypeName(*v.type));
    }
    return Call("negate", {std::move(v)}, n.pos);
  }

  Result<Value> Not(Value v, size_t pos) { return Call("invert", {std::move(v)}, pos); }

  Result<Value> BindNot(const Node& n) {
    LANCE_ASSIGN_OR_RAISE(Value v, Bind(*n.children[0]));
    LANCE_ASSIGN_OR_RAISE(v, RequireBoolean(std::move(v), n.pos, "NOT"));
    return Not(std::move(v), n.pos);
  }

  // Combines boolean values pairwise into a balanced tree.
  Result<Value> Combine(std::vector<Value> values, const char* function, size_t pos) {
    while (values.size() > 1) {
      std::vector<Value> next;
      for (size_t i = 0; i + 1 < values.size(); i += 2) {
        LANCE_ASSIGN_OR_RAISE(Value v, Call(function, {values[i], values[i + 1]}, pos));
        next.push_back(std::move(v));
      }
      if (values.size() % 2 == 1) next.push_back(std::move(values.back()));
      values = std::move(next);
    }
    return values[0];
  }

  Result<Value> BindLogical(const Node& n) {
    std::vector<Value> operands;
    for (const auto& child : n.children) {
      LANCE_ASSIGN_OR_RAISE(Value v, Bind(*child));
      LANCE_ASSIGN_OR_RAISE(v, RequireBoolean(std::move(v), child->pos, n.is_and ? "AND" : "OR"));
      operands.push_back(std::move(v));
    }
    return Combine(std::move(operands), n.is_and ? "and_kleene" : "or_kleene", n.pos);
  }

  Result<Value> Arithmetic(BinaryOp op, Value l, Value r, size_t pos) {
    auto ok = [](const Value& v) { return v.IsNullType() || IsNumeric(v.type->id()); };
    if (!ok(l) || !ok(r)) {
      return Fail(pos, "cannot apply '" + std::string(OpSymbol(op)) + "' to " +
                           TypeName(*l.type) + " and " + TypeName(*r.type));
    }
    if (l.IsNullType() && r.IsNullType()) return Literal(arrow::MakeNullScalar(arrow::null()));
    if (l.IsNullType()) return Literal(arrow::MakeNullScalar(r.type));
    if (r.IsNullType()) return Literal(arrow::MakeNullScalar(l.type));
    TypePtr common = NumericCoercion(l.type, r.type);
    if (IsDecimal(common->id())) return DecimalArithmetic(op, std::move(l), std::move(r), pos);
    LANCE_ASSIGN_OR_RAISE(Value l2, CastTo(l, common, pos));
    LANCE_ASSIGN_OR_RAISE(Value r2, CastTo(r, common, pos));
    return Call(ArithmeticFunction(op), {std::move(l2), std::move(r2)}, pos);
  }

  // Decimal arithmetic: like DataFusion, each integer operand becomes the decimal
  // that holds its type and the kernel works out the result's precision and scale.
  // Where Arrow's result would pass 38 digits (DataFusion caps it instead), the
  // operands widen to decimal256 so the values stay exact.
  Result<Value> DecimalArithmetic(BinaryOp op, Value l, Value r, size_t pos) {
    auto as_decimal = [&](Value v, bool wide) -> Result<Value> {
      if (!wide && IsDecimal(v.type->id())) return v;
      int precision, scale;
      DecimalShape(*v.type, &precision, &scale);
      auto type = wide ? arrow::Decimal256Type::Make(precision, scale)
                       : arrow::Decimal128Type::Make(precision, scale);
      if (!type.ok()) return Fail(pos, type.status());
      return CastTo(v, *type, pos);
    };
    const char* function = ArithmeticFunction(op);
    for (bool wide : {false, true}) {
      LANCE_ASSIGN_OR_RAISE(Value l2, as_decimal(l, wide));
      LANCE_ASSIGN_OR_RAISE(Value r2, as_decimal(r, wide));
      std::vector<Value> args = {l2, r2};
      if (!wide) {
        auto type = CallType(function, args, nullptr);
        if (!type.ok()) continue;
      }
      return Call(function, std::move(args), pos);
    }
    return Fail(pos, "unsupported decimal arithmetic");
  }

  Result<Value> Concat(Value l, Value r, size_t pos) {
    auto ok = [](const Value& v) { return v.IsNullType() || IsString(v.type->id()); };
    if (!ok(l) || !ok(r)) {
      return Fail(pos, "cannot apply '||' to " + TypeName(*l.type) + " and " +
                           TypeName(*r.type) + " (only strings concatenate)");
    }
    const bool large = l.type->id() == Type::LARGE_STRING || r.type->id() == Type::LARGE_STRING;
    const TypePtr type = large ? arrow::large_utf8() : arrow::utf8();
    if (l.IsNullType() || r.IsNullType()) return Literal(arrow::MakeNullScalar(type));
    LANCE_ASSIGN_OR_RAISE(Value l2, CastTo(l, type, pos));
    LANCE_ASSIGN_OR_RAISE(Value r2, CastTo(r, type, pos));
    ScalarPtr separator = large ? ScalarPtr(std::make_shared<arrow::LargeStringScalar>(""))
                                : ScalarPtr(std::make_shared<arrow::StringScalar>(""));
    return Call("binary_join_element_wise", {std::move(l2), std::move(r2), Literal(separator)},
                pos);
  }

  Result<Value> BindBinary(const Node& n) {
    LANCE_ASSIGN_OR_RAISE(Value l, Bind(*n.children[0]));
    LANCE_ASSIGN_OR_RAISE(Value r, Bind(*n.children[1]));
    if (IsComparison(n.op)) return Compare(n.op, l, r, n.pos);
    if (IsArithmetic(n.op)) return Arithmetic(n.op, std::move(l), std::move(r), n.pos);
    return Concat(std::move(l), std::move(r), n.pos);
  }

  Result<Value> BindIs(const Node& n) {
    LANCE_ASSIGN_OR_RAISE(Value v, Bind(*n.children[0]));
    switch (n.is) {
      case IsKind::kNull: return Call("is_null", {std::move(v)}, n.pos);
      case IsKind::kNotNull: return Call("is_valid", {std::move(v)}, n.pos);
      default: break;
    }
    LANCE_ASSIGN_OR_RAISE(v, RequireBoolean(std::move(v), n.pos, "IS TRUE / IS FALSE"));
    if (n.is == IsKind::kFalse || n.is == IsKind::kNotFalse) {
      LANCE_ASSIGN_OR_RAISE(v, Not(std::move(v), n.pos));
    }
    LANCE_ASSIGN_OR_RAISE(Value known, Call("coalesce", {std::move(v), FalseLiteral()}, n.pos));
    if (n.is == IsKind::kNotTrue || n.is == IsKind::kNotFalse) return Not(std::move(known), n.pos);
    return known;
  }

  Result<Value> BindBetween(const Node& n) {
    LANCE_ASSIGN_OR_RAISE(Value e, Bind(*n.children[0]));
    LANCE_ASSIGN_OR_RAISE(Value low, Bind(*n.children[1]));
    LANCE_ASSIGN_OR_RAISE(Value high, Bind(*n.children[2]));
    if (!n.negated) {
      LANCE_ASSIGN_OR_RAISE(Value a, Compare(BinaryOp::kGtEq, e, low, n.children[1]->pos));
      LANCE_ASSIGN_OR_RAISE(Value b, Compare(BinaryOp::kLtEq, e, high, n.children[2]->pos));
      return Call("and_kleene", {std::move(a), std::move(b)}, n.pos);
    }
    LANCE_ASSIGN_OR_RAISE(Value a, Compare(BinaryOp::kLt, e, low, n.children[1]->pos));
    LANCE_ASSIGN_OR_RAISE(Value b, Compare(BinaryOp::kGt, e, high, n.children[2]->pos));
    return Call("or_kleene", {std::move(a), std::move(b)}, n.pos);
  }

  Result<Value> BindIn(const Node& n) {
    LANCE_ASSIGN_OR_RAISE(Value e, Bind(*n.children[0]));
    std::vector<Value> items;
    bool all_literal = true;
    for (size_t i = 1; i < n.children.size(); ++i) {
      LANCE_ASSIGN_OR_RAISE(Value item, Bind(*n.children[i]));
      all_literal = all_literal && item.IsLiteral();
      items.push_back(std::move(item));
    }
    if (e.IsNullType()) return NullBoolean();
    Value result;
    if (all_literal && !e.IsLiteral()) {
      // One common type for the probe and every item, then a set lookup.
      TypePtr common = e.type;
      for (size_t i = 0; i < items.size(); ++i) {
        const Value& item = items[i];
        if (item.IsNullType()) continue;
        LANCE_ASSIGN_OR_RAISE(common, CompareType(Value{e.expr, common, nullptr}, item,
                                                  n.children[i + 1]->pos, " in the IN list"));
      }
      LANCE_ASSIGN_OR_RAISE(Value probe, CastTo(e, common, n.pos));
      const bool floating = IsFloat(common->id());
      std::vector<ScalarPtr> set;
      bool has_null = false;
      for (size_t i = 0; i < items.size(); ++i) {
        LANCE_ASSIGN_OR_RAISE(Value v, CastTo(items[i], common, n.children[i + 1]->pos));
        if (!v.scalar->is_valid) {
          has_null = true;
          continue;
        }
        if (floating) {
          if (IsZeroLiteral(v)) {  // Lance lists both encodings of a zero
            LANCE_ASSIGN_OR_RAISE(Value negative, TotalOrderKey(FloatLiteral(common, -0.0), n.pos));
            LANCE_ASSIGN_OR_RAISE(Value positive, TotalOrderKey(FloatLiteral(common, 0.0), n.pos));
            set.push_back(negative.scalar);
            set.push_back(positive.scalar);
            continue;
          }
          LANCE_ASSIGN_OR_RAISE(v, TotalOrderKey(v, n.pos));
        }
        set.push_back(v.scalar);
      }
      if (floating) {
        LANCE_ASSIGN_OR_RAISE(probe, TotalOrderKey(probe, n.pos));
      }
      std::unique_ptr<arrow::ArrayBuilder> builder;
      auto status = arrow::MakeBuilder(arrow::default_memory_pool(), probe.type, &builder);
      for (const auto& s : set) {
        if (status.ok()) status = builder->AppendScalar(*s);
      }
      if (status.ok() && has_null) status = builder->AppendNull();
      std::shared_ptr<arrow::Array> value_set;
      if (status.ok()) status = builder->Finish(&value_set);
      if (!status.ok()) return Fail(n.pos, status);
      // INCONCLUSIVE is SQL's IN: null when the probe is null, or when nothing
      // matched and the list has a NULL.
      auto options = std::make_shared<cp::SetLookupOptions>(
          value_set, cp::SetLookupOptions::INCONCLUSIVE);
      LANCE_ASSIGN_OR_RAISE(result, Call("is_in", {std::move(probe)}, n.pos, options));
    } else {
      std::vector<Value> matches;
      for (size_t i = 0; i < items.size(); ++i) {
        LANCE_ASSIGN_OR_RAISE(Value m, Compare(BinaryOp::kEq, e, items[i], n.children[i + 1]->pos));
        matches.push_back(std::move(m));
      }
      LANCE_ASSIGN_OR_RAISE(result, Combine(std::move(matches), "or_kleene", n.pos));
    }
    if (n.negated) return Not(std::move(result), n.pos);
    return result;
  }

  Result<Value> BindLike(const Node& n) {
    LANCE_ASSIGN_OR_RAISE(Value e, Bind(*n.children[0]));
    LANCE_ASSIGN_OR_RAISE(Value p, Bind(*n.children[1]));
    const char* keyword = n.case_insensitive ? "ILIKE" : "LIKE";
    if (!e.IsNullType() && !IsString(e.type->id())) {
      return Fail(n.pos, std::string(keyword) + " needs a string to match, got " +
                             TypeName(*e.type));
    }
    if (!p.IsNullType() && (!p.IsLiteral() || !IsString(p.type->id()))) {
      return Fail(n.children[1]->pos,
                  std::string("the ") + keyword + " pattern must be a string literal");
    }
    if (e.IsNullType() || p.IsNullType() || !p.scalar->is_valid) return NullBoolean();
    if (e.type->id() == Type::STRING_VIEW) {
      LANCE_ASSIGN_OR_RAISE(e, CastTo(e, arrow::utf8(), n.pos));
    }
    const std::string_view pattern = static_cast<const arrow::BaseBinaryScalar&>(*p.scalar).view();
    auto options = std::make_shared<cp::MatchSubstringOptions>(
        CanonicalLikePattern(pattern, n.escape), n.case_insensitive);
    LANCE_ASSIGN_OR_RAISE(Value matched, Call("match_like", {std::move(e)}, n.pos, options));
    if (n.negated) return Not(std::move(matched), n.pos);
    return matched;
  }

  // ------------------------------------------------------------ function calls
  //
  // The functions pylance's filters are served by indices for, with DataFusion's
  // semantics: list membership (array_has and its aliases, array_has_any,
  // array_has_all) and string predicates (contains, starts_with, ends_with).

  enum class CallKind { kHas, kHasAny, kHasAll, kString };

  static bool KnownFunction(const std::string& name, CallKind* kind) {
    static const std::vector<std::pair<std::string, CallKind>> names = {
        {"array_has", CallKind::kHas},          {"array_contains", CallKind::kHas},
        {"list_has", CallKind::kHas},           {"list_contains", CallKind::kHas},
        {"array_has_any", CallKind::kHasAny},   {"list_has_any", CallKind::kHasAny},
        {"arrays_overlap", CallKind::kHasAny},  {"array_has_all", CallKind::kHasAll},
        {"list_has_all", CallKind::kHasAll},    {"contains", CallKind::kString},
        {"starts_with", CallKind::kString},     {"ends_with", CallKind::kString},
    };
    for (const auto& [known, k] : names) {
      if (known == name) {
        *kind = k;
        return true;
      }
    }
    return false;
  }

  static bool IsList(Type::type id) {
    return id == Type::LIST || id == Type::LARGE_LIST || id == Type::FIXED_SIZE_LIST;
  }

  // DataFusion's type_union_resolution for the element types supported here: the
  // type a list's elements and the values looked for in it are compared in.
  static TypePtr ElementUnion(const TypePtr& a, const TypePtr& b) {
    if (a->id() == Type::NA) return b;
    if (b->id() == Type::NA) return a;
    if (a->Equals(*b)) return a;
    const Type::type x = a->id(), y = b->id();
    if (IsNumeric(x) && IsNumeric(y)) return NumericCoercion(a, b);
    if (IsString(x) && IsString(y)) {
      return x == Type::LARGE_STRING || y == Type::LARGE_STRING ? arrow::large_utf8()
                                                                : arrow::utf8();
    }
    if (IsString(x) && IsNumeric(y)) return b;
    if (IsString(y) && IsNumeric(x)) return a;
    return nullptr;
  }

  // Element types whose comparison here is DataFusion's.
  static bool SupportedElement(Type::type id) {
    return IsInteger(id) || IsFloat(id) || id == Type::STRING || id == Type::LARGE_STRING ||
           id == Type::BOOL;
  }

  // `list` (a list column) as a list of `element`, as DataFusion casts it.
  Result<Value> CastListElements(const Value& list, const TypePtr& element, size_t pos) {
    const auto& type = static_cast<const arrow::BaseListType&>(*list.type);
    if (type.value_type()->Equals(*element)) return list;
    auto field = type.value_field()->WithType(element);
    TypePtr to;
    switch (list.type->id()) {
      case Type::LIST: to = arrow::list(field); break;
      case Type::LARGE_LIST: to = arrow::large_list(field); break;
      default:
        to = arrow::fixed_size_list(
            field, static_cast<const arrow::FixedSizeListType&>(*list.type).list_size());
    }
    // arrow-rs casts numbers to floats with `as`; strings that are not numbers fail.
    auto options = std::make_shared<cp::CastOptions>(cp::CastOptions::Safe(to));
    options->allow_float_truncate = true;
    auto checked = CallType("cast", {list}, options);
    if (!checked.ok()) {
      return Fail(pos, "cannot convert " + TypeName(*list.type) + " to " + TypeName(*to) + ": " +
                           checked.status().message());
    }
    Value out;
    out.expr = cp::call("cast", {list.expr}, std::move(options));
    out.type = to;
    return out;
  }

  static std::string Ordinal(size_t i) { return "argument " + std::to_string(i + 1); }

  Result<Value> BindCall(const Node& n) {
    const std::string& name = n.text;
    CallKind kind;
    if (!KnownFunction(name, &kind)) {
      return Fail(n.pos, "function '" + name + "' is not supported in filters (supported: "
                         "array_has, array_contains, list_has, list_contains, array_has_any, "
                         "list_has_any, arrays_overlap, array_has_all, list_has_all, contains, "
                         "starts_with, ends_with)");
    }
    if (n.children.size() != 2) {
      return Fail(n.pos, name + " takes 2 arguments, got " + std::to_string(n.children.size()));
    }
    for (size_t i = 0; i < 2; ++i) {
      if (n.children[i]->kind == NodeKind::kList &&
          !(i == 1 && (kind == CallKind::kHasAny || kind == CallKind::kHasAll))) {
        return Fail(n.children[i]->pos,
                    name + ": " + Ordinal(i) + " cannot be a list literal" +
                        (i == 0 ? " (it must be a list column)" : ""));
      }
    }
    if (kind == CallKind::kString) return BindStringCall(n);

    // The haystack: a list column.
    const Node& haystack_node = *n.children[0];
    LANCE_ASSIGN_OR_RAISE(Value haystack, Bind(haystack_node));
    if (haystack.IsNullType()) {
      // DataFusion folds array_has(NULL, x) to NULL; the other two fail when run.
      if (kind == CallKind::kHas) return NullBoolean();
      return Fail(haystack_node.pos, name + ": " + Ordinal(0) + " is NULL, not a list");
    }
    if (!IsList(haystack.type->id())) {
      return Fail(haystack_node.pos, name + ": " + Ordinal(0) + " must be a list, got " +
                                         TypeName(*haystack.type));
    }
    if (haystack.IsLiteral()) {
      return Fail(haystack_node.pos, name + ": " + Ordinal(0) + " must be a list column");
    }
    const TypePtr element =
        static_cast<const arrow::BaseListType&>(*haystack.type).value_type();
    if (!SupportedElement(element->id())) {
      return Fail(haystack_node.pos, name + ": lists of " + TypeName(*element) +
                                         " are not supported (only integers, floats, strings "
                                         "and booleans)");
    }
    const Node& needle_node = *n.children[1];
    if (kind == CallKind::kHas) return BindArrayHas(n, haystack, element);
    if (needle_node.kind != NodeKind::kList) {
      LANCE_ASSIGN_OR_RAISE(Value needle, Bind(needle_node));
      if (needle.IsNullType() || (needle.IsLiteral() && !needle.scalar->is_valid)) {
        // array_has_any(list, NULL) is NULL; array_has_all fails when run.
        if (kind == CallKind::kHasAny) return NullBoolean();
        return Fail(needle_node.pos, name + ": " + Ordinal(1) + " is NULL, not a list");
      }
      if (IsList(needle.type->id())) {
        return Fail(needle_node.pos, name + ": " + Ordinal(1) +
                                         " must be a list literal such as [1, 2] (list "
                                         "columns are not supported there)");
      }
      return Fail(needle_node.pos, name + ": " + Ordinal(1) + " must be a list, got " +
                                       TypeName(*needle.type));
    }
    // The needle: constant items of one type.
    std::vector<Value> items;
    TypePtr items_type = arrow::null();
    for (const auto& child : needle_node.children) {
      LANCE_ASSIGN_OR_RAISE(Value item, Bind(*child));
      if (!item.IsLiteral()) {
        return Fail(child->pos, name + ": the items of " + Ordinal(1) + " must be constants");
      }
      TypePtr joined = ElementUnion(items_type, item.type);
      if (!joined) {
        return Fail(child->pos, name + ": the list mixes " + TypeName(*items_type) + " and " +
                                    TypeName(*item.type));
      }
      items_type = joined;
      items.push_back(std::move(item));
    }
    if (items.empty()) {
      // DataFusion answers an empty needle without looking at the rows, nulls included.
      return Literal(std::make_shared<arrow::BooleanScalar>(kind == CallKind::kHasAll));
    }
    TypePtr common = ElementUnion(element, items_type);
    // Two lists may meet as decimals (uint64 with int64 elements); a lone value may not.
    if (!common || !(SupportedElement(common->id()) || common->id() == Type::DECIMAL128)) {
      return Fail(needle_node.pos, name + ": cannot compare a list of " + TypeName(*element) +
                                       " with a list of " + TypeName(*items_type));
    }
    std::unique_ptr<arrow::ArrayBuilder> builder;
    auto status = arrow::MakeBuilder(arrow::default_memory_pool(), common, &builder);
    for (size_t i = 0; i < items.size() && status.ok(); ++i) {
      const Value& item = items[i];
      if (common->id() == Type::DECIMAL128 && IsInteger(item.type->id())) {
        // Every integer fits decimal(20, 0), uint64 included.
        auto cast = cp::Cast(arrow::Datum(item.scalar), cp::CastOptions::Safe(common));
        if (!cast.ok()) return Fail(needle_node.children[i]->pos, cast.status());
        status = builder->AppendScalar(*cast->scalar());
        continue;
      }
      LANCE_ASSIGN_OR_RAISE(Value v, CastTo(item, common, needle_node.children[i]->pos));
      status = builder->AppendScalar(*v.scalar);
    }
    std::shared_ptr<arrow::Array> value_set;
    if (status.ok()) status = builder->Finish(&value_set);
    if (!status.ok()) return Fail(needle_node.pos, status);
    LANCE_ASSIGN_OR_RAISE(Value list, CastListElements(haystack, common, haystack_node.pos));
    auto options = std::make_shared<cp::SetLookupOptions>(value_set, cp::SetLookupOptions::MATCH);
    return Call(kind == CallKind::kHasAny ? kArrayHasAnyFunction : kArrayHasAllFunction,
                {std::move(list)}, n.pos, std::move(options));
  }

  // array_has(list, value): a null value gives null, and null elements never match.
  Result<Value> BindArrayHas(const Node& n, const Value& haystack, const TypePtr& element) {
    const std::string& name = n.text;
    const Node& needle_node = *n.children[1];
    LANCE_ASSIGN_OR_RAISE(Value needle, Bind(needle_node));
    if (needle.IsNullType() || (needle.IsLiteral() && !needle.scalar->is_valid)) {
      return NullBoolean();
    }
    TypePtr common = ElementUnion(element, needle.type);
    // An element argument only converts implicitly: a string is not taken as a number.
    if (!common || !SupportedElement(common->id()) ||
        (IsString(needle.type->id()) && !IsString(common->id()))) {
      return Fail(needle_node.pos, name + ": cannot look for a " + TypeName(*needle.type) +
                                       " in a list of " + TypeName(*element));
    }
    LANCE_ASSIGN_OR_RAISE(Value v, CastTo(needle, common, needle_node.pos));
    if (!v.IsLiteral()) {
      // A value per row.
      LANCE_ASSIGN_OR_RAISE(Value list, CastListElements(haystack, common, n.children[0]->pos));
      return Call(kArrayHasValueFunction, {std::move(list), std::move(v)}, n.pos);
    }
    auto value_set = arrow::MakeArrayFromScalar(*v.scalar, 1);
    if (!value_set.ok()) return Fail(needle_node.pos, value_set.status());
    LANCE_ASSIGN_OR_RAISE(Value list, CastListElements(haystack, common, n.children[0]->pos));
    auto options =
        std::make_shared<cp::SetLookupOptions>(*value_set, cp::SetLookupOptions::MATCH);
    return Call(kArrayHasFunction, {std::move(list)}, n.pos, std::move(options));
  }

  // contains / starts_with / ends_with(string, string): Arrow's match_substring /
  // starts_with / ends_with for a constant pattern, ours for a pattern per row;
  // case-sensitive, null if either side is.
  Result<Value> BindStringCall(const Node& n) {
    const std::string& name = n.text;
    Value args[2];
    for (size_t i = 0; i < 2; ++i) {
      LANCE_ASSIGN_OR_RAISE(args[i], Bind(*n.children[i]));
      if (!args[i].IsNullType() && !IsString(args[i].type->id())) {
        return Fail(n.children[i]->pos, name + ": " + Ordinal(i) + " must be a string, got " +
                                            TypeName(*args[i].type));
      }
    }
    if (args[0].IsNullType() || args[1].IsNullType() ||
        (args[1].IsLiteral() && !args[1].scalar->is_valid)) {
      return NullBoolean();
    }
    if (!args[1].IsLiteral()) {
      // A pattern per row: both sides in one string type.
      const bool large = args[0].type->id() == Type::LARGE_STRING ||
                         args[1].type->id() == Type::LARGE_STRING;
      const TypePtr type = large ? arrow::large_utf8() : arrow::utf8();
      LANCE_ASSIGN_OR_RAISE(Value text, CastTo(args[0], type, n.children[0]->pos));
      LANCE_ASSIGN_OR_RAISE(Value pattern, CastTo(args[1], type, n.children[1]->pos));
      const char* function = name == "contains"      ? kContainsFunction
                             : name == "starts_with" ? kStartsWithFunction
                                                     : kEndsWithFunction;
      return Call(function, {std::move(text), std::move(pattern)}, n.pos);
    }
    Value text = std::move(args[0]);
    if (text.type->id() == Type::STRING_VIEW) {
      LANCE_ASSIGN_OR_RAISE(text, CastTo(text, arrow::utf8(), n.children[0]->pos));
    }
    const std::string pattern(static_cast<const arrow::BaseBinaryScalar&>(*args[1].scalar).view());
    auto options = std::make_shared<cp::MatchSubstringOptions>(pattern, /*ignore_case=*/false);
    const char* function = name == "contains"      ? "match_substring"
                           : name == "starts_with" ? "starts_with"
                                                   : "ends_with";
    return Call(function, {std::move(text)}, n.pos, std::move(options));
  }

  const arrow::Schema& schema_;
  size_t error_pos_ = 0;
  bool has_error_ = false;
};

}  // namespace

Result<cp::Expression> BindFilter(Node* root, const arrow::Schema& schema, size_t* error_pos) {
  *error_pos = 0;
  LANCE_RETURN_NOT_OK(EnsureFilterFunctions());
  Binder binder(schema);
  binder.Resolve(root);
  auto bound = binder.Bind(*root);
  if (!bound.ok()) {
    *error_pos = binder.error_pos();
    return bound.status();
  }
  const Value& v = *bound;
  if (v.type->id() != Type::BOOL) {
    *error_pos = root->pos;
    return Status::Invalid("the filter must be a boolean expression, but its type is ",
                           TypeName(*v.type));
  }
  auto check = v.expr.Bind(schema);
  if (!check.ok() || check->type()->id() != Type::BOOL) {
    *error_pos = root->pos;
    return Status::Invalid("the filter does not type-check: ",
                           check.ok() ? check->type()->ToString() : check.status().message());
  }
  return v.expr;
}

Result<cp::Expression> BindValue(Node* root, const arrow::Schema& schema, const TypePtr& target,
                                 size_t* error_pos) {
  *error_pos = 0;
  LANCE_RETURN_NOT_OK(EnsureFilterFunctions());
  Binder binder(schema);
  binder.Resolve(root);
  auto bound = binder.Bind(*root);
  if (!bound.ok()) {
    *error_pos = binder.error_pos();
    return bound.status();
  }
  const Value& v = *bound;
  // The assigned column keeps its type: the value is cast to it as
  // DataFusion casts (an out-of-range value is an error rather than a
  // wrapped number; floats are truncated toward zero).
  cp::Expression out = v.expr;
  // No target: a new column, of the value's own type.
  if (target && !v.type->Equals(*target)) {
    // Arrow's float-truncating cast would also wrap out-of-range values, so
    // the fraction is dropped first and the checked cast does the rest.
    if (arrow::is_floating(v.type->id()) && arrow::is_integer(target->id())) {
      out = cp::call("trunc", {std::move(out)});
    }
    out = cp::call("cast", {std::move(out)}, cp::CastOptions::Safe(target));
  }
  auto check = out.Bind(schema);
  if (!check.ok()) {
    *error_pos = root->pos;
    return Status::Invalid("cannot assign a ", TypeName(*v.type), " value to a ", TypeName(*target),
                           " column: ", check.status().message());
  }
  return out;
}

}  // namespace lance::scan::filter
