// Recursive-descent (precedence climbing) parser of the SQL filter language.
//
// Precedences are sqlparser's, which Lance parses filters with, so that odd inputs
// group the same way: OR 5 < AND 10 < NOT 15 < IS 17 < LIKE 19 < comparisons, IN,
// BETWEEN 20 < + - 30 < * / % || and unary minus 40. Binary operators associate to
// the left; `a = 1 = true` is `(a = 1) = true`.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "lance/scan/filter_ast.h"

namespace lance::scan::filter {

bool IsComparison(BinaryOp op) {
  switch (op) {
    case BinaryOp::kEq:
    case BinaryOp::kNotEq:
    case BinaryOp::kLt:
    case BinaryOp::kLtEq:
    case BinaryOp::kGt:
    case BinaryOp::kGtEq:
      return true;
    default:
      return false;
  }
}

bool IsArithmetic(BinaryOp op) {
  switch (op) {
    case BinaryOp::kPlus:
    case BinaryOp::kMinus:
    case BinaryOp::kMultiply:
    case BinaryOp::kDivide:
    case BinaryOp::kModulo:
      return true;
    default:
      return false;
  }
}

std::string_view OpSymbol(BinaryOp op) {
  switch (op) {
    case BinaryOp::kEq: return "=";
    case BinaryOp::kNotEq: return "!=";
    case BinaryOp::kLt: return "<";
    case BinaryOp::kLtEq: return "<=";
    case BinaryOp::kGt: return ">";
    case BinaryOp::kGtEq: return ">=";
    case BinaryOp::kPlus: return "+";
    case BinaryOp::kMinus: return "-";
    case BinaryOp::kMultiply: return "*";
    case BinaryOp::kDivide: return "/";
    case BinaryOp::kModulo: return "%";
    case BinaryOp::kConcat: return "||";
  }
  return "?";
}

namespace {

constexpr int kPrecOr = 5;
constexpr int kPrecAnd = 10;
constexpr int kPrecNot = 15;
constexpr int kPrecIs = 17;
constexpr int kPrecLike = 19;
constexpr int kPrecCompare = 20;
constexpr int kPrecAdd = 30;
constexpr int kPrecMul = 40;

// A number token the way Lance reads it: an i64 if it is one, else a u64, else f64.
void ReadNumber(const std::string& text, Node* node) {
  const char* begin = text.data();
  const char* end = begin + text.size();
  const bool integral = std::all_of(text.begin(), text.end(), [](char c) {
    return c >= '0' && c <= '9';
  });
  if (integral) {
    int64_t i = 0;
    auto [p, ec] = std::from_chars(begin, end, i);
    if (ec == std::errc() && p == end) {
      node->literal = LiteralKind::kInt64;
      node->i64 = i;
      return;
    }
    uint64_t u = 0;
    auto [p2, ec2] = std::from_chars(begin, end, u);
    if (ec2 == std::errc() && p2 == end) {
      node->literal = LiteralKind::kUInt64;
      node->u64 = u;
      return;
    }
  }
  node->literal = LiteralKind::kFloat64;
  double d = 0;
  auto [p, ec] = std::from_chars(begin, end, d);
  if (ec == std::errc::result_out_of_range) {
    d = std::strtod(text.c_str(), nullptr);  // inf or 0, as Rust's parse gives
  }
  node->f64 = d;
}

class Parser {
 public:
  Parser(const std::vector<Token>& tokens, const ParseLimits& limits, SyntaxError* error)
      : tokens_(tokens), limits_(limits), error_(error) {}

  NodePtr ParseAll() {
    NodePtr expr = ParseExpr(0);
    if (!expr) return nullptr;
    if (Peek().kind != TokenKind::kEnd) {
      if (IsKeyword(Peek(), "NOT")) {
        return Fail(Peek().pos, "unexpected NOT (expected IN, BETWEEN, LIKE or ILIKE after it)");
      }
      return Fail(Peek().pos, "unexpected " + DescribeToken(Peek()) +
                                  ", expected an operator or the end of the filter");
    }
    return expr;
  }

