// The automatic cleanup pylance runs after a commit, driven by the new
// version's `lance.auto_cleanup.*` config (the reference's
// build_cleanup_policy and auto_cleanup_hook).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lance/ops/dataset_ops_internal.h"
#include "lance/status.h"

namespace lance::ops {

inline constexpr const char* kAutoCleanupInterval = "lance.auto_cleanup.interval";
inline constexpr const char* kAutoCleanupOlderThan = "lance.auto_cleanup.older_than";
inline constexpr const char* kAutoCleanupRetainVersions = "lance.auto_cleanup.retain_versions";
inline constexpr const char* kAutoCleanupReferencedBranch = "lance.auto_cleanup.referenced_branch";
inline constexpr const char* kAutoCleanupDeleteRateLimit = "lance.auto_cleanup.delete_rate_limit";
inline constexpr const char* kAutoCleanupDeleteConcurrency = "lance.auto_cleanup.delete_concurrency";

/// A duration in humantime's syntax, which pylance parses
/// `lance.auto_cleanup.older_than` with: one or more `<integer><unit>`
/// spans ("14days", "2h 30min", "0s"); units ns, us/µs, ms, s/sec/seconds,
/// m/min/minutes, h/hr/hours, d/days, w/weeks, M/months (30.44 days),
/// y/years (365.25 days) and their variations. In nanoseconds, saturating.
Result<int64_t> ParseHumanDuration(std::string_view text);

/// A duration as humantime's format_duration writes it (pylance stores
/// auto_cleanup_options' older_than so): "14days 5s", "1h 30m", "0s".
std::string FormatHumanDuration(uint64_t seconds, uint32_t nanos = 0);

/// The cleanup after committing `version` with `config`, or nullopt when
/// none is due: none without an interval, else only when the version is a
/// multiple of it (every version when it is 0). `versions`: every version
/// of the dataset, ascending, for retain_versions. `now_nanos`: the time.
/// A value that does not parse is an error naming the key.
Result<std::optional<CleanupPolicy>> AutoCleanupPolicy(const std::map<std::string, std::string>& config,
                                                       uint64_t version, const std::vector<uint64_t>& versions,
                                                       int64_t now_nanos);

}  // namespace lance::ops
