// Branches (pylance 14's create_branch, branches, delete_branch): a branch is
// a shallow clone of a version of its parent under tree/{name}/, described
// by _refs/branches/{name}.json at the dataset root.
#include <chrono>

#include "lance/dataset.h"
#include "lance/dataset_internal.h"
#include "lance/ops/dataset_ops_internal.h"
#include "lance/table/branches.h"
#include "lance/table/tags.h"
#include "lance/txn/commit.h"

namespace lance {
namespace {

std::string Describe(const std::vector<std::pair<std::string, uint64_t>>& refs) {
  std::string out = "[";
  for (size_t i = 0; i < refs.size(); ++i) {
    out += (i ? ", " : "") + std::string("(\"") + refs[i].first + "\", " + std::to_string(refs[i].second) + ")";
  }
  return out + "]";
}

// The directory to remove with branch `name` (the reference's
// get_cleanup_path): nothing while a remaining branch lives below it, else
// the highest directory no remaining branch shares.
std::optional<std::string> CleanupDirectory(const std::string& name, const std::map<std::string, table::BranchContents>& rest) {
  auto segments = [](const std::string& s) {
    std::vector<std::string> out;
    size_t start = 0;
    while (true) {
      const size_t slash = s.find('/', start);
      out.push_back(s.substr(start, slash - start));
      if (slash == std::string::npos) return out;
      start = slash + 1;
    }
  };
  const auto deleted = segments(name);
  size_t keep = 0;  // segments of `name` another branch's directory shares
  for (const auto& [other, contents] : rest) {
    const auto o = segments(other);
    size_t common = 0;
    while (common < o.size() && common < deleted.size() && o[common] == deleted[common]) ++common;
    if (common == deleted.size()) return std::nullopt;  // a branch below (or at) this one's directory
    keep = std::max(keep, common);
  }
  std::string dir;
  for (size_t i = 0; i <= keep; ++i) dir += (i ? "/" : "") + deleted[i];
  return dir;
}

}  // namespace

Result<std::shared_ptr<Dataset>> Dataset::CreateBranch(const std::string& name, const std::string& reference) const {
  LANCE_RETURN_NOT_OK(table::CheckBranchName(name));
  const auto& root = DatasetAccess::RootStore(*this);
  std::shared_ptr<Dataset> source;
  if (reference.empty()) {
    source = std::const_pointer_cast<Dataset>(shared_from_this());
  } else {
    LANCE_ASSIGN_OR_RAISE(source, Checkout(reference));
  }
  LANCE_RETURN_NOT_OK(ops::CheckWritable(*source));
  const std::string file = table::BranchFilePath(name);
  LANCE_ASSIGN_OR_RAISE(bool exists, root->Exists(file));
  if (exists) return Status::Invalid("Ref conflict error: branch ", name, " already exists in ", root->uri());
  auto store = root->Child(table::BranchDirectory(name));
  LANCE_ASSIGN_OR_RAISE(auto existing, table::FindLatestManifest(*store));
  if (existing) {
    return Status::Invalid("Ref conflict error: branch ", name, " has no metadata but its directory ",
                           store->uri(), " holds a dataset (version ", existing->version, ")");
  }
  // The parent's lineage, extended by this branch.
  table::BranchContents contents;
  contents.parent_branch = source->branch();
  if (source->branch()) {
    LANCE_ASSIGN_OR_RAISE(auto branches, table::ListBranches(*root));
    auto it = branches.find(*source->branch());
    if (it == branches.end()) return Status::KeyError("Parent branch ", *source->branch(), " does not exist");
    contents.version_mapping = it->second.version_mapping;
  }
  contents.version_mapping.emplace_back(source->version(), table::NewBranchId());
  contents.parent_version = source->version();
  contents.create_at = static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count());
  LANCE_ASSIGN_OR_RAISE(int64_t size, DatasetAccess::Store(*source)->Size(DatasetAccess::Location(*source).path));
  contents.manifest_size = static_cast<uint64_t>(size);

  // As the reference: the clone first, then the metadata that makes it a
  // branch.
  txn::Clone op;
  op.is_shallow = true;
  op.ref_name = source->branch();
  op.ref_version = source->version();
  op.ref_path = source->uri();
  op.branch_name = name;
  txn::CommitOptions commit;
  commit.clone_source = &DatasetAccess::File(*source);
  commit.num_retries = 1;
  auto committed = txn::Commit(*store, txn::Transaction::Make(source->version(), std::move(op)), commit);
  if (!committed.ok()) {
    return committed.status().WithMessage("creating branch ", name, " of ", root->uri(), ": ",
                                          committed.status().message());
  }
  Status put = root->PutIfNotExists(file, table::SerializeBranch(contents));
  if (put.IsAlreadyExists()) return Status::Invalid("Ref conflict error: branch ", name, " already exists");
  LANCE_RETURN_NOT_OK(put);
  OpenOptions options;
  options.branch = name;
  return DatasetAccess::Open(root, options);
}

Result<std::map<std::string, BranchInfo>> Dataset::Branches() const {
  LANCE_ASSIGN_OR_RAISE(auto branches, table::ListBranches(*DatasetAccess::RootStore(*this)));
  std::map<std::string, BranchInfo> out;
  for (auto& [name, b] : branches) {
    out[name] = BranchInfo{b.parent_branch, b.parent_version, b.create_at, b.manifest_size, b.version_mapping,
                           b.metadata};
  }
  return out;
}

Status Dataset::DeleteBranch(const std::string& name) const {
  LANCE_RETURN_NOT_OK(table::CheckBranchName(name));
  const auto& root = DatasetAccess::RootStore(*this);
  LANCE_ASSIGN_OR_RAISE(auto branches, table::ListBranches(*root));
  auto it = branches.find(name);
  if (it == branches.end()) return Status::KeyError("Ref not found error: Branch ", name, " does not exist");
  // Branches made from it, deepest first as the reference lists them.
  std::vector<std::pair<std::string, uint64_t>> children;
  for (auto other = branches.rbegin(); other != branches.rend(); ++other) {
    if (auto v = other->second.ReferencedVersionOf(it->second.version_mapping)) children.emplace_back(other->first, *v);
  }
  if (!children.empty()) {
    return Status::Invalid("Ref conflict error: Branch ", name, " is referenced by ", Describe(children),
                           " versions, can not delete");
  }
  LANCE_ASSIGN_OR_RAISE(auto tags, table::ListTags(*root));
  std::vector<std::pair<std::string, uint64_t>> tagged;
  for (const auto& [tag, contents] : tags) {
    if (contents.branch == name) tagged.emplace_back(tag, contents.version);
  }
  if (!tagged.empty()) {
    return Status::Invalid("Ref conflict error: Branch ", name, " is referenced by tags ", Describe(tagged),
                           ", can not delete");
  }
  LANCE_RETURN_NOT_OK(root->Delete(table::BranchFilePath(name)));
  branches.erase(name);
  if (auto dir = CleanupDirectory(name, branches)) {
    LANCE_RETURN_NOT_OK(root->DeleteDirectory("tree/" + *dir));
  }
  return Status::OK();
}

}  // namespace lance
