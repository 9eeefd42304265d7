// `Verify`: the consistency checks of lance/verify.h. Every reader used here
// is the one the read paths use (manifest, deletion files, row id
// sequences, data and index files), so a file verify accepts is a file the
// rest of lance-cpp reads; the rules themselves follow the reference's
// Dataset::validate, FileFragment::validate, DataFile::validate and
// validate_stable_row_ids.
#include "lance/verify.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <unordered_set>

#include <arrow/array.h>
#include <arrow/record_batch.h>
#include <arrow/table.h>

#include "lance/dataset.h"
#include "lance/dataset_internal.h"
#include "lance/file/legacy/legacy_reader.h"
#include "lance/file/version.h"
#include "lance/file_reader.h"
#include "lance/index/scalar_index.h"
#include "lance/table/deletion_file.h"
#include "lance/table/feature_flags.h"
#include "lance/table/file_locations.h"
#include "lance/table/manifest_location.h"
#include "lance/table/row_id_sequence.h"
#include "lance/txn/transaction.h"
#include "lance/util/progress_reporter.h"

namespace lance {
namespace {

constexpr int32_t kTombstoneFieldId = -2;
// Rows decoded at a time by the deep scan: bounds memory on large files.
constexpr uint64_t kDeepWindowRows = 64 * 1024;

// What checking one data file found; data files are shared by many versions,
// so each is opened (and decoded) once and its outcome replayed per version.
struct FileOutcome {
  std::optional<uint64_t> rows;                             // when it opened
  std::vector<std::pair<std::string, std::string>> problems;  // (check, message)
};

class Verifier {
 public:
  Verifier(const VerifyOptions& options, util::ProgressStage* progress) : options_(options), progress_(progress) {}

  void CheckVersion(const Dataset& ds, std::vector<VerifyFinding>* out);

 private:
  void Add(const std::string& check, const std::string& path, const std::string& message) {
    out_->push_back(VerifyFinding{version_, path, check, message});
  }
  void CheckFragmentIds();
  void CheckFragment(const Fragment& frag, std::unordered_set<uint64_t>* live_ids, std::optional<uint64_t>* max_row_id);
  const FileOutcome& CheckDataFile(const DataFile& file, const table::FileLocation& location);
  void CheckRowIds(const Fragment& frag, std::optional<uint64_t> rows, const table::DeletionVector* deleted,
                   std::unordered_set<uint64_t>* live_ids, std::optional<uint64_t>* max_row_id);
  void CheckIndices();
  void CheckFeatureFlags();
  void CheckTransaction();

  const VerifyOptions& options_;
  util::ProgressStage* progress_;
  std::map<std::string, FileOutcome> files_;  // by location and recorded size and version

