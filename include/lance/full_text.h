// Full-text search on an opened Dataset, over pylance's INVERTED indices:
// the tokenizer parameters an index is built with (pylance's
// create_scalar_index(..., "INVERTED", **params)), the tokens a text makes
// under them (pylance's lance.tokenize).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <arrow/type_fwd.h>

#include "lance/dataset.h"
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

/// A full-text query, as pylance's lance.query classes: leaves that search
/// one column (MatchQuery: terms; PhraseQuery: terms in order, on an index
/// with positions) and compound queries over them (MultiMatchQuery: a
/// match on each of several columns, a row scoring its best column's
/// score; BooleanQuery: MUST / SHOULD / MUST_NOT clauses; BoostQuery: a
/// positive query demoted where a negative one matches). Compound queries
/// score every matching row of their clauses, then keep the best `limit`.
struct FullTextQuery {
  enum class Kind { kMatch, kPhrase, kMultiMatch, kBoolean, kBoost };
  enum class Operator { kOr, kAnd };
  enum class Occur { kShould, kMust, kMustNot };

  Kind kind = Kind::kMatch;
  /// Match, phrase, multi-match: the text, tokenized with the index's
  /// tokenizer.
  std::string terms;
  /// Match, phrase: the column searched; empty: the search options'
  /// columns, or every column with an INVERTED index (a match over
  /// several becomes a multi-match, as pylance fills a missing column).
  std::string column;
  /// Match, multi-match: whether a row must hold every term or any of them.
  Operator op = Operator::kOr;
  /// Match: edits allowed per term. 0 or nullopt (pylance's "auto", which
  /// its search never applies): exact. 1 or more: each term, split as
  /// pylance's fuzzy search splits it (at non-alphanumerics, case kept, no
  /// other filter), stands for the index tokens within that Levenshtein
  /// distance that start with its first `prefix_length` bytes, in token
  /// order, at most `max_expansions` over all terms (each term at least
  /// one when it has any). Rows no index covers are matched exactly.
  std::optional<uint32_t> fuzziness = 0;
  uint32_t max_expansions = 50;
  uint32_t prefix_length = 0;
  /// Match: multiplies its scores.
  float boost = 1.0f;
  /// Phrase: how far apart the terms may be.
  uint32_t slop = 0;
  /// Multi-match: the columns, and each one's boost (empty: 1 each).
  std::vector<std::string> columns;
  std::vector<float> boosts;
  /// Boolean: the clauses. Every MUST clause must match and adds its
  /// score, matching SHOULD clauses add theirs (with no MUST clause a row
  /// must match one), a row matching a MUST_NOT clause is dropped.
  struct Clause;  // {occur, query}, defined below
  std::vector<Clause> clauses;
  /// Boost: rows of `positive`, scored positive - negative_boost * negative
  /// where `negative` matches too.
  std::shared_ptr<const FullTextQuery> positive;
  std::shared_ptr<const FullTextQuery> negative;
  float negative_boost = 0.5f;

  static FullTextQuery Match(std::string terms, std::string column = "");
  /// A query string as pylance reads one: a phrase (slop 0) when the whole
  /// string is in double quotes, else a match of its terms (OR). Nothing
  /// else in it is syntax.
  static FullTextQuery FromString(const std::string& text, std::string column = "");
  static FullTextQuery Phrase(std::string terms, std::string column = "", uint32_t slop = 0);
  static FullTextQuery MultiMatch(std::string terms, std::vector<std::string> columns,
                                  std::vector<float> boosts = {});
  static FullTextQuery Boolean(std::vector<Clause> clauses);
  static FullTextQuery Boost(FullTextQuery positive, FullTextQuery negative, float negative_boost = 0.5f);
};

// A struct rather than std::pair: the pair's constructor constraints,
// checked while FullTextQuery is still incomplete, break clang 14.
struct FullTextQuery::Clause {
  Occur occur = Occur::kShould;
  FullTextQuery query;
};

