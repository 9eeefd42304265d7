// ParseFilter: tokenize, parse, type; errors as `filter "<sql>" at <pos>: <what>`.
#include "lance/scan/filter_parser.h"

#include <cstdio>
#include <string>
#include <unordered_set>

#include <arrow/type.h>
#include <arrow/util/string.h>

#include "lance/scan/filter_ast.h"
#include "lance/scan/filter_binder.h"

namespace lance::scan {
namespace {

namespace cp = arrow::compute;

// The filter as shown in an error: one line, at most ~200 characters.
std::string Shown(std::string_view sql) {
  constexpr size_t kMax = 200;
  std::string out;
  for (size_t i = 0; i < sql.size() && i < kMax; ++i) {
    const auto c = static_cast<unsigned char>(sql[i]);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  if (sql.size() > kMax) {
    // Do not cut a UTF-8 sequence in half.
    while (!out.empty() && (static_cast<unsigned char>(out.back()) & 0xC0) == 0x80) {
      out.pop_back();
    }
    if (!out.empty() && static_cast<unsigned char>(out.back()) >= 0xC0) out.pop_back();
    out += "...";
  }
  return out;
}

// Messages from Arrow can span lines; errors here are one line.
std::string OneLine(const std::string& message) {
  std::string out;
  bool in_break = false;
  for (char c : message) {
    if (c == '\n' || c == '\r') {
      in_break = true;
      continue;
    }
    if (in_break) {
      while (!out.empty() && out.back() == ' ') out.pop_back();
      out += ' ';
      in_break = false;
      if (c == ' ') continue;
    }
    out.push_back(c);
  }
  return out;
}

Status FilterError(std::string_view sql, size_t pos, const std::string& message) {
  return Status::Invalid("filter \"", Shown(sql), "\" at ", pos, ": ", OneLine(message));
}

void CollectColumns(const cp::Expression& expr, std::vector<std::string>* out,
                    std::unordered_set<std::string>* seen) {
  if (const arrow::FieldRef* ref = expr.field_ref()) {
    const std::string* name = ref->name();
    if (!name && ref->nested_refs() && !ref->nested_refs()->empty()) {
      name = ref->nested_refs()->front().name();
    }
    if (name && seen->insert(*name).second) out->push_back(*name);
    return;
  }
  if (const cp::Expression::Call* call = expr.call()) {
    for (const auto& argument : call->arguments) CollectColumns(argument, out, seen);
  }
}

// Tokenizes and parses `sql`; `what` names it in the error for an empty one
// ("the filter", "the expression").
Result<filter::NodePtr> ParseTree(std::string_view sql, std::string_view what) {
  size_t pos = 0;
  auto tokens = filter::Tokenize(sql, &pos);
  if (!tokens.ok()) return FilterError(sql, pos, tokens.status().message());
  if (tokens->size() == 1) return FilterError(sql, tokens->front().pos, std::string(what) + " is empty");
  filter::SyntaxError syntax;
  filter::NodePtr root = filter::ParseTokens(*tokens, filter::ParseLimits{}, &syntax);
  if (!root) return FilterError(sql, syntax.pos, syntax.message);
  return root;
}

// A value expression's tree, bound and cast to `target` (null: its own type).
Result<cp::Expression> BindValueTree(std::string_view sql, filter::Node* root, const arrow::Schema& schema,
                                     const std::shared_ptr<arrow::DataType>& target) {
  size_t pos = 0;
  auto bound = filter::BindValue(root, schema, target, &pos);
  if (!bound.ok()) return FilterError(sql, pos, bound.status().message());
  return bound;
}

}  // namespace

Result<cp::Expression> ParseFilter(std::string_view sql, const arrow::Schema& schema) {
  LANCE_ASSIGN_OR_RAISE(filter::NodePtr root, ParseTree(sql, "the filter"));
  size_t pos = 0;
  auto bound = filter::BindFilter(root.get(), schema, &pos);
  if (!bound.ok()) return FilterError(sql, pos, bound.status().message());
  return bound;
}

Result<cp::Expression> ParseValue(std::string_view sql, const arrow::Schema& schema,
                                  const std::shared_ptr<arrow::DataType>& target) {
  LANCE_ASSIGN_OR_RAISE(filter::NodePtr root, ParseTree(sql, "the expression"));
  return BindValueTree(sql, root.get(), schema, target);
}

namespace {

bool Nullable(const filter::Node& node, const arrow::Schema& schema) {
  using K = filter::NodeKind;
  switch (node.kind) {
    case K::kColumn: {
      // Names resolve case-insensitively unless quoted; a path that does
      // not resolve here was refused by the binder already.
      std::shared_ptr<arrow::Field> field;
      for (const auto& f : schema.fields()) {
        if (node.exact ? f->name() == node.path[0] : arrow::internal::AsciiEqualsCaseInsensitive(f->name(), node.path[0])) {
          field = f;
          break;
        }
      }
      bool nullable = field == nullptr || field->nullable();
      for (size_t i = 1; field && i < node.path.size(); ++i) {
        field = field->type()->id() == arrow::Type::STRUCT ? static_cast<const arrow::StructType&>(*field->type()).GetFieldByName(node.path[i]) : nullptr;
        nullable = nullable || field == nullptr || field->nullable();
      }
      return nullable;
    }
    case K::kLiteral: return node.literal == filter::LiteralKind::kNull;
    case K::kTypedString: return false;
    case K::kIs: return false;
    default:
      for (const auto& child : node.children) {
        if (Nullable(*child, schema)) return true;
      }
      return false;
  }
}

}  // namespace

Result<NewColumnValue> ParseNewColumn(std::string_view sql, const arrow::Schema& schema) {
  LANCE_ASSIGN_OR_RAISE(filter::NodePtr root, ParseTree(sql, "the expression"));
  LANCE_ASSIGN_OR_RAISE(cp::Expression bound, BindValueTree(sql, root.get(), schema, nullptr));
  NewColumnValue out;
  auto expr = bound.Bind(schema);
  if (!expr.ok()) return FilterError(sql, root->pos, expr.status().message());
  out.expr = std::move(*expr);
  out.type = out.expr.type()->GetSharedPtr();
  out.nullable = Nullable(*root, schema);
  return out;
}

std::vector<std::string> FilterColumns(const cp::Expression& expr) {
  std::vector<std::string> out;
  std::unordered_set<std::string> seen;
  CollectColumns(expr, &out, &seen);
  return out;
}

}  // namespace lance::scan
