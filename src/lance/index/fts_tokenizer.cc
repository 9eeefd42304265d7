#include "lance/index/fts_tokenizer.h"

#include <algorithm>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "lance/index/english_stemmer.h"
#include "lance/util/utf8.h"

namespace lance::index {
namespace {

struct CodePointRange {
  char32_t lo, hi;
};
struct CodePointMapping {
  char32_t cp;
  const char* to;
};
#include "lance/index/fts_unicode_tables.inc"

bool IsAlphanumeric(char32_t c) {
  if (c < 0x80) return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
  const auto* end = std::end(kAlnumRanges);
  const auto* it = std::upper_bound(std::begin(kAlnumRanges), end, c,
                                    [](char32_t v, const CodePointRange& r) { return v < r.lo; });
  return it != std::begin(kAlnumRanges) && c <= (it - 1)->hi;
}

template <size_t N>
const char* Lookup(const CodePointMapping (&table)[N], char32_t c) {
  const auto* it = std::lower_bound(std::begin(table), std::end(table), c,
                                    [](const CodePointMapping& m, char32_t v) { return m.cp < v; });
  return it != std::end(table) && it->cp == c ? it->to : nullptr;
}

bool IsAscii(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; });
}

// Each character through `table` (unmapped ones kept), as the reference's
// LowerCaser and AsciiFoldingFilter map one character at a time.
template <size_t N>
void MapCharacters(const CodePointMapping (&table)[N], bool lower_ascii, std::string* token) {
  std::string out;
  out.reserve(token->size());
  for (size_t i = 0; i < token->size();) {
    const size_t begin = i;
    const char32_t c = util::NextCodePoint(*token, &i);
    if (c < 0x80) {
      // The tables hold non-ASCII code points; ASCII letters lower here.
      out.push_back(lower_ascii && c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : static_cast<char>(c));
    } else if (const char* to = Lookup(table, c)) {
      out += to;
    } else {
      out.append(*token, begin, i - begin);
    }
  }
  *token = std::move(out);
}

bool IsAsciiWhitespace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\x0c' || c == '\r'; }

}  // namespace

// One optional key of the params JSON into `out` (kept when absent or null).
template <typename T>
Status Get(const nlohmann::json& j, const char* key, T* out, const std::string& context) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return Status::OK();
  try {
    *out = it->get<T>();
  } catch (const nlohmann::json::exception& e) {
    return Status::Invalid(context, ": inverted index parameter '", key, "' has the wrong type: ", e.what());
  }
  return Status::OK();
}

const std::vector<std::string_view>& EnglishStopWords() {
  // Read off pylance 14: the words of its English StopWordFilter.
  static const std::vector<std::string_view> kWords = {
      "a",        "about",   "above",      "after",   "again",   "against", "all",     "am",       "an",
      "and",      "any",     "are",        "as",      "at",      "be",      "because", "been",     "before",
      "being",    "below",   "between",    "both",    "but",     "by",      "can",     "did",      "do",
      "does",     "doing",   "down",       "during",  "each",    "few",     "for",     "from",     "further",
      "had",      "has",     "have",       "having",  "he",      "he'd",    "he'll",   "he's",     "her",
      "here",     "hers",    "herself",    "him",     "himself", "his",     "how",     "i",        "i'd",
      "i'll",     "i'm",     "i've",       "if",      "in",      "into",    "is",      "it",       "it'd",
      "it'll",    "it's",    "its",        "itself",  "just",    "me",      "more",    "most",     "my",
      "myself",   "now",     "of",         "off",     "on",      "once",    "only",    "or",       "other",
      "our",      "ours",    "ourselves",  "out",     "over",    "own",     "re",      "same",     "she",
      "she'd",    "she'll",  "she's",      "should",  "should've", "so",    "some",    "such",     "than",
      "that",     "that'll", "the",        "their",   "theirs",  "them",    "themselves", "then",  "there",
      "these",    "they",    "they'd",     "they'll", "they're", "they've", "this",    "those",    "through",
      "to",       "too",     "under",      "until",   "up",      "very",    "was",     "we",       "we'd",
      "we'll",    "we're",   "we've",      "were",    "what",    "when",    "where",   "which",    "while",
      "who",      "whom",    "why",        "will",    "with",    "you",     "you'd",   "you'll",   "you're",
      "you've",   "your",    "yours",      "yourself", "yourselves"};
  return kWords;
}

