// `lance-cpp search --full-text`: full-text search over INVERTED indices;
// `lance-cpp tokenize`: the tokens of a text under an INVERTED index's
// tokenizer parameters (pylance's lance.tokenize), for checking what a
// full-text query or document becomes.
#include <fstream>
#include <iostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include <arrow/table.h>

#include "cli.h"
#include "lance/full_text.h"
#include "table_output.h"

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

int RunSearch(const std::vector<std::string>& argv) {
  constexpr const char* kUsage =
      "lance-cpp search URI --full-text QUERY [--fts-columns a,b] [--k K] [--filter PRED] [--columns a,b]\n"
      "    [--postfilter] [--phrase [--slop N]] [--operator or|and] [--with-row-id] [--version V] [--out FILE]\n"
      "    [--format csv|json|table]   full-text hits, best first, with _score";
  Args args;
  static const std::vector<std::string> kVector = {"--column", "--vector", "--queries", "--nprobes",
                                                   "--minimum-nprobes", "--maximum-nprobes", "--refine-factor",
                                                   "--ef", "--metric"};
  std::vector<std::string> value_flags = {"--full-text", "--fts-columns", "--k", "--filter", "--columns",
                                          "--slop", "--operator", "--version", "--out", "--format"};
  value_flags.insert(value_flags.end(), kVector.begin(), kVector.end());
  if (auto err = ParseArgs(argv, value_flags, {"--phrase", "--with-row-id", "--postfilter"}, &args)) {
    return ReportUsage(err->message, kUsage);
  }
  if (args.positional.size() != 1) return ReportUsage("search takes exactly one URI", kUsage);
  for (const auto& f : kVector) {
    if (args.Has(f)) {
      return ReportError(Status::NotImplemented("vector search (", f, ") is not supported by lance-cpp yet"));
    }
  }
  if (!args.Has("--full-text")) return ReportUsage("search needs --full-text QUERY", kUsage);
  // As pylance reads a query string: "..." is a phrase.
  FullTextQuery query = FullTextQuery::FromString(args.Get("--full-text"));
  if (args.Has("--phrase")) {
    query.kind = FullTextQuery::Kind::kPhrase;
    if (auto err = ParseCount(args, "--slop", &query.slop)) return ReportUsage(*err, kUsage);
  } else if (args.Has("--slop")) {
    return ReportUsage("--slop applies to --phrase", kUsage);
  }
  if (args.Has("--operator")) {
    const std::string op = args.Get("--operator");
    if (op != "or" && op != "and" && op != "OR" && op != "AND") {
      return ReportUsage("--operator takes or or and (got '" + op + "')", kUsage);
    }
    if (query.kind == FullTextQuery::Kind::kPhrase) {
      return ReportUsage("--operator applies to a match, not a phrase", kUsage);
    }
    query.op = (op == "and" || op == "AND") ? FullTextQuery::Operator::kAnd : FullTextQuery::Operator::kOr;
  }
  FullTextSearchOptions options;
  auto split = [](const std::string& s) {
    std::vector<std::string> out;
    std::stringstream in(s);
    for (std::string w; std::getline(in, w, ',');) out.push_back(w);
    return out;
  };
  options.columns = split(args.Get("--fts-columns"));
  options.projection = split(args.Get("--columns"));
  options.filter = args.Get("--filter");
  // The contract's search filters first unless --postfilter (pylance's
  // to_table default is the latter: the best k, then the filter).
  options.prefilter = !args.Has("--postfilter");
  options.with_row_id = args.Has("--with-row-id");
  if (args.Has("--k")) {
    uint32_t k = 0;
    if (auto err = ParseCount(args, "--k", &k)) return ReportUsage(*err, kUsage);
    options.limit = k;
  }
  const std::string format = args.Get("--format", "table");
  if (format != "table" && format != "csv" && format != "json") return ReportUsage("bad --format " + format, kUsage);
  OpenOptions open;
  open.version = args.Get("--version");
  auto ds = OpenDataset(args.positional[0], open);
  if (!ds.ok()) return ReportError(ds.status());
  auto table = FullTextSearch(*ds, query, options);
  if (!table.ok()) return ReportError(table.status());
  auto reader = std::make_shared<arrow::TableBatchReader>(*table);
  Status st = EmitResult(reader, format, args.Get("--out"));
  return st.ok() ? kExitOk : ReportError(st);
}

}  // namespace lance::cli
