// lance-cpp: the command line (see shared/design/cli-contract.md).
#include <iostream>
#include <string>
#include <vector>

#include "cli.h"

namespace {

constexpr const char* kUsage =
    "lance-cpp <command> [args]\n"
    "commands:\n"
    "  inspect URI [--version V] [--json]   versions, schema, fragments, flags, indices\n"
    "  versions URI                         one line per version: number timestamp operation\n"
    "  file inspect IN.lance [--json]       footer version, columns, pages, encodings, global buffers\n";

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) return lance::cli::ReportUsage("no command given", kUsage);
  const std::string cmd = args.front();
  args.erase(args.begin());
  if (cmd == "--help" || cmd == "-h" || cmd == "help") {
    std::cout << "usage: " << kUsage;
    return lance::cli::kExitOk;
  }
  if (cmd == "inspect") return lance::cli::RunInspect(args);
  if (cmd == "versions") return lance::cli::RunVersions(args);
  if (cmd == "file") return lance::cli::RunFile(args);
  return lance::cli::ReportUsage("unknown command '" + cmd + "'", kUsage);
}
