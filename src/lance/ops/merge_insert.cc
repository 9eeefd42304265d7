// Merge-insert: the source is joined with the table on key columns (a hash
// join over the serialized key values); matched rows are rewritten with the
// source's values, unmatched source rows inserted, unmatched target rows
// optionally deleted. One Update transaction (rewrite rows), as the
// reference commits.
#include <arrow/array.h>
#include <arrow/builder.h>
#include <arrow/datum.h>
#include <arrow/scalar.h>
#include <arrow/compute/api_vector.h>
#include <arrow/table.h>

#include <unordered_map>
#include <unordered_set>

#include "lance/ops/row_rewrite.h"
#include "lance/row_ops.h"
#include "lance/scanner.h"
#include "lance/txn/commit.h"

namespace lance {
namespace {

// Key values of one row as a byte string; nullopt when any key is null
// (a null key matches nothing, as in a SQL join).
class KeyEncoder {
 public:
  KeyEncoder(const arrow::RecordBatch& batch, const std::vector<std::string>& on) {
    for (const auto& name : on) columns_.push_back(batch.GetColumnByName(name));
  }

  std::optional<std::string> Encode(int64_t row) const {
    std::string key;
    for (const auto& column : columns_) {
      if (column->IsNull(row)) return std::nullopt;
      Append(*column, row, &key);
    }
    return key;
  }

 private:
  // Integers and temporal values by their bytes, strings and binaries
  // length-prefixed; anything else (floats, decimals, nested) by its text.
  // Both sides' key columns have the same types, so equal keys encode alike.
  static void Append(const arrow::Array& column, int64_t row, std::string* key) {
    const auto id = column.type_id();
    if (arrow::is_integer(id) || id == arrow::Type::DATE32 || id == arrow::Type::DATE64 ||
        id == arrow::Type::TIME32 || id == arrow::Type::TIME64 || id == arrow::Type::TIMESTAMP ||
        id == arrow::Type::DURATION) {
      const int width = column.type()->byte_width();
      const uint8_t* values = column.data()->buffers[1]->data();
      key->append(reinterpret_cast<const char*>(values + (column.offset() + row) * width), static_cast<size_t>(width));
      return;
    }
    std::string_view bytes;
    if (id == arrow::Type::STRING || id == arrow::Type::BINARY) {
      bytes = static_cast<const arrow::BinaryArray&>(column).GetView(row);
    } else if (id == arrow::Type::LARGE_STRING || id == arrow::Type::LARGE_BINARY) {
      bytes = static_cast<const arrow::LargeBinaryArray&>(column).GetView(row);
    } else {
      auto scalar = column.GetScalar(row);
      const std::string text = scalar.ok() ? (*scalar)->ToString() : std::string();
      *key += std::to_string(text.size());
      *key += ':';
      *key += text;
      return;
    }
    *key += std::to_string(bytes.size());
    *key += ':';
    key->append(bytes.data(), bytes.size());
  }

