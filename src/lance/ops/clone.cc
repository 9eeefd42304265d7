// Shallow and deep clones: a version of one dataset committed as a new
// dataset (the reference's Operation::Clone).
#include <algorithm>

#include <arrow/buffer.h>
#include <arrow/io/interfaces.h>

#include "lance/dataset.h"
#include "lance/dataset_internal.h"
#include "lance/ops/dataset_ops_internal.h"
#include "lance/table/file_locations.h"
#include "lance/table/manifest_location.h"
#include "lance/txn/commit.h"

namespace lance {
namespace {

constexpr int64_t kCopyChunk = 8 << 20;

// Copies a file between stores (they may be different filesystems).
Status CopyFile(const table::FileLocation& from, const io::ObjectStore& to, const std::string& path) {
  LANCE_ASSIGN_OR_RAISE(auto in, from.store->OpenInputFile(from.path));
  LANCE_ASSIGN_OR_RAISE(int64_t size, in->GetSize());
  LANCE_ASSIGN_OR_RAISE(auto out, to.OpenOutputStream(path));
  for (int64_t offset = 0; offset < size; offset += kCopyChunk) {
    auto chunk = in->ReadAt(offset, std::min(kCopyChunk, size - offset));
    if (!chunk.ok()) return chunk.status().WithMessage("reading ", from.FullPath(), ": ", chunk.status().message());
    Status st = out->Write((*chunk)->data(), (*chunk)->size());
    if (!st.ok()) return st.WithMessage("writing ", to.FullPath(path), ": ", st.message());
  }
  Status st = out->Close();
  if (!st.ok()) return st.WithMessage("writing ", to.FullPath(path), ": ", st.message());
  return Status::OK();
}

// Every file of `dir` (a directory location), copied below `to_dir`.
Status CopyDirectory(const table::FileLocation& dir, const io::ObjectStore& to, const std::string& to_dir) {
  LANCE_ASSIGN_OR_RAISE(auto files, dir.store->ListFilesRecursive(dir.path));
  for (const auto& f : files) {
    table::FileLocation file{dir.store, table::JoinPath(dir.path, f.name)};
    LANCE_RETURN_NOT_OK(CopyFile(file, to, to_dir + "/" + f.name));
  }
  return Status::OK();
}

// Where a file of `kind` without a base id lives in the new dataset (the
// locator's rule), `name` relative to that directory.
std::string OwnPath(table::FileKind kind, const std::string& name) {
  static const Manifest kNoBases;
  auto dir = table::DirectoryOf(kNoBases, kind, std::nullopt, name);
  return table::JoinPath(dir.ok() ? dir->dir : "", name);
}

// What a deep clone copies, as pylance's: every data file with its blob
// sidecars, deletion file and index file the version references, each
// found through its base id and put where a file without one lives.
Status CopyReferencedFiles(const Dataset& source, const io::ObjectStore& target) {
  const table::FileLocator files(DatasetAccess::Store(source), source.manifest());
  for (const auto& fragment : source.manifest().fragments) {
    for (const auto& data : fragment.files) {
      LANCE_ASSIGN_OR_RAISE(auto location, files.Data(data));
      LANCE_RETURN_NOT_OK(CopyFile(location, target, OwnPath(table::FileKind::kData, data.path)));
      LANCE_ASSIGN_OR_RAISE(auto sidecars, files.BlobSidecarDir(data));
      LANCE_RETURN_NOT_OK(CopyDirectory(sidecars, target,
                                        OwnPath(table::FileKind::kData, data.path.substr(0, data.path.rfind('.')))));
    }
    if (fragment.deletion_file) {
      LANCE_ASSIGN_OR_RAISE(auto location, files.Deletion(fragment.id, *fragment.deletion_file));
      LANCE_RETURN_NOT_OK(CopyFile(location, target,
                                   OwnPath(table::FileKind::kDeletion, fragment.deletion_file->FileName(fragment.id))));
    }
  }
  for (const auto& index : source.indices()) {
    const std::string dir = OwnPath(table::FileKind::kIndex, index.UuidString());
    if (index.files.empty()) {
      // Writers before pylance 14 list no files: the whole directory.
      LANCE_ASSIGN_OR_RAISE(auto location, files.Index(index, ""));
      LANCE_RETURN_NOT_OK(CopyDirectory(location, target, dir));
      continue;
    }
    for (const auto& f : index.files) {
      LANCE_ASSIGN_OR_RAISE(auto location, files.Index(index, f.path));
      LANCE_RETURN_NOT_OK(CopyFile(location, target, dir + "/" + f.path));
    }
  }
  return Status::OK();
}

Result<std::shared_ptr<Dataset>> CloneTo(const Dataset& dataset, const std::string& target_path,
                                         const CloneOptions& options, bool is_shallow) {
  const char* what = is_shallow ? "shallow clone" : "deep clone";
  std::shared_ptr<Dataset> source;
  if (options.reference.empty()) {
    source = std::const_pointer_cast<Dataset>(dataset.shared_from_this());
  } else {
    LANCE_ASSIGN_OR_RAISE(source, dataset.Checkout(options.reference));
  }
  // The new manifest carries the source's content and flags: only what
  // this build can write is cloned.
  LANCE_RETURN_NOT_OK(ops::CheckWritable(*source));
  // Overlay files are neither named through the new base path nor copied
  // yet: a clone would lose them.
  for (const auto& f : source->manifest().fragments) {
    if (!f.overlays.empty()) {
      return Status::NotImplemented(what, " of ", source->uri(), " version ", source->version(), ": fragment ", f.id,
                                    " has data overlay files, which lance-cpp does not clone yet");
    }
  }
  LANCE_ASSIGN_OR_RAISE(auto target, io::ObjectStore::Open(target_path, DatasetAccess::Store(*source)->storage_options()));
  LANCE_ASSIGN_OR_RAISE(auto existing, table::FindLatestManifest(*target));
  if (existing) {
    return Status::Invalid(what, " of ", source->uri(), ": a dataset already exists at ", target_path,
                           " (version ", existing->version, ")");
  }
  if (!is_shallow) LANCE_RETURN_NOT_OK(CopyReferencedFiles(*source, *target));

  txn::Clone op;
  op.is_shallow = is_shallow;
  op.ref_name = source->manifest().branch;
  op.ref_version = source->version();
  op.ref_path = source->uri();
  txn::CommitOptions commit;
  commit.clone_source = &DatasetAccess::File(*source);
  commit.num_retries = 1;
  auto committed = txn::Commit(*target, txn::Transaction::Make(source->version(), std::move(op)), commit);
  if (!committed.ok()) {
    return committed.status().WithMessage(what, " of ", source->uri(), " version ", source->version(), " to ",
                                          target_path, ": ", committed.status().message());
  }
  return DatasetAccess::Open(std::move(target), OpenOptions{});
}

}  // namespace

Result<std::shared_ptr<Dataset>> Dataset::ShallowClone(const std::string& target_path,
                                                       const CloneOptions& options) const {
  return CloneTo(*this, target_path, options, /*is_shallow=*/true);
}

Result<std::shared_ptr<Dataset>> Dataset::DeepClone(const std::string& target_path,
                                                    const CloneOptions& options) const {
  return CloneTo(*this, target_path, options, /*is_shallow=*/false);
}

}  // namespace lance
