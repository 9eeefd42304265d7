#include "lance/table/file_locations.h"

namespace lance::table {
namespace {

const char* SubdirOf(FileKind kind) {
  switch (kind) {
    case FileKind::kData: return "data";
    case FileKind::kDeletion: return "_deletions";
    case FileKind::kIndex: return "_indices";
  }
  return "";
}

std::string ListedIds(const Manifest& manifest) {
  if (manifest.base_paths.empty()) return "none";
  std::string out;
  for (const auto& base : manifest.base_paths) out += (out.empty() ? "" : ", ") + std::to_string(base.id);
  return out;
}

Result<const BasePath*> FindBase(const Manifest& manifest, uint32_t id, const std::string& what) {
  for (const auto& base : manifest.base_paths) {
    if (base.id == id) return &base;
  }
  return Status::Invalid(what, " names base path ", id, ", which manifest version ", manifest.version,
                         " does not list (its base paths: ", ListedIds(manifest), ")");
}

}  // namespace

Result<FileDirectory> DirectoryOf(const Manifest& manifest, FileKind kind, std::optional<uint32_t> base_id,
                                  const std::string& what) {
  if (!base_id) return FileDirectory{nullptr, SubdirOf(kind)};
  LANCE_ASSIGN_OR_RAISE(const BasePath* base, FindBase(manifest, *base_id, what));
  if (base->is_dataset_root) return FileDirectory{base, SubdirOf(kind)};
  if (kind == FileKind::kDeletion) {
    return Status::Invalid(what, " names base path ", *base_id, " (", base->path,
                           "), which is not a dataset root; deletion files live only under dataset roots");
  }
  return FileDirectory{base, ""};
}

std::string JoinPath(const std::string& dir, const std::string& name) {
  return dir.empty() ? name : dir + "/" + name;
}

Result<std::shared_ptr<const io::ObjectStore>> FileLocator::StoreOf(const BasePath& base) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = bases_.find(base.id);
  if (it != bases_.end()) return it->second;
  auto store = io::ObjectStore::Open(base.path, root_->storage_options());
  if (!store.ok()) {
    return store.status().WithMessage("opening base path ", base.id, " (", base.path, "): ",
                                      store.status().message());
  }
  return bases_.emplace(base.id, *store).first->second;
}

Result<FileLocation> FileLocator::Locate(FileKind kind, std::optional<uint32_t> base_id, const std::string& name,
                                         const std::string& what) const {
  LANCE_ASSIGN_OR_RAISE(auto dir, DirectoryOf(manifest_, kind, base_id, what));
  FileLocation out;
  if (dir.base == nullptr) {
    out.store = root_;
  } else {
    LANCE_ASSIGN_OR_RAISE(out.store, StoreOf(*dir.base));
  }
  out.path = JoinPath(dir.dir, name);
  return out;
}

Result<FileLocation> FileLocator::Data(const DataFile& file) const {
  return Locate(FileKind::kData, file.base_id, file.path, "data file " + file.path);
}

Result<FileLocation> FileLocator::Deletion(uint64_t fragment_id, const DeletionFile& file) const {
  const std::string name = file.FileName(fragment_id);
  return Locate(FileKind::kDeletion, file.base_id, name,
                "deletion file " + name + " of fragment " + std::to_string(fragment_id));
}

Result<FileLocation> FileLocator::Index(const IndexMetadata& index, const std::string& name) const {
  const std::string uuid = index.UuidString();
  return Locate(FileKind::kIndex, index.base_id, name.empty() ? uuid : uuid + "/" + name,
                "index '" + index.name + "' (" + uuid + ")");
}

Result<FileLocation> FileLocator::BlobSidecarDir(const DataFile& file) const {
  const std::string stem = file.path.substr(0, file.path.rfind('.'));
  return Locate(FileKind::kData, file.base_id, stem, "data file " + file.path);
}

Result<std::shared_ptr<const io::ObjectStore>> FileLocator::BaseStore(uint32_t id, const std::string& what) const {
  LANCE_ASSIGN_OR_RAISE(const BasePath* base, FindBase(manifest_, id, what));
  return StoreOf(*base);
}

}  // namespace lance::table