 private:
  const Token& Peek(size_t ahead = 0) const {
    return tokens_[std::min(index_ + ahead, tokens_.size() - 1)];
  }
  const Token& Next() {
    const Token& t = Peek();
    if (index_ < tokens_.size() - 1) ++index_;
    return t;
  }

  NodePtr Fail(size_t pos, std::string message) {
    if (!failed_) {
      failed_ = true;
      error_->pos = pos;
      error_->message = std::move(message);
    }
    return nullptr;
  }

  // Gives `node` its height; fails if the tree got too tall.
  NodePtr Finish(NodePtr node) {
    int h = 0;
    for (const auto& child : node->children) h = std::max(h, child->height);
    int extra = 1;
    if (node->kind == NodeKind::kLogical) {
      // AND/OR chains are evaluated as balanced trees.
      size_t n = node->children.size();
      while (n > 1) {
        n = (n + 1) / 2;
        ++extra;
      }
    }
    node->height = h + extra;
    if (node->height > limits_.height_limit) {
      return Fail(node->pos, "the filter is too deeply nested (more than " +
                                 std::to_string(limits_.height_limit) + " levels)");
    }
    return node;
  }

  bool Expect(TokenKind kind, const char* what) {
    if (Peek().kind == kind) {
      Next();
      return true;
    }
    Fail(Peek().pos, std::string("expected ") + what + ", found " + DescribeToken(Peek()));
    return false;
  }

  int NextPrecedence() const {
    const Token& t = Peek();
    switch (t.kind) {
      case TokenKind::kEq:
      case TokenKind::kNotEq:
      case TokenKind::kLt:
      case TokenKind::kLtEq:
      case TokenKind::kGt:
      case TokenKind::kGtEq:
        return kPrecCompare;
      case TokenKind::kPlus:
      case TokenKind::kMinus:
        return kPrecAdd;
      case TokenKind::kStar:
      case TokenKind::kSlash:
      case TokenKind::kPercent:
      case TokenKind::kConcat:
        return kPrecMul;
      case TokenKind::kIdent:
        if (IsKeyword(t, "OR")) return kPrecOr;
        if (IsKeyword(t, "AND")) return kPrecAnd;
        if (IsKeyword(t, "IS")) return kPrecIs;
        if (IsKeyword(t, "LIKE") || IsKeyword(t, "ILIKE") || IsKeyword(t, "SIMILAR")) {
          return kPrecLike;
        }
        if (IsKeyword(t, "IN") || IsKeyword(t, "BETWEEN")) return kPrecCompare;
        if (IsKeyword(t, "NOT")) {
          const Token& n = Peek(1);
          if (IsKeyword(n, "IN") || IsKeyword(n, "BETWEEN")) return kPrecCompare;
          if (IsKeyword(n, "LIKE") || IsKeyword(n, "ILIKE") || IsKeyword(n, "SIMILAR")) {
            return kPrecLike;
          }
        }
        return 0;
      default:
        return 0;
    }
  }

  NodePtr ParseExpr(int min_precedence) {
    if (++depth_ > limits_.depth_limit) {
      return Fail(Peek().pos, "the filter is too deeply nested (more than " +
                                  std::to_string(limits_.depth_limit) + " levels)");
    }
    NodePtr left = ParsePrefix();
    while (left) {
      const int precedence = NextPrecedence();
      if (precedence <= min_precedence) break;
      left = ParseInfix(std::move(left), precedence);
    }
    --depth_;
    return left;
  }

  NodePtr MakeLiteral(LiteralKind kind, size_t pos) {
    auto node = std::make_unique<Node>(NodeKind::kLiteral, pos);
    node->literal = kind;
    return node;
  }

