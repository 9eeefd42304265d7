// Dataset: opening a version and reading its metadata. Composes io/, table/,
// txn/ and file/.
#include "lance/dataset.h"
#include "lance/dataset_internal.h"

#include <algorithm>
#include <charconv>
#include <mutex>

#include <arrow/buffer.h>
#include <arrow/type.h>

#include "lance/file/legacy_metadata.h"
#include "lance/file/version.h"
#include "lance/file_reader.h"
#include "lance/io/object_store.h"
#include "lance/table/branches.h"
#include "lance/table/deletion_file.h"
#include "lance/table/deletion_vector.h"
#include "lance/table/file_locations.h"
#include "lance/table/frag_reuse.h"
#include "lance/table/manifest_file.h"
#include "lance/table/manifest_location.h"
#include "lance/table/row_id_sequence.h"
#include "lance/table/tags.h"
#include "lance/txn/transaction.h"
#include "lance/util/strings.h"

namespace lance {

struct Dataset::Impl {
  std::shared_ptr<io::ObjectStore> root;   // the dataset root: _refs/, tree/
  std::shared_ptr<io::ObjectStore> store;  // the branch's (root for main)
  std::optional<std::string> branch;
  std::vector<table::ManifestLocation> locations;  // every committed version
  table::ManifestLocation location;                // the opened one
  table::ManifestFile file;
  std::unique_ptr<table::FileLocator> files;  // over `file.manifest`
  // The fragment reuse index's details, read once at open (null: none).
  std::shared_ptr<const table::FragReuseDetails> frag_reuse;
  // Opened v2 data files by location and memory pool.
  std::mutex readers_mutex;
  std::map<std::pair<std::string, arrow::MemoryPool*>, std::shared_ptr<FileReader>> readers;
};

namespace {

Result<table::ManifestFile> ReadManifest(const io::ObjectStore& store,
                                         const table::ManifestLocation& loc,
                                         table::FlagCheck check) {
  LANCE_ASSIGN_OR_RAISE(auto bytes, store.ReadAll(loc.path));
  return table::ParseManifestFile(bytes, store.FullPath(loc.path), check);
}

}  // namespace

Dataset::Dataset(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Dataset::~Dataset() = default;

Result<std::shared_ptr<Dataset>> Dataset::Open(const std::string& uri, const OpenOptions& options) {
  LANCE_ASSIGN_OR_RAISE(auto store, io::ObjectStore::Open(uri, options.filesystem, options.storage_options));
  return DatasetAccess::Open(std::move(store), options);
}

Result<std::shared_ptr<Dataset>> Dataset::Checkout(const std::string& version) const {
  OpenOptions options;
  options.version = version;
  options.branch = impl_->branch.value_or("");
  return DatasetAccess::Open(impl_->root, options);
}

const std::optional<std::string>& Dataset::branch() const { return impl_->branch; }

const std::shared_ptr<io::ObjectStore>& DatasetAccess::Store(const Dataset& dataset) { return dataset.impl_->store; }
const std::shared_ptr<io::ObjectStore>& DatasetAccess::RootStore(const Dataset& dataset) { return dataset.impl_->root; }
const table::ManifestLocation& DatasetAccess::Location(const Dataset& dataset) { return dataset.impl_->location; }
const table::ManifestFile& DatasetAccess::File(const Dataset& dataset) { return dataset.impl_->file; }
const std::shared_ptr<const table::FragReuseDetails>& DatasetAccess::FragReuse(const Dataset& dataset) {
  return dataset.impl_->frag_reuse;
}

Result<std::shared_ptr<Dataset>> DatasetAccess::Open(std::shared_ptr<io::ObjectStore> store,
                                                     const OpenOptions& options) {
  const std::string uri = store->uri();
  auto impl = std::make_unique<Dataset::Impl>();
  impl->root = store;
  impl->store = std::move(store);
  LANCE_ASSIGN_OR_RAISE(bool is_dir, impl->root->IsDirectory(""));
  if (!is_dir) return Status::IOError("dataset not found: ", uri, " is not a directory");
  // A tag names a branch and a version: it opens that branch.
  std::optional<std::string> branch = table::StandardizeBranch(options.branch);
  std::optional<uint64_t> tagged;
  if (!options.version.empty() && !util::AllDigits(options.version)) {
    LANCE_ASSIGN_OR_RAISE(auto tags, table::ListTags(*impl->root));
    auto it = tags.find(options.version);
    if (it == tags.end()) {
      return Status::KeyError("dataset ", uri, " has no version or tag named '", options.version, "'");
    }
    branch = it->second.branch ? table::StandardizeBranch(*it->second.branch) : std::nullopt;
    tagged = it->second.version;
  }
  if (branch) {
    LANCE_RETURN_NOT_OK(table::CheckBranchName(*branch));
    LANCE_ASSIGN_OR_RAISE(bool exists, impl->root->Exists(table::BranchFilePath(*branch)));
    if (!exists) return Status::KeyError("branch ", *branch, " does not exist in ", uri);
    impl->store = impl->root->Child(table::BranchDirectory(*branch));
    impl->branch = branch;
  }
  LANCE_ASSIGN_OR_RAISE(impl->locations, table::ListManifests(*impl->store));

  if (options.version.empty()) {
    impl->location = impl->locations.back();
  } else {
    uint64_t wanted = 0;
    if (util::AllDigits(options.version)) {
      auto [ptr, ec] = std::from_chars(options.version.data(),
                                       options.version.data() + options.version.size(), wanted);
      if (ec != std::errc()) {
        return Status::KeyError("version ", options.version, " of dataset ", uri, " does not exist");
      }
    } else {
      wanted = *tagged;
    }
    auto it = std::find_if(impl->locations.begin(), impl->locations.end(),
                           [&](const auto& l) { return l.version == wanted; });
    if (it == impl->locations.end()) {
      return Status::KeyError("version ", wanted, " of dataset ", uri, impl->branch ? " branch " + *impl->branch : "",
                              " does not exist (versions ", impl->locations.front().version, " to ",
                              impl->locations.back().version, ")");
    }
    impl->location = *it;
  }
  LANCE_ASSIGN_OR_RAISE(impl->file, ReadManifest(*impl->store, impl->location, table::FlagCheck::kRead));
  // Index bitmaps as pylance's load_indices gives them.
  LANCE_ASSIGN_OR_RAISE(impl->frag_reuse, table::ApplyFragReuseToBitmaps(*impl->store, &impl->file.indices));
  if (impl->file.manifest.version != impl->location.version) {
    return Status::Invalid("corrupt manifest ", impl->store->FullPath(impl->location.path),
                           ": it says version ", impl->file.manifest.version, " but its name says ",
                           impl->location.version);
  }
  const std::optional<std::string>& recorded = impl->file.manifest.branch;
  if (impl->branch && recorded != impl->branch) {
    return Status::Invalid("corrupt manifest ", impl->store->FullPath(impl->location.path), ": branch ",
                           *impl->branch, "'s manifest says it is on ", recorded ? "branch " + *recorded : "main");
  }
  if (!impl->branch && recorded) {
    // The branch's own directory opened as a dataset (as pylance allows):
    // its root is the directory tree/{branch} is in.
    LANCE_ASSIGN_OR_RAISE(impl->root, table::BranchRoot(*impl->store, *recorded));
    impl->branch = recorded;
  }
  impl->files = std::make_unique<table::FileLocator>(impl->store, impl->file.manifest);
  return std::shared_ptr<Dataset>(new Dataset(std::move(impl)));
}

Result<std::shared_ptr<Dataset>> DatasetAccess::FromCommit(const Dataset* from, std::shared_ptr<io::ObjectStore> store,
                                                           txn::CommitResult committed) {
  auto impl = std::make_unique<Dataset::Impl>();
  impl->root = from ? from->impl_->root : store;
  impl->branch = from ? from->impl_->branch : std::nullopt;
  impl->store = std::move(store);
  impl->location = table::ManifestLocation{committed.version, committed.manifest_path, committed.naming, -1};
  // The versions as a listing now would give them: those of `from` and the
  // new one, unless others committed in between or some were removed.
  const bool follows = from ? committed.version == from->latest_version() + 1 : committed.version == 1;
  if (follows && !committed.versions_removed) {
    if (from) impl->locations = from->impl_->locations;
    impl->locations.push_back(impl->location);
  } else {
    LANCE_ASSIGN_OR_RAISE(impl->locations, table::ListManifests(*impl->store));
  }
  impl->file = table::ManifestFile{std::move(committed.manifest), std::move(committed.indices),
                                   std::move(committed.transaction_bytes)};
  LANCE_ASSIGN_OR_RAISE(impl->frag_reuse, table::ApplyFragReuseToBitmaps(*impl->store, &impl->file.indices));
  impl->files = std::make_unique<table::FileLocator>(impl->store, impl->file.manifest);
  if (from) {
    // Data files never change: the new version reads them through the
    // readers already opened.
    std::lock_guard<std::mutex> lock(from->impl_->readers_mutex);
    impl->readers = from->impl_->readers;
  }
  return std::shared_ptr<Dataset>(new Dataset(std::move(impl)));
}

const std::string& Dataset::uri() const { return impl_->store->uri(); }
uint64_t Dataset::version() const { return impl_->file.manifest.version; }
uint64_t Dataset::latest_version() const { return impl_->locations.back().version; }
const char* Dataset::manifest_naming() const { return table::NamingSchemeName(impl_->location.naming); }
const Manifest& Dataset::manifest() const { return impl_->file.manifest; }
const std::vector<IndexMetadata>& Dataset::indices() const { return impl_->file.indices; }

Result<std::string> Dataset::DataStorageVersion() const {
  const Manifest& m = manifest();
  if (!m.data_storage_version.empty()) {
    LANCE_ASSIGN_OR_RAISE(auto v, file::FileVersionFromString(m.data_storage_version));
    return file::FileVersionToString(v);
  }
  // Older manifests do not say: infer from the data files, which must agree.
  std::optional<file::FileVersion> inferred;
  for (const auto& frag : m.fragments) {
    for (const auto& f : frag.files) {
      LANCE_ASSIGN_OR_RAISE(auto v, file::FileVersionFromPair(f.file_major_version, f.file_minor_version));
      if (inferred && *inferred != v) {
        return Status::Invalid("dataset ", uri(), " version ", m.version,
                               " has data files of different versions (",
                               file::FileVersionToString(*inferred), " and ", file::FileVersionToString(v),
                               ") and no data storage version");
      }
      inferred = v;
    }
  }
  if (inferred) return file::FileVersionToString(*inferred);
  // No files to go by: the deprecated v2 flag means "stable", which the
  // reference resolves to its current stable version (2.2 in the pinned one).
  if (m.writer_feature_flags & 4) {
    LANCE_ASSIGN_OR_RAISE(auto v, file::FileVersionFromString("stable"));
    return file::FileVersionToString(v);
  }
  return std::string("0.1");
}

Result<std::shared_ptr<arrow::Schema>> Dataset::ArrowSchema() const { return manifest().schema.ToArrow(); }

Result<uint64_t> Dataset::PhysicalRows(const Fragment& fragment) const {
  // Writers too old to record their version could also record wrong row
  // counts (the v0.8.0 migration bug), so only trust a count that comes with a
  // writer version; otherwise count the data file, as the reference does.
  if (fragment.physical_rows && manifest().writer_version) return *fragment.physical_rows;
  if (fragment.files.empty()) {
    return Status::Invalid("fragment ", fragment.id, " of ", uri(), " has no data files and no row count");
  }
  const DataFile& df = fragment.files.front();
  LANCE_ASSIGN_OR_RAISE(auto v, file::FileVersionFromPair(df.file_major_version, df.file_minor_version));
  if (v != file::FileVersion::kLegacy) {
    return Status::NotImplemented("fragment ", fragment.id, " records no row count and its ",
                                  file::FileVersionToString(v), " data file cannot be counted yet");
  }
  LANCE_ASSIGN_OR_RAISE(const std::string full, DataFileLocation(df));
  LANCE_ASSIGN_OR_RAISE(auto handle, OpenDataFile(df));
  LANCE_ASSIGN_OR_RAISE(int64_t size, handle->GetSize());
  if (size < static_cast<int64_t>(file::kLegacyFooterSize)) {
    return Status::Invalid("corrupt lance file ", full, ": ", size, " bytes is too short");
  }
  LANCE_ASSIGN_OR_RAISE(auto footer, handle->ReadAt(size - file::kLegacyFooterSize, file::kLegacyFooterSize));
  LANCE_ASSIGN_OR_RAISE(uint64_t pos, file::LegacyMetadataPosition(footer->ToString(), size, full));
  LANCE_ASSIGN_OR_RAISE(auto msg, handle->ReadAt(pos, size - file::kLegacyFooterSize - pos));
  LANCE_ASSIGN_OR_RAISE(auto meta, file::ParseLegacyMetadata(msg->ToString(), full));
  return meta.NumRows();
}

Result<std::vector<uint32_t>> Dataset::DeletedRows(const Fragment& fragment) const {
  if (!fragment.deletion_file) return std::vector<uint32_t>{};
  const DeletionFile& del = *fragment.deletion_file;
  LANCE_ASSIGN_OR_RAISE(auto dv, table::ReadDeletionFile(*impl_->files, fragment.id, del));
  uint32_t max_offset = 0;
  if (dv.Max(&max_offset)) {
    LANCE_ASSIGN_OR_RAISE(uint64_t physical, PhysicalRows(fragment));
    if (max_offset >= physical) {
      LANCE_ASSIGN_OR_RAISE(auto location, impl_->files->Deletion(fragment.id, del));
      return Status::Invalid("corrupt deletion file ", location.FullPath(), ": deletes row ", max_offset, " of fragment ",
                             fragment.id, ", which has only ", physical, " rows");
    }
  }
  return dv.ToVector();
}

Result<uint64_t> Dataset::NumDeletedRows(const Fragment& fragment) const {
  if (!fragment.deletion_file) return 0;
  if (fragment.deletion_file->num_deleted_rows) return *fragment.deletion_file->num_deleted_rows;
  LANCE_ASSIGN_OR_RAISE(auto rows, DeletedRows(fragment));
  return rows.size();
}

namespace {

// The bytes of an inline or external sequence. External sequences have no
// base id: their path is under the dataset root, as the reference reads them.
Result<std::string> SequenceBytes(const io::ObjectStore& store, const SequenceRef& ref) {
  if (ref.inline_bytes) return *ref.inline_bytes;
  return store.ReadRange(ref.external->path, static_cast<int64_t>(ref.external->offset),
                         static_cast<int64_t>(ref.external->size));
}

}  // namespace

Result<std::string> DatasetAccess::SequenceBytes(const Dataset& dataset, const SequenceRef& ref) {
  return lance::SequenceBytes(*dataset.impl_->store, ref);
}

Result<std::optional<std::vector<uint64_t>>> Dataset::RowCreatedAtVersions(const Fragment& fragment) const {
  if (!fragment.created_at_versions.present()) return std::nullopt;
  const std::string what = "created-at versions of fragment " + std::to_string(fragment.id) + " in " + uri();
  LANCE_ASSIGN_OR_RAISE(auto bytes, SequenceBytes(*impl_->store, fragment.created_at_versions));
  LANCE_ASSIGN_OR_RAISE(auto seq, table::RowVersionSequence::Parse(bytes, what));
  return seq.ToVector();
}

Result<std::optional<std::vector<uint64_t>>> Dataset::RowLastUpdatedAtVersions(const Fragment& fragment) const {
  if (!fragment.last_updated_at_versions.present()) return std::nullopt;
  const std::string what = "last-updated versions of fragment " + std::to_string(fragment.id) + " in " + uri();
  LANCE_ASSIGN_OR_RAISE(auto bytes, SequenceBytes(*impl_->store, fragment.last_updated_at_versions));
  LANCE_ASSIGN_OR_RAISE(auto seq, table::RowVersionSequence::Parse(bytes, what));
  return seq.ToVector();
}

Result<std::vector<uint64_t>> Dataset::RowIds(const Fragment& fragment) const {
  const SequenceRef& ref = fragment.row_ids;
  if (!ref.present()) return std::vector<uint64_t>{};
  const std::string what = "row ids of fragment " + std::to_string(fragment.id) + " in " + uri();
  LANCE_ASSIGN_OR_RAISE(auto bytes, SequenceBytes(*impl_->store, ref));
  LANCE_ASSIGN_OR_RAISE(auto seq, table::RowIdSequence::Parse(bytes, what));
  if (fragment.physical_rows && seq.Length() != *fragment.physical_rows) {
    return Status::Invalid(what, ": ", seq.Length(), " row ids for ", *fragment.physical_rows, " rows");
  }
  return seq.ToVector();
}

Result<std::string> Dataset::DataFileLocation(const DataFile& file) const {
  LANCE_ASSIGN_OR_RAISE(auto location, impl_->files->Data(file));
  return location.FullPath();
}

Result<std::shared_ptr<arrow::io::RandomAccessFile>> Dataset::OpenDataFile(const DataFile& file) const {
  LANCE_ASSIGN_OR_RAISE(auto location, impl_->files->Data(file));
  return location.store->OpenInputFile(location.path);
}

Result<std::shared_ptr<FileReader>> Dataset::OpenDataFileReader(const DataFile& file,
                                                                arrow::MemoryPool* pool) const {
  LANCE_ASSIGN_OR_RAISE(auto location, DataFileLocation(file));
  const auto key = std::make_pair(location, pool);
  {
    std::lock_guard<std::mutex> lock(impl_->readers_mutex);
    auto it = impl_->readers.find(key);
    if (it != impl_->readers.end()) return it->second;
  }
  // Opened outside the lock: a racing caller may open it too; the first
  // stored wins.
  LANCE_ASSIGN_OR_RAISE(auto handle, OpenDataFile(file));
  LANCE_ASSIGN_OR_RAISE(auto reader, FileReader::Open(handle, location, pool));
  std::lock_guard<std::mutex> lock(impl_->readers_mutex);
  // Each reader holds its file open: keep a bounded number.
  constexpr size_t kMaxOpenReaders = 128;
  if (impl_->readers.size() >= kMaxOpenReaders && impl_->readers.count(key) == 0) {
    impl_->readers.erase(impl_->readers.begin());
  }
  return impl_->readers.emplace(key, std::move(reader)).first->second;
}

Result<std::vector<VersionInfo>> Dataset::Versions() const {
  std::vector<VersionInfo> out;
  for (const auto& loc : impl_->locations) {
    LANCE_ASSIGN_OR_RAISE(auto mf, ReadManifest(*impl_->store, loc, table::FlagCheck::kNone));
    VersionInfo info;
    info.version = mf.manifest.version;
    info.timestamp_nanos = mf.manifest.timestamp_nanos;
    std::optional<std::string> txn = mf.transaction_bytes;
    std::string what = impl_->store->FullPath(loc.path);
    if (!txn && !mf.manifest.transaction_file.empty()) {
      const std::string rel = "_transactions/" + mf.manifest.transaction_file;
      what = impl_->store->FullPath(rel);
      LANCE_ASSIGN_OR_RAISE(txn, impl_->store->ReadAll(rel));
    }
    if (txn) {
      LANCE_ASSIGN_OR_RAISE(auto summary, txn::ParseTransaction(*txn, what));
      info.operation = summary.operation;
    }
    out.push_back(std::move(info));
  }
  return out;
}

std::vector<uint64_t> Dataset::VersionNumbers() const {
  std::vector<uint64_t> out;
  out.reserve(impl_->locations.size());
  for (const auto& loc : impl_->locations) out.push_back(loc.version);
  return out;
}

Result<std::map<std::string, TagInfo>> Dataset::Tags() const {
  LANCE_ASSIGN_OR_RAISE(auto tags, table::ListTags(*impl_->root));
  std::map<std::string, TagInfo> out;
  for (auto& [name, t] : tags) out[name] = TagInfo{t.version, t.branch};
  return out;
}

}  // namespace lance
