// `lance-cpp add-columns`, `drop-columns`, `alter-column`: schema
// evolution through the builders of lance/dataset_ops.h.
#include <arrow/api.h>

#include <charconv>
#include <iostream>
#include <optional>

#include "cli.h"
#include "lance/dataset.h"
#include "lance/dataset_ops.h"

namespace lance::cli {
namespace {

// A type as pyarrow prints it: int32, float64, string, large_string,
// timestamp[us], timestamp[us, tz=UTC], date32[day], decimal128(10, 2),
// list<item: int64> (or list<int64>), large_list<...>,
// fixed_size_list<item: halffloat>[2], struct<a: int64, b: string>, ...
std::shared_ptr<arrow::DataType> ParseType(const std::string& s);

std::optional<int> ParseInt(const std::string& s) {
  int v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

std::string Trim(const std::string& s) {
  const auto b = s.find_first_not_of(' ');
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(' ') - b + 1);
}

// The item of list<...>: "NAME: TYPE" or a TYPE alone (named item), with
// an optional " not null" (as pyarrow prints a required item).
std::shared_ptr<arrow::Field> ParseItem(std::string inner) {
  inner = Trim(inner);
  bool nullable = true;
  const std::string not_null = " not null";
  if (inner.size() > not_null.size() && inner.compare(inner.size() - not_null.size(), not_null.size(), not_null) == 0) {
    nullable = false;
    inner = Trim(inner.substr(0, inner.size() - not_null.size()));
  }
  std::string name = "item";
  // A name precedes ": " outside any brackets.
  int depth = 0;
  for (size_t i = 0; i + 1 < inner.size(); ++i) {
    const char c = inner[i];
    if (c == '<' || c == '(' || c == '[') ++depth;
    if (c == '>' || c == ')' || c == ']') --depth;
    if (depth == 0 && c == ':' && inner[i + 1] == ' ') {
      name = inner.substr(0, i);
      inner = Trim(inner.substr(i + 2));
      break;
    }
  }
  auto type = ParseType(inner);
  return type ? arrow::field(name, type, nullable) : nullptr;
}

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
  for (const std::string kind : {"decimal128(", "decimal256("}) {
    if (s.rfind(kind, 0) != 0 || s.back() != ')') continue;
    const std::string inner = s.substr(kind.size(), s.size() - kind.size() - 1);
    const auto comma = inner.find(',');
    if (comma == std::string::npos) return nullptr;
    auto precision = ParseInt(Trim(inner.substr(0, comma)));
    auto scale = ParseInt(Trim(inner.substr(comma + 1)));
    if (!precision || !scale) return nullptr;
    auto type = kind == "decimal128(" ? arrow::Decimal128Type::Make(*precision, *scale)
                                      : arrow::Decimal256Type::Make(*precision, *scale);
    return type.ok() ? *type : nullptr;
  }
  for (const std::string kind : {"list<", "large_list<"}) {
    if (s.rfind(kind, 0) != 0 || s.back() != '>') continue;
    auto item = ParseItem(s.substr(kind.size(), s.size() - kind.size() - 1));
    if (!item) return nullptr;
    return kind == "list<" ? arrow::list(item) : arrow::large_list(item);
  }
  // dictionary<values=string, indices=int16, ordered=0>
  const std::string dict = "dictionary<values=";
  if (s.rfind(dict, 0) == 0 && s.back() == '>') {
    const auto idx = s.rfind(", indices=");
    const auto ord = s.rfind(", ordered=");
    if (idx == std::string::npos || ord == std::string::npos || ord < idx) return nullptr;
    auto values = ParseType(s.substr(dict.size(), idx - dict.size()));
    auto indices = ParseType(s.substr(idx + 10, ord - idx - 10));
    const std::string ordered = s.substr(ord + 10, s.size() - ord - 11);
    if (!values || !indices || !arrow::is_integer(indices->id()) || (ordered != "0" && ordered != "1")) return nullptr;
    return arrow::dictionary(indices, values, ordered == "1");
  }
  const std::string st = "struct<";
  if (s.rfind(st, 0) == 0 && s.back() == '>') {
    // Children "NAME: TYPE" split at the commas outside brackets.
    const std::string inner = s.substr(st.size(), s.size() - st.size() - 1);
    arrow::FieldVector children;
    int depth = 0;
    size_t from = 0;
    for (size_t i = 0; i <= inner.size(); ++i) {
      const char c = i < inner.size() ? inner[i] : ',';
      if (c == '<' || c == '(' || c == '[') ++depth;
      if (c == '>' || c == ')' || c == ']') --depth;
      if (c != ',' || depth != 0) continue;
      const std::string part = Trim(inner.substr(from, i - from));
      from = i + 1;
      if (part.empty() && inner.find_first_not_of(' ') == std::string::npos) break;  // struct<>
      if (part.find(": ") == std::string::npos) return nullptr;
      auto child = ParseItem(part);
      if (!child) return nullptr;
      children.push_back(child);
    }
    return arrow::struct_(children);
  }
  const std::string fsl = "fixed_size_list<";
  if (s.rfind(fsl, 0) == 0 && s.back() == ']') {
    const auto close = s.rfind(">[");
    if (close == std::string::npos) return nullptr;
    auto size = ParseInt(s.substr(close + 2, s.size() - close - 3));
    auto item = ParseItem(s.substr(fsl.size(), close - fsl.size()));
    if (!size || *size < 0 || !item) return nullptr;
    return arrow::fixed_size_list(item, *size);
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