Result<FtsTokenizer> FtsTokenizer::Make(const InvertedIndexParams& params, const std::string& context) {
  LANCE_RETURN_NOT_OK(params.CheckSupported(context));
  return FtsTokenizer(params);
}

FtsTokenizer::FtsTokenizer(InvertedIndexParams params) : params_(std::move(params)) {
  const std::string& b = params_.base_tokenizer;
  base_ = b == "whitespace" ? Base::kWhitespace : b == "raw" ? Base::kRaw : b == "ngram" ? Base::kNgram : Base::kSimple;
  if (params_.remove_stop_words) {
    if (params_.custom_stop_words) {
      stop_words_.insert(params_.custom_stop_words->begin(), params_.custom_stop_words->end());
    } else {
      for (auto w : EnglishStopWords()) stop_words_.emplace(w);
    }
  }
}

bool FtsTokenizer::Filter(std::string* token) const {
  if (params_.max_token_length && token->size() >= *params_.max_token_length) return false;
  if (params_.lower_case) {
    if (IsAscii(*token)) {
      std::transform(token->begin(), token->end(), token->begin(),
                     [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; });
    } else {
      MapCharacters(kLowerCaseMap, /*lower_ascii=*/true, token);
    }
  }
  if (params_.stem) {
    // Text repeats its words: each thread remembers the stems it made (a
    // pure function of the word), up to a bound.
    thread_local std::unordered_map<std::string, std::string> stems;
    auto it = stems.find(*token);
    if (it == stems.end()) {
      if (stems.size() >= (1u << 20)) stems.clear();
      it = stems.emplace(*token, StemEnglish(*token)).first;
    }
    *token = it->second;
  }
  if (params_.remove_stop_words && stop_words_.count(*token)) return false;
  if (params_.ascii_folding && !IsAscii(*token)) MapCharacters(kAsciiFoldMap, /*lower_ascii=*/false, token);
  return true;
}

template <typename Emit>
void FtsTokenizer::ForEachBaseToken(std::string_view text, Emit&& emit) const {
  uint32_t position = 0;
  switch (base_) {
    case Base::kRaw:
      emit(text, 0);
      return;
    case Base::kWhitespace:
      for (size_t i = 0; i < text.size();) {
        while (i < text.size() && IsAsciiWhitespace(text[i])) ++i;
        const size_t begin = i;
        while (i < text.size() && !IsAsciiWhitespace(text[i])) ++i;
        if (i > begin) emit(text.substr(begin, i - begin), position++);
      }
      return;
    case Base::kSimple:
      for (size_t i = 0; i < text.size();) {
        size_t begin = i, end = i;
        bool in_token = false;
        while (i < text.size()) {
          const size_t at = i;
          const bool alnum = IsAlphanumeric(util::NextCodePoint(text, &i));
          if (alnum) {
            if (!in_token) begin = at;
            in_token = true;
            end = i;
          } else if (in_token) {
            break;
          }
        }
        if (in_token) emit(text.substr(begin, end - begin), position++);
      }
      return;
    case Base::kNgram: {
      // Every run of min..max characters, by start then length; with
      // prefix_only, only those at the start.
      std::vector<size_t> starts;  // byte offset of each character, and the end
      for (size_t i = 0; i < text.size();) {
        starts.push_back(i);
        util::NextCodePoint(text, &i);
      }
      const size_t chars = starts.size();
      starts.push_back(text.size());
      const size_t last_start = params_.prefix_only ? std::min<size_t>(chars, 1) : chars;
      for (size_t s = 0; s < last_start; ++s) {
        for (size_t n = params_.min_ngram_length; n <= params_.max_ngram_length && s + n <= chars; ++n) {
          emit(text.substr(starts[s], starts[s + n] - starts[s]), 0);
        }
      }
      return;
    }
  }
}

