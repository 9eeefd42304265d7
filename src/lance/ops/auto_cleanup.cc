#include "lance/ops/auto_cleanup.h"

#include <limits>

#include "lance/dataset_internal.h"
#include "lance/table/branches.h"
#include "lance/table/manifest_location.h"
#include "lance/util/clock.h"
#include "lance/warnings.h"

namespace lance::ops {
namespace {

constexpr const char* kRowLineageSpill = "lance.row_lineage.spill";

// Rust's str::parse::<u64>: an optional '+', then decimal digits only.
std::optional<uint64_t> ParseU64(std::string_view s) {
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  if (s.empty()) return std::nullopt;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    const uint64_t d = static_cast<uint64_t>(c - '0');
    if (v > (std::numeric_limits<uint64_t>::max() - d) / 10) return std::nullopt;
    v = v * 10 + d;
  }
  return v;
}

Status ParseError(const char* key, const std::string& value, const std::string& as) {
  return Status::Invalid("cannot parse ", key, "=", value, " as ", as);
}

bool IsSpace(unsigned char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }
bool IsAlpha(unsigned char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsDigit(unsigned char c) { return c >= '0' && c <= '9'; }

// Seconds and nanoseconds per unit, as humantime counts them.
std::optional<std::pair<uint64_t, uint64_t>> Unit(std::string_view u) {
  auto any = [&](std::initializer_list<std::string_view> names) {
    for (auto n : names) {
      if (u == n) return true;
    }
    return false;
  };
  if (any({"nanos", "nsec", "ns"})) return std::pair<uint64_t, uint64_t>{0, 1};
  if (any({"usec", "us", "\xC2\xB5s"})) return std::pair<uint64_t, uint64_t>{0, 1000};
  if (any({"millis", "msec", "ms"})) return std::pair<uint64_t, uint64_t>{0, 1000000};
  if (any({"seconds", "second", "secs", "sec", "s"})) return std::pair<uint64_t, uint64_t>{1, 0};
  if (any({"minutes", "minute", "min", "mins", "m"})) return std::pair<uint64_t, uint64_t>{60, 0};
  if (any({"hours", "hour", "hr", "hrs", "h"})) return std::pair<uint64_t, uint64_t>{3600, 0};
  if (any({"days", "day", "d"})) return std::pair<uint64_t, uint64_t>{86400, 0};
  if (any({"weeks", "week", "w"})) return std::pair<uint64_t, uint64_t>{604800, 0};
  if (any({"months", "month", "M"})) return std::pair<uint64_t, uint64_t>{2630016, 0};
  if (any({"years", "year", "y"})) return std::pair<uint64_t, uint64_t>{31557600, 0};
  return std::nullopt;
}

}  // namespace

Result<int64_t> ParseHumanDuration(std::string_view text) {
  const std::string shown(text);
  auto bad = [&](const std::string& why) { return Status::Invalid("invalid duration '", shown, "': ", why); };
  size_t i = 0;
  const size_t n = text.size();
  auto c = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  unsigned __int128 total_nanos = 0;
  bool any = false;
  while (true) {
    while (i < n && IsSpace(c(i))) ++i;
    if (i == n) break;
    if (!IsDigit(c(i))) return bad("expected a number at offset " + std::to_string(i));
    // The number: digits, spaces allowed between them (as humantime).
    uint64_t value = 0;
    while (i < n && (IsDigit(c(i)) || IsSpace(c(i)))) {
      if (IsDigit(c(i))) {
        const uint64_t d = c(i) - '0';
        if (value > (std::numeric_limits<uint64_t>::max() - d) / 10) return bad("number is too large");
        value = value * 10 + d;
      }
      ++i;
    }
    // The unit: letters (µ first), up to a digit, a space or the end.
    const size_t start = i;
    if (i + 1 < n && c(i) == 0xC2 && c(i + 1) == 0xB5) i += 2;
    while (i < n && IsAlpha(c(i))) ++i;
    if (i < n && !IsDigit(c(i)) && !IsSpace(c(i))) return bad("invalid character at offset " + std::to_string(i));
    const std::string_view unit = text.substr(start, i - start);
    if (unit.empty()) return bad("a time unit is needed, for example " + std::to_string(value) + "sec");
    auto scale = Unit(unit);
    if (!scale) {
      return bad("unknown time unit '" + std::string(unit) +
                 "' (ns, us, ms, sec, min, hours, days, weeks, months, years)");
    }
    total_nanos += static_cast<unsigned __int128>(value) * scale->first * 1000000000u +
                   static_cast<unsigned __int128>(value) * scale->second;
    any = true;
  }
  if (!any) return bad("it is empty");
  const auto max = static_cast<unsigned __int128>(std::numeric_limits<int64_t>::max());
  return static_cast<int64_t>(total_nanos > max ? max : total_nanos);
}

std::string FormatHumanDuration(uint64_t secs, uint32_t nanos) {
  if (secs == 0 && nanos == 0) return "0s";
  std::string out;
  auto item = [&](uint64_t value, const char* name, bool plural) {
    if (value == 0) return;
    if (!out.empty()) out += ' ';
    out += std::to_string(value) + name;
    if (plural && value > 1) out += 's';
  };
  const uint64_t ydays = secs % 31557600;  // years of 365.25 days
  const uint64_t mdays = ydays % 2630016;  // months of 30.44 days
  const uint64_t day_secs = mdays % 86400;
  item(secs / 31557600, "year", true);
  item(ydays / 2630016, "month", true);
  item(mdays / 86400, "day", true);
  item(day_secs / 3600, "h", false);
  item(day_secs % 3600 / 60, "m", false);
  item(day_secs % 60, "s", false);
  item(nanos / 1000000, "ms", false);
  item(nanos / 1000 % 1000, "us", false);
  item(nanos % 1000, "ns", false);
  return out;
}

Result<std::optional<CleanupPolicy>> AutoCleanupPolicy(const std::map<std::string, std::string>& config,
                                                       uint64_t version, const std::vector<uint64_t>& versions,
                                                       int64_t now_nanos) {
  auto get = [&](const char* key) -> const std::string* {
    auto it = config.find(key);
    return it == config.end() ? nullptr : &it->second;
  };
  const std::string* interval_text = get(kAutoCleanupInterval);
  if (!interval_text) return std::optional<CleanupPolicy>();
  auto interval = ParseU64(*interval_text);
  if (!interval) return ParseError(kAutoCleanupInterval, *interval_text, "an unsigned integer");
  if (*interval != 0 && version % *interval != 0) return std::optional<CleanupPolicy>();

  CleanupPolicy policy;
  // The dataset the commit was built on is the cleanup's "latest": it and
  // the new version stay, as pylance runs the hook on the dataset it read.
  policy.keep_from_version = version > 1 ? version - 1 : version;
  // pylance's automatic runs refuse to remove a tagged version (the
  // policy's default error_if_tagged_old_versions).
  policy.error_if_tagged_old_versions = true;
  if (const std::string* t = get(kAutoCleanupOlderThan)) {
    auto d = ParseHumanDuration(*t);
    if (!d.ok()) return ParseError(kAutoCleanupOlderThan, *t, "a duration (" + d.status().message() + ")");
    policy.before_timestamp_nanos =
        *d > now_nanos ? std::numeric_limits<int64_t>::min() : now_nanos - *d;
  }
  if (const std::string* t = get(kAutoCleanupRetainVersions)) {
    auto keep = ParseU64(*t);
    if (!keep) return ParseError(kAutoCleanupRetainVersions, *t, "an unsigned integer");
    if (*keep == 0) return Status::Invalid(kAutoCleanupRetainVersions, "=0: at least one version is kept");
    if (versions.empty()) return Status::Invalid("no versions to retain");
    policy.before_version = versions.size() <= *keep ? versions.front() : versions[versions.size() - *keep];
  }
  if (const std::string* t = get(kAutoCleanupReferencedBranch)) {
    if (*t != "true" && *t != "false") return ParseError(kAutoCleanupReferencedBranch, *t, "true or false");
  }
  if (const std::string* t = get(kAutoCleanupDeleteRateLimit)) {
    auto rate = ParseU64(*t);
    if (!rate) return ParseError(kAutoCleanupDeleteRateLimit, *t, "an unsigned integer");
    if (*rate == 0) return Status::Invalid(kAutoCleanupDeleteRateLimit, " must be greater than 0");
    policy.delete_rate_limit = *rate;
  }
  if (const std::string* t = get(kAutoCleanupDeleteConcurrency)) {
    // Files are removed one at a time, within any concurrency limit.
    if (!ParseU64(*t)) return ParseError(kAutoCleanupDeleteConcurrency, *t, "an unsigned integer");
  }
  return std::optional<CleanupPolicy>(policy);
}

Result<txn::CommitResult> CommitTransaction(const io::ObjectStore& store, txn::Transaction txn,
                                            const txn::CommitOptions& options) {
  LANCE_ASSIGN_OR_RAISE(auto result, txn::Commit(store, std::move(txn), options));
  auto run = [&]() -> Status {
    std::vector<uint64_t> versions;
    if (result.manifest.config.count(kAutoCleanupRetainVersions)) {
      LANCE_ASSIGN_OR_RAISE(auto locations, table::ListManifests(store));
      for (const auto& l : locations) versions.push_back(l.version);
      std::sort(versions.begin(), versions.end());
    }
    LANCE_ASSIGN_OR_RAISE(auto policy,
                          AutoCleanupPolicy(result.manifest.config, result.version, versions, util::NowNanos()));
    if (!policy || result.version <= 1) return Status::OK();
    auto here = std::make_shared<io::ObjectStore>(store);
    result.versions_removed = true;
    if (result.manifest.branch) {
      // As pylance: the branch's own old versions, with the tags and the
      // branches made from it (kept at the root) respected. A branch's
      // store is always tree/{name} of its root.
      LANCE_ASSIGN_OR_RAISE(auto root, table::BranchRoot(store, *result.manifest.branch));
      return CleanupWithPolicy(root, here, result.manifest.branch, *policy, {}).status();
    }
    return CleanupWithPolicy(here, here, std::nullopt, *policy, {}).status();
  };
  Status st = run();
  if (!st.ok()) {
    Warn("automatic cleanup after committing version " + std::to_string(result.version) + " of " + store.uri() +
         " failed (the commit stands): " + st.message());
  }
  return result;
}

Status CheckConfigKeys(const std::map<std::string, std::string>& config, const std::string& uri) {
  auto refuse = [&](const std::string& key, const std::string& value, const char* what) {
    return Status::NotImplemented("cannot write to ", uri, ": its config sets ", key, "=", value, " (", what,
                                  "), which pylance 14 implements and lance-cpp does not; remove the key "
                                  "(lance-cpp config URI unset ", key, ") or write with pylance");
  };
  if (auto it = config.find(kRowLineageSpill); it != config.end() && it->second != "false") {
    return refuse(it->first, it->second, "row lineage spilled to external files");
  }
  if (auto it = config.find(kAutoCleanupReferencedBranch); it != config.end() && it->second == "true") {
    return refuse(it->first, it->second, "automatic cleanup of the branches that reference this one");
  }
  return Status::OK();
}

Status CheckConfigSupported(const Dataset& dataset) {
  return CheckConfigKeys(dataset.manifest().config, dataset.uri());
}

}  // namespace lance::ops