  NodePtr ParsePrefix() {
    const Token& t = Peek();
    switch (t.kind) {
      case TokenKind::kNumber: {
        Next();
        auto node = MakeLiteral(LiteralKind::kNull, t.pos);
        ReadNumber(t.text, node.get());
        node->text = t.text;
        node->bare_number = true;
        return Finish(std::move(node));
      }
      case TokenKind::kString:
      case TokenKind::kDoubleString: {
        Next();
        auto node = MakeLiteral(LiteralKind::kString, t.pos);
        node->text = t.text;
        return Finish(std::move(node));
      }
      case TokenKind::kHexString: {
        Next();
        auto node = MakeLiteral(LiteralKind::kBinary, t.pos);
        auto nibble = [](char c) -> int {
          if (c >= '0' && c <= '9') return c - '0';
          if (c >= 'a' && c <= 'f') return c - 'a' + 10;
          if (c >= 'A' && c <= 'F') return c - 'A' + 10;
          return -1;
        };
        // As Lance's parser: an odd count has a leading 0 digit, and a
        // literal with anything but hex digits is NULL.
        const std::string digits = (t.text.size() % 2 ? "0" : "") + t.text;
        for (size_t k = 0; k < digits.size(); k += 2) {
          const int hi = nibble(digits[k]), lo = nibble(digits[k + 1]);
          if (hi < 0 || lo < 0) return Finish(MakeLiteral(LiteralKind::kNull, t.pos));
          node->text.push_back(static_cast<char>(hi * 16 + lo));
        }
        return Finish(std::move(node));
      }
      case TokenKind::kLParen: {
        Next();
        NodePtr inner = ParseExpr(0);
        if (!inner) return nullptr;
        if (!Expect(TokenKind::kRParen, "')'")) return nullptr;
        inner->bare_number = false;
        return inner;
      }
      case TokenKind::kMinus: {
        Next();
        NodePtr operand = ParseExpr(kPrecMul);
        if (!operand) return nullptr;
        if (operand->kind == NodeKind::kLiteral && operand->bare_number) {
          // Lance folds the sign into the number: an i64 stays one, anything else
          // becomes a negative f64.
          if (operand->literal == LiteralKind::kInt64) {
            operand->i64 = -operand->i64;
          } else {
            if (operand->literal == LiteralKind::kUInt64) {
              operand->f64 = static_cast<double>(operand->u64);
            }
            operand->literal = LiteralKind::kFloat64;
            operand->f64 = -operand->f64;
          }
          operand->bare_number = false;
          operand->pos = t.pos;
          operand->text = "-" + operand->text;
          return operand;
        }
        auto node = std::make_unique<Node>(NodeKind::kNegate, t.pos);
        node->children.push_back(std::move(operand));
        return Finish(std::move(node));
      }
      case TokenKind::kPlus:
        return Fail(t.pos, "unary '+' is not supported");
      case TokenKind::kLBracket:
        return ParseList();
      case TokenKind::kQuotedIdent:
        return ParseColumn();
      case TokenKind::kIdent:
        return ParseWord();
      case TokenKind::kEnd:
        return Fail(t.pos, "expected an expression");
      default:
        return Fail(t.pos, "expected an expression, found " + DescribeToken(t));
    }
  }

