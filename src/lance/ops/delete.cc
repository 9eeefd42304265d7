// Delete: rows matching a predicate are marked in each fragment's deletion
// file (the old set plus the new rows); fully deleted fragments are removed.
#include <random>

#include "lance/dataset.h"
#include "lance/io/object_store.h"
#include "lance/operations.h"
#include "lance/scan/matching_rows.h"
#include "lance/table/deletion_vector.h"
#include "lance/txn/commit.h"
#include "lance/util/progress_reporter.h"

namespace lance {
namespace {

// The reference keeps a deletion vector as a set (written as .arrow) until
// it holds more than this many rows, then as a bitmap (.bin), never back.
constexpr uint64_t kBitmapThreshold = 5000;

uint64_t RandomId() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return rng();
}

}  // namespace

Result<DeleteResult> DeleteRows(const std::string& uri, const std::string& predicate,
                                const DeleteOptions& options) {
  scan::FilterSetupInBackground filter_setup;  // while the manifest is read
  LANCE_ASSIGN_OR_RAISE(auto store, io::ObjectStore::Open(uri));
  LANCE_ASSIGN_OR_RAISE(auto base, txn::LoadLatestForWrite(*store));
  if (!base) return Status::IOError("dataset not found: ", uri);
  const uint64_t read_version = base->location.version;
  OpenOptions open;
  open.version = std::to_string(read_version);
  LANCE_ASSIGN_OR_RAISE(auto dataset, Dataset::Open(uri, open));
  uint64_t physical_total = 0;
  if (options.progress) {
    for (const auto& f : dataset->manifest().fragments) {
      LANCE_ASSIGN_OR_RAISE(uint64_t rows, dataset->PhysicalRows(f));
      physical_total += rows;
    }
  }
  util::ProgressStage scanning(options.progress, "scanning", "rows", physical_total);
  LANCE_ASSIGN_OR_RAISE(auto matches, scan::MatchingRows(*dataset, predicate, arrow::default_memory_pool(),
                                                         &scanning));
  scanning.Finish();

  DeleteResult result;
  result.version = read_version;
  txn::Delete op;
  op.predicate = predicate;
  const auto& fragments = dataset->manifest().fragments;
  for (size_t i = 0; i < fragments.size(); ++i) {
    const Fragment& fragment = fragments[i];
    if (matches[i].empty()) continue;
    LANCE_ASSIGN_OR_RAISE(auto old_rows, dataset->DeletedRows(fragment));
    auto deleted = table::DeletionVector::FromOffsets(old_rows);
    const uint64_t before = deleted.Cardinality();
    for (uint32_t offset : matches[i]) deleted.Add(offset);
    result.num_deleted_rows += deleted.Cardinality() - before;
    LANCE_ASSIGN_OR_RAISE(uint64_t physical_rows, dataset->PhysicalRows(fragment));
    if (deleted.Cardinality() >= physical_rows) {
      op.deleted_fragment_ids.push_back(fragment.id);
      continue;
    }
    const bool was_bitmap =
        fragment.deletion_file && fragment.deletion_file->type == DeletionFile::Type::kBitmap;
    const bool bitmap = was_bitmap || (before == 0 ? deleted.Cardinality() >= kBitmapThreshold
                                                   : deleted.Cardinality() > kBitmapThreshold);
    DeletionFile file;
    file.type = bitmap ? DeletionFile::Type::kBitmap : DeletionFile::Type::kArrowArray;
    file.read_version = read_version;
    file.id = RandomId();
    file.num_deleted_rows = deleted.Cardinality();
    std::string bytes;
    if (bitmap) {
      bytes = deleted.ToRoaringPortable();
    } else {
      LANCE_ASSIGN_OR_RAISE(bytes, deleted.ToArrowIpc());
    }
    LANCE_RETURN_NOT_OK(store->Write(file.RelativePath(fragment.id), bytes));
    Fragment updated = fragment;
    updated.physical_rows = physical_rows;
    updated.deletion_file = file;
    op.updated_fragments.push_back(std::move(updated));
  }
  if (result.num_deleted_rows == 0) return result;  // nothing matched: no new version

  std::vector<std::string> written;
  for (const auto& f : op.updated_fragments) written.push_back(f.deletion_file->RelativePath(f.id));
  auto t = txn::Transaction::Make(read_version, std::move(op));
  txn::CommitOptions commit_options;
  commit_options.latest = &*base;
  auto committed = txn::Commit(*store, std::move(t), commit_options);
  if (!committed.ok()) {
    for (const auto& path : written) (void)store->Delete(path);  // no manifest refers to them
    return committed.status();
  }
  result.version = committed->version;
  result.committed = true;
  return result;
}

}  // namespace lance
