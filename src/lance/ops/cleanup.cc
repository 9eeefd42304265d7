// Cleanup: versions older than a cutoff are removed (never the latest or a
// tagged one), with every file that only removed versions reference. The
// reference's safety rules: files newer than the oldest kept version are not
// looked at (unless an older version than a removed one is kept), and a file no manifest mentions is removed only when it is over
// 7 days old (it may belong to a write in progress) or when asked to.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <set>
#include <thread>

#include "lance/ops/dataset_ops_internal.h"
#include "lance/row_ops.h"
#include "lance/table/branches.h"
#include "lance/table/file_locations.h"
#include "lance/table/manifest_location.h"
#include "lance/table/tags.h"
#include "lance/txn/commit.h"
#include "lance/util/clock.h"
#include "lance/util/progress_reporter.h"

namespace lance {
namespace {

constexpr int64_t kUnverifiedThresholdDays = 7;
constexpr int64_t kNanosPerSecond = 1'000'000'000;

struct ReferencedFiles {
  std::set<std::string> data;         // relative to the root: data/...
  std::set<std::string> deletions;    // _deletions/...
  std::set<std::string> transactions; // _transactions/...
  std::set<std::string> index_uuids;
};

// `location` relative to the dataset root, or "" when it is elsewhere.
std::string UnderRoot(const table::FileLocation& location, const io::ObjectStore& root) {
  if (location.store.get() == &root) return location.path;
  // A base path may lie inside the root (or be the root itself): its files
  // are then listed with the root's, and kept by their location. (Path
  // strings only: std::filesystem touches no file here.)
  const std::string full = std::filesystem::path(location.FullPath()).lexically_normal().string();
  std::string prefix = std::filesystem::path(root.FullPath("")).lexically_normal().string();
  if (prefix.empty() || prefix.back() != '/') prefix += '/';
  return full.rfind(prefix, 0) == 0 ? full.substr(prefix.size()) : "";
}

// What one version references. Files under other base paths (the source of
// a shallow clone, say) are never listed, so never removed: only the
// dataset root is.
Status Collect(const table::ManifestFile& file, const std::shared_ptr<const io::ObjectStore>& root,
               ReferencedFiles* out) {
  const table::FileLocator files(root, file.manifest);
  for (const auto& fragment : file.manifest.fragments) {
    for (const auto& data : fragment.files) {
      LANCE_ASSIGN_OR_RAISE(auto location, files.Data(data));
      const std::string relative = UnderRoot(location, *root);
      if (!relative.empty()) out->data.insert(relative);
    }
    // Overlay files are data files of the fragment too.
    for (const auto& overlay : fragment.overlays) {
      LANCE_ASSIGN_OR_RAISE(auto location, files.Data(overlay.data_file));
      const std::string relative = UnderRoot(location, *root);
      if (!relative.empty()) out->data.insert(relative);
    }
    if (fragment.deletion_file) {
      LANCE_ASSIGN_OR_RAISE(auto location, files.Deletion(fragment.id, *fragment.deletion_file));
      const std::string relative = UnderRoot(location, *root);
      if (!relative.empty()) out->deletions.insert(relative);
    }
  }
  if (!file.manifest.transaction_file.empty()) {
    out->transactions.insert("_transactions/" + file.manifest.transaction_file);
  }
  // By uuid, whatever base an index lives in: keeping a same-named
  // directory of the root errs on the safe side.
  for (const auto& index : file.indices) out->index_uuids.insert(index.UuidString());
  return Status::OK();
}

bool StartsWith(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }
bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

enum class Kind { kNone, kData, kDeletion, kTransaction, kIndex, kStaged };

// What a file is, as far as cleanup goes; kNone = leave it alone.
Kind KindOf(const std::string& relative) {
  if (StartsWith(relative, "_indices/")) return Kind::kIndex;
  if (StartsWith(relative, "data/") && EndsWith(relative, ".lance")) return Kind::kData;
  if (StartsWith(relative, "_deletions/") && (EndsWith(relative, ".arrow") || EndsWith(relative, ".bin"))) {
    return Kind::kDeletion;
  }
  if (StartsWith(relative, "_transactions/") && EndsWith(relative, ".txn")) return Kind::kTransaction;
  // A manifest staged by a commit that failed before renaming it
  // (io::ObjectStore::PutIfNotExists): never part of a version.
  if (StartsWith(relative, "_versions/.tmp_")) return Kind::kStaged;
  return Kind::kNone;
}

// Whether a file is referenced by `refs`.
bool Referenced(Kind kind, const std::string& relative, const ReferencedFiles& refs) {
  switch (kind) {
    case Kind::kData: return refs.data.count(relative) > 0;
    case Kind::kDeletion: return refs.deletions.count(relative) > 0;
    case Kind::kTransaction: return refs.transactions.count(relative) > 0;
    case Kind::kIndex: {
      const size_t start = std::string("_indices/").size();
      const size_t end = relative.find('/', start);
      if (end == std::string::npos) return true;  // not inside an index directory: keep
      return refs.index_uuids.count(relative.substr(start, end - start)) > 0;
    }
    case Kind::kStaged: return false;
    case Kind::kNone: return true;
  }
  return true;
}

}  // namespace

Result<CleanupResult> ops::CleanupIn(const std::shared_ptr<io::ObjectStore>& root,
                                     const std::shared_ptr<io::ObjectStore>& store,
                                     const std::optional<std::string>& branch, int64_t older_than_seconds,
                                     bool delete_unverified, const CleanupOptions& options) {
  if (older_than_seconds < 0) {
    return Status::Invalid("cleanup of ", store->uri(), ": older-than must not be negative");
  }
  CleanupPolicy policy;
  policy.before_timestamp_nanos = util::NowNanos() - older_than_seconds * kNanosPerSecond;
  policy.delete_unverified = delete_unverified;
  policy.error_if_tagged_old_versions = options.error_if_tagged_old_versions;
  return CleanupWithPolicy(root, store, branch, policy, options);
}

Result<CleanupResult> ops::CleanupWithPolicy(const std::shared_ptr<io::ObjectStore>& root,
                                             const std::shared_ptr<io::ObjectStore>& store,
                                             const std::optional<std::string>& branch, const CleanupPolicy& policy,
                                             const CleanupOptions& options) {
  const std::string& uri = store->uri();
  const bool delete_unverified = policy.delete_unverified;
  LANCE_ASSIGN_OR_RAISE(auto base, txn::LoadLatestForWrite(*store));
  if (!base) return Status::IOError("dataset not found: ", uri);
  const uint64_t latest = policy.keep_from_version ? policy.keep_from_version : base->location.version;
  const int64_t now = util::NowNanos();

  // Kept whatever their age: versions of this branch a tag names, and
  // those branches were made from (pylance 14 keeps a branch's parent
  // version, so the files the branch shares with it stay).
  std::set<uint64_t> tagged;
  LANCE_ASSIGN_OR_RAISE(auto tags, table::ListTags(*root));
  std::set<uint64_t> tag_versions;  // of these, the ones a tag names (pylance's error names only those)
  for (const auto& [name, tag] : tags) {
    if (table::StandardizeBranch(tag.branch.value_or("")) == branch) tag_versions.insert(tag.version);
  }
  tagged = tag_versions;
  LANCE_ASSIGN_OR_RAISE(auto branches, table::ListBranches(*root));
  std::vector<std::pair<uint64_t, std::string>> lineage;
  if (branch) {
    auto it = branches.find(*branch);
    if (it != branches.end()) lineage = it->second.version_mapping;
  }
  for (const auto& [name, b] : branches) {
    if (auto v = b.ReferencedVersionOf(lineage)) tagged.insert(*v);
  }

  // Every manifest is read: what kept versions reference is kept, what
  // only removed versions reference is "verified" garbage.
  ReferencedFiles kept;
  ReferencedFiles verified;
  std::vector<table::ManifestLocation> old_manifests;
  std::optional<int64_t> earliest_kept;
  std::optional<int64_t> latest_removed;
  std::set<uint64_t> tagged_old;  // tagged versions the policy would remove
  LANCE_ASSIGN_OR_RAISE(auto locations, table::ListManifests(*store));
  util::ProgressStage reading(options.progress, "reading versions", "versions", locations.size());
  for (const auto& location : locations) {
    LANCE_ASSIGN_OR_RAISE(auto version, txn::LoadVersion(*store, location));
    reading.Add(1);
    const int64_t timestamp = version.file.manifest.timestamp_nanos.value_or(0);
    const bool should_clean = (!policy.before_timestamp_nanos || timestamp < *policy.before_timestamp_nanos) &&
                              (!policy.before_version || location.version < *policy.before_version);
    const bool is_tagged = tagged.count(location.version) > 0;
    const bool keep = location.version >= latest || is_tagged || !should_clean;
    if (tag_versions.count(location.version) && location.version < latest && should_clean) {
      tagged_old.insert(location.version);
    }
    LANCE_RETURN_NOT_OK(Collect(version.file, store, keep ? &kept : &verified));
    if (keep) {
      earliest_kept = earliest_kept ? std::min(*earliest_kept, timestamp) : timestamp;
    } else {
      old_manifests.push_back(location);
      latest_removed = latest_removed ? std::max(*latest_removed, timestamp) : timestamp;
    }
  }

  if (policy.error_if_tagged_old_versions && !tagged_old.empty()) {
    std::string names;
    for (const auto& [name, tag] : tags) {
      if (!tagged_old.count(tag.version) || table::StandardizeBranch(tag.branch.value_or("")) != branch) continue;
      names += (names.empty() ? "" : ", ") + name + " (version " + std::to_string(tag.version) + ")";
    }
    return Status::Invalid("cleanup of ", uri, ": ", tagged_old.size(),
                           " tagged version(s) would be removed; delete the tag(s) to allow it: ", names);
  }

  CleanupResult result;
  std::vector<std::string> to_remove;
  LANCE_ASSIGN_OR_RAISE(auto infos, store->ListFilesRecursive(""));
  std::optional<int64_t> listing_cutoff = earliest_kept;
  if (earliest_kept && latest_removed && *latest_removed > *earliest_kept) listing_cutoff.reset();
  const int64_t unverified_before = now - kUnverifiedThresholdDays * 24 * 3600 * kNanosPerSecond;
  for (const auto& info : infos) {
    const std::string& relative = info.name;
    const Kind kind = KindOf(relative);
    if (kind == Kind::kNone) continue;
    const int64_t mtime = info.mtime_nanos;
    // Files written after the oldest kept version may belong to a write in
    // progress: not touched, unless a removed version is newer than that
    // (a tagged old version), whose files would otherwise stay orphaned.
    // Index directories are always looked at.
    if (listing_cutoff && kind != Kind::kIndex && mtime > *listing_cutoff) continue;
    if (Referenced(kind, relative, kept)) continue;
    const bool maybe_in_progress = !delete_unverified && mtime >= unverified_before;
    if (maybe_in_progress && !Referenced(kind, relative, verified)) continue;
    to_remove.push_back(relative);
    result.bytes_removed += static_cast<uint64_t>(std::max<int64_t>(0, info.size));
    switch (kind) {
      case Kind::kData: ++result.data_files; break;
      case Kind::kDeletion: ++result.deletion_files; break;
      case Kind::kTransaction: ++result.transaction_files; break;
      case Kind::kIndex: ++result.index_files; break;
      case Kind::kStaged:
      case Kind::kNone: break;
    }
  }
  // Manifests go first: a version whose manifest is gone no longer needs
  // its files, while files gone under a listed manifest would break it.
  // delete_rate_limit: deletes spaced 1/rate seconds apart.
  auto next_delete = std::chrono::steady_clock::now();
  auto throttle = [&] {
    if (policy.delete_rate_limit == 0) return;
    std::this_thread::sleep_until(next_delete);
    next_delete = std::max(next_delete, std::chrono::steady_clock::now()) +
                  std::chrono::nanoseconds(kNanosPerSecond / static_cast<int64_t>(policy.delete_rate_limit));
  };
  util::ProgressStage removing(options.progress, "removing", "files", old_manifests.size() + to_remove.size());
  for (const auto& location : old_manifests) {
    // Listings do not give sizes: the manifest's, just before it goes.
    int64_t size = location.size;
    if (size < 0) {
      auto stat = store->Size(location.path);
      if (stat.ok()) size = *stat;
    }
    throttle();
    LANCE_RETURN_NOT_OK(store->Delete(location.path));
    ++result.old_versions;
    if (size > 0) result.bytes_removed += static_cast<uint64_t>(size);
    removing.Add(1);
  }
  for (const auto& relative : to_remove) {
    throttle();
    LANCE_RETURN_NOT_OK(store->Delete(relative));
    removing.Add(1);
  }
  return result;
}

}  // namespace lance
