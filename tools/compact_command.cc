// `lance-cpp compact`: pylance's compact_files, or with --plan its plan only.
#include <charconv>
#include <iostream>
#include <sstream>

#include "cli.h"
#include "lance/compaction.h"
#include "progress_bar.h"

namespace lance::cli {
namespace {

constexpr const char* kCompactUsage =
    "lance-cpp compact URI [--target-rows-per-fragment N] [--max-rows-per-group N] [--max-bytes-per-file N] "
    "[--materialize-deletions-threshold F] [--no-materialize-deletions] [--defer-index-remap] "
    "[--compaction-mode reencode|try_binary_copy|force_binary_copy] [--data-storage-version V] "
    "[--num-threads N] [--batch-size N] [--max-source-fragments N] [--max-source-rows N] "
    "[--max-source-bytes N] [--max-overlays-per-fragment N|none] [--exclude-fragments I,J,...] [--max-retries N] "
    "[--retry-timeout SECONDS] [--disable-transaction-file] [--plan [--json]] [--quiet]";

std::optional<uint64_t> ParseCount(const std::string& s) {
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

std::optional<UsageError> ParseOptions(const Args& args, CompactionOptions* o) {
  const std::pair<const char*, uint64_t*> counts[] = {{"--target-rows-per-fragment", &o->target_rows_per_fragment},
                                                      {"--max-rows-per-group", &o->max_rows_per_group}};
  for (const auto& [flag, target] : counts) {
    if (!args.Has(flag)) continue;
    auto n = ParseCount(args.Get(flag));
    if (!n) return UsageError{std::string(flag) + " needs a non-negative integer, got '" + args.Get(flag) + "'"};
    *target = *n;
  }
  const std::pair<const char*, std::optional<uint64_t>*> optional_counts[] = {
      {"--max-bytes-per-file", &o->max_bytes_per_file},     {"--batch-size", &o->batch_size},
      {"--max-source-fragments", &o->max_source_fragments}, {"--max-source-rows", &o->max_source_rows},
      {"--max-source-bytes", &o->max_source_bytes}};
  for (const auto& [flag, target] : optional_counts) {
    if (!args.Has(flag)) continue;
    auto n = ParseCount(args.Get(flag));
    if (!n) return UsageError{std::string(flag) + " needs a non-negative integer, got '" + args.Get(flag) + "'"};
    *target = *n;
  }
  if (args.Has("--max-overlays-per-fragment")) {
    const std::string v = args.Get("--max-overlays-per-fragment");
    if (v == "none") {
      o->max_overlays_per_fragment = std::optional<uint64_t>();
    } else {
      auto n = ParseCount(v);
      if (!n) return UsageError{"--max-overlays-per-fragment needs a non-negative integer or 'none', got '" + v + "'"};
      o->max_overlays_per_fragment = std::optional<uint64_t>(*n);
    }
  }
  if (args.Has("--num-threads")) {
    auto n = ParseCount(args.Get("--num-threads"));
    if (!n || *n > UINT32_MAX) return UsageError{"--num-threads needs a non-negative integer, got '" + args.Get("--num-threads") + "'"};
    o->num_threads = static_cast<uint32_t>(*n);
  }
  if (args.Has("--materialize-deletions-threshold")) {
    const std::string s = args.Get("--materialize-deletions-threshold");
    float f = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), f);
    if (ec != std::errc() || end != s.data() + s.size() || s.empty()) {
      return UsageError{"--materialize-deletions-threshold needs a number, got '" + s + "'"};
    }
    o->materialize_deletions_threshold = f;
  }
  if (args.Has("--no-materialize-deletions")) o->materialize_deletions = false;
  if (args.Has("--defer-index-remap")) o->defer_index_remap = true;
  if (args.Has("--compaction-mode")) {
    const std::string m = args.Get("--compaction-mode");
    if (m == "reencode") {
      o->compaction_mode = CompactionMode::kReencode;
    } else if (m == "try_binary_copy") {
      o->compaction_mode = CompactionMode::kTryBinaryCopy;
    } else if (m == "force_binary_copy") {
      o->compaction_mode = CompactionMode::kForceBinaryCopy;
    } else {
      return UsageError{"--compaction-mode needs reencode, try_binary_copy or force_binary_copy, got '" + m + "'"};
    }
  }
  if (args.Has("--data-storage-version")) o->data_storage_version = args.Get("--data-storage-version");
  if (args.Has("--exclude-fragments")) {
    std::stringstream ids(args.Get("--exclude-fragments"));
    std::string id;
    while (std::getline(ids, id, ',')) {
      auto n = ParseCount(id);
      if (!n) return UsageError{"--exclude-fragments needs fragment ids I,J,..., got '" + args.Get("--exclude-fragments") + "'"};
      o->excluded_fragment_ids.push_back(*n);
    }
  }
  return std::nullopt;
}

}  // namespace

