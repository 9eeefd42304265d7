// `lance-cpp search --full-text`: full-text search over INVERTED indices;
// `lance-cpp tokenize`: the tokens of a text under an INVERTED index's
// tokenizer parameters (pylance's lance.tokenize), for checking what a
// full-text query or document becomes.
#include <algorithm>
#include <cctype>
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

// A float flag, or an error message.
std::optional<std::string> ParseFloat(const Args& args, const std::string& flag, float* out) {
  if (!args.Has(flag)) return std::nullopt;
  const std::string v = args.Get(flag);
  try {
    size_t used = 0;
    *out = std::stof(v, &used);
    if (used == v.size()) return std::nullopt;
  } catch (const std::exception&) {
  }
  return flag + " takes a number (got '" + v + "')";
}

// --fts-query-json: pylance's query objects as its FtsQuery serializes them
// (rust/lance-index/src/scalar/inverted/query.rs): one key naming the kind,
// {"match": {"column", "terms", "boost", "fuzziness", "max_expansions",
// "operator", "prefix_length"}}, {"phrase": {"column", "terms", "slop"}},
// {"multi_match": {"query", "columns", "boost": [..], "operator"}},
// {"boolean": {"should": [..], "must": [..], "must_not": [..]}},
// {"boost": {"positive", "negative", "negative_boost"}}.
Result<FullTextQuery> QueryFromJson(const nlohmann::json& j, const std::string& where);

Result<FullTextQuery::Operator> OperatorFromJson(const nlohmann::json& j, const std::string& where) {
  if (j.is_string()) {
    std::string op = j.get<std::string>();
    for (auto& c : op) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (op == "AND") return FullTextQuery::Operator::kAnd;
    if (op == "OR") return FullTextQuery::Operator::kOr;
  }
  return Status::Invalid(where, ": operator is \"AND\" or \"OR\" (got ", j.dump(), ")");
}

Status CheckKeys(const nlohmann::json& j, const std::vector<std::string>& known, const std::string& where) {
  if (!j.is_object()) return Status::Invalid(where, " is not a JSON object");
  for (const auto& [key, value] : j.items()) {
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      return Status::NotImplemented(where, ": \"", key, "\" is not supported by lance-cpp");
    }
  }
  return Status::OK();
}

