// `lance-cpp search URI --column COL --vector V1,V2,...`: nearest-neighbour
// search (lance/vector_search.h), rows nearest first with `_distance`.
#include <iostream>
#include <sstream>

#include <arrow/table.h>

#include "cli.h"
#include "lance/vector_search.h"
#include "table_output.h"

namespace lance::cli {
namespace {

// A positive count flag, or an error message.
std::optional<std::string> ParsePositive(const Args& args, const std::string& flag, uint32_t* out) {
  const std::string v = args.Get(flag);
  if (v.empty() || v.size() > 9 || v.find_first_not_of("0123456789") != std::string::npos || std::stoul(v) == 0) {
    return flag + " takes a positive integer (got '" + v + "')";
  }
  *out = static_cast<uint32_t>(std::stoul(v));
  return std::nullopt;
}

std::vector<std::string> Split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string w; std::getline(in, w, ',');) out.push_back(w);
  return out;
}

}  // namespace

int RunVectorSearch(const std::vector<std::string>& argv) {
  constexpr const char* kUsage =
      "lance-cpp search URI --column COL --vector V1,V2,... [--k K] [--nprobes N] [--minimum-nprobes N]\n"
      "    [--maximum-nprobes N] [--refine-factor R] [--metric l2|cosine|dot] [--filter PRED] [--postfilter]\n"
      "    [--no-index] [--fast-search] [--columns a,b] [--with-row-id] [--version V] [--out FILE]\n"
      "    [--format csv|json|table] [--explain]\n"
      "  the K (default 10) rows nearest to the vector, nearest first, with _distance (l2: squared; cosine:\n"
      "  1 - cos; dot: 1 - dot), through the column's IVF_FLAT / IVF_PQ / IVF_SQ index when it has one (other\n"
      "  index types are refused: --no-index searches exactly). The filter applies before the nearest K are\n"
      "  chosen unless --postfilter (then fewer than K may be returned). --explain runs the search and prints\n"
      "  what it did instead of the rows: each index segment with its probe counts and partitions searched.";
  Args args;
  const std::vector<std::string> value_flags = {"--column", "--vector", "--k", "--nprobes", "--minimum-nprobes",
                                                "--maximum-nprobes", "--refine-factor", "--metric", "--filter",
                                                "--columns", "--version", "--out", "--format"};
  if (auto err = ParseArgs(argv, value_flags, {"--postfilter", "--with-row-id", "--no-index", "--fast-search", "--explain"},
                           &args)) {
    return ReportUsage(err->message, kUsage);
  }
  if (args.positional.size() != 1) return ReportUsage("search takes exactly one URI", kUsage);
  if (!args.Has("--column") || !args.Has("--vector")) return ReportUsage("search needs --column and --vector", kUsage);
  VectorSearchOptions options;
  options.column = args.Get("--column");
  for (const auto& v : Split(args.Get("--vector"))) {
    try {
      size_t used = 0;
      options.query.push_back(std::stof(v, &used));
      if (used != v.size()) throw std::invalid_argument(v);
    } catch (const std::exception&) {
      return ReportUsage("--vector takes numbers separated by commas (got '" + v + "')", kUsage);
    }
  }
  uint32_t n = 0;
  if (args.Has("--k")) {
    if (auto err = ParsePositive(args, "--k", &n)) return ReportUsage(*err, kUsage);
    options.k = n;
  }
  if (args.Has("--nprobes")) {
    if (args.Has("--minimum-nprobes") || args.Has("--maximum-nprobes")) {
      return ReportUsage("--nprobes excludes --minimum-nprobes and --maximum-nprobes", kUsage);
    }
    if (auto err = ParsePositive(args, "--nprobes", &n)) return ReportUsage(*err, kUsage);
    options.nprobes = n;
  }
  if (args.Has("--minimum-nprobes")) {
    if (auto err = ParsePositive(args, "--minimum-nprobes", &options.minimum_nprobes)) return ReportUsage(*err, kUsage);
  }
  if (args.Has("--maximum-nprobes")) {
    if (auto err = ParsePositive(args, "--maximum-nprobes", &n)) return ReportUsage(*err, kUsage);
    options.maximum_nprobes = n;
  }
  if (args.Has("--refine-factor")) {
    if (auto err = ParsePositive(args, "--refine-factor", &n)) return ReportUsage(*err, kUsage);
    options.refine_factor = n;
  }
  options.metric = args.Get("--metric");
  options.filter = args.Get("--filter");
  // As `search --full-text`: the contract's search filters first unless
  // --postfilter (pylance's to_table default is the postfilter).
  options.prefilter = !args.Has("--postfilter");
  options.use_index = !args.Has("--no-index");
  options.fast_search = args.Has("--fast-search");
  options.columns = Split(args.Get("--columns"));
  options.with_row_id = args.Has("--with-row-id");
  const std::string format = args.Get("--format", "table");
  if (format != "table" && format != "csv" && format != "json") return ReportUsage("bad --format " + format, kUsage);
  OpenOptions open;
  open.version = args.Get("--version");
  auto ds = OpenDataset(args.positional[0], open);
  if (!ds.ok()) return ReportError(ds.status());
  if (args.Has("--explain")) {
    auto text = ExplainVectorSearch(*ds, options);
    if (!text.ok()) return ReportError(text.status());
    std::cout << *text;
    return kExitOk;
  }
  auto table = VectorSearch(*ds, options);
  if (!table.ok()) return ReportError(table.status());
  auto reader = std::make_shared<arrow::TableBatchReader>(*table);
  Status st = EmitResult(reader, format, args.Get("--out"));
  return st.ok() ? kExitOk : ReportError(st);
}

}  // namespace lance::cli