void FtsTokenizer::Tokenize(std::string_view text, std::vector<FtsToken>* out) const {
  ForEachBaseToken(text, [&](std::string_view base, uint32_t position) {
    std::string token(base);
    if (Filter(&token)) out->push_back(FtsToken{std::move(token), position});
  });
}

void FtsTokenizer::Split(std::string_view text, std::vector<std::pair<std::string_view, uint32_t>>* out) const {
  ForEachBaseToken(text, [&](std::string_view base, uint32_t position) { out->emplace_back(base, position); });
}

}  // namespace lance::index

namespace lance {

using index::Get;

Result<InvertedIndexParams> InvertedIndexParams::FromJson(std::string_view text, const std::string& context) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return Status::Invalid(context, ": inverted index parameters are not a JSON object");
  InvertedIndexParams p;
  LANCE_RETURN_NOT_OK(Get(j, "lance_tokenizer", &p.lance_tokenizer, context));
  LANCE_RETURN_NOT_OK(Get(j, "base_tokenizer", &p.base_tokenizer, context));
  LANCE_RETURN_NOT_OK(Get(j, "language", &p.language, context));
  LANCE_RETURN_NOT_OK(Get(j, "with_position", &p.with_position, context));
  // An Option in the reference's serde struct: absent means none.
  if (auto it = j.find("max_token_length"); true) {
    if (it == j.end() || it->is_null()) {
      p.max_token_length.reset();
    } else if (it->is_number_unsigned()) {
      p.max_token_length = it->get<uint32_t>();
    } else {
      return Status::Invalid(context, ": inverted index parameter 'max_token_length' is not a count");
    }
  }
  LANCE_RETURN_NOT_OK(Get(j, "lower_case", &p.lower_case, context));
  LANCE_RETURN_NOT_OK(Get(j, "stem", &p.stem, context));
  LANCE_RETURN_NOT_OK(Get(j, "remove_stop_words", &p.remove_stop_words, context));
  if (auto it = j.find("custom_stop_words"); it != j.end() && !it->is_null()) {
    std::vector<std::string> words;
    LANCE_RETURN_NOT_OK(Get(j, "custom_stop_words", &words, context));
    p.custom_stop_words = std::move(words);
  }
  LANCE_RETURN_NOT_OK(Get(j, "ascii_folding", &p.ascii_folding, context));
  LANCE_RETURN_NOT_OK(Get(j, "min_ngram_length", &p.min_ngram_length, context));
  LANCE_RETURN_NOT_OK(Get(j, "max_ngram_length", &p.max_ngram_length, context));
  LANCE_RETURN_NOT_OK(Get(j, "prefix_only", &p.prefix_only, context));
  LANCE_RETURN_NOT_OK(Get(j, "block_size", &p.block_size, context));
  LANCE_RETURN_NOT_OK(Get(j, "split_identifiers", &p.split_identifiers, context));
  LANCE_RETURN_NOT_OK(Get(j, "split_on_numerics", &p.split_on_numerics, context));
  LANCE_RETURN_NOT_OK(Get(j, "preserve_original", &p.preserve_original, context));
  LANCE_RETURN_NOT_OK(Get(j, "index_operators", &p.index_operators, context));
  // Keys a newer writer adds change what a token is: refuse rather than guess.
  static const char* kKnown[] = {"lance_tokenizer", "base_tokenizer", "language", "with_position",
                                 "max_token_length", "lower_case", "stem", "remove_stop_words",
                                 "custom_stop_words", "ascii_folding", "min_ngram_length", "max_ngram_length",
                                 "prefix_only", "block_size", "split_identifiers", "split_on_numerics",
                                 "preserve_original", "index_operators"};
  for (const auto& item : j.items()) {
    const std::string& key = item.key();
    if (std::find_if(std::begin(kKnown), std::end(kKnown), [&](const char* k) { return key == k; }) ==
        std::end(kKnown)) {
      return Status::NotImplemented(context, ": inverted index parameter '", key, "' is not supported by lance-cpp");
    }
  }
  return p;
}

