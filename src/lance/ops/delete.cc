// Delete: rows matching a predicate are marked in each fragment's deletion
// file (the old set plus the new rows); fully deleted fragments are removed.
#include <arrow/array.h>
#include <arrow/record_batch.h>

#include <map>
#include <random>

#include "lance/dataset.h"
#include "lance/io/object_store.h"
#include "lance/operations.h"
#include "lance/scanner.h"
#include "lance/table/deletion_vector.h"
#include "lance/txn/commit.h"

namespace lance {
namespace {

// The reference keeps a deletion vector as a set (written as .arrow) until
// it holds more than this many rows, then as a bitmap (.bin), never back.
constexpr uint64_t kBitmapThreshold = 5000;

// Row addresses where `predicate` holds, grouped by fragment id.
Result<std::map<uint64_t, std::vector<uint32_t>>> MatchingOffsets(
    const std::shared_ptr<Dataset>& dataset, const std::string& predicate) {
  std::map<uint64_t, std::vector<uint32_t>> out;
  const auto& fields = dataset->manifest().schema.fields;
  if (fields.empty()) return out;
  ScanOptions options;
  options.columns = {fields.front().name};
  options.filter = predicate;
  options.with_row_address = true;
  LANCE_ASSIGN_OR_RAISE(auto reader, ScanBuilder(dataset).Options(options).ToReader());
  while (true) {
    std::shared_ptr<arrow::RecordBatch> batch;
    LANCE_RETURN_NOT_OK(reader->ReadNext(&batch));
    if (!batch) break;
    auto column = batch->GetColumnByName("_rowaddr");
    if (!column || column->type_id() != arrow::Type::UINT64) {
      return Status::Invalid("delete: the scan of ", dataset->uri(), " returned no _rowaddr column");
    }
    const auto& addrs = static_cast<const arrow::UInt64Array&>(*column);
    for (int64_t i = 0; i < addrs.length(); ++i) {
      const uint64_t a = addrs.Value(i);
      out[a >> 32].push_back(static_cast<uint32_t>(a & 0xFFFFFFFFu));
    }
  }
  return out;
}

uint64_t RandomId() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return rng();
}

}  // namespace

Result<DeleteResult> DeleteRows(const std::string& uri, const std::string& predicate) {
  LANCE_ASSIGN_OR_RAISE(auto store, io::ObjectStore::Open(uri));
  LANCE_ASSIGN_OR_RAISE(auto base, txn::LoadLatestForWrite(*store));
  if (!base) return Status::IOError("dataset not found: ", uri);
  const uint64_t read_version = base->location.version;
  OpenOptions open;
  open.version = std::to_string(read_version);
  LANCE_ASSIGN_OR_RAISE(auto dataset, Dataset::Open(uri, open));
  LANCE_ASSIGN_OR_RAISE(auto matches, MatchingOffsets(dataset, predicate));

  DeleteResult result;
  result.version = read_version;
  txn::Delete op;
  op.predicate = predicate;
  for (const auto& fragment : dataset->manifest().fragments) {
    auto it = matches.find(fragment.id);
    if (it == matches.end()) continue;
    LANCE_ASSIGN_OR_RAISE(auto old_rows, dataset->DeletedRows(fragment));
    auto deleted = table::DeletionVector::FromOffsets(old_rows);
    const uint64_t before = deleted.Cardinality();
    for (uint32_t offset : it->second) deleted.Add(offset);
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
  auto committed = txn::Commit(*store, std::move(t));
  if (!committed.ok()) {
    for (const auto& path : written) (void)store->Delete(path);  // no manifest refers to them
    return committed.status();
  }
  result.version = committed->version;
  result.committed = true;
  return result;
}

}  // namespace lance
