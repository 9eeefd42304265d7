// Full-text search on an opened Dataset, over pylance's INVERTED indices:
// the tokenizer parameters an index is built with (pylance's
// create_scalar_index(..., "INVERTED", **params)), the tokens a text makes
// under them (pylance's lance.tokenize).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lance/status.h"

namespace lance {

/// An INVERTED index's tokenizer parameters, with the reference's names and
/// defaults. lance-cpp implements English with the simple, whitespace, raw
/// and ngram base tokenizers; anything else is refused where it is read.
struct InvertedIndexParams {
  std::string lance_tokenizer = "text";
  std::string base_tokenizer = "simple";
  std::string language = "English";
  bool with_position = false;
  /// Tokens of this many bytes or more are dropped; nullopt keeps all.
  std::optional<uint32_t> max_token_length = 40;
  bool lower_case = true;
  bool stem = true;
  bool remove_stop_words = true;
  std::optional<std::vector<std::string>> custom_stop_words;
  bool ascii_folding = true;
  uint32_t min_ngram_length = 3;
  uint32_t max_ngram_length = 3;
  bool prefix_only = false;
  /// Postings per compressed block (pylance 14 writes it with the params).
  uint32_t block_size = 128;
  // pylance 14's "code" analyzer flags; only their defaults (false) are read.
  bool split_identifiers = false;
  bool split_on_numerics = false;
  bool preserve_original = false;
  bool index_operators = false;

  /// From pylance's JSON; missing keys take the reference's serde defaults.
  /// `context` names the file in errors.
  static Result<InvertedIndexParams> FromJson(std::string_view json, const std::string& context);
  /// As pylance writes it in metadata.lance (its key order).
  std::string ToJson() const;
  /// OK when lance-cpp's tokenizer implements these parameters exactly.
  Status CheckSupported(const std::string& context) const;
};

struct FtsToken {
  std::string text;
  /// The token's place among the base tokenizer's tokens (removed tokens
  /// keep their places, so phrases see the gaps); 0 for every n-gram.
  uint32_t position = 0;
};

/// The tokens of `text` under `params` (pylance's lance.tokenize, except
/// that positions count from the text's first token, not its first kept one).
Result<std::vector<FtsToken>> Tokenize(std::string_view text, const InvertedIndexParams& params);

}  // namespace lance