  std::vector<std::shared_ptr<arrow::Array>> columns_;
};

// "id = 5, name = \"x\"", as the reference shows key values in its error.
std::string ShowKeys(const arrow::RecordBatch& batch, int64_t row, const std::vector<std::string>& on) {
  std::string out;
  for (const auto& name : on) {
    if (!out.empty()) out += ", ";
    auto column = batch.GetColumnByName(name);
    std::string value = "NULL";
    if (!column->IsNull(row)) {
      auto scalar = column->GetScalar(row);
      value = scalar.ok() ? (*scalar)->ToString() : "?";
      const auto id = column->type_id();
      if (id == arrow::Type::STRING || id == arrow::Type::LARGE_STRING) value = "\"" + value + "\"";
    }
    out += name + " = " + value;
  }
  return out;
}

// The whole source, conformed to the dataset's columns, as one batch.
Result<std::shared_ptr<arrow::RecordBatch>> ReadSource(arrow::RecordBatchReader& source,
                                                       const std::shared_ptr<arrow::Schema>& target,
                                                       const std::string& uri) {
  std::vector<std::shared_ptr<arrow::RecordBatch>> batches;
  const std::string what = "merge-insert into " + uri + ": the source";
  while (true) {
    std::shared_ptr<arrow::RecordBatch> batch;
    LANCE_RETURN_NOT_OK(source.ReadNext(&batch));
    if (!batch) break;
    LANCE_ASSIGN_OR_RAISE(auto conformed, ops::ConformBatch(batch, target, what));
    batches.push_back(std::move(conformed));
  }
  LANCE_ASSIGN_OR_RAISE(auto table, arrow::Table::FromRecordBatches(target, batches));
  return table->CombineChunksToBatch();
}

Result<std::shared_ptr<arrow::RecordBatch>> TakeRows(const std::shared_ptr<arrow::RecordBatch>& batch,
                                                     const std::vector<int64_t>& rows) {
  arrow::Int64Builder builder;
  LANCE_RETURN_NOT_OK(builder.AppendValues(rows));
  LANCE_ASSIGN_OR_RAISE(auto indices, builder.Finish());
  LANCE_ASSIGN_OR_RAISE(auto taken, arrow::compute::Take(arrow::Datum(batch), arrow::Datum(indices)));
  return taken.record_batch();
}

// Addresses of the target rows where `predicate` holds.
Result<std::unordered_set<uint64_t>> AddressesWhere(const std::shared_ptr<Dataset>& dataset,
                                                    const std::string& key, const std::string& predicate) {
  ScanOptions scan;
  scan.columns = {key};
  scan.filter = predicate;
  scan.with_row_address = true;
  LANCE_ASSIGN_OR_RAISE(auto table, ScanBuilder(dataset).Options(scan).ToTable());
  std::unordered_set<uint64_t> out;
  for (const auto& chunk : table->GetColumnByName("_rowaddr")->chunks()) {
    const auto& a = static_cast<const arrow::UInt64Array&>(*chunk);
    for (int64_t i = 0; i < a.length(); ++i) out.insert(a.Value(i));
  }
  return out;
}

struct Plan {
  std::vector<int64_t> update_source_rows;  // source row per updated target row
  std::vector<uint64_t> update_row_ids;
  std::vector<uint64_t> update_row_addrs;
  std::vector<int64_t> insert_source_rows;
  std::vector<uint64_t> delete_row_addrs;
};

Result<Plan> MakePlan(const std::shared_ptr<Dataset>& dataset, const std::shared_ptr<arrow::RecordBatch>& source,
                      const MergeInsertParams& params) {
  Plan plan;
  std::unordered_map<std::string, int64_t> by_key;
  std::unordered_set<std::string> duplicated;
  const KeyEncoder source_keys(*source, params.on);
  for (int64_t i = 0; i < source->num_rows(); ++i) {
    auto key = source_keys.Encode(i);
    if (!key) continue;
    if (!by_key.emplace(*key, i).second) duplicated.insert(*key);
  }

  std::unordered_set<uint64_t> deletable;
  const bool delete_if = params.when_not_matched_by_source_delete &&
                         !params.when_not_matched_by_source_predicate.empty();
  if (delete_if) {
    LANCE_ASSIGN_OR_RAISE(deletable,
                          AddressesWhere(dataset, params.on.front(), params.when_not_matched_by_source_predicate));
  }

  std::vector<bool> matched(source->num_rows(), false);
  ScanOptions scan;
  scan.columns = params.on;
  scan.with_row_id = true;
  scan.with_row_address = true;
  LANCE_ASSIGN_OR_RAISE(auto reader, ScanBuilder(dataset).Options(scan).ToReader());
  while (true) {
    std::shared_ptr<arrow::RecordBatch> batch;
    LANCE_RETURN_NOT_OK(reader->ReadNext(&batch));
    if (!batch) break;
    const KeyEncoder target_keys(*batch, params.on);
    const auto& ids = static_cast<const arrow::UInt64Array&>(*batch->GetColumnByName("_rowid"));
    const auto& addrs = static_cast<const arrow::UInt64Array&>(*batch->GetColumnByName("_rowaddr"));
    for (int64_t i = 0; i < batch->num_rows(); ++i) {
      auto key = target_keys.Encode(i);
      auto hit = key ? by_key.find(*key) : by_key.end();
      if (hit != by_key.end()) {
        if (duplicated.count(*key)) {
          return Status::Invalid(
              "Ambiguous merge inserts are prohibited: multiple source rows match the same target row on (",
              ShowKeys(*batch, i, params.on),
              "). Please ensure each target row is matched by at most one source row.");
        }
        matched[hit->second] = true;
        if (params.when_matched_update_all) {
          plan.update_source_rows.push_back(hit->second);
          plan.update_row_ids.push_back(ids.Value(i));
          plan.update_row_addrs.push_back(addrs.Value(i));
        }
      } else if (params.when_not_matched_by_source_delete &&
                 (!delete_if || deletable.count(addrs.Value(i)))) {
        plan.delete_row_addrs.push_back(addrs.Value(i));
      }
    }
  }
  if (params.when_not_matched_insert_all) {
    for (int64_t i = 0; i < source->num_rows(); ++i) {
      if (!matched[i]) plan.insert_source_rows.push_back(i);
    }
  }
  return plan;
}

// One attempt on the latest version; `source` may be read again.
Result<MergeInsertResult> MergeInsertOnce(const std::string& uri, arrow::RecordBatchReader& source,
                                          const MergeInsertParams& params) {
  LANCE_ASSIGN_OR_RAISE(auto store, io::ObjectStore::Open(uri));
  LANCE_ASSIGN_OR_RAISE(auto base, txn::LoadLatestForWrite(*store));
  if (!base) return Status::IOError("dataset not found: ", uri);
  OpenOptions open;
  open.version = std::to_string(base->location.version);
  LANCE_ASSIGN_OR_RAISE(auto dataset, Dataset::Open(uri, open));
  LANCE_ASSIGN_OR_RAISE(auto schema, dataset->ArrowSchema());
  for (const auto& key : params.on) {
    if (schema->GetFieldIndex(key) < 0) {
      return Status::Invalid("merge-insert into ", uri, ": key column '", key, "' is not in the dataset (",
                             schema->ToString(), ")");
    }
  }
  LANCE_ASSIGN_OR_RAISE(auto storage_version, dataset->DataStorageVersion());
  LANCE_ASSIGN_OR_RAISE(auto rows, ReadSource(source, schema, uri));
  LANCE_ASSIGN_OR_RAISE(auto plan, MakePlan(dataset, rows, params));

  MergeInsertResult result;
  result.num_updated_rows = plan.update_source_rows.size();
  result.num_inserted_rows = plan.insert_source_rows.size();
  result.num_deleted_rows = plan.delete_row_addrs.size();

  // Updated rows and inserted rows go to separate fragments: the updated
  // ones carry their old row ids, the inserted ones get new ids at commit.
  ops::NewFragmentWriter updated_writer(*store, dataset->manifest().schema, storage_version);
  ops::NewFragmentWriter inserted_writer(*store, dataset->manifest().schema, storage_version);
  auto cleanup = [&] {
    updated_writer.RemoveFiles();
    inserted_writer.RemoveFiles();
  };
  auto write = [&](ops::NewFragmentWriter& writer, const std::vector<int64_t>& source_rows)
      -> Result<std::vector<Fragment>> {
    if (!source_rows.empty()) {
      LANCE_ASSIGN_OR_RAISE(auto batch, TakeRows(rows, source_rows));
      LANCE_RETURN_NOT_OK(writer.Write(std::move(batch)));
    }
    return writer.Finish();
  };
  auto updated = write(updated_writer, plan.update_source_rows);
  auto inserted = updated.ok() ? write(inserted_writer, plan.insert_source_rows) : updated;
  if (!inserted.ok()) {
    cleanup();
    return inserted.status();
  }
  std::vector<Fragment> updated_fragments = std::move(*updated);
  if (ops::UsesStableRowIds(*dataset)) {
    auto carried = ops::CarryRowIdentity(*dataset, plan.update_row_ids, plan.update_row_addrs,
                                         dataset->latest_version() + 1, &updated_fragments);
    if (!carried.ok()) {
      cleanup();
      return carried;
    }
  }

  std::map<uint64_t, std::vector<uint32_t>> offsets;
  for (const auto* list : {&plan.update_row_addrs, &plan.delete_row_addrs}) {
    for (uint64_t a : *list) offsets[a >> 32].push_back(static_cast<uint32_t>(a & 0xFFFFFFFFu));
  }
  auto deletions = ops::MarkDeleted(*store, *dataset, offsets);
  if (!deletions.ok()) {
    cleanup();
    return deletions.status();
  }

  txn::Update op;
  op.removed_fragment_ids = deletions->removed_fragment_ids;
  op.updated_fragments = deletions->updated_fragments;
  op.new_fragments = std::move(updated_fragments);
  for (auto& f : *inserted) op.new_fragments.push_back(std::move(f));
  // Every field id, nested ones included, as pylance 14 records it.
  for (const auto& field : dataset->manifest().schema.FieldsPreOrder()) {
    op.fields_for_preserving_frag_bitmap.push_back(static_cast<uint32_t>(field.id));
  }
  op.mode = txn::Update::Mode::kRewriteRows;
  auto committed = txn::Commit(*store, txn::Transaction::Make(dataset->version(), std::move(op)));
  if (!committed.ok()) {
    cleanup();
    for (const auto& f : deletions->written_files) (void)store->Delete(f);
    return committed.status();
  }
  result.version = committed->version;
  return result;
}

}  // namespace

Result<MergeInsertResult> MergeInsert(const std::string& uri,
                                      const std::shared_ptr<arrow::RecordBatchReader>& source,
                                      const MergeInsertParams& params) {
  if (params.on.empty()) return Status::Invalid("merge-insert into ", uri, ": no key column (on) given");
  // The source is kept in memory so that a conflict can be retried, as the
  // reference does, with the same rows.
  std::vector<std::shared_ptr<arrow::RecordBatch>> batches;
  while (true) {
    std::shared_ptr<arrow::RecordBatch> batch;
    LANCE_RETURN_NOT_OK(source->ReadNext(&batch));
    if (!batch) break;
    batches.push_back(std::move(batch));
  }
  Status last;
  for (int attempt = 0; attempt < ops::kConflictRetries; ++attempt) {
    LANCE_ASSIGN_OR_RAISE(auto replay, arrow::RecordBatchReader::Make(batches, source->schema()));
    auto result = MergeInsertOnce(uri, *replay, params);
    if (result.ok() || !txn::IsCommitConflict(result.status())) return result;
    last = result.status();
  }
  return last;
}

}  // namespace lance
