// `lance-cpp branch URI create NAME [--version V] | list | delete NAME`.
#include <iostream>

#include "cli.h"
#include "lance/dataset.h"

namespace lance::cli {

int RunBranch(const std::vector<std::string>& argv) {
  constexpr const char* kUsage =
      "lance-cpp branch URI create NAME [--version V|TAG] | branch URI list | branch URI delete NAME";
  Args args;
  if (auto err = ParseArgs(argv, {"--version"}, {}, &args)) return ReportUsage(err->message, kUsage);
  const auto& p = args.positional;
  if (p.size() < 2) return ReportUsage("branch needs a URI and create, list or delete", kUsage);
  const std::string& action = p[1];
  if (action != "create" && action != "list" && action != "delete") {
    return ReportUsage("branch needs create, list or delete, not '" + action + "'", kUsage);
  }
  if ((action == "list") != (p.size() == 2) || p.size() > 3) {
    return ReportUsage(action == "list" ? "branch list takes no more arguments" : "branch " + action + " takes NAME",
                       kUsage);
  }
  if (args.Has("--version") && action != "create") return ReportUsage("--version goes with create", kUsage);
  // The source of a new branch is on --branch (main by default).
  auto ds = OpenDataset(p[0]);
  if (!ds.ok()) return ReportError(ds.status());
  if (action == "create") {
    auto branch = (*ds)->CreateBranch(p[2], args.Get("--version"));
    if (!branch.ok()) return ReportError(branch.status());
    PrintChange("created branch " + p[2] + " from " + ((*ds)->branch() ? "branch " + *(*ds)->branch() : "main") +
                    " version " + std::to_string((*branch)->version()),
                (*branch)->version(), true);
    return kExitOk;
  }
  if (action == "delete") {
    Status st = (*ds)->DeleteBranch(p[2]);
    if (!st.ok()) return ReportError(st);
    PrintChange("deleted branch " + p[2], (*ds)->latest_version(), false);
    return kExitOk;
  }
  auto branches = (*ds)->Branches();
  if (!branches.ok()) return ReportError(branches.status());
  for (const auto& [name, b] : *branches) {
    std::cout << name << " " << b.parent_branch.value_or("main") << " " << b.parent_version << "\n";
  }
  return kExitOk;
}

}  // namespace lance::cli