  NodePtr ParseWord() {
    const Token& t = Peek();
    if (IsKeyword(t, "NOT")) {
      Next();
      NodePtr operand = ParseExpr(kPrecNot);
      if (!operand) return nullptr;
      auto node = std::make_unique<Node>(NodeKind::kNot, t.pos);
      node->children.push_back(std::move(operand));
      return Finish(std::move(node));
    }
    if (IsKeyword(t, "TRUE") || IsKeyword(t, "FALSE")) {
      Next();
      auto node = MakeLiteral(LiteralKind::kBool, t.pos);
      node->boolean = IsKeyword(t, "TRUE");
      return Finish(std::move(node));
    }
    if (IsKeyword(t, "NULL")) {
      Next();
      return Finish(MakeLiteral(LiteralKind::kNull, t.pos));
    }
    if (IsKeyword(t, "DATE") && Peek(1).kind == TokenKind::kString) {
      Next();
      auto node = std::make_unique<Node>(NodeKind::kTypedString, t.pos);
      node->typed = TypedStringKind::kDate;
      node->text = Next().text;
      return Finish(std::move(node));
    }
    if (IsKeyword(t, "TIMESTAMP") || IsKeyword(t, "DATETIME")) {
      int precision = 6;
      size_t ahead = 1;
      if (Peek(1).kind == TokenKind::kLParen && Peek(2).kind == TokenKind::kNumber &&
          Peek(3).kind == TokenKind::kRParen) {
        const std::string& p = Peek(2).text;
        if (p != "0" && p != "3" && p != "6" && p != "9") {
          return Fail(Peek(2).pos, "unsupported timestamp precision " + p +
                                       " (use 0, 3, 6 or 9)");
        }
        precision = p[0] - '0';
        ahead = 4;
      }
      if (IsKeyword(Peek(ahead), "WITH") || IsKeyword(Peek(ahead), "WITHOUT")) {
        return Fail(Peek(ahead).pos, "time zones are not supported in timestamp literals");
      }
      if (Peek(ahead).kind == TokenKind::kString) {
        for (size_t k = 0; k < ahead; ++k) Next();
        auto node = std::make_unique<Node>(NodeKind::kTypedString, t.pos);
        node->typed = TypedStringKind::kTimestamp;
        node->precision = precision;
        node->text = Next().text;
        return Finish(std::move(node));
      }
    }
    for (const char* unsupported : {"CAST", "TRY_CAST", "CASE", "INTERVAL", "EXISTS",
                                    "SELECT", "ARRAY"}) {
      if (IsKeyword(t, unsupported) &&
          (Peek(1).kind == TokenKind::kLParen || Peek(1).kind == TokenKind::kString ||
           Peek(1).kind == TokenKind::kIdent || Peek(1).kind == TokenKind::kNumber)) {
        return Fail(t.pos, std::string(unsupported) + " is not supported in filters");
      }
    }
    for (const char* infix : {"AND", "OR", "IS", "IN", "LIKE", "ILIKE", "BETWEEN", "ESCAPE"}) {
      if (IsKeyword(t, infix)) {
        return Fail(t.pos, "expected an expression, found " + std::string(infix));
      }
    }
    return ParseColumn();
  }

  // name(.name | ['name'])*
  NodePtr ParseColumn() {
    const Token& first = Next();
    auto node = std::make_unique<Node>(NodeKind::kColumn, first.pos);
    node->path.push_back(first.text);
    if (first.kind == TokenKind::kIdent && Peek().kind == TokenKind::kLParen) {
      return ParseCall(first);
    }
    while (true) {
      if (Peek().kind == TokenKind::kDot) {
        const Token& dot = Next();
        const Token& name = Peek();
        if (name.kind != TokenKind::kIdent && name.kind != TokenKind::kQuotedIdent) {
          return Fail(name.kind == TokenKind::kEnd ? dot.pos + 1 : name.pos,
                      "expected a field name after '.'");
        }
        node->path.push_back(Next().text);
      } else if (Peek().kind == TokenKind::kLBracket) {
        const Token& open = Next();
        const Token& key = Peek();
        if (key.kind != TokenKind::kString && key.kind != TokenKind::kDoubleString) {
          return Fail(key.pos, "only ['field name'] subscripts are supported");
        }
        node->path.push_back(Next().text);
        if (!Expect(TokenKind::kRBracket, "']'")) return nullptr;
        (void)open;
      } else {
        break;
      }
    }
    // DataFusion plans function calls itself, without Lance's case-insensitive
    // column lookup: names inside a call's arguments match exactly.
    node->exact = call_depth_ > 0 ||
                  (node->path.size() == 1 && first.kind == TokenKind::kQuotedIdent);
    return Finish(std::move(node));
  }

  // Zero or more comma-separated expressions as children of `node`, up to
  // (not including) a `close` token; false when one fails to parse.
  bool ParseItems(Node* node, TokenKind close) {
    if (Peek().kind == close) return true;
    while (true) {
      NodePtr item = ParseExpr(0);
      if (!item) return false;
      node->children.push_back(std::move(item));
      if (Peek().kind != TokenKind::kComma) return true;
      Next();
    }
  }

