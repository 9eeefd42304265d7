// Tokens and syntax tree of the SQL filter language (see filter_parser.h).
// Internal to src/lance/scan/filter_*.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <arrow/type_fwd.h>

#include "lance/status.h"

namespace lance::scan::filter {

// ---------------------------------------------------------------- tokens

enum class TokenKind {
  kEnd,
  kIdent,         // unquoted word: an identifier or a keyword
  kQuotedIdent,   // `back quoted`
  kString,        // 'single quoted'
  kDoubleString,  // "double quoted" (a string literal in Lance, not an identifier)
  kHexString,     // X'0aff': a binary literal, its text the hex digits
  kNumber,        // 12, 1.5, .5, 1e10, 2.5E-3
  kLParen,
  kRParen,
  kLBracket,
  kRBracket,
  kComma,
  kDot,
  kEq,     // = or ==
  kNotEq,  // != or <>
  kLt,
  kLtEq,
  kGt,
  kGtEq,
  kPlus,
  kMinus,
  kStar,
  kSlash,
  kPercent,
  kConcat,  // ||
};

struct Token {
  TokenKind kind = TokenKind::kEnd;
  size_t pos = 0;    // byte offset of the first character
  std::string text;  // identifier / string contents (unescaped), number spelling
};

/// Splits `sql` into tokens, ending with one kEnd token. Comments and white space
/// are dropped. Errors (bad bytes, unterminated quotes or comments) carry the
/// offending position through `*error_pos`.
Result<std::vector<Token>> Tokenize(std::string_view sql, size_t* error_pos);

/// A short human description of a token for error messages ("'='", "end of input").
std::string DescribeToken(const Token& token);

/// Case-insensitive keyword test for an unquoted identifier token.
bool IsKeyword(const Token& token, std::string_view keyword);

// ---------------------------------------------------------------- syntax tree

enum class NodeKind {
  kColumn,       // a (possibly nested) column reference
  kLiteral,      // number, string, boolean, NULL
  kTypedString,  // DATE '...', TIMESTAMP '...'
  kNegate,       // unary minus on anything but a bare number
  kNot,          // NOT x
  kBinary,       // comparison, arithmetic, ||
  kLogical,      // AND / OR chain, flattened: children are the operands
  kIs,           // x IS [NOT] NULL / TRUE / FALSE
  kIn,           // children[0] [NOT] IN (children[1..])
  kBetween,      // children[0] [NOT] BETWEEN children[1] AND children[2]
  kLike,         // children[0] [NOT] [I]LIKE children[1] [ESCAPE 'c']
  kCall,         // text(children...): a function call; text is the name in lower case
  kList,         // [children...]: a list literal (only as a function argument)
};

enum class LiteralKind { kInt64, kUInt64, kFloat64, kString, kBinary, kBool, kNull };

enum class BinaryOp {
  kEq,
  kNotEq,
  kLt,
  kLtEq,
  kGt,
  kGtEq,
  kPlus,
  kMinus,
  kMultiply,
  kDivide,
  kModulo,
  kConcat,
};

enum class IsKind { kNull, kNotNull, kTrue, kNotTrue, kFalse, kNotFalse };

enum class TypedStringKind { kDate, kTimestamp };

bool IsComparison(BinaryOp op);
bool IsArithmetic(BinaryOp op);  // + - * / %
std::string_view OpSymbol(BinaryOp op);

struct Node {
  NodeKind kind;
  size_t pos = 0;  // where errors about this node point: its operator or first token

  // kColumn: path[0] is the top-level name, the rest are struct children.
  // `exact` is set for a lone back-quoted identifier, which Lance does not match
  // case-insensitively.
  std::vector<std::string> path;
  bool exact = false;

  // kLiteral
  LiteralKind literal = LiteralKind::kNull;
  int64_t i64 = 0;
  uint64_t u64 = 0;
  double f64 = 0;
  bool boolean = false;
  std::string text;  // kLiteral string value; kTypedString contents; kCall name
  bool bare_number = false;  // a number token as written, without sign or parens

  // kTypedString
  TypedStringKind typed = TypedStringKind::kDate;
  int precision = 6;  // TIMESTAMP(p): 0, 3, 6 or 9

  // kBinary
  BinaryOp op = BinaryOp::kEq;
  // kLogical
  bool is_and = true;
  // kIs
  IsKind is = IsKind::kNull;
  // kIn, kBetween, kLike
  bool negated = false;
  // kLike
  bool case_insensitive = false;
  std::string escape = "\\";

  std::vector<std::unique_ptr<Node>> children;

  // Height of the subtree (a leaf is 1); bounded by the parser so that the
  // recursive passes and Arrow's own expression recursion stay shallow.
  int height = 1;

  // Set by the Lance literal-resolution pass: the type this literal must take.
  std::shared_ptr<arrow::DataType> coerce_to;

  explicit Node(NodeKind k, size_t p) : kind(k), pos(p) {}
};

using NodePtr = std::unique_ptr<Node>;

/// Parses tokens into a tree. `depth_limit` bounds nesting (parentheses, unary
/// operators, operands) and `height_limit` the height of the resulting tree.
struct ParseLimits {
  int depth_limit = 256;
  int height_limit = 512;
};

struct SyntaxError {
  size_t pos = 0;
  std::string message;
};

/// Returns the tree, or fills `*error` and returns null.
NodePtr ParseTokens(const std::vector<Token>& tokens, const ParseLimits& limits,
                    SyntaxError* error);

}  // namespace lance::scan::filter
