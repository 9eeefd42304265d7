// `lance-cpp versions URI`
#include <iostream>

#include "cli.h"
#include "lance/dataset.h"

namespace lance::cli {

int RunVersions(const std::vector<std::string>& argv) {
  constexpr const char* kUsage = "lance-cpp versions URI";
  Args args;
  if (auto err = ParseArgs(argv, {}, {}, &args)) return ReportUsage(err->message, kUsage);
  if (args.positional.size() != 1) return ReportUsage("versions takes exactly one URI", kUsage);
  auto ds = OpenDataset(args.positional[0]);
  if (!ds.ok()) return ReportError(ds.status());
  auto versions = (*ds)->Versions();
  if (!versions.ok()) return ReportError(versions.status());
  for (const auto& v : *versions) {
    std::cout << v.version << " " << (v.timestamp_nanos ? FormatTimestamp(*v.timestamp_nanos) : "-") << " "
              << (v.operation.empty() ? "-" : v.operation) << "\n";
  }
  return kExitOk;
}

}  // namespace lance::cli