std::string InvertedIndexParams::ToJson() const {
  nlohmann::ordered_json j;
  j["lance_tokenizer"] = lance_tokenizer;
  j["base_tokenizer"] = base_tokenizer;
  j["language"] = language;
  j["with_position"] = with_position;
  j["max_token_length"] = max_token_length ? nlohmann::ordered_json(*max_token_length) : nlohmann::ordered_json();
  j["lower_case"] = lower_case;
  j["stem"] = stem;
  j["remove_stop_words"] = remove_stop_words;
  j["custom_stop_words"] =
      custom_stop_words ? nlohmann::ordered_json(*custom_stop_words) : nlohmann::ordered_json();
  j["ascii_folding"] = ascii_folding;
  j["min_ngram_length"] = min_ngram_length;
  j["max_ngram_length"] = max_ngram_length;
  j["prefix_only"] = prefix_only;
  j["block_size"] = block_size;
  j["split_identifiers"] = split_identifiers;
  j["split_on_numerics"] = split_on_numerics;
  j["preserve_original"] = preserve_original;
  j["index_operators"] = index_operators;
  return j.dump();
}

Status InvertedIndexParams::CheckSupported(const std::string& context) const {
  if (lance_tokenizer != "text") {
    return Status::NotImplemented(context, ": the '", lance_tokenizer,
                                  "' document tokenizer is not supported by lance-cpp (only 'text')");
  }
  if (base_tokenizer != "simple" && base_tokenizer != "whitespace" && base_tokenizer != "raw" &&
      base_tokenizer != "ngram") {
    return Status::NotImplemented(context, ": base tokenizer '", base_tokenizer,
                                  "' is not supported by lance-cpp (simple, whitespace, raw, ngram)");
  }
  static const char* kLanguages[] = {"Arabic",     "Danish",  "Dutch",   "English", "Finnish", "French",
                                     "German",     "Greek",   "Hungarian", "Italian", "Norwegian", "Portuguese",
                                     "Romanian",   "Russian", "Spanish", "Swedish", "Tamil",   "Turkish"};
  if (std::find_if(std::begin(kLanguages), std::end(kLanguages), [&](const char* l) { return language == l; }) ==
      std::end(kLanguages)) {
    return Status::Invalid(context, ": unknown tokenizer language '", language, "'");
  }
  if (language != "English" && (stem || (remove_stop_words && !custom_stop_words))) {
    return Status::NotImplemented(context, ": stemming and stop words for ", language,
                                  " are not supported by lance-cpp (only English)");
  }
  if (split_identifiers || split_on_numerics || preserve_original || index_operators) {
    return Status::NotImplemented(context,
                                  ": the code analyzer (split_identifiers, split_on_numerics, "
                                  "preserve_original, index_operators) is not supported by lance-cpp");
  }
  if (base_tokenizer == "ngram" && (min_ngram_length == 0 || min_ngram_length > max_ngram_length)) {
    return Status::Invalid(context, ": n-gram lengths must satisfy 0 < min_ngram_length <= max_ngram_length, got ",
                           min_ngram_length, " and ", max_ngram_length);
  }
  return Status::OK();
}

Result<std::vector<FtsToken>> Tokenize(std::string_view text, const InvertedIndexParams& params) {
  LANCE_ASSIGN_OR_RAISE(auto tokenizer, index::FtsTokenizer::Make(params, "tokenize"));
  return tokenizer.Tokenize(text);
}

}  // namespace lance
