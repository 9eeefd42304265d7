// `lance-cpp take-blobs`: blob values as bytes, as pylance's take_blobs.
#include <charconv>

#include <arrow/table.h>

#include "cli.h"
#include "lance/blob.h"
#include "lance/dataset.h"
#include "table_output.h"

namespace lance::cli {
namespace {

constexpr const char* kTakeBlobsUsage =
    "lance-cpp take-blobs URI COLUMN (--indices I,J,... | --row-ids R,... | --addresses A,...) [--version V] "
    "[--out FILE] [--format csv|json|table]";

bool ParseNumberList(const std::string& s, std::vector<uint64_t>* out) {
  size_t start = 0;
  while (start <= s.size()) {
    const size_t comma = std::min(s.find(',', start), s.size());
    uint64_t v = 0;
    auto [ptr, ec] = std::from_chars(s.data() + start, s.data() + comma, v);
    if (ec != std::errc() || ptr != s.data() + comma) return false;
    out->push_back(v);
    start = comma + 1;
  }
  return !out->empty();
}

}  // namespace

int RunTakeBlobs(const std::vector<std::string>& argv) {
  Args args;
  if (auto err = ParseArgs(argv, {"--version", "--indices", "--row-ids", "--addresses", "--out", "--format"}, {},
                           &args)) {
    return ReportUsage(err->message, kTakeBlobsUsage);
  }
  if (args.positional.size() != 2) return ReportUsage("take-blobs takes a URI and a column", kTakeBlobsUsage);
  const int selections = args.Has("--indices") + args.Has("--row-ids") + args.Has("--addresses");
  if (selections != 1) {
    return ReportUsage("take-blobs needs exactly one of --indices, --row-ids and --addresses", kTakeBlobsUsage);
  }
  BlobRows by = BlobRows::kIndices;
  std::string flag = "--indices";
  if (args.Has("--row-ids")) by = BlobRows::kRowIds, flag = "--row-ids";
  if (args.Has("--addresses")) by = BlobRows::kRowAddresses, flag = "--addresses";
  std::vector<uint64_t> rows;
  if (!ParseNumberList(args.Get(flag), &rows)) {
    return ReportUsage("bad number list '" + args.Get(flag) + "' for " + flag, kTakeBlobsUsage);
  }
  const std::string format = args.Get("--format", "table");
  if (format != "table" && format != "csv" && format != "json") {
    return ReportUsage("bad --format " + format, kTakeBlobsUsage);
  }
  OpenOptions options;
  options.version = args.Get("--version");
  auto ds = OpenDataset(args.positional[0], options);
  if (!ds.ok()) return ReportError(ds.status());
  const std::string& column = args.positional[1];
  auto values = TakeBlobs(*ds, column, rows, by);
  if (!values.ok()) return ReportError(values.status());
  auto table = arrow::Table::Make(arrow::schema({arrow::field(column, arrow::large_binary())}), {*values});
  auto reader = std::make_shared<arrow::TableBatchReader>(*table);
  Status st = EmitResult(reader, format, args.Get("--out"));
  return st.ok() ? kExitOk : ReportError(st);
}

}  // namespace lance::cli