int RunCompact(const std::vector<std::string>& argv) {
  Args args;
  std::vector<std::string> value_flags = {"--target-rows-per-fragment", "--max-rows-per-group", "--max-bytes-per-file",
                                          "--materialize-deletions-threshold", "--compaction-mode",
                                          "--data-storage-version", "--num-threads", "--batch-size",
                                          "--max-source-fragments", "--max-source-rows", "--max-source-bytes",
                                          "--max-overlays-per-fragment", "--exclude-fragments"};
  value_flags.insert(value_flags.end(), kRetryFlags.begin(), kRetryFlags.end());
  if (auto err = ParseArgs(argv, value_flags,
                           {"--no-materialize-deletions", "--defer-index-remap", "--plan", "--json", "--quiet",
                            "--disable-transaction-file"},
                           &args)) {
    return ReportUsage(err->message, kCompactUsage);
  }
  if (args.positional.size() != 1) return ReportUsage("compact takes exactly one URI", kCompactUsage);
  if (args.Has("--json") && !args.Has("--plan")) return ReportUsage("--json goes with --plan", kCompactUsage);
  CompactionOptions options;
  if (auto err = ParseOptions(args, &options)) return ReportUsage(err->message, kCompactUsage);
  options.disable_transaction_file = args.Has("--disable-transaction-file");
  if (auto err = ParseRetryFlags(args, /*operation_level=*/true, &options.retry)) {
    return ReportUsage(err->message, kCompactUsage);
  }
  auto dataset = OpenDataset(args.positional[0]);
  if (!dataset.ok()) return ReportError(dataset.status());
  auto compaction = (*dataset)->NewCompaction();
  if (args.Has("--plan")) {
    auto plan = compaction.Options(options).Plan();
    if (!plan.ok()) return ReportError(plan.status());
    if (args.Has("--json")) {
      std::cout << CompactionPlanToJson(*plan) << std::endl;
      return kExitOk;
    }
    for (size_t i = 0; i < plan->tasks.size(); ++i) {
      std::cout << "task " << i << ": fragments";
      const auto& ids = plan->tasks[i].fragment_ids;
      for (size_t j = 0; j < ids.size(); ++j) std::cout << (j ? ", " : " ") << ids[j];
      std::cout << "\n";
    }
    PrintChange("planned " + Counted(plan->tasks.size(), "task"), plan->read_version, false);
    return kExitOk;
  }
  ProgressBar bar(args.Has("--quiet"));
  options.progress = bar.Callback();
  auto committed = compaction.Options(options).Commit();
  bar.Clear();
  if (!committed.ok()) return ReportError(committed.status());
  const CompactionResult& result = compaction.result();
  const auto& m = result.metrics;
  PrintChange("removed " + Counted(m.fragments_removed, "fragment") + " and " + Counted(m.files_removed, "file") +
                  ", added " + Counted(m.fragments_added, "fragment") + " and " + Counted(m.files_added, "file"),
              result.version, result.committed);
  return kExitOk;
}

}  // namespace lance::cli
