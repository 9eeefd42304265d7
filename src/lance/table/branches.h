// Branches as pylance 14 keeps them: metadata in
// _refs/branches/{name, '/' as %2F}.json at the dataset root (camelCase
// JSON), and each branch a dataset of its own under tree/{name}/, made by a
// shallow clone of its parent's version (rust/lance/src/dataset/refs.rs,
// branch_location.rs).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "lance/io/object_store.h"
#include "lance/status.h"

namespace lance::table {

/// The name pylance reserves for the default branch.
inline constexpr const char* kMainBranch = "main";

struct BranchContents {
  std::optional<std::string> parent_branch;  // null = main
  /// The branch's lineage: (parent version, random id) per ancestor branch,
  /// from main down to this one (the reference's BranchIdentifier).
  std::vector<std::pair<uint64_t, std::string>> version_mapping;
  uint64_t parent_version = 0;
  uint64_t create_at = 0;  // unix seconds
  uint64_t manifest_size = 0;
  std::map<std::string, std::string> metadata;

  /// The version of the branch with lineage `ancestor` this branch (or one
  /// of its ancestors) was made from, if it descends from it (the
  /// reference's find_referenced_version); main's lineage is empty.
  std::optional<uint64_t> ReferencedVersionOf(const std::vector<std::pair<uint64_t, std::string>>& ancestor) const;
};

/// pylance's branch-name rules; the error says which one `name` breaks.
Status CheckBranchName(const std::string& name);
/// "main" means the default branch: nullopt; other names as given.
std::optional<std::string> StandardizeBranch(const std::string& name);

/// `_refs/branches/{name with '/' as %2F}.json`.
std::string BranchFilePath(const std::string& name);
/// `tree/{name}`: the branch's dataset directory under the root.
std::string BranchDirectory(const std::string& name);
/// The dataset root of `store`, the directory of branch `name` (the
/// directory tree/{name} is in), through the same filesystem; an error when
/// `store` is not at tree/{name}.
Result<std::shared_ptr<io::ObjectStore>> BranchRoot(const io::ObjectStore& store, const std::string& name);

Result<BranchContents> ParseBranch(const std::string& json, const std::string& name, const std::string& path);
/// Pretty-printed as the reference's serde_json::to_vec_pretty.
std::string SerializeBranch(const BranchContents& branch);

/// Every branch of the dataset whose root is `root`, by name.
Result<std::map<std::string, BranchContents>> ListBranches(const io::ObjectStore& root);

/// A new random branch id: 32 lowercase hex digits (a simple-form uuid).
std::string NewBranchId();

}  // namespace lance::table