Result<FullTextQuery> QueryFromJson(const nlohmann::json& j, const std::string& where) {
  if (!j.is_object() || j.size() != 1) {
    return Status::Invalid(where, ": a query is an object of one key (match, phrase, multi_match, boolean, boost)");
  }
  const std::string kind = j.begin().key();
  const nlohmann::json& b = j.begin().value();
  const std::string at = where + "." + kind;
  auto str = [&](const char* key, bool required) -> Result<std::string> {
    if (!b.contains(key) || b[key].is_null()) {
      if (required) return Status::Invalid(at, ": \"", key, "\" is required");
      return std::string();
    }
    if (!b[key].is_string()) return Status::Invalid(at, ".", key, " is not a string");
    return b[key].get<std::string>();
  };
  auto count = [&](const char* key, uint32_t* out) -> Status {
    if (!b.contains(key)) return Status::OK();
    if (!b[key].is_number_unsigned() || b[key].get<uint64_t>() > UINT32_MAX) {
      return Status::Invalid(at, ".", key, " is not a non-negative integer");
    }
    *out = b[key].get<uint32_t>();
    return Status::OK();
  };
  auto number = [&](const char* key, float* out) -> Status {
    if (!b.contains(key)) return Status::OK();
    if (!b[key].is_number()) return Status::Invalid(at, ".", key, " is not a number");
    *out = b[key].get<float>();
    return Status::OK();
  };
  if (kind == "match") {
    LANCE_RETURN_NOT_OK(CheckKeys(b, {"column", "terms", "boost", "fuzziness", "max_expansions", "operator",
                                      "prefix_length"}, at));
    LANCE_ASSIGN_OR_RAISE(auto terms, str("terms", true));
    LANCE_ASSIGN_OR_RAISE(auto column, str("column", false));
    FullTextQuery q = FullTextQuery::Match(std::move(terms), std::move(column));
    LANCE_RETURN_NOT_OK(number("boost", &q.boost));
    if (b.contains("fuzziness")) {
      if (b["fuzziness"].is_null()) {
        q.fuzziness.reset();
      } else {
        uint32_t f = 0;
        LANCE_RETURN_NOT_OK(count("fuzziness", &f));
        q.fuzziness = f;
      }
    }
    LANCE_RETURN_NOT_OK(count("max_expansions", &q.max_expansions));
    LANCE_RETURN_NOT_OK(count("prefix_length", &q.prefix_length));
    if (b.contains("operator")) {
      LANCE_ASSIGN_OR_RAISE(q.op, OperatorFromJson(b["operator"], at));
    }
    return q;
  }
  if (kind == "phrase") {
    LANCE_RETURN_NOT_OK(CheckKeys(b, {"column", "terms", "slop"}, at));
    LANCE_ASSIGN_OR_RAISE(auto terms, str("terms", true));
    LANCE_ASSIGN_OR_RAISE(auto column, str("column", false));
    FullTextQuery q = FullTextQuery::Phrase(std::move(terms), std::move(column));
    LANCE_RETURN_NOT_OK(count("slop", &q.slop));
    return q;
  }
  if (kind == "multi_match") {
    LANCE_RETURN_NOT_OK(CheckKeys(b, {"query", "columns", "boost", "operator"}, at));
    LANCE_ASSIGN_OR_RAISE(auto terms, str("query", true));
    if (!b.contains("columns") || !b["columns"].is_array()) return Status::Invalid(at, ".columns is not a list");
    std::vector<std::string> columns;
    for (const auto& c : b["columns"]) {
      if (!c.is_string()) return Status::Invalid(at, ".columns holds a non-string");
      columns.push_back(c.get<std::string>());
    }
    std::vector<float> boosts;
    if (b.contains("boost") && !b["boost"].is_null()) {
      if (!b["boost"].is_array()) return Status::Invalid(at, ".boost is not a list");
      for (const auto& v : b["boost"]) {
        if (!v.is_number()) return Status::Invalid(at, ".boost holds a non-number");
        boosts.push_back(v.get<float>());
      }
    }
    FullTextQuery q = FullTextQuery::MultiMatch(std::move(terms), std::move(columns), std::move(boosts));
    if (b.contains("operator")) {
      LANCE_ASSIGN_OR_RAISE(q.op, OperatorFromJson(b["operator"], at));
    }
    return q;
  }
  if (kind == "boolean") {
    LANCE_RETURN_NOT_OK(CheckKeys(b, {"should", "must", "must_not"}, at));
    std::vector<FullTextQuery::Clause> clauses;
    for (const auto& [key, occur] : {std::pair{"should", FullTextQuery::Occur::kShould},
                                     std::pair{"must", FullTextQuery::Occur::kMust},
                                     std::pair{"must_not", FullTextQuery::Occur::kMustNot}}) {
      if (!b.contains(key)) continue;
      if (!b[key].is_array()) return Status::Invalid(at, ".", key, " is not a list");
      for (size_t i = 0; i < b[key].size(); ++i) {
        LANCE_ASSIGN_OR_RAISE(auto clause, QueryFromJson(b[key][i], at + "." + key + "[" + std::to_string(i) + "]"));
        clauses.push_back({occur, std::move(clause)});
      }
    }
    return FullTextQuery::Boolean(std::move(clauses));
  }
  if (kind == "boost") {
    LANCE_RETURN_NOT_OK(CheckKeys(b, {"positive", "negative", "negative_boost"}, at));
    if (!b.contains("positive") || !b.contains("negative")) {
      return Status::Invalid(at, ": \"positive\" and \"negative\" are required");
    }
    LANCE_ASSIGN_OR_RAISE(auto positive, QueryFromJson(b["positive"], at + ".positive"));
    LANCE_ASSIGN_OR_RAISE(auto negative, QueryFromJson(b["negative"], at + ".negative"));
    float negative_boost = 0.5f;
    LANCE_RETURN_NOT_OK(number("negative_boost", &negative_boost));
    return FullTextQuery::Boost(std::move(positive), std::move(negative), negative_boost);
  }
  return Status::NotImplemented(where, ": full-text query kind \"", kind, "\" is not supported by lance-cpp");
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
      "lance-cpp search URI (--full-text QUERY | --fts-query-json JSON) [--fts-columns a,b] [--k K] [--filter PRED]\n"
      "    [--columns a,b] [--postfilter] [--phrase [--slop N]] [--operator or|and] [--boost B] [--fuzziness N\n"
      "    [--prefix-length N] [--max-expansions N]] [--with-row-id] [--version V] [--out FILE]\n"
      "    [--format csv|json|table] [--explain]   full-text hits, best first, with _score (--explain: the plan)\n"
      "  --full-text: a match of the terms (OR), a phrase when in double quotes; over --fts-columns (several:\n"
      "    each column's score, a row taking its best), else every column with an INVERTED index.\n"
      "  --fts-query-json: a structured query as pylance's FtsQuery JSON, e.g.\n"
      "    {\"match\": {\"column\": \"text\", \"terms\": \"fox\", \"boost\": 1.0, \"fuzziness\": 1,\n"
      "                \"max_expansions\": 50, \"prefix_length\": 0, \"operator\": \"AND\"}}\n"
      "    {\"phrase\": {\"column\": \"text\", \"terms\": \"quick fox\", \"slop\": 0}}\n"
      "    {\"multi_match\": {\"query\": \"fox\", \"columns\": [\"a\", \"b\"], \"boost\": [1.0, 2.0], \"operator\": \"OR\"}}\n"
      "    {\"boolean\": {\"must\": [Q, ...], \"should\": [Q, ...], \"must_not\": [Q, ...]}}\n"
      "    {\"boost\": {\"positive\": Q, \"negative\": Q, \"negative_boost\": 0.5}}";
  // A nearest-neighbour search (tools/vector_search_command.cc).
  for (const auto& a : argv) {
    if (a == "--vector" || a == "--column") return RunVectorSearch(argv);
  }
  Args args;
  static const std::vector<std::string> kVector = {"--queries", "--nprobes", "--minimum-nprobes",
                                                   "--maximum-nprobes", "--refine-factor", "--ef", "--metric"};
  std::vector<std::string> value_flags = {"--full-text", "--fts-query-json", "--fts-columns", "--k", "--filter",
                                          "--columns", "--slop", "--operator", "--boost", "--fuzziness",
                                          "--prefix-length", "--max-expansions", "--version", "--out", "--format"};
  value_flags.insert(value_flags.end(), kVector.begin(), kVector.end());
  if (auto err = ParseArgs(argv, value_flags, {"--phrase", "--with-row-id", "--postfilter", "--explain"}, &args)) {
    return ReportUsage(err->message, kUsage);
  }
  if (args.positional.size() != 1) return ReportUsage("search takes exactly one URI", kUsage);
  for (const auto& f : kVector) {
    if (args.Has(f)) {
      return ReportError(Status::NotImplemented("vector search (", f, ") is not supported by lance-cpp yet"));
    }
  }
  FullTextQuery query;
  if (args.Has("--fts-query-json")) {
    if (args.Has("--full-text")) return ReportUsage("--full-text and --fts-query-json exclude each other", kUsage);
    for (const char* f : {"--phrase", "--slop", "--operator", "--boost", "--fuzziness", "--prefix-length",
                          "--max-expansions"}) {
      if (args.Has(f)) return ReportUsage(std::string(f) + " applies to --full-text, not --fts-query-json", kUsage);
    }
    nlohmann::json j = nlohmann::json::parse(args.Get("--fts-query-json"), nullptr, false);
    if (j.is_discarded()) return ReportUsage("--fts-query-json is not valid JSON", kUsage);
    auto parsed = QueryFromJson(j, "--fts-query-json");
    if (!parsed.ok()) return ReportError(parsed.status());
    query = std::move(*parsed);
  } else {
    if (!args.Has("--full-text")) return ReportUsage("search needs --full-text QUERY or --fts-query-json JSON", kUsage);
    // As pylance reads a query string: "..." is a phrase.
    query = FullTextQuery::FromString(args.Get("--full-text"));
    if (args.Has("--phrase")) {
      query.kind = FullTextQuery::Kind::kPhrase;
      if (auto err = ParseCount(args, "--slop", &query.slop)) return ReportUsage(*err, kUsage);
    } else if (args.Has("--slop")) {
      return ReportUsage("--slop applies to --phrase", kUsage);
    }
    const bool phrase = query.kind == FullTextQuery::Kind::kPhrase;
    for (const char* f : {"--operator", "--boost", "--fuzziness", "--prefix-length", "--max-expansions"}) {
      if (phrase && args.Has(f)) return ReportUsage(std::string(f) + " applies to a match, not a phrase", kUsage);
    }
    if (args.Has("--operator")) {
      const std::string op = args.Get("--operator");
      if (op != "or" && op != "and" && op != "OR" && op != "AND") {
        return ReportUsage("--operator takes or or and (got '" + op + "')", kUsage);
      }
      query.op = (op == "and" || op == "AND") ? FullTextQuery::Operator::kAnd : FullTextQuery::Operator::kOr;
    }
    if (auto err = ParseFloat(args, "--boost", &query.boost)) return ReportUsage(*err, kUsage);
    uint32_t fuzziness = 0;
    if (auto err = ParseCount(args, "--fuzziness", &fuzziness)) return ReportUsage(*err, kUsage);
    query.fuzziness = fuzziness;
    if (auto err = ParseCount(args, "--prefix-length", &query.prefix_length)) return ReportUsage(*err, kUsage);
    if (auto err = ParseCount(args, "--max-expansions", &query.max_expansions)) return ReportUsage(*err, kUsage);
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
  if (args.Has("--explain")) {
    auto text = ExplainFullTextSearch(*ds, query, options);
    if (!text.ok()) return ReportError(text.status());
    std::cout << *text;
    return kExitOk;
  }
  auto table = FullTextSearch(*ds, query, options);
  if (!table.ok()) return ReportError(table.status());
  auto reader = std::make_shared<arrow::TableBatchReader>(*table);
  Status st = EmitResult(reader, format, args.Get("--out"));
  return st.ok() ? kExitOk : ReportError(st);
}

}  // namespace lance::cli
