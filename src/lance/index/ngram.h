// The tokens of pylance 14's NGRAM index (rust/lance-index/src/scalar/ngram.rs):
// the text lowercased and ASCII-folded, then every window of three characters
// made only of ASCII letters and digits, each window as one u32:
//   code(c) = c - '0' + 1 for digits (1..10), c - 'a' + 11 for letters (11..36)
//   token   = code(c0) * 37^2 + code(c1) * 37 + code(c2)
// Token 0 (no window encodes to it) holds the rows whose value is null.
//
// lance-cpp folds ASCII and U+0080..U+017F (Latin-1 and Latin Extended-A:
// é to e, ß to ss, ...) as pylance does. A window holding a character past
// those is skipped and reported: pylance folds more of them by a table
// lance-cpp does not carry. For a query that only drops necessary trigrams
// (a superset of the rows, rechecked); a build refuses such text.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace lance::index::ngram {

inline constexpr size_t kLength = 3;
inline constexpr uint32_t kNullToken = 0;

/// Appends the tokens of `text` to `out` (in text order, repeats kept) and
/// sets `*unknown` when some character is past U+017F (bytes of invalid
/// UTF-8 count as such).
void Tokenize(std::string_view text, std::vector<uint32_t>* out, bool* unknown);

/// The number of UTF-8 characters of `text` (pylance counts characters when
/// it asks whether a needle is long enough).
size_t CharCount(std::string_view text);

/// A token as its three characters ("abc"); for messages and tests.
std::string TokenText(uint32_t token);

}  // namespace lance::index::ngram
