// `lance-cpp scan`, `take`, `count`.
#include <charconv>
#include <iostream>

#include <arrow/table.h>

#include "cli.h"
#include "lance/dataset.h"
#include "lance/scanner.h"
#include "table_output.h"

namespace lance::cli {
namespace {

constexpr const char* kScanUsage =
    "lance-cpp scan URI [--version V] [--columns a,b.c] [--filter PRED] [--limit N] [--offset N] "
    "[--with-row-id] [--with-row-address] [--out FILE] [--format csv|json|table] [--explain] [--no-index]";
constexpr const char* kTakeUsage =
    "lance-cpp take URI (--indices I,J,... | --row-ids R,...) [--version V] [--columns ...] [--out FILE] "
    "[--format csv|json|table]";
constexpr const char* kCountUsage = "lance-cpp count URI [--version V] [--filter PRED]";

std::vector<std::string> SplitCommas(const std::string& s) {
  std::vector<std::string> out;
  if (s.empty()) return out;
  size_t start = 0;
  while (true) {
    size_t comma = s.find(',', start);
    out.push_back(s.substr(start, comma - start));
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

template <typename T>
bool ParseNumber(const std::string& s, T* out) {
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && ptr == s.data() + s.size();
}

bool ParseNumbers(const std::string& s, std::vector<uint64_t>* out) {
  for (const auto& part : SplitCommas(s)) {
    uint64_t v;
    if (!ParseNumber(part, &v)) return false;
    out->push_back(v);
  }
  return !out->empty();
}

Result<std::shared_ptr<Dataset>> OpenAt(const Args& args) {
  OpenOptions options;
  options.version = args.Get("--version");
  return OpenDataset(args.positional[0], options);
}

bool ValidFormat(const std::string& f) { return f == "table" || f == "csv" || f == "json"; }

}  // namespace

int RunScan(const std::vector<std::string>& argv) {
  Args args;
  if (auto err = ParseArgs(argv, {"--version", "--columns", "--filter", "--limit", "--offset", "--out", "--format"},
                           {"--with-row-id", "--with-row-address", "--explain", "--no-index"}, &args)) {
    return ReportUsage(err->message, kScanUsage);
  }
  if (args.positional.size() != 1) return ReportUsage("scan takes exactly one URI", kScanUsage);
  ScanOptions options;
  options.columns = SplitCommas(args.Get("--columns"));
  options.filter = args.Get("--filter");
  options.with_row_id = args.Has("--with-row-id");
  options.with_row_address = args.Has("--with-row-address");
  options.use_scalar_index = !args.Has("--no-index");
  if (args.Has("--limit")) {
    int64_t n;
    if (!ParseNumber(args.Get("--limit"), &n) || n < 0) return ReportUsage("bad --limit " + args.Get("--limit"), kScanUsage);
    options.limit = n;
  }
  if (args.Has("--offset")) {
    if (!ParseNumber(args.Get("--offset"), &options.offset) || options.offset < 0) {
      return ReportUsage("bad --offset " + args.Get("--offset"), kScanUsage);
    }
  }
  const std::string format = args.Get("--format", "table");
  if (!ValidFormat(format)) return ReportUsage("bad --format " + format, kScanUsage);
  auto ds = OpenAt(args);
  if (!ds.ok()) return ReportError(ds.status());
  if (args.Has("--explain")) {
    auto text = ScanBuilder(*ds).Options(options).ExplainPlan();
    if (!text.ok()) return ReportError(text.status());
    std::cout << *text;
    return kExitOk;
  }
  auto reader = ScanBuilder(*ds).Options(options).ToReader();
  if (!reader.ok()) return ReportError(reader.status());
  Status st = EmitResult(*reader, format, args.Get("--out"));
  return st.ok() ? kExitOk : ReportError(st);
}

int RunTake(const std::vector<std::string>& argv) {
  Args args;
  if (auto err = ParseArgs(argv, {"--version", "--columns", "--indices", "--row-ids", "--out", "--format"}, {}, &args)) {
    return ReportUsage(err->message, kTakeUsage);
  }
  if (args.positional.size() != 1) return ReportUsage("take takes exactly one URI", kTakeUsage);
  if (args.Has("--indices") == args.Has("--row-ids")) {
    return ReportUsage("take needs exactly one of --indices and --row-ids", kTakeUsage);
  }
  std::vector<uint64_t> values;
  const std::string list = args.Has("--indices") ? args.Get("--indices") : args.Get("--row-ids");
  if (!ParseNumbers(list, &values)) return ReportUsage("bad number list '" + list + "'", kTakeUsage);
  const std::string format = args.Get("--format", "table");
  if (!ValidFormat(format)) return ReportUsage("bad --format " + format, kTakeUsage);
  auto ds = OpenAt(args);
  if (!ds.ok()) return ReportError(ds.status());
  auto columns = SplitCommas(args.Get("--columns"));
  auto table = args.Has("--indices") ? Take(*ds, values, columns) : TakeRows(*ds, values, columns);
  if (!table.ok()) return ReportError(table.status());
  auto reader = std::make_shared<arrow::TableBatchReader>(*table);
  Status st = EmitResult(reader, format, args.Get("--out"));
  return st.ok() ? kExitOk : ReportError(st);
}

int RunCount(const std::vector<std::string>& argv) {
  Args args;
  if (auto err = ParseArgs(argv, {"--version", "--filter"}, {}, &args)) return ReportUsage(err->message, kCountUsage);
  if (args.positional.size() != 1) return ReportUsage("count takes exactly one URI", kCountUsage);
  auto ds = OpenAt(args);
  if (!ds.ok()) return ReportError(ds.status());
  auto n = ScanBuilder(*ds).Filter(args.Get("--filter")).CountRows();
  if (!n.ok()) return ReportError(n.status());
  std::cout << *n << std::endl;
  return kExitOk;
}

}  // namespace lance::cli
