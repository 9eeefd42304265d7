// Consistency check of a dataset (`lance-cpp verify`): everything pylance's
// Dataset::validate checks (rust/lance/src/dataset.rs, fragment.rs,
// rowids/validate.rs), and that every file a manifest names exists with its
// recorded size and opens, the feature flags match the content, the
// transaction files read, and (deep) every page of every data file decodes.
// A damaged file is a finding, never an error: Verify fails only when the
// dataset cannot be opened at all.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <arrow/filesystem/filesystem.h>

#include "lance/progress.h"
#include "lance/status.h"

namespace lance {

struct VerifyOptions {
  /// Check every version listed under _versions/ (default: one version).
  bool all_versions = false;
  /// The version to check without all_versions: a number or tag; empty = latest.
  std::string version;
  /// Decode every page of every data file (a full scan of each file).
  bool deep = false;
  /// The branch to check; empty or "main" = the default branch.
  std::string branch;
  /// As OpenOptions::filesystem.
  std::shared_ptr<arrow::fs::FileSystem> filesystem;
  /// Stage "verifying", in data files checked; empty = no reports.
  ProgressCallback progress;
};

/// One thing found wrong.
struct VerifyFinding {
  uint64_t version = 0;
  /// The file the finding is about (full location): a data, deletion, index
  /// or transaction file, or the manifest for what the manifest itself says.
  std::string path;
  /// Which check: "manifest", "fragment_ids", "field_ids", "file_versions",
  /// "data_file", "physical_rows", "deletion_file", "row_ids", "indices",
  /// "index_file", "feature_flags", "transaction", "data_page".
  std::string check;
  std::string message;
};

struct VerifyReport {
  /// The versions checked, ascending.
  std::vector<uint64_t> versions_checked;
  std::vector<VerifyFinding> findings;
  bool ok() const { return findings.empty(); }
};

/// Checks the dataset at `uri`. Fails (Status) only when the dataset cannot
/// be opened: no versions, or the selected (default: latest) version's
/// manifest unreadable. With all_versions, another version whose manifest
/// does not read is a finding.
Result<VerifyReport> Verify(const std::string& uri, const VerifyOptions& options = {});

}  // namespace lance
