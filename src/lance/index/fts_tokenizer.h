// The text analysis of pylance 14's full-text (INVERTED) indices: the
// parameters stored with an index (metadata.lance's "params" JSON, the
// reference's InvertedIndexParams in rust/lance-index/src/scalar/inverted/
// tokenizer.rs) and the tokenizer they build. The chain is the reference's:
// base tokenizer, then RemoveLongFilter(max_token_length), LowerCaser,
// Stemmer(language), StopWordFilter, AsciiFoldingFilter. The character
// facts (what is alphanumeric, lower case, folded) are pylance's own, read
// from it by scripts/gen_fts_tables.py.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "lance/full_text.h"
#include "lance/status.h"

namespace lance::index {

using lance::FtsToken;
using lance::InvertedIndexParams;

class FtsTokenizer {
 public:
  /// Fails (naming `context`) unless the parameters are supported.
  static Result<FtsTokenizer> Make(const InvertedIndexParams& params, const std::string& context);

  /// Appends the tokens of `text` to `out`.
  void Tokenize(std::string_view text, std::vector<FtsToken>* out) const;
  std::vector<FtsToken> Tokenize(std::string_view text) const {
    std::vector<FtsToken> out;
    Tokenize(text, &out);
    return out;
  }

  /// Tokenize in two steps, for callers that remember what each base token
  /// became (the filters are a pure function of it): the base tokenizer's
  /// tokens (views into `text`) with their positions, which count the
  /// tokens the filters drop; then Filter on each.
  void Split(std::string_view text, std::vector<std::pair<std::string_view, uint32_t>>* out) const;
  /// The filter chain on one base token; false when a filter drops it.
  bool Filter(std::string* token) const;

  const InvertedIndexParams& params() const { return params_; }

 private:
  enum class Base { kSimple, kWhitespace, kRaw, kNgram };
  explicit FtsTokenizer(InvertedIndexParams params);
  template <typename Emit>
  void ForEachBaseToken(std::string_view text, Emit&& emit) const;

  InvertedIndexParams params_;
  Base base_ = Base::kSimple;
  std::unordered_set<std::string> stop_words_;
};

/// pylance 14's English stop words (the words its StopWordFilter removes).
const std::vector<std::string_view>& EnglishStopWords();

}  // namespace lance::index
