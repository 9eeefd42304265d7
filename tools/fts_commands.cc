// `lance-cpp tokenize`: the tokens of a text under an INVERTED index's
// tokenizer parameters (pylance's lance.tokenize), for checking what a
// full-text query or document becomes.
#include <fstream>
#include <iostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli.h"
#include "lance/full_text.h"

namespace lance::cli {
namespace {

// A non-negative count flag, or an error message.
std::optional<std::string> ParseCount(const Args& args, const std::string& flag, uint32_t* out) {
  if (!args.Has(flag)) return std::nullopt;
  const std::string v = args.Get(flag);
  if (v.empty() || v.size() > 9 || v.find_first_not_of("0123456789") != std::string::npos) {
    return flag + " takes a non-negative integer (got '" + v + "')";
  }
  *out = static_cast<uint32_t>(std::stoul(v));
  return std::nullopt;
}

}  // namespace

const std::vector<std::string> kTokenizerValueFlags = {"--base-tokenizer", "--language", "--max-token-length",
                                                       "--custom-stop-words", "--min-ngram-length",
                                                       "--max-ngram-length"};
const std::vector<std::string> kTokenizerSwitchFlags = {"--no-lower-case", "--no-stem", "--no-remove-stop-words",
                                                        "--no-ascii-folding", "--prefix-only", "--with-position"};

std::optional<UsageError> ParseTokenizerFlags(const Args& args, InvertedIndexParams* p) {
  if (args.Has("--base-tokenizer")) {
    p->base_tokenizer = args.Get("--base-tokenizer");
    // pylance's ngram tokenizer defaults to neither stemming nor stop words.
    if (p->base_tokenizer == "ngram") p->stem = p->remove_stop_words = false;
  }
  if (args.Has("--language")) p->language = args.Get("--language");
  if (args.Has("--max-token-length")) {
    if (args.Get("--max-token-length") == "none") {
      p->max_token_length.reset();
    } else {
      uint32_t n = 0;
      if (auto err = ParseCount(args, "--max-token-length", &n)) return UsageError{*err + " or 'none'"};
      p->max_token_length = n;
    }
  }
  if (args.Has("--no-lower-case")) p->lower_case = false;
  if (args.Has("--no-stem")) p->stem = false;
  if (args.Has("--no-remove-stop-words")) p->remove_stop_words = false;
  if (args.Has("--no-ascii-folding")) p->ascii_folding = false;
  if (args.Has("--prefix-only")) p->prefix_only = true;
  if (args.Has("--with-position")) p->with_position = true;
  if (args.Has("--custom-stop-words")) {
    std::vector<std::string> words;
    std::stringstream in(args.Get("--custom-stop-words"));
    for (std::string w; std::getline(in, w, ',');) words.push_back(w);
    p->custom_stop_words = std::move(words);
  }
  if (auto err = ParseCount(args, "--min-ngram-length", &p->min_ngram_length)) return UsageError{*err};
  if (auto err = ParseCount(args, "--max-ngram-length", &p->max_ngram_length)) return UsageError{*err};
  return std::nullopt;
}

int RunTokenize(const std::vector<std::string>& argv) {
  constexpr const char* kUsage =
      "lance-cpp tokenize (TEXT | --input FILE) [--base-tokenizer simple|whitespace|raw|ngram] [--language L]\n"
      "    [--max-token-length N|none] [--no-lower-case] [--no-stem] [--no-remove-stop-words] [--no-ascii-folding]\n"
      "    [--custom-stop-words a,b] [--min-ngram-length N] [--max-ngram-length N] [--prefix-only]\n"
      "  prints the tokens as JSON: [[text, position], ...]";
  Args args;
  std::vector<std::string> value_flags = kTokenizerValueFlags;
  value_flags.push_back("--input");
  if (auto err = ParseArgs(argv, value_flags, kTokenizerSwitchFlags, &args)) return ReportUsage(err->message, kUsage);
  std::string text;
  if (args.Has("--input")) {
    if (!args.positional.empty()) return ReportUsage("tokenize takes TEXT or --input FILE, not both", kUsage);
    std::ifstream in(args.Get("--input"), std::ios::binary);
    if (!in) return ReportError(Status::IOError("cannot read ", args.Get("--input")));
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  } else if (args.positional.size() == 1) {
    text = args.positional[0];
  } else {
    return ReportUsage("tokenize takes one TEXT", kUsage);
  }
  InvertedIndexParams params;
  if (auto err = ParseTokenizerFlags(args, &params)) return ReportUsage(err->message, kUsage);
  auto tokens = Tokenize(text, params);
  if (!tokens.ok()) return ReportError(tokens.status());
  nlohmann::json out = nlohmann::json::array();
  for (const auto& t : *tokens) out.push_back(nlohmann::json::array({t.text, t.position}));
  std::cout << out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  return kExitOk;
}

}  // namespace lance::cli
