// `lance-cpp add-columns`, `drop-columns`, `alter-column`: schema
// evolution through the builders of lance/dataset_ops.h.
#include <arrow/api.h>

#include <iostream>
#include <optional>

#include "cli.h"
#include "lance/dataset.h"
#include "lance/dataset_ops.h"

namespace lance::cli {
namespace {

// A type as pyarrow prints it: int32, float64, string, large_string,
// timestamp[us], timestamp[us, tz=UTC], date32[day], ...
std::shared_ptr<arrow::DataType> ParseType(const std::string& s) {
  static const std::map<std::string, std::shared_ptr<arrow::DataType>> kSimple = {
      {"bool", arrow::boolean()},       {"int8", arrow::int8()},         {"int16", arrow::int16()},
      {"int32", arrow::int32()},        {"int64", arrow::int64()},       {"uint8", arrow::uint8()},
      {"uint16", arrow::uint16()},      {"uint32", arrow::uint32()},     {"uint64", arrow::uint64()},
      {"halffloat", arrow::float16()},  {"float16", arrow::float16()},   {"float", arrow::float32()},
      {"float32", arrow::float32()},    {"double", arrow::float64()},    {"float64", arrow::float64()},
      {"string", arrow::utf8()},        {"utf8", arrow::utf8()},         {"large_string", arrow::large_utf8()},
      {"large_utf8", arrow::large_utf8()}, {"binary", arrow::binary()},  {"large_binary", arrow::large_binary()},
      {"date32[day]", arrow::date32()}, {"date32", arrow::date32()},     {"date64[ms]", arrow::date64()},
  };
  if (auto it = kSimple.find(s); it != kSimple.end()) return it->second;
  auto unit_of = [](const std::string& u) -> std::optional<arrow::TimeUnit::type> {
    if (u == "s") return arrow::TimeUnit::SECOND;
    if (u == "ms") return arrow::TimeUnit::MILLI;
    if (u == "us") return arrow::TimeUnit::MICRO;
    if (u == "ns") return arrow::TimeUnit::NANO;
    return std::nullopt;
  };
  const std::string ts = "timestamp[";
  if (s.rfind(ts, 0) == 0 && s.back() == ']') {
    std::string inner = s.substr(ts.size(), s.size() - ts.size() - 1);
    std::string tz;
    if (auto comma = inner.find(", tz="); comma != std::string::npos) {
      tz = inner.substr(comma + 5);
      inner = inner.substr(0, comma);
    }
    if (auto unit = unit_of(inner)) return arrow::timestamp(*unit, tz);
  }
  return nullptr;
}

int RunAddColumns(const std::vector<std::string>& argv) {
  constexpr const char* kUsage = "lance-cpp add-columns URI NAME=SQL [NAME=SQL ...] | add-columns URI --null NAME:TYPE [--null ...]";
  // --null may repeat: take those out before the common parser.
  std::vector<std::string> rest;
  std::vector<std::string> nulls;
  for (size_t i = 0; i < argv.size(); ++i) {
    if (argv[i] == "--null") {
      if (i + 1 >= argv.size()) return ReportUsage("--null needs NAME:TYPE", kUsage);
      nulls.push_back(argv[++i]);
    } else {
      rest.push_back(argv[i]);
    }
  }
  Args args;
  if (auto err = ParseArgs(rest, {}, {"--quiet"}, &args)) return ReportUsage(err->message, kUsage);
  if (args.positional.empty()) return ReportUsage("add-columns takes a URI", kUsage);
  if (args.positional.size() == 1 && nulls.empty()) return ReportUsage("no column to add", kUsage);
  if (args.positional.size() > 1 && !nulls.empty()) {
    return ReportUsage("NAME=SQL columns and --null columns are added in separate commands", kUsage);
  }
  auto ds = OpenDataset(args.positional[0]);
  if (!ds.ok()) return ReportError(ds.status());
  auto builder = (*ds)->NewAddColumns();
  std::vector<std::string> names;
  for (size_t i = 1; i < args.positional.size(); ++i) {
    const std::string& a = args.positional[i];
    const auto eq = a.find('=');
    if (eq == std::string::npos || eq == 0) return ReportUsage("'" + a + "' is not NAME=SQL", kUsage);
    builder.Sql(a.substr(0, eq), a.substr(eq + 1));
    names.push_back(a.substr(0, eq));
  }
  for (const auto& n : nulls) {
    const auto colon = n.find(':');
    if (colon == std::string::npos || colon == 0) return ReportUsage("'" + n + "' is not NAME:TYPE", kUsage);
    auto type = ParseType(n.substr(colon + 1));
    if (!type) return ReportUsage("unknown type '" + n.substr(colon + 1) + "' (as pyarrow prints types)", kUsage);
    builder.AllNulls(arrow::field(n.substr(0, colon), type, true));
    names.push_back(n.substr(0, colon));
  }
  auto committed = builder.Commit();
  if (!committed.ok()) return ReportError(committed.status());
  PrintChange("added " + Counted(names.size(), "column"), (*committed)->version(), true);
  return kExitOk;
}

int RunDropColumns(const std::vector<std::string>& argv) {
  constexpr const char* kUsage = "lance-cpp drop-columns URI COL[,COL...]";
  Args args;
  if (auto err = ParseArgs(argv, {}, {"--quiet"}, &args)) return ReportUsage(err->message, kUsage);
  if (args.positional.size() != 2) return ReportUsage("drop-columns takes a URI and columns", kUsage);
  std::vector<std::string> columns;
  size_t start = 0;
  const std::string& list = args.positional[1];
  while (start <= list.size()) {
    const size_t comma = list.find(',', start);
    const std::string c = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (c.empty()) return ReportUsage("empty column name in '" + list + "'", kUsage);
    columns.push_back(c);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  auto ds = OpenDataset(args.positional[0]);
  if (!ds.ok()) return ReportError(ds.status());
  auto committed = (*ds)->NewDropColumns(columns).Commit();
  if (!committed.ok()) return ReportError(committed.status());
  PrintChange("dropped " + Counted(columns.size(), "column"), (*committed)->version(), true);
  return kExitOk;
}

int RunAlterColumn(const std::vector<std::string>& argv) {
  constexpr const char* kUsage =
      "lance-cpp alter-column URI COL [--rename NEW] [--nullable|--not-nullable] [--cast TYPE]";
  Args args;
  if (auto err = ParseArgs(argv, {"--rename", "--cast"}, {"--nullable", "--not-nullable", "--quiet"}, &args)) {
    return ReportUsage(err->message, kUsage);
  }
  if (args.positional.size() != 2) return ReportUsage("alter-column takes a URI and a column", kUsage);
  if (args.Has("--nullable") && args.Has("--not-nullable")) {
    return ReportUsage("--nullable and --not-nullable exclude each other", kUsage);
  }
  ColumnAlteration a;
  a.path = args.positional[1];
  if (args.Has("--rename")) a.rename = args.Get("--rename");
  if (args.Has("--nullable")) a.nullable = true;
  if (args.Has("--not-nullable")) a.nullable = false;
  if (args.Has("--cast")) {
    a.data_type = ParseType(args.Get("--cast"));
    if (!a.data_type) return ReportUsage("unknown type '" + args.Get("--cast") + "' (as pyarrow prints types)", kUsage);
  }
  if (!a.rename && !a.nullable && !a.data_type) return ReportUsage("nothing to alter", kUsage);
  auto ds = OpenDataset(args.positional[0]);
  if (!ds.ok()) return ReportError(ds.status());
  auto committed = (*ds)->NewAlterColumns().Alter(a).Commit();
  if (!committed.ok()) return ReportError(committed.status());
  PrintChange("altered column " + a.path, (*committed)->version(), true);
  return kExitOk;
}

}  // namespace

int RunSchemaCommand(const std::string& cmd, const std::vector<std::string>& argv) {
  if (cmd == "add-columns") return RunAddColumns(argv);
  if (cmd == "drop-columns") return RunDropColumns(argv);
  return RunAlterColumn(argv);
}

}  // namespace lance::cli