  // name(arg, ...); the name token is consumed, '(' is next.
  NodePtr ParseCall(const Token& name) {
    auto node = std::make_unique<Node>(NodeKind::kCall, name.pos);
    node->text = name.text;
    for (auto& c : node->text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    Next();  // '('
    ++call_depth_;
    if (!ParseItems(node.get(), TokenKind::kRParen)) return nullptr;
    --call_depth_;
    if (!Expect(TokenKind::kRParen, "',' or ')' in the argument list")) return nullptr;
    return Finish(std::move(node));
  }

  // [item, ...]
  NodePtr ParseList() {
    const Token& open = Next();
    auto node = std::make_unique<Node>(NodeKind::kList, open.pos);
    if (!ParseItems(node.get(), TokenKind::kRBracket)) return nullptr;
    if (!Expect(TokenKind::kRBracket, "',' or ']' in the list")) return nullptr;
    return Finish(std::move(node));
  }

  NodePtr Binary(BinaryOp op, size_t pos, NodePtr left, NodePtr right) {
    auto node = std::make_unique<Node>(NodeKind::kBinary, pos);
    node->op = op;
    node->children.push_back(std::move(left));
    node->children.push_back(std::move(right));
    return Finish(std::move(node));
  }

  NodePtr ParseInfix(NodePtr left, int precedence) {
    const Token& t = Next();
    BinaryOp op;
    switch (t.kind) {
      case TokenKind::kEq: op = BinaryOp::kEq; break;
      case TokenKind::kNotEq: op = BinaryOp::kNotEq; break;
      case TokenKind::kLt: op = BinaryOp::kLt; break;
      case TokenKind::kLtEq: op = BinaryOp::kLtEq; break;
      case TokenKind::kGt: op = BinaryOp::kGt; break;
      case TokenKind::kGtEq: op = BinaryOp::kGtEq; break;
      case TokenKind::kPlus: op = BinaryOp::kPlus; break;
      case TokenKind::kMinus: op = BinaryOp::kMinus; break;
      case TokenKind::kStar: op = BinaryOp::kMultiply; break;
      case TokenKind::kSlash: op = BinaryOp::kDivide; break;
      case TokenKind::kPercent: op = BinaryOp::kModulo; break;
      case TokenKind::kConcat: op = BinaryOp::kConcat; break;
      default:
        return ParseKeywordInfix(std::move(left), t, precedence);
    }
    NodePtr right = ParseExpr(precedence);
    if (!right) return nullptr;
    return Binary(op, t.pos, std::move(left), std::move(right));
  }

  NodePtr ParseKeywordInfix(NodePtr left, const Token& t, int precedence) {
    if (IsKeyword(t, "AND") || IsKeyword(t, "OR")) {
      const bool is_and = IsKeyword(t, "AND");
      NodePtr right = ParseExpr(precedence);
      if (!right) return nullptr;
      NodePtr node;
      if (left->kind == NodeKind::kLogical && left->is_and == is_and) {
        node = std::move(left);
      } else {
        node = std::make_unique<Node>(NodeKind::kLogical, t.pos);
        node->is_and = is_and;
        node->children.push_back(std::move(left));
      }
      if (right->kind == NodeKind::kLogical && right->is_and == is_and) {
        for (auto& child : right->children) node->children.push_back(std::move(child));
      } else {
        node->children.push_back(std::move(right));
      }
      return Finish(std::move(node));
    }
    if (IsKeyword(t, "IS")) return ParseIs(std::move(left), t);
    bool negated = false;
    const Token* op = &t;
    if (IsKeyword(t, "NOT")) {
      negated = true;
      op = &Next();
    }
    if (IsKeyword(*op, "IN")) return ParseIn(std::move(left), t.pos, negated);
    if (IsKeyword(*op, "BETWEEN")) return ParseBetween(std::move(left), t.pos, negated);
    if (IsKeyword(*op, "LIKE") || IsKeyword(*op, "ILIKE")) {
      return ParseLike(std::move(left), t.pos, negated, IsKeyword(*op, "ILIKE"));
    }
    if (IsKeyword(*op, "SIMILAR")) return Fail(op->pos, "SIMILAR TO is not supported");
    return Fail(t.pos, "unexpected " + DescribeToken(t));
  }

  NodePtr ParseIs(NodePtr left, const Token& is) {
    bool negated = false;
    if (IsKeyword(Peek(), "NOT")) {
      Next();
      negated = true;
    }
    const Token& what = Peek();
    IsKind kind;
    if (IsKeyword(what, "NULL")) {
      kind = negated ? IsKind::kNotNull : IsKind::kNull;
    } else if (IsKeyword(what, "TRUE")) {
      kind = negated ? IsKind::kNotTrue : IsKind::kTrue;
    } else if (IsKeyword(what, "FALSE")) {
      kind = negated ? IsKind::kNotFalse : IsKind::kFalse;
    } else if (IsKeyword(what, "UNKNOWN") || IsKeyword(what, "DISTINCT")) {
      return Fail(what.pos, "IS " + std::string(negated ? "NOT " : "") + what.text +
                                " is not supported");
    } else {
      return Fail(what.pos, "expected NULL, TRUE or FALSE after IS" +
                                std::string(negated ? " NOT" : "") + ", found " +
                                DescribeToken(what));
    }
    Next();
    auto node = std::make_unique<Node>(NodeKind::kIs, is.pos);
    node->is = kind;
    node->children.push_back(std::move(left));
    return Finish(std::move(node));
  }

  NodePtr ParseIn(NodePtr left, size_t pos, bool negated) {
    if (!Expect(TokenKind::kLParen, "'(' after IN")) return nullptr;
    auto node = std::make_unique<Node>(NodeKind::kIn, pos);
    node->negated = negated;
    node->children.push_back(std::move(left));
    while (true) {
      if (IsKeyword(Peek(), "SELECT")) return Fail(Peek().pos, "subqueries are not supported");
      NodePtr item = ParseExpr(0);
      if (!item) return nullptr;
      node->children.push_back(std::move(item));
      if (Peek().kind == TokenKind::kComma) {
        Next();
        continue;
      }
      if (!Expect(TokenKind::kRParen, "',' or ')' in the IN list")) return nullptr;
      break;
    }
    return Finish(std::move(node));
  }

  NodePtr ParseBetween(NodePtr left, size_t pos, bool negated) {
    NodePtr low = ParseExpr(kPrecCompare);
    if (!low) return nullptr;
    if (!IsKeyword(Peek(), "AND")) {
      return Fail(Peek().pos, "expected AND in BETWEEN, found " + DescribeToken(Peek()));
    }
    Next();
    NodePtr high = ParseExpr(kPrecCompare);
    if (!high) return nullptr;
    auto node = std::make_unique<Node>(NodeKind::kBetween, pos);
    node->negated = negated;
    node->children.push_back(std::move(left));
    node->children.push_back(std::move(low));
    node->children.push_back(std::move(high));
    return Finish(std::move(node));
  }

  NodePtr ParseLike(NodePtr left, size_t pos, bool negated, bool case_insensitive) {
    NodePtr pattern = ParseExpr(kPrecLike);
    if (!pattern) return nullptr;
    auto node = std::make_unique<Node>(NodeKind::kLike, pos);
    node->negated = negated;
    node->case_insensitive = case_insensitive;
    if (IsKeyword(Peek(), "ESCAPE")) {
      Next();
      const Token& esc = Peek();
      if (esc.kind != TokenKind::kString) {
        return Fail(esc.pos, "expected a string after ESCAPE, found " + DescribeToken(esc));
      }
      // One character, which may take several UTF-8 bytes.
      const std::string& e = esc.text;
      size_t len = e.empty() ? 0 : 1;
      while (len < e.size() && (static_cast<unsigned char>(e[len]) & 0xC0) == 0x80) ++len;
      if (e.empty() || len != e.size()) {
        return Fail(esc.pos, "ESCAPE takes a single character");
      }
      // DataFusion (pylance's engine) runs LIKE with the backslash escape only.
      if (e != "\\") {
        return Fail(esc.pos, "LIKE supports only the backslash (\\) as ESCAPE character");
      }
      node->escape = e;
      Next();
    }
    node->children.push_back(std::move(left));
    node->children.push_back(std::move(pattern));
    return Finish(std::move(node));
  }

  const std::vector<Token>& tokens_;
  ParseLimits limits_;
  SyntaxError* error_;
  size_t index_ = 0;
  int depth_ = 0;
  int call_depth_ = 0;  // > 0 while parsing a function call's arguments
  bool failed_ = false;
};

}  // namespace

NodePtr ParseTokens(const std::vector<Token>& tokens, const ParseLimits& limits,
                    SyntaxError* error) {
  Parser parser(tokens, limits, error);
  return parser.ParseAll();
}

}  // namespace lance::scan::filter