inline FullTextQuery FullTextQuery::Match(std::string terms, std::string column) {
  FullTextQuery q;
  q.terms = std::move(terms);
  q.column = std::move(column);
  return q;
}
inline FullTextQuery FullTextQuery::FromString(const std::string& text, std::string column) {
  if (text.size() >= 2 && text.front() == '"' && text.back() == '"') {
    return Phrase(text.substr(1, text.size() - 2), std::move(column));
  }
  return Match(text, std::move(column));
}
inline FullTextQuery FullTextQuery::Phrase(std::string terms, std::string column, uint32_t slop) {
  FullTextQuery q;
  q.kind = Kind::kPhrase;
  q.terms = std::move(terms);
  q.column = std::move(column);
  q.slop = slop;
  return q;
}
inline FullTextQuery FullTextQuery::MultiMatch(std::string terms, std::vector<std::string> columns,
                                                 std::vector<float> boosts) {
  FullTextQuery q;
  q.kind = Kind::kMultiMatch;
  q.terms = std::move(terms);
  q.columns = std::move(columns);
  q.boosts = std::move(boosts);
  return q;
}
inline FullTextQuery FullTextQuery::Boolean(std::vector<Clause> clauses) {
  FullTextQuery q;
  q.kind = Kind::kBoolean;
  q.clauses = std::move(clauses);
  return q;
}
inline FullTextQuery FullTextQuery::Boost(FullTextQuery positive, FullTextQuery negative, float negative_boost) {
  FullTextQuery q;
  q.kind = Kind::kBoost;
  q.positive = std::make_shared<const FullTextQuery>(std::move(positive));
  q.negative = std::make_shared<const FullTextQuery>(std::move(negative));
  q.negative_boost = negative_boost;
  return q;
}

struct FullTextSearchOptions {
  /// The columns a match without a column searches (pylance's
  /// full_text_search columns); empty: every column with an INVERTED index.
  std::vector<std::string> columns;
  /// The best `limit` rows; nullopt: every matching row.
  std::optional<int64_t> limit;
  /// Only rows where this SQL predicate holds are returned.
  std::string filter;
  /// Whether the filter selects rows before the best `limit` are chosen
  /// (true), or the best `limit` of all rows are chosen and then filtered,
  /// returning fewer (false, pylance's default for full-text search).
  bool prefilter = false;
  /// Output columns; empty: all of them. `_score` (float32) follows them,
  /// then `_rowid` when `with_row_id`.
  std::vector<std::string> projection;
  bool with_row_id = false;
};

/// The rows matching `query`, best first, scored by BM25 as pylance scores
/// them: rows of the fragments an INVERTED index covers through the index
/// (with its statistics), rows of fragments it does not cover tokenized on
/// the fly (with the index's statistics plus theirs). Deleted rows are
/// never returned.
Result<std::shared_ptr<arrow::Table>> FullTextSearch(const std::shared_ptr<const Dataset>& dataset,
                                                     const FullTextQuery& query,
                                                     const FullTextSearchOptions& options = {});

/// The plan of FullTextSearch(dataset, query, options), as text, instead of
/// its rows: each leaf's INVERTED indices (`NAME (INVERTED)`) with the
/// fragments they cover, the fragments searched flat (no index covers
/// them), and the filter as a prefilter or postfilter with the scan plan
/// that answers it (naming its scalar indices, as ScanBuilder::ExplainPlan).
Result<std::string> ExplainFullTextSearch(const std::shared_ptr<const Dataset>& dataset, const FullTextQuery& query,
                                          const FullTextSearchOptions& options = {});

/// The tokens of `text` under `params` (pylance's lance.tokenize, except
/// that positions count from the text's first token, not its first kept one).
Result<std::vector<FtsToken>> Tokenize(std::string_view text, const InvertedIndexParams& params);

}  // namespace lance
