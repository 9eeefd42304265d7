// `lance-cpp file inspect IN.lance [--json]`
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli.h"
#include "lance/file_reader.h"
#include "table_output.h"

namespace lance::cli {
namespace {

using Json = nlohmann::ordered_json;
constexpr const char* kFileUsage =
    "lance-cpp file inspect IN.lance [--json] | file read IN.lance [--out FILE] [--format csv|json|table] | "
    "file write IN.arrow OUT.lance [--version 2.0|2.1|2.2] [--max-page-bytes N] [--data-cache-bytes N]";

// The short name of an encoding's type URL ("/lance.encodings21.PageLayout" -> "PageLayout").
std::string ShortTypeName(const std::string& url) {
  auto dot = url.rfind('.');
  return dot == std::string::npos ? url : url.substr(dot + 1);
}

Json RangesJson(const std::vector<BufferRange>& ranges) {
  Json out = Json::array();
  for (const auto& r : ranges) out.push_back({{"position", r.position}, {"size", r.size}});
  return out;
}

Json LayoutJson(const std::string& path, const FileLayout& layout) {
  Json j;
  j["path"] = path;
  j["version"] = layout.version;
  j["major_version"] = layout.major_version;
  j["minor_version"] = layout.minor_version;
  j["num_rows"] = layout.num_rows;
  j["file_size"] = layout.file_size;
  j["schema"] = Json::array();
  for (const auto& f : layout.schema.FieldsPreOrder()) {
    j["schema"].push_back({{"name", f.name},
                           {"id", f.id},
                           {"parent_id", f.parent_id},
                           {"logical_type", f.logical_type},
                           {"nullable", f.nullable}});
  }
  j["global_buffers"] = RangesJson(layout.global_buffers);
  j["columns"] = Json::array();
  for (const auto& c : layout.columns) {
    Json jc;
    jc["encoding"] = c.encoding_type_url;
    jc["buffers"] = RangesJson(c.buffers);
    jc["pages"] = Json::array();
    for (const auto& p : c.pages) {
      jc["pages"].push_back({{"length", p.length},
                             {"priority", p.priority},
                             {"encoding", p.encoding_type_url},
                             {"encoding_bytes", p.encoding.size()},
                             {"buffers", RangesJson(p.buffers)}});
    }
    j["columns"].push_back(std::move(jc));
  }
  return j;
}

void PrintHuman(const Json& j) {
  std::cout << "file:     " << j["path"].get<std::string>() << "\n"
            << "version:  " << j["version"].get<std::string>() << " (footer " << j["major_version"] << "."
            << j["minor_version"] << ")\n"
            << "rows:     " << j["num_rows"] << "\n"
            << "size:     " << j["file_size"] << " bytes, " << j["global_buffers"].size() << " global buffer(s)\n"
            << "schema:\n";
  for (const auto& f : j["schema"]) {
    std::cout << "  " << f["id"] << " " << f["name"].get<std::string>() << ": "
              << f["logical_type"].get<std::string>() << "\n";
  }
  std::cout << "columns:\n";
  size_t i = 0;
  for (const auto& c : j["columns"]) {
    uint64_t bytes = 0;
    for (const auto& p : c["pages"])
      for (const auto& b : p["buffers"]) bytes += b["size"].get<uint64_t>();
    std::string page_kind = c["pages"].empty() ? "-" : ShortTypeName(c["pages"][0]["encoding"].get<std::string>());
    std::cout << "  " << i++ << ": " << c["pages"].size() << " page(s), " << bytes << " bytes, " << page_kind << "\n";
  }
}

int RunFileInspect(const std::vector<std::string>& argv) {
  Args args;
  if (auto err = ParseArgs(argv, {}, {"--json"}, &args)) return ReportUsage(err->message, kFileUsage);
  if (args.positional.size() != 1) return ReportUsage("file inspect takes exactly one file", kFileUsage);
  auto reader = FileReader::Open(args.positional[0]);
  if (!reader.ok()) return ReportError(reader.status());
  Json j = LayoutJson(args.positional[0], (*reader)->layout());
  if (args.Has("--json")) {
    std::cout << j.dump(2) << std::endl;
  } else {
    PrintHuman(j);
  }
  return kExitOk;
}

int RunFileRead(const std::vector<std::string>& argv) {
  Args args;
  if (auto err = ParseArgs(argv, {"--out", "--format"}, {}, &args)) return ReportUsage(err->message, kFileUsage);
  if (args.positional.size() != 1) return ReportUsage("file read takes exactly one file", kFileUsage);
  const std::string format = args.Get("--format", "table");
  if (format != "table" && format != "csv" && format != "json") return ReportUsage("bad --format " + format, kFileUsage);
  auto reader = FileReader::Open(args.positional[0]);
  if (!reader.ok()) return ReportError(reader.status());
  auto table = (*reader)->ReadAll();
  if (!table.ok()) return ReportError(table.status());
  Status st = EmitResult(std::make_shared<arrow::TableBatchReader>(*table), format, args.Get("--out"));
  return st.ok() ? kExitOk : ReportError(st);
}

}  // namespace

int RunFile(const std::vector<std::string>& argv) {
  if (argv.empty()) return ReportUsage("file needs a subcommand", kFileUsage);
  std::vector<std::string> rest(argv.begin() + 1, argv.end());
  if (argv[0] == "inspect") return RunFileInspect(rest);
  if (argv[0] == "read") return RunFileRead(rest);
  if (argv[0] == "write") return RunFileWrite(rest);
  return ReportUsage("unknown file subcommand '" + argv[0] + "'", kFileUsage);
}

}  // namespace lance::cli
