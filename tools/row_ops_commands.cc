// `lance-cpp update`, `merge-insert` and `cleanup`.
#include <charconv>
#include <iostream>

#include "cli.h"
#include "lance/dataset_ops.h"
#include "input_reader.h"
#include "progress_bar.h"

namespace lance::cli {
namespace {

constexpr const char* kUpdateUsage =
    "lance-cpp update URI --set COL=EXPR [--set ...] [--where PRED] [--overlay] [--max-retries N] "
    "[--retry-timeout SECONDS] [--disable-transaction-file] [--quiet]";
constexpr const char* kMergeInsertUsage =
    "lance-cpp merge-insert URI --on KEY[,KEY] --input FILE [--when-matched-update-all] "
    "[--when-not-matched-insert-all] [--when-not-matched-by-source-delete [PRED]] [--max-retries N] "
    "[--retry-timeout SECONDS] [--disable-transaction-file] [--quiet]";
constexpr const char* kCleanupUsage =
    "lance-cpp cleanup URI --older-than DURATION [--delete-unverified] [--error-if-tagged-old-versions] [--quiet]";

std::vector<std::string> SplitCommas(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    const size_t comma = s.find(',', start);
    out.push_back(s.substr(start, comma - start));
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

// Seconds in "3600", "90s", "15m", "2h", "7d" or "1w".
bool ParseDuration(const std::string& s, int64_t* seconds) {
  if (s.empty()) return false;
  int64_t unit = 1;
  std::string digits = s;
  switch (s.back()) {
    case 's': unit = 1; digits.pop_back(); break;
    case 'm': unit = 60; digits.pop_back(); break;
    case 'h': unit = 3600; digits.pop_back(); break;
    case 'd': unit = 86400; digits.pop_back(); break;
    case 'w': unit = 7 * 86400; digits.pop_back(); break;
    default: break;
  }
  int64_t n = 0;
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  if (ec != std::errc() || ptr != digits.data() + digits.size() || digits.empty() || n < 0) return false;
  *seconds = n * unit;
  return true;
}

}  // namespace

int RunUpdate(const std::vector<std::string>& argv) {
  // --set repeats, so it is taken out before the generic parsing.
  std::vector<std::pair<std::string, std::string>> set;
  std::vector<std::string> rest;
  for (size_t i = 0; i < argv.size(); ++i) {
    std::string assignment;
    if (argv[i] == "--set") {
      if (i + 1 >= argv.size()) return ReportUsage("--set needs COL=EXPR", kUpdateUsage);
      assignment = argv[++i];
    } else if (argv[i].rfind("--set=", 0) == 0) {
      assignment = argv[i].substr(6);
    } else {
      rest.push_back(argv[i]);
      continue;
    }
    const size_t eq = assignment.find('=');
    if (eq == std::string::npos || eq == 0) {
      return ReportUsage("--set needs COL=EXPR, got '" + assignment + "'", kUpdateUsage);
    }
    // "v = v + 1" as well as "v=v+1".
    std::string column = assignment.substr(0, eq);
    while (!column.empty() && column.back() == ' ') column.pop_back();
    while (!column.empty() && column.front() == ' ') column.erase(column.begin());
    std::string value = assignment.substr(eq + 1);
    value.erase(0, value.find_first_not_of(' '));
    set.emplace_back(column, value);
  }
  Args args;
  if (auto err = ParseArgs(rest, {"--where", "--max-retries", "--retry-timeout"},
                           {"--quiet", "--disable-transaction-file", "--overlay"}, &args)) {
    return ReportUsage(err->message, kUpdateUsage);
  }
  UpdateOptions options;
  options.disable_transaction_file = args.Has("--disable-transaction-file");
  options.overlay = args.Has("--overlay");
  if (auto err = ParseRetryFlags(args, /*operation_level=*/true, &options.retry)) {
    return ReportUsage(err->message, kUpdateUsage);
  }
  if (args.positional.size() != 1) return ReportUsage("update takes exactly one URI", kUpdateUsage);
  if (set.empty()) return ReportUsage("update needs at least one --set", kUpdateUsage);
  ProgressBar bar(args.Has("--quiet"));
  options.progress = bar.Callback();
  auto ds = OpenDataset(args.positional[0]);
  if (!ds.ok()) return ReportError(ds.status());
  auto update = (*ds)->NewUpdate();
  for (const auto& [column, value] : set) update.Set(column, value);
  auto committed = update.Where(args.Get("--where")).Options(options).Commit();
  bar.Clear();
  if (!committed.ok()) return ReportError(committed.status());
  PrintChange("updated " + Counted(update.result().num_rows_updated, "row"), (*committed)->version(), true);
  return kExitOk;
}

int RunMergeInsert(const std::vector<std::string>& argv) {
  // The by-source delete takes an optional predicate: the argument after
  // it, when the command line has one positional more than the URI.
  const std::vector<std::string> values = {"--on", "--input", "--max-retries", "--retry-timeout"};
  const std::vector<std::string> switches = {"--when-matched-update-all", "--when-not-matched-insert-all",
                                             "--when-not-matched-by-source-delete", "--quiet",
                                             "--disable-transaction-file"};
  Args trial;
  std::vector<std::string> plain;
  for (const auto& a : argv) {
    if (a.rfind("--when-not-matched-by-source-delete=", 0) != 0) plain.push_back(a);
  }
  if (auto err = ParseArgs(plain, values, switches, &trial)) return ReportUsage(err->message, kMergeInsertUsage);
  MergeInsertParams params;
  std::vector<std::string> rest;
  for (size_t i = 0; i < argv.size(); ++i) {
    if (argv[i] == "--when-not-matched-by-source-delete") {
      params.when_not_matched_by_source_delete = true;
      if (trial.positional.size() == 2 && i + 1 < argv.size() && argv[i + 1].rfind("--", 0) != 0) {
        params.when_not_matched_by_source_predicate = argv[++i];
      }
    } else {
      rest.push_back(argv[i]);
    }
  }
  // The "--flag=PRED" form.
  const std::string inline_delete = "--when-not-matched-by-source-delete=";
  std::erase_if(rest, [&](const std::string& a) {
    if (a.rfind(inline_delete, 0) != 0) return false;
    params.when_not_matched_by_source_delete = true;
    params.when_not_matched_by_source_predicate = a.substr(inline_delete.size());
    return true;
  });
  Args args;
  if (auto err = ParseArgs(rest, values, switches, &args)) {
    return ReportUsage(err->message, kMergeInsertUsage);
  }
  if (args.positional.size() != 1) return ReportUsage("merge-insert takes exactly one URI", kMergeInsertUsage);
  if (!args.Has("--on") || args.Get("--on").empty()) return ReportUsage("--on KEY is required", kMergeInsertUsage);
  if (!args.Has("--input")) return ReportUsage("--input FILE is required", kMergeInsertUsage);
  if (auto err = ParseRetryFlags(args, /*operation_level=*/true, &params.retry)) {
    return ReportUsage(err->message, kMergeInsertUsage);
  }
  params.on = SplitCommas(args.Get("--on"));
  params.disable_transaction_file = args.Has("--disable-transaction-file");
  params.when_matched_update_all = args.Has("--when-matched-update-all");
  params.when_not_matched_insert_all = args.Has("--when-not-matched-insert-all");
  auto input = OpenInput(args.Get("--input"));
  if (!input.ok()) return ReportError(input.status());
  ProgressBar bar(args.Has("--quiet"));
  params.progress = bar.Callback();
  auto ds = OpenDataset(args.positional[0]);
  if (!ds.ok()) return ReportError(ds.status());
  auto merge = (*ds)->NewMergeInsert(params.on);
  auto committed = merge.Options(params).Commit(*input);
  bar.Clear();
  if (!committed.ok()) return ReportError(committed.status());
  const MergeInsertResult& result = merge.result();
  PrintChange("inserted " + Counted(result.num_inserted_rows, "row") + ", updated " +
                  Counted(result.num_updated_rows, "row") + ", deleted " + Counted(result.num_deleted_rows, "row"),
              (*committed)->version(), true);
  return kExitOk;
}

int RunCleanup(const std::vector<std::string>& argv) {
  Args args;
  if (auto err = ParseArgs(argv, {"--older-than"}, {"--delete-unverified", "--error-if-tagged-old-versions", "--quiet"},
                           &args)) {
    return ReportUsage(err->message, kCleanupUsage);
  }
  if (args.positional.size() != 1) return ReportUsage("cleanup takes exactly one URI", kCleanupUsage);
  int64_t seconds = 0;
  if (!args.Has("--older-than")) return ReportUsage("--older-than is required", kCleanupUsage);
  if (!ParseDuration(args.Get("--older-than"), &seconds)) {
    return ReportUsage("--older-than needs seconds or N[s|m|h|d|w], got '" + args.Get("--older-than") + "'",
                       kCleanupUsage);
  }
  ProgressBar bar(args.Has("--quiet"));
  CleanupOptions options;
  options.progress = bar.Callback();
  // The CLI keeps tagged versions (and cleans the rest) unless asked to
  // refuse as pylance's default does.
  options.error_if_tagged_old_versions = args.Has("--error-if-tagged-old-versions");
  auto ds = OpenDataset(args.positional[0]);
  if (!ds.ok()) {
    bar.Clear();
    return ReportError(ds.status());
  }
  auto result = (*ds)->CleanupOldVersions(seconds, args.Has("--delete-unverified"), options);
  bar.Clear();
  if (!result.ok()) return ReportError(result.status());
  auto latest = LatestVersion(args.positional[0]);
  if (!latest.ok()) return ReportError(latest.status());
  PrintChange("removed " + Counted(result->old_versions, "old version") + ", " +
                  Counted(result->data_files, "data file") + ", " + Counted(result->deletion_files, "deletion file") +
                  ", " + Counted(result->transaction_files, "transaction file") + ", " +
                  Counted(result->index_files, "index file") + " (" + Counted(result->bytes_removed, "byte") + ")",
              *latest, false);
  return kExitOk;
}

}  // namespace lance::cli
