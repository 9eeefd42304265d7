// `lance-cpp shallow-clone` and `deep-clone`.
#include <iostream>

#include "cli.h"
#include "lance/dataset.h"

namespace lance::cli {
namespace {

int RunClone(const std::vector<std::string>& argv, bool shallow) {
  const char* usage = shallow ? "lance-cpp shallow-clone URI TARGET [--version V|TAG]"
                              : "lance-cpp deep-clone URI TARGET [--version V|TAG]";
  Args args;
  if (auto err = ParseArgs(argv, {"--version"}, {}, &args)) return ReportUsage(err->message, usage);
  if (args.positional.size() != 2) return ReportUsage("a clone takes a URI and a TARGET", usage);
  auto ds = OpenDataset(args.positional[0]);
  if (!ds.ok()) return ReportError(ds.status());
  CloneOptions options;
  options.reference = args.Get("--version");
  auto clone = shallow ? (*ds)->ShallowClone(args.positional[1], options)
                       : (*ds)->DeepClone(args.positional[1], options);
  if (!clone.ok()) return ReportError(clone.status());
  PrintChange(std::string(shallow ? "shallow" : "deep") + "-cloned " + args.positional[0] + " version " +
                  std::to_string((*clone)->version()) + " to " + args.positional[1],
              (*clone)->version(), true);
  return kExitOk;
}

}  // namespace

int RunShallowClone(const std::vector<std::string>& argv) { return RunClone(argv, /*shallow=*/true); }
int RunDeepClone(const std::vector<std::string>& argv) { return RunClone(argv, /*shallow=*/false); }

}  // namespace lance::cli
