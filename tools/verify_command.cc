// `lance-cpp verify URI [--all-versions] [--deep] [--json] [--version V] [--quiet]`
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli.h"
#include "lance/verify.h"
#include "progress_bar.h"

namespace lance::cli {
namespace {

constexpr const char* kVerifyUsage = "lance-cpp verify URI [--all-versions] [--deep] [--json] [--version V] [--quiet]";

}  // namespace

int RunVerify(const std::vector<std::string>& argv) {
  Args args;
  if (auto err = ParseArgs(argv, {"--version"}, {"--all-versions", "--deep", "--json", "--quiet"}, &args)) {
    return ReportUsage(err->message, kVerifyUsage);
  }
  if (args.positional.size() != 1) return ReportUsage("verify takes exactly one URI", kVerifyUsage);
  if (args.Has("--version") && args.Has("--all-versions")) {
    return ReportUsage("--version and --all-versions do not go together", kVerifyUsage);
  }
  if (args.Has("--version") && args.Get("--version").empty()) {
    return ReportUsage("--version needs a version number or tag", kVerifyUsage);
  }
  VerifyOptions options;
  options.all_versions = args.Has("--all-versions");
  options.deep = args.Has("--deep");
  options.version = args.Get("--version");
  options.branch = BranchOption();
  ProgressBar bar(args.Has("--quiet"));
  options.progress = bar.Callback();
  auto report = Verify(args.positional[0], options);
  bar.Clear();
  if (!report.ok()) return ReportError(report.status());

  if (args.Has("--json")) {
    nlohmann::ordered_json j;
    j["versions_checked"] = report->versions_checked;
    j["findings"] = nlohmann::ordered_json::array();
    for (const auto& f : report->findings) {
      j["findings"].push_back({{"version", f.version}, {"path", f.path}, {"check", f.check}, {"message", f.message}});
    }
    j["ok"] = report->ok();
    std::cout << j.dump(2) << std::endl;
  } else {
    // One line per finding: which version, which check, the file, what is
    // wrong; nothing when clean (the exit status says it).
    for (const auto& f : report->findings) {
      std::cout << "version " << f.version << ": " << f.check << ": " << f.path << ": " << f.message << "\n";
    }
  }
  std::cout.flush();
  return report->ok() ? kExitOk : kExitError;
}

}  // namespace lance::cli