  // The version being checked.
  const Dataset* ds_ = nullptr;
  std::unique_ptr<table::FileLocator> locator_;
  std::string manifest_path_;
  uint64_t version_ = 0;
  std::vector<VerifyFinding>* out_ = nullptr;
};

void Verifier::CheckVersion(const Dataset& ds, std::vector<VerifyFinding>* out) {
  ds_ = &ds;
  out_ = out;
  version_ = ds.version();
  const auto& store = DatasetAccess::Store(ds);
  locator_ = std::make_unique<table::FileLocator>(store, ds.manifest());
  manifest_path_ = store->FullPath(DatasetAccess::Location(ds).path);

  CheckFragmentIds();
  const Manifest& m = ds.manifest();
  std::unordered_set<uint64_t> live_ids;
  std::optional<uint64_t> max_row_id;
  for (const auto& frag : m.fragments) CheckFragment(frag, &live_ids, &max_row_id);
  // New rows get ids from next_row_id on: one at or below an id in use
  // (deleted slots included: their ids are retired) would repeat it.
  if (max_row_id && *max_row_id >= m.next_row_id) {
    Add("row_ids", manifest_path_,
        "next_row_id is " + std::to_string(m.next_row_id) + " but row id " + std::to_string(*max_row_id) +
            " is already in use");
  }
  CheckIndices();
  CheckFeatureFlags();
  CheckTransaction();
}

void Verifier::CheckFragmentIds() {
  const Manifest& m = ds_->manifest();
  std::set<uint64_t> seen;
  for (size_t i = 0; i < m.fragments.size(); ++i) {
    const uint64_t id = m.fragments[i].id;
    if (!seen.insert(id).second) Add("fragment_ids", manifest_path_, "duplicate fragment id " + std::to_string(id));
    if (i > 0 && id < m.fragments[i - 1].id) {
      Add("fragment_ids", manifest_path_,
          "fragment ids are not ascending: " + std::to_string(id) + " after " + std::to_string(m.fragments[i - 1].id));
    }
    // New fragments take ids above max_fragment_id: one below an id in use
    // would give two fragments the same id.
    if (m.max_fragment_id && id > *m.max_fragment_id) {
      Add("fragment_ids", manifest_path_,
          "fragment id " + std::to_string(id) + " is above max_fragment_id " + std::to_string(*m.max_fragment_id));
    }
  }
}

const FileOutcome& Verifier::CheckDataFile(const DataFile& file, const table::FileLocation& location) {
  const std::string full = location.FullPath();
  // What the manifest says of the file is part of the key: another
  // version's manifest may record it differently.
  const std::string key = full + "\n" + std::to_string(file.file_size_bytes) + "\n" +
                          std::to_string(file.file_major_version) + "." + std::to_string(file.file_minor_version);
  auto it = files_.find(key);
  if (it != files_.end()) return it->second;
  FileOutcome& outcome = files_[key];
  if (progress_) progress_->Add(1);

  auto exists = location.store->Exists(location.path);
  if (!exists.ok() || !*exists) {
    outcome.problems.emplace_back("data_file",
                                  exists.ok() ? "missing" : "cannot be checked: " + exists.status().message());
    return outcome;
  }
  auto size = location.store->Size(location.path);
  if (!size.ok()) {
    outcome.problems.emplace_back("data_file", "cannot be checked: " + size.status().message());
    return outcome;
  }
  if (file.file_size_bytes != 0 && static_cast<uint64_t>(*size) != file.file_size_bytes) {
    outcome.problems.emplace_back("data_file", "is " + std::to_string(*size) + " bytes but the manifest records " +
                                                   std::to_string(file.file_size_bytes));
  }
  auto version = file::FileVersionFromPair(file.file_major_version, file.file_minor_version);
  if (!version.ok()) return outcome;  // reported by the fragment's file_versions check

  if (*version == file::FileVersion::kLegacy) {
    auto handle = location.store->OpenInputFile(location.path);
    if (!handle.ok()) {
      outcome.problems.emplace_back("data_file", "does not open: " + handle.status().message());
      return outcome;
    }
    // The page table covers the file's field-id range, as the reference
    // takes it from DataFile.fields.
    file::legacy::LegacyOpenOptions open;
    for (int32_t id : file.fields) {
      if (id < 0) continue;
      open.min_field_id = open.min_field_id ? std::min(*open.min_field_id, id) : id;
      open.max_field_id = open.max_field_id ? std::max(*open.max_field_id, id) : id;
    }
    auto reader = file::legacy::LegacyFileReader::Open(*handle, full, arrow::default_memory_pool(), open);
    if (!reader.ok()) {
      outcome.problems.emplace_back("data_file", "does not open: " + reader.status().message());
      return outcome;
    }
    outcome.rows = (*reader)->num_rows();
    if (!options_.deep) return outcome;
    Schema projection;
    for (const auto& field : ds_->manifest().schema.fields) {
      if (std::find(file.fields.begin(), file.fields.end(), field.id) != file.fields.end()) {
        projection.fields.push_back(field);
      }
    }
    auto batch = (*reader)->ReadAll(projection);
    Status st = batch.ok() ? (*batch)->ValidateFull() : batch.status();
    if (st.ok() && static_cast<uint64_t>((*batch)->num_rows()) != *outcome.rows) {
      st = Status::Invalid("decoded ", (*batch)->num_rows(), " rows of ", *outcome.rows);
    }
    if (!st.ok() && !st.IsNotImplemented()) {
      outcome.problems.emplace_back("data_page", "does not decode: " + st.message());
    }
    return outcome;
  }

  auto reader = ds_->OpenDataFileReader(file);
  if (!reader.ok()) {
    outcome.problems.emplace_back("data_file", "does not open: " + reader.status().message());
    return outcome;
  }
  outcome.rows = (*reader)->num_rows();
  const FileLayout& layout = (*reader)->layout();
  auto footer = file::FileVersionFromPair(layout.major_version, layout.minor_version);
  if (footer.ok() && *footer != *version) {
    outcome.problems.emplace_back("file_versions", "its footer says version " + file::FileVersionToString(*footer) +
                                                       " but the manifest records " +
                                                       file::FileVersionToString(*version));
  }
  if (!options_.deep) return outcome;
  // Every column of the file, whether the schema still names it or not.
  std::vector<std::string> columns;
  for (const auto& field : (*reader)->schema().fields) columns.push_back(field.name);
  if (columns.empty()) return outcome;
  auto windows = (*reader)->ReadWindows(columns, kDeepWindowRows);
  Status st = windows.status();
  for (size_t w = 0; st.ok() && w + 1 < windows->size(); ++w) {
    const uint64_t begin = (*windows)[w], count = (*windows)[w + 1] - begin;
    auto table = (*reader)->ReadRange(columns, begin, count);
    if (!table.ok()) {
      st = table.status();
    } else if (static_cast<uint64_t>((*table)->num_rows()) != count) {
      st = Status::Invalid("rows ", begin, "+", count, " decoded to ", (*table)->num_rows(), " rows");
    } else {
      st = (*table)->ValidateFull();
    }
  }
  // An encoding lance-cpp does not decode yet says nothing about the file.
  if (!st.ok() && !st.IsNotImplemented()) {
    outcome.problems.emplace_back("data_page", "does not decode: " + st.message());
  }
  return outcome;
}

void Verifier::CheckFragment(const Fragment& frag, std::unordered_set<uint64_t>* live_ids,
                             std::optional<uint64_t>* max_row_id) {
  const std::string fid = std::to_string(frag.id);
  if (frag.files.empty()) Add("data_file", manifest_path_, "fragment " + fid + " has no data files");

  // Field ids: distinct across the fragment's files (tombstones aside),
  // sorted in legacy files, each with a column index in v2 files.
  std::set<int32_t> seen_fields;
  bool saw_legacy = false, saw_v2 = false, reported_mix = false;
  std::vector<std::string> locations(frag.files.size());
  for (size_t i = 0; i < frag.files.size(); ++i) {
    const DataFile& file = frag.files[i];
    auto location = locator_->Data(file);
    locations[i] = location.ok() ? location->FullPath() : file.path;
    if (!location.ok()) Add("data_file", manifest_path_, location.status().message());
    std::vector<int32_t> live;
    for (int32_t id : file.fields) {
      if (id == kTombstoneFieldId) continue;
      if (id < 0) {
        Add("field_ids", locations[i], "field id " + std::to_string(id) + " is not a valid field id");
        continue;
      }
      live.push_back(id);
      if (!seen_fields.insert(id).second) {
        Add("field_ids", locations[i],
            "field id " + std::to_string(id) + " is in more than one data file of fragment " + fid);
      }
    }
    auto version = file::FileVersionFromPair(file.file_major_version, file.file_minor_version);
    if (!version.ok()) {
      Add("file_versions", locations[i], version.status().message());
      continue;
    }
    if (*version == file::FileVersion::kLegacy) {
      saw_legacy = true;
      if (!std::is_sorted(live.begin(), live.end()) || std::adjacent_find(live.begin(), live.end()) != live.end()) {
        Add("field_ids", locations[i], "legacy data file lists unsorted or duplicate field ids");
      }
    } else {
      saw_v2 = true;
      if (file.column_indices.size() < file.fields.size()) {
        Add("field_ids", locations[i],
            "lists " + std::to_string(file.fields.size()) + " fields but only " +
                std::to_string(file.column_indices.size()) + " column indices");
      }
    }
    if (saw_legacy && saw_v2 && !reported_mix) {
      Add("file_versions", locations[i], "fragment " + fid + " mixes legacy (0.1) and v2 data files");
      reported_mix = true;
    }
  }

  // Every data file opens and has the same number of rows, which is
  // physical_rows when the manifest records it.
  std::optional<uint64_t> rows;
  for (size_t i = 0; i < frag.files.size(); ++i) {
    auto location = locator_->Data(frag.files[i]);
    if (!location.ok()) continue;
    const FileOutcome& outcome = CheckDataFile(frag.files[i], *location);
    for (const auto& [check, message] : outcome.problems) Add(check, locations[i], message);
    if (!outcome.rows) continue;
    if (!rows) {
      rows = outcome.rows;
    } else if (*outcome.rows != *rows) {
      Add("data_file", locations[i],
          "has " + std::to_string(*outcome.rows) + " rows but the first data file of fragment " + fid + " has " +
              std::to_string(*rows));
    }
  }
  if (rows && frag.physical_rows && *frag.physical_rows != *rows) {
    Add("physical_rows", locations.front(),
        "fragment " + fid + " records physical_rows " + std::to_string(*frag.physical_rows) +
            " but its data files have " + std::to_string(*rows) + " rows");
  }
  if (!rows) rows = frag.physical_rows;

  // The deletion file: exists, reads, holds as many rows as recorded, and
  // deletes only rows the fragment has.
  std::optional<table::DeletionVector> deleted;
  if (frag.deletion_file) {
    const DeletionFile& del = *frag.deletion_file;
    auto location = locator_->Deletion(frag.id, del);
    if (!location.ok()) {
      Add("deletion_file", manifest_path_, location.status().message());
    } else {
      const std::string full = location->FullPath();
      auto exists = location->store->Exists(location->path);
      if (!exists.ok() || !*exists) {
        Add("deletion_file", full, exists.ok() ? "missing" : "cannot be checked: " + exists.status().message());
      } else if (auto dv = table::ReadDeletionFile(*locator_, frag.id, del); !dv.ok()) {
        Add("deletion_file", full, "does not read: " + dv.status().message());
      } else {
        deleted = std::move(*dv);
        if (del.num_deleted_rows && *del.num_deleted_rows != deleted->Cardinality()) {
          Add("deletion_file", full,
              "holds " + std::to_string(deleted->Cardinality()) + " deleted rows but the manifest records " +
                  std::to_string(*del.num_deleted_rows));
        }
        uint32_t max_offset = 0;
        if (rows && deleted->Max(&max_offset) && max_offset >= *rows) {
          Add("deletion_file", full,
              "deletes row " + std::to_string(max_offset) + " of fragment " + fid + ", which has " +
                  std::to_string(*rows) + " rows");
        }
      }
    }
  }
  if (ds_->manifest().UsesStableRowIds()) {
    CheckRowIds(frag, frag.physical_rows, deleted ? &*deleted : nullptr, live_ids, max_row_id);
  }
}

void Verifier::CheckRowIds(const Fragment& frag, std::optional<uint64_t> rows, const table::DeletionVector* deleted,
                           std::unordered_set<uint64_t>* live_ids, std::optional<uint64_t>* max_row_id) {
  const std::string fid = std::to_string(frag.id);
  const auto& store = DatasetAccess::Store(*ds_);
  auto where = [&](const SequenceRef& ref) {
    return ref.external ? store->FullPath(ref.external->path) : manifest_path_;
  };
  if (!frag.row_ids.present()) {
    Add("row_ids", manifest_path_, "fragment " + fid + " has no row ids but the dataset uses stable row ids");
    return;
  }
  if (!rows) {
    Add("row_ids", manifest_path_, "fragment " + fid + " records no physical_rows but the dataset uses stable row ids");
    return;
  }
  auto bytes = DatasetAccess::SequenceBytes(*ds_, frag.row_ids);
  if (!bytes.ok()) {
    Add("row_ids", where(frag.row_ids), "row ids of fragment " + fid + " do not read: " + bytes.status().message());
    return;
  }
  auto seq = table::RowIdSequence::Parse(*bytes, "row ids of fragment " + fid);
  if (!seq.ok()) {
    Add("row_ids", where(frag.row_ids), seq.status().message());
    return;
  }
  if (seq->Length() != *rows) {
    Add("row_ids", where(frag.row_ids),
        "fragment " + fid + " has " + std::to_string(seq->Length()) + " row ids for " + std::to_string(*rows) +
            " physical rows");
  }
  using Named = std::pair<const char*, const SequenceRef*>;
  for (const auto& [name, ref] :
       {Named{"created_at", &frag.created_at_versions}, Named{"last_updated_at", &frag.last_updated_at_versions}}) {
    if (!ref->inline_bytes) continue;  // as the reference, only inline sequences are read back
    auto versions =
        table::RowVersionSequence::Parse(*ref->inline_bytes, std::string(name) + " versions of fragment " + fid);
    if (!versions.ok()) {
      Add("row_ids", manifest_path_, versions.status().message());
    } else if (versions->Length() != *rows) {
      Add("row_ids", manifest_path_,
          "fragment " + fid + " has " + std::to_string(versions->Length()) + " " + name + " versions for " +
              std::to_string(*rows) + " physical rows");
    }
  }
  // An update rewrites a row under the same id and deletes the old slot, so
  // only live ids must be unique.
  const std::vector<uint64_t> ids = seq->ToVector();
  bool reported = false;
  for (size_t offset = 0; offset < ids.size(); ++offset) {
    *max_row_id = std::max(max_row_id->value_or(0), ids[offset]);
    if (deleted && deleted->Contains(static_cast<uint32_t>(offset))) continue;
    if (!live_ids->insert(ids[offset]).second && !reported) {
      Add("row_ids", where(frag.row_ids),
          "row id " + std::to_string(ids[offset]) + " at offset " + std::to_string(offset) + " of fragment " + fid +
              " is live in an earlier fragment too");
      reported = true;  // one line per fragment is enough to name it
    }
  }
}

void Verifier::CheckIndices() {
  const Manifest& m = ds_->manifest();
  const auto& indices = ds_->indices();
  // Fragment ids ever handed out: a fragment removed whole (a delete of all
  // its rows) stays in the bitmaps, as pylance leaves it, but an id above
  // them never named a fragment of this dataset.
  std::optional<uint64_t> max_id;
  if (m.max_fragment_id) max_id = *m.max_fragment_id;
  for (const auto& frag : m.fragments) max_id = std::max(max_id.value_or(0), frag.id);

  std::set<std::string> uuids;
  std::map<std::string, std::map<uint32_t, std::string>> covered;  // name -> fragment -> uuid
  for (const auto& idx : indices) {
    const std::string uuid = idx.UuidString();
    const std::string what = "index " + idx.name + " (" + uuid + ")";
    if (!uuids.insert(uuid).second) Add("indices", manifest_path_, "duplicate index uuid " + uuid);
    if (idx.fragment_ids) {
      auto& by_fragment = covered[idx.name];
      std::vector<uint32_t> overlap, stale;
      for (uint32_t f : *idx.fragment_ids) {
        auto [it, inserted] = by_fragment.emplace(f, uuid);
        if (!inserted && it->second != uuid) overlap.push_back(f);
        if (!max_id || f > *max_id) stale.push_back(f);
      }
      auto list = [](const std::vector<uint32_t>& ids) {
        std::string s;
        for (size_t i = 0; i < ids.size() && i < 10; ++i) s += (i ? ", " : "") + std::to_string(ids[i]);
        if (ids.size() > 10) s += ", ...";
        return s;
      };
      if (!overlap.empty()) {
        Add("indices", manifest_path_,
            what + " covers fragments another segment of " + idx.name + " covers: " + list(overlap));
      }
      if (!stale.empty()) {
        Add("indices", manifest_path_, what + " covers fragments this dataset never had: " + list(stale));
      }
    }

    // The index's directory and files.
    auto dir = locator_->Index(idx, "");
    if (!dir.ok()) {
      Add("index_file", manifest_path_, what + ": " + dir.status().message());
      continue;
    }
    const std::string dir_path = dir->FullPath();
    auto is_dir = dir->store->IsDirectory(dir->path);
    if (!is_dir.ok() || !*is_dir) {
      // System indices (fragment reuse, MemWAL) may keep everything inline.
      if (idx.files.empty() && idx.name.rfind("__lance", 0) == 0) continue;
      Add("index_file", dir_path, is_dir.ok() ? what + ": index directory missing" : is_dir.status().message());
      continue;
    }
    std::vector<std::string> names;
    if (!idx.files.empty()) {
      for (const auto& f : idx.files) {
        names.push_back(f.path);
        auto file = locator_->Index(idx, f.path);
        if (!file.ok()) continue;
        auto size = file->store->Size(file->path);
        if (!size.ok()) {
          Add("index_file", file->FullPath(), what + ": missing");
        } else if (f.size_bytes != 0 && static_cast<uint64_t>(*size) != f.size_bytes) {
          Add("index_file", file->FullPath(),
              what + ": is " + std::to_string(*size) + " bytes but the manifest records " +
                  std::to_string(f.size_bytes));
        }
      }
    } else {
      auto listed = dir->store->ListFileNames(dir->path);
      if (listed.ok()) names = *listed;
    }
    for (const auto& name : names) {
      const bool lance_file = (name.size() > 6 && name.compare(name.size() - 6, 6, ".lance") == 0) ||
                              (name.size() > 4 && name.compare(name.size() - 4, 4, ".idx") == 0);
      if (!lance_file) continue;
      auto file = locator_->Index(idx, name);
      if (!file.ok()) continue;
      auto exists = file->store->Exists(file->path);
      if (!exists.ok() || !*exists) continue;  // reported above
      auto reader = index::OpenIndexFile(*ds_, idx, name);
      if (!reader.ok()) Add("index_file", file->FullPath(), what + ": does not open: " + reader.status().message());
    }
  }
}

void Verifier::CheckFeatureFlags() {
  const Manifest& m = ds_->manifest();
  if (Status st = table::CheckPairedFlags(m.reader_feature_flags, m.writer_feature_flags); !st.ok()) {
    Add("feature_flags", manifest_path_, st.message());
  }
  if (Status st = table::CheckDataFileVersions(m); !st.ok()) Add("file_versions", manifest_path_, st.message());
  // The flags a commit of this content would get. A dataset created with
  // stable row ids has bit 2 before it has any fragment.
  auto expected = table::ComputeFeatureFlags(m, DatasetAccess::File(*ds_).indices, nullptr,
                                             (m.reader_feature_flags & table::kFlagStableRowIds) != 0,
                                             (m.writer_feature_flags & table::kFlagDisableTransactionFile) != 0);
  if (!expected.ok()) {
    Add("feature_flags", manifest_path_, expected.status().message());
    return;
  }
  // Bit 4 was set by old writers only and means nothing a reader needs; bit
  // 32 describes one commit, not the content.
  const uint64_t ignored = table::kFlagUseV2FormatDeprecated | table::kFlagDisableTransactionFile;
  auto compare = [&](const char* which, uint64_t stored, uint64_t wanted) {
    stored &= ~ignored;
    wanted &= ~ignored;
    for (int i = 0; i < 64; ++i) {
      const uint64_t bit = uint64_t{1} << i;
      if ((stored & bit) == (wanted & bit)) continue;
      Add("feature_flags", manifest_path_,
          std::string(which) + " feature flags " + std::to_string(stored) + (wanted & bit ? " lack " : " have ") +
              std::to_string(bit) + " (" + table::FlagName(bit) + ")" +
              (wanted & bit ? ", which the content needs" : ", which the content does not use"));
    }
  };
  compare("reader", m.reader_feature_flags, expected->reader);
  compare("writer", m.writer_feature_flags, expected->writer);
}

void Verifier::CheckTransaction() {
  const Manifest& m = ds_->manifest();
  const auto& file = DatasetAccess::File(*ds_);
  if (file.transaction_bytes) {
    auto parsed = txn::ParseTransaction(*file.transaction_bytes, manifest_path_);
    if (!parsed.ok()) {
      Add("transaction", manifest_path_, "inline transaction does not read: " + parsed.status().message());
    }
  }
  if (m.transaction_file.empty()) return;
  const auto& store = DatasetAccess::Store(*ds_);
  const std::string rel = "_transactions/" + m.transaction_file;
  auto bytes = store->ReadAll(rel);
  if (!bytes.ok()) {
    auto exists = store->Exists(rel);
    Add("transaction", store->FullPath(rel),
        exists.ok() && !*exists ? "missing" : "does not read: " + bytes.status().message());
    return;
  }
  auto parsed = txn::ParseTransaction(*bytes, store->FullPath(rel));
  if (!parsed.ok()) Add("transaction", store->FullPath(rel), "does not read: " + parsed.status().message());
}

}  // namespace

Result<VerifyReport> Verify(const std::string& uri, const VerifyOptions& options) {
  OpenOptions open;
  open.version = options.all_versions ? "" : options.version;
  open.branch = options.branch;
  open.filesystem = options.filesystem;
  // The one failure: the version asked for (or the latest) does not open.
  LANCE_ASSIGN_OR_RAISE(auto dataset, Dataset::Open(uri, open));

  util::ProgressStage progress(options.progress, "verifying", "files");
  Verifier verifier(options, progress.active() ? &progress : nullptr);
  VerifyReport report;
  std::vector<uint64_t> versions = {dataset->version()};
  if (options.all_versions) versions = dataset->VersionNumbers();
  for (uint64_t v : versions) {
    report.versions_checked.push_back(v);
    std::shared_ptr<Dataset> ds = dataset;
    if (v != dataset->version()) {
      auto checked_out = dataset->Checkout(std::to_string(v));
      if (!checked_out.ok()) {
        // Another version's manifest is damaged: the dataset still opens.
        const auto& store = DatasetAccess::Store(*dataset);
        auto location = table::FindManifest(*store, v);
        const std::string path = store->FullPath(location.ok() ? location->path : std::string("_versions"));
        report.findings.push_back(
            VerifyFinding{v, path, "manifest", "does not open: " + checked_out.status().message()});
        continue;
      }
      ds = *checked_out;
    }
    verifier.CheckVersion(*ds, &report.findings);
  }
  progress.Finish();
  return report;
}

}  // namespace lance
