// Tokenizer of the SQL filter language: sqlparser's generic dialect as Lance uses it
// ('' escapes inside strings, no backslash escapes, "x" is a string, `x` a name).
#include <cctype>
#include <string>
#include <string_view>
#include <vector>

#include "lance/scan/filter_ast.h"

namespace lance::scan::filter {
namespace {

bool IsIdentStart(unsigned char c) {
  return std::isalpha(c) || c == '_' || c == '#' || c == '@' || c >= 0x80;
}

bool IsIdentPart(unsigned char c) {
  return IsIdentStart(c) || std::isdigit(c) || c == '$';
}

bool IsSpace(unsigned char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

// Length of the valid UTF-8 sequence starting at s[i], or 0 if it is not valid.
size_t Utf8SequenceLength(std::string_view s, size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) return 1;
  size_t n;
  uint32_t cp;
  if ((c & 0xE0) == 0xC0) {
    n = 2;
    cp = c & 0x1F;
  } else if ((c & 0xF0) == 0xE0) {
    n = 3;
    cp = c & 0x0F;
  } else if ((c & 0xF8) == 0xF0) {
    n = 4;
    cp = c & 0x07;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    const auto cc = static_cast<unsigned char>(s[i + k]);
    if ((cc & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (cc & 0x3F);
  }
  // Overlong forms, surrogates and code points past U+10FFFF are invalid.
  if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
      (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) {
    return 0;
  }
  return n;
}

}  // namespace

Result<std::vector<Token>> Tokenize(std::string_view sql, size_t* error_pos) {
  auto fail = [&](size_t pos, std::string message) -> Status {
    *error_pos = pos;
    return Status::Invalid(std::move(message));
  };

  for (size_t i = 0; i < sql.size();) {
    const size_t n = Utf8SequenceLength(sql, i);
    if (n == 0) return fail(i, "the filter is not valid UTF-8");
    if (n == 1 && sql[i] == '\0') return fail(i, "unexpected NUL character");
    i += n;
  }

  std::vector<Token> tokens;
  size_t i = 0;
  const size_t size = sql.size();
  auto at = [&](size_t k) -> unsigned char {
    return k < size ? static_cast<unsigned char>(sql[k]) : 0;
  };
  auto push = [&](TokenKind kind, size_t pos, std::string text = {}) {
    tokens.push_back(Token{kind, pos, std::move(text)});
  };

  while (i < size) {
    const unsigned char c = at(i);
    const size_t start = i;
    if (IsSpace(c)) {
      ++i;
      continue;
    }
    if (c == '-' && at(i + 1) == '-') {  // -- comment to the end of the line
      while (i < size && sql[i] != '\n') ++i;
      continue;
    }
    if (c == '/' && at(i + 1) == '*') {  // /* comment */, nesting like sqlparser
      int depth = 1;
      i += 2;
      while (depth > 0) {
        if (i >= size) return fail(start, "unterminated /* comment");
        if (sql[i] == '/' && at(i + 1) == '*') {
          ++depth;
          i += 2;
        } else if (sql[i] == '*' && at(i + 1) == '/') {
          --depth;
          i += 2;
        } else {
          ++i;
        }
      }
      continue;
    }
    // X'...' (either case) is a binary literal, as in DataFusion's SQL.
    const bool hex = (c == 'x' || c == 'X') && at(i + 1) == '\'';
    if (hex) ++i;
    const unsigned char q = hex ? '\'' : c;  // the quote
    if (hex || c == '\'' || c == '"' || c == '`') {
      // Quoted: the quote character doubled stands for itself.
      std::string text;
      ++i;
      while (true) {
        if (i >= size) {
          const char* what = c == '`' ? "unterminated quoted name"
                                      : "unterminated string literal";
          return fail(start, what);
        }
        if (at(i) == q) {
          if (at(i + 1) == q) {
            text.push_back(static_cast<char>(q));
            i += 2;
            continue;
          }
          ++i;
          break;
        }
        text.push_back(sql[i]);
        ++i;
      }
      const TokenKind kind = hex         ? TokenKind::kHexString
                             : c == '\'' ? TokenKind::kString
                             : c == '"' ? TokenKind::kDoubleString
                                        : TokenKind::kQuotedIdent;
      push(kind, start, std::move(text));
      continue;
    }
    const bool prev_is_name =
        !tokens.empty() &&
        (tokens.back().kind == TokenKind::kIdent ||
         tokens.back().kind == TokenKind::kQuotedIdent ||
         tokens.back().kind == TokenKind::kRParen ||
         tokens.back().kind == TokenKind::kRBracket);
    if (std::isdigit(c) || (c == '.' && std::isdigit(at(i + 1)) && !prev_is_name)) {
      while (std::isdigit(at(i))) ++i;
      if (at(i) == '.') {
        ++i;
        while (std::isdigit(at(i))) ++i;
      }
      if (at(i) == 'e' || at(i) == 'E') {
        size_t k = i + 1;
        if (at(k) == '+' || at(k) == '-') ++k;
        if (std::isdigit(at(k))) {
          while (std::isdigit(at(k))) ++k;
          i = k;
        }
      }
      push(TokenKind::kNumber, start, std::string(sql.substr(start, i - start)));
      continue;
    }
    if (IsIdentStart(c)) {
      while (i < size && IsIdentPart(at(i))) ++i;
      push(TokenKind::kIdent, start, std::string(sql.substr(start, i - start)));
      continue;
    }
    auto two = [&](char a, char b) { return c == static_cast<unsigned char>(a) && at(i + 1) == b; };
    if (two('=', '=')) {
      push(TokenKind::kEq, start);
      i += 2;
    } else if (two('!', '=') || two('<', '>')) {
      push(TokenKind::kNotEq, start);
      i += 2;
    } else if (two('<', '=')) {
      push(TokenKind::kLtEq, start);
      i += 2;
    } else if (two('>', '=')) {
      push(TokenKind::kGtEq, start);
      i += 2;
    } else if (two('|', '|')) {
      push(TokenKind::kConcat, start);
      i += 2;
    } else {
      TokenKind kind;
      switch (c) {
        case '(': kind = TokenKind::kLParen; break;
        case ')': kind = TokenKind::kRParen; break;
        case '[': kind = TokenKind::kLBracket; break;
        case ']': kind = TokenKind::kRBracket; break;
        case ',': kind = TokenKind::kComma; break;
        case '.': kind = TokenKind::kDot; break;
        case '=': kind = TokenKind::kEq; break;
        case '<': kind = TokenKind::kLt; break;
        case '>': kind = TokenKind::kGt; break;
        case '+': kind = TokenKind::kPlus; break;
        case '-': kind = TokenKind::kMinus; break;
        case '*': kind = TokenKind::kStar; break;
        case '/': kind = TokenKind::kSlash; break;
        case '%': kind = TokenKind::kPercent; break;
        default: {
          std::string shown = std::isprint(c) ? std::string("'") + static_cast<char>(c) + "'"
                                              : "byte " + std::to_string(c);
          return fail(start, "unexpected character " + shown);
        }
      }
      push(kind, start);
      ++i;
    }
  }
  push(TokenKind::kEnd, size);
  return tokens;
}

std::string DescribeToken(const Token& token) {
  auto clip = [](const std::string& s) {
    return s.size() > 40 ? s.substr(0, 40) + "..." : s;
  };
  switch (token.kind) {
    case TokenKind::kEnd: return "end of input";
    case TokenKind::kIdent: return "'" + clip(token.text) + "'";
    case TokenKind::kQuotedIdent: return "`" + clip(token.text) + "`";
    case TokenKind::kString: return "string '" + clip(token.text) + "'";
    case TokenKind::kDoubleString: return "string \"" + clip(token.text) + "\"";
    case TokenKind::kHexString: return "binary X'" + clip(token.text) + "'";
    case TokenKind::kNumber: return "number " + clip(token.text);
    case TokenKind::kLParen: return "'('";
    case TokenKind::kRParen: return "')'";
    case TokenKind::kLBracket: return "'['";
    case TokenKind::kRBracket: return "']'";
    case TokenKind::kComma: return "','";
    case TokenKind::kDot: return "'.'";
    case TokenKind::kEq: return "'='";
    case TokenKind::kNotEq: return "'!='";
    case TokenKind::kLt: return "'<'";
    case TokenKind::kLtEq: return "'<='";
    case TokenKind::kGt: return "'>'";
    case TokenKind::kGtEq: return "'>='";
    case TokenKind::kPlus: return "'+'";
    case TokenKind::kMinus: return "'-'";
    case TokenKind::kStar: return "'*'";
    case TokenKind::kSlash: return "'/'";
    case TokenKind::kPercent: return "'%'";
    case TokenKind::kConcat: return "'||'";
  }
  return "token";
}

bool IsKeyword(const Token& token, std::string_view keyword) {
  if (token.kind != TokenKind::kIdent || token.text.size() != keyword.size()) return false;
  for (size_t i = 0; i < keyword.size(); ++i) {
    if (std::toupper(static_cast<unsigned char>(token.text[i])) !=
        static_cast<unsigned char>(keyword[i])) {
      return false;
    }
  }
  return true;
}

}  // namespace lance::scan::filter
