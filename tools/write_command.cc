// `lance-cpp write`, `delete`, `restore` and `tag`: the commands that commit.
#include <algorithm>
#include <charconv>
#include <iostream>

#include "cli.h"
#include "input_reader.h"
#include "progress_bar.h"
#include "lance/dataset.h"
#include "lance/dataset_ops.h"
#include "lance/operations.h"
#include "lance/write.h"

namespace lance::cli {
namespace {

std::optional<uint64_t> ParseU64(const std::string& s) {
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}


std::vector<std::string> SplitList(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (!s.empty()) {
    const size_t comma = s.find(',', start);
    out.push_back(s.substr(start, comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace

int RunWrite(const std::vector<std::string>& argv) {
  constexpr const char* kUsage =
      "lance-cpp write URI --input FILE [--mode create|append|overwrite] "
      "[--data-storage-version legacy|2.0|2.1|2.2] [--enable-stable-row-ids] [--enable-v2-manifest-paths] "
      "[--allow-external-blob-outside-bases] "
      "[--disable-v2-manifest-paths] [--max-rows-per-file N] [--max-bytes-per-file N] [--max-retries N] "
      "[--disable-transaction-file] [--auto-cleanup-interval N --auto-cleanup-older-than SECONDS] "
      "[--initial-bases [root:]NAME=PATH,...] [--target-base NAME|PATH|ID[,...]] [--quiet]";
  Args args;
  if (auto err = ParseArgs(argv,
                           {"--input", "--mode", "--data-storage-version", "--max-rows-per-file",
                            "--max-bytes-per-file", "--max-retries", "--auto-cleanup-interval",
                            "--auto-cleanup-older-than", "--initial-bases", "--target-base"},
                           {"--enable-stable-row-ids", "--enable-v2-manifest-paths", "--allow-external-blob-outside-bases",
                            "--disable-v2-manifest-paths", "--disable-transaction-file", "--quiet"},
                           &args)) {
    return ReportUsage(err->message, kUsage);
  }
  if (args.positional.size() != 1) return ReportUsage("write takes exactly one URI", kUsage);
  if (!args.Has("--input")) return ReportUsage("write needs --input FILE", kUsage);
  WriteParams params;
  params.storage_options = StorageOptionsFlag();
  if (auto err = ParseRetryFlags(args, /*operation_level=*/false, &params.retry)) {
    return ReportUsage(err->message, kUsage);
  }
  const std::string mode = args.Get("--mode", "create");
  if (mode == "create") {
    params.mode = WriteMode::kCreate;
  } else if (mode == "append") {
    params.mode = WriteMode::kAppend;
  } else if (mode == "overwrite") {
    params.mode = WriteMode::kOverwrite;
  } else {
    return ReportUsage("--mode must be create, append or overwrite, not '" + mode + "'", kUsage);
  }
  if (args.Has("--data-storage-version")) {
    const std::string v = args.Get("--data-storage-version");
    if (v != "legacy" && v != "0.1" && v != "2.0" && v != "2.1" && v != "2.2" && v != "stable") {
      return ReportUsage("--data-storage-version must be legacy, 2.0, 2.1 or 2.2, not '" + v + "'", kUsage);
    }
    params.data_storage_version = v;
  }
  for (const char* flag : {"--max-rows-per-file", "--max-bytes-per-file"}) {
    if (!args.Has(flag)) continue;
    auto n = ParseU64(args.Get(flag));
    if (!n || *n == 0) {
      return ReportUsage(std::string(flag) + " must be a positive integer, not '" + args.Get(flag) + "'",
                         kUsage);
    }
    (std::string(flag) == "--max-rows-per-file" ? params.max_rows_per_file : params.max_bytes_per_file) = *n;
  }
  // pylance's initial_bases ("root:" marks a dataset-root base) and
  // target_bases, comma-separated.
  for (const auto& spec : SplitList(args.Get("--initial-bases"))) {
    BasePath base;
    std::string rest = spec;
    if (rest.rfind("root:", 0) == 0) {
      base.is_dataset_root = true;
      rest = rest.substr(5);
    }
    const size_t eq = rest.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == rest.size()) {
      return ReportUsage("--initial-bases needs [root:]NAME=PATH entries, got '" + spec + "'", kUsage);
    }
    base.name = rest.substr(0, eq);
    base.path = rest.substr(eq + 1);
    params.initial_bases.push_back(std::move(base));
  }
  params.target_bases = SplitList(args.Get("--target-base"));
  params.enable_stable_row_ids = args.Has("--enable-stable-row-ids");
  params.allow_external_blob_outside_bases = args.Has("--allow-external-blob-outside-bases");
  if (args.Has("--enable-v2-manifest-paths") && args.Has("--disable-v2-manifest-paths")) {
    return ReportUsage("--enable-v2-manifest-paths and --disable-v2-manifest-paths exclude each other", kUsage);
  }
  params.enable_v2_manifest_paths = !args.Has("--disable-v2-manifest-paths");
  params.disable_transaction_file = args.Has("--disable-transaction-file");
  // pylance's auto_cleanup_options (interval, older_than_seconds): both or neither.
  if (args.Has("--auto-cleanup-interval") != args.Has("--auto-cleanup-older-than")) {
    return ReportUsage("--auto-cleanup-interval and --auto-cleanup-older-than go together", kUsage);
  }
  if (args.Has("--auto-cleanup-interval")) {
    auto interval = ParseU64(args.Get("--auto-cleanup-interval"));
    auto older = ParseU64(args.Get("--auto-cleanup-older-than"));
    if (!interval || !older) {
      return ReportUsage("--auto-cleanup-interval and --auto-cleanup-older-than take whole numbers", kUsage);
    }
    params.auto_cleanup = WriteParams::AutoCleanup{*interval, *older};
  }

  // The bar on a terminal only, and not with --quiet.
  ProgressBar bar(args.Has("--quiet"));
  params.progress = bar.Callback();
  auto input = OpenInput(args.Get("--input"), &params.expected_rows);
  if (!input.ok()) return ReportError(input.status());
  // Append and overwrite start from the dataset opened here; creating (or
  // a dataset that does not open: WriteDataset creates it or gives the
  // error) goes through WriteDataset.
  std::shared_ptr<Dataset> before;
  params.branch = BranchOption();
  if (params.mode != WriteMode::kCreate) {
    auto opened = OpenDataset(args.positional[0]);
    if (opened.ok()) {
      before = *opened;
    } else if (!params.branch.empty()) {
      return ReportError(opened.status());  // a branch is never created by a write
    }
  }
  // As pylance's auto_cleanup_options, they take effect only when the write
  // creates the dataset: refused rather than ignored on an existing one.
  if (before && params.auto_cleanup) {
    return ReportUsage("--auto-cleanup-interval and --auto-cleanup-older-than are taken only when creating a "
                       "dataset; set the lance.auto_cleanup.* keys of " + args.positional[0] + " with config",
                       kUsage);
  }
  Result<std::shared_ptr<Dataset>> ds;
  uint64_t rows = 0, fragments = 0;
  if (!before) {
    ds = WriteDataset(*input, args.positional[0], params);
    // A new or overwritten dataset holds only what this write wrote.
    if (ds.ok()) {
      for (const auto& f : (*ds)->manifest().fragments) {
        auto physical = (*ds)->PhysicalRows(f);
        if (!physical.ok()) return ReportError(physical.status());
        rows += *physical;
        ++fragments;
      }
    }
  } else if (params.mode == WriteMode::kAppend) {
    auto append = before->NewAppend();
    ds = append.Options(params).Commit(*input);
    rows = append.result().rows_written;
    fragments = append.result().fragments_written;
  } else {
    auto overwrite = before->NewOverwrite();
    ds = overwrite.Options(params).Commit(*input);
    rows = overwrite.result().rows_written;
    fragments = overwrite.result().fragments_written;
  }
  bar.Clear();
  if (!ds.ok()) return ReportError(ds.status());
  PrintChange("wrote " + Counted(rows, "row") + " in " + Counted(fragments, "fragment"), (*ds)->version(), true);
  return kExitOk;
}

int RunDelete(const std::vector<std::string>& argv) {
  constexpr const char* kUsage = "lance-cpp delete URI PRED [--max-retries N] [--retry-timeout SECONDS] [--disable-transaction-file] "
      "[--quiet]";
  Args args;
  if (auto err = ParseArgs(argv, kRetryFlags, {"--quiet", "--disable-transaction-file"}, &args)) {
    return ReportUsage(err->message, kUsage);
  }
  if (args.positional.size() != 2) return ReportUsage("delete takes a URI and a predicate", kUsage);
  DeleteOptions options;
  options.disable_transaction_file = args.Has("--disable-transaction-file");
  if (auto err = ParseRetryFlags(args, /*operation_level=*/true, &options.retry)) {
    return ReportUsage(err->message, kUsage);
  }
  ProgressBar bar(args.Has("--quiet"));
  options.progress = bar.Callback();
  auto ds = OpenDataset(args.positional[0]);
  if (!ds.ok()) return ReportError(ds.status());
  auto del = (*ds)->NewDelete(args.positional[1]);
  auto committed = del.Options(options).Commit();
  bar.Clear();
  if (!committed.ok()) return ReportError(committed.status());
  PrintChange("deleted " + Counted(del.result().num_deleted_rows, "row"), (*committed)->version(),
              del.result().committed);
  return kExitOk;
}

int RunRestore(const std::vector<std::string>& argv) {
  constexpr const char* kUsage = "lance-cpp restore URI VERSION [--disable-transaction-file]";
  Args args;
  if (auto err = ParseArgs(argv, {}, {"--disable-transaction-file"}, &args)) return ReportUsage(err->message, kUsage);
  if (args.positional.size() != 2) return ReportUsage("restore takes a URI and a version", kUsage);
  auto version = ParseU64(args.positional[1]);
  if (!version) return ReportUsage("VERSION must be a version number, not '" + args.positional[1] + "'", kUsage);
  auto ds = OpenDataset(args.positional[0]);
  if (!ds.ok()) return ReportError(ds.status());
  auto restored = (*ds)->NewRestore(*version).DisableTransactionFile(args.Has("--disable-transaction-file")).Commit();
  if (!restored.ok()) return ReportError(restored.status());
  PrintChange("restored version " + std::to_string(*version), (*restored)->version(), true);
  return kExitOk;
}

// Both `tag URI create NAME VERSION` (the contract) and
// `tag create URI NAME VERSION` are accepted.
int RunTag(const std::vector<std::string>& argv) {
  constexpr const char* kUsage =
      "lance-cpp tag URI create NAME VERSION | tag URI delete NAME | tag URI list";
  Args args;
  if (auto err = ParseArgs(argv, {}, {}, &args)) return ReportUsage(err->message, kUsage);
  auto& p = args.positional;
  auto is_action = [](const std::string& s) { return s == "create" || s == "delete" || s == "list"; };
  if (p.size() >= 2 && is_action(p[0]) && !is_action(p[1])) std::swap(p[0], p[1]);
  if (p.size() < 2 || !is_action(p[1])) return ReportUsage("tag needs a URI and create, delete or list", kUsage);
  const std::string& uri = p[0];
  const std::string& action = p[1];
  auto ds = OpenDataset(uri);
  if (!ds.ok()) return ReportError(ds.status());
  if (action == "create") {
    if (p.size() != 4) return ReportUsage("tag create takes NAME and VERSION", kUsage);
    auto version = ParseU64(p[3]);
    if (!version) return ReportUsage("VERSION must be a version number, not '" + p[3] + "'", kUsage);
    Status st = (*ds)->CreateTag(p[2], *version);
    if (!st.ok()) return ReportError(st);
    auto latest = LatestVersion(uri);
    if (!latest.ok()) return ReportError(latest.status());
    PrintChange("created tag " + p[2] + " on version " + std::to_string(*version), *latest, false);
    return kExitOk;
  }
  if (action == "delete") {
    if (p.size() != 3) return ReportUsage("tag delete takes NAME", kUsage);
    Status st = (*ds)->DeleteTag(p[2]);
    if (!st.ok()) return ReportError(st);
    auto latest = LatestVersion(uri);
    if (!latest.ok()) return ReportError(latest.status());
    PrintChange("deleted tag " + p[2], *latest, false);
    return kExitOk;
  }
  if (p.size() != 2) return ReportUsage("tag list takes no more arguments", kUsage);
  auto tags = (*ds)->Tags();
  if (!tags.ok()) return ReportError(tags.status());
  for (const auto& [name, tag] : *tags) {
    std::cout << name << " " << tag.version << (tag.branch ? " " + *tag.branch : "") << "\n";
  }
  return kExitOk;
}

}  // namespace lance::cli
