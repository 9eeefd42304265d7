#include "lance/ops/row_rewrite.h"

#include <arrow/compute/api_scalar.h>
#include <arrow/compute/cast.h>

#include <algorithm>
#include <unordered_map>

#include "lance/ops/dataset_ops_internal.h"
#include "lance/scanner.h"
#include "lance/table/deletion_file.h"
#include "lance/table/deletion_vector.h"
#include "lance/table/feature_flags.h"
#include "lance/table/row_id_sequence.h"
#include "lance/txn/commit.h"

namespace lance::ops {
namespace {

Status MarkDeletedInto(const io::ObjectStore& store, const Dataset& dataset,
                       const std::map<uint64_t, std::vector<uint32_t>>& offsets,
                       const std::map<uint64_t, std::vector<uint32_t>>* known_deleted, DeletionOutcome* result) {
  DeletionOutcome& out = *result;
  out.affected_rows = std::make_shared<txn::AffectedRows>();
  const uint64_t read_version = dataset.version();
  for (const auto& fragment : dataset.manifest().fragments) {
    auto it = offsets.find(fragment.id);
    if (it == offsets.end() || it->second.empty()) continue;
    const std::vector<uint32_t>* old_rows = nullptr;
    if (known_deleted) {
      auto known = known_deleted->find(fragment.id);
      if (known != known_deleted->end()) old_rows = &known->second;
    }
    std::vector<uint32_t> read;
    if (!old_rows) {
      LANCE_ASSIGN_OR_RAISE(read, dataset.DeletedRows(fragment));
      old_rows = &read;
    }
    auto deleted = table::DeletionVector::FromOffsets(*old_rows);
    const uint64_t before = deleted.Cardinality();
    table::DeletionVector& affected = (*out.affected_rows)[fragment.id];
    for (uint32_t offset : it->second) {
      if (deleted.Contains(offset)) continue;
      deleted.Add(offset);
      affected.Add(offset);
    }
    out.num_deleted_rows += deleted.Cardinality() - before;
    LANCE_ASSIGN_OR_RAISE(uint64_t physical_rows, dataset.PhysicalRows(fragment));
    if (deleted.Cardinality() >= physical_rows) {
      out.removed_fragment_ids.push_back(fragment.id);
      continue;
    }
    if (deleted.Cardinality() == before) continue;  // nothing new here
    const auto type = table::DeletionFileTypeFor(fragment.deletion_file, before, deleted.Cardinality());
    LANCE_ASSIGN_OR_RAISE(auto file, table::WriteDeletionFile(store, fragment.id, read_version, deleted, type));
    out.written_files.push_back(file.RelativePath(fragment.id));
    Fragment updated = fragment;
    updated.physical_rows = physical_rows;
    updated.deletion_file = file;
    out.updated_fragments.push_back(std::move(updated));
  }
  return Status::OK();
}

}  // namespace

Result<DeletionOutcome> MarkDeleted(const io::ObjectStore& store, const Dataset& dataset,
                                    const std::map<uint64_t, std::vector<uint32_t>>& offsets,
                                    const std::map<uint64_t, std::vector<uint32_t>>* known_deleted) {
  DeletionOutcome out;
  Status st = MarkDeletedInto(store, dataset, offsets, known_deleted, &out);
  if (!st.ok()) {
    // No deletion file of a failed operation stays behind.
    for (const auto& path : out.written_files) (void)store.Delete(path);
    return st;
  }
  return out;
}

Result<uint64_t> CommitRowRewrite(const io::ObjectStore& store, const Dataset& dataset, RowRewrite rewrite,
                                  const RetryParams& retry, bool disable_transaction_file,
                                  std::optional<txn::CommitResult>* committed_out) {
  if (UsesStableRowIds(dataset)) {
    LANCE_RETURN_NOT_OK(CarryRowIdentity(dataset, rewrite.rewritten_row_ids, rewrite.rewritten_row_addrs,
                                         rewrite.row_id_batch_ends, &rewrite.new_fragments));
  }
  std::map<uint64_t, std::vector<uint32_t>> offsets;
  for (const auto* list : {&rewrite.rewritten_row_addrs, &rewrite.deleted_row_addrs}) {
    for (uint64_t a : *list) offsets[a >> 32].push_back(static_cast<uint32_t>(a & 0xFFFFFFFFu));
  }
  LANCE_ASSIGN_OR_RAISE(auto deletions, MarkDeleted(store, dataset, offsets));

  txn::Update op;
  op.removed_fragment_ids = std::move(deletions.removed_fragment_ids);
  op.updated_fragments = std::move(deletions.updated_fragments);
  op.new_fragments = std::move(rewrite.new_fragments);
  op.fields_for_preserving_frag_bitmap = std::move(rewrite.fields_for_preserving_frag_bitmap);
  op.mode = txn::Update::Mode::kRewriteRows;
  // The dataset's version stands in for the latest (a stale one is found
  // out at commit and checked against what was committed since).
  const txn::BaseVersion base = BaseVersionOf(dataset);
  txn::CommitOptions options;
  options.latest = &base;
  options.num_retries = static_cast<int>(retry.num_retries);
  options.disable_transaction_file = disable_transaction_file;
  options.affected_rows = std::move(deletions.affected_rows);
  auto committed = ops::CommitTransaction(store, txn::Transaction::Make(dataset.version(), std::move(op)), options);
  if (!committed.ok()) {
    for (const auto& f : deletions.written_files) (void)store.Delete(f);
    return committed.status();
  }
  const uint64_t version = committed->version;
  if (committed_out) *committed_out = std::move(*committed);
  return version;
}

std::vector<size_t> ScanBatchEnds(const std::vector<uint64_t>& row_addrs, size_t batch_rows) {
  std::vector<size_t> ends;
  size_t start = 0;
  for (size_t i = 1; i < row_addrs.size(); ++i) {
    if ((row_addrs[i] >> 32) != (row_addrs[i - 1] >> 32) || (batch_rows != 0 && i - start == batch_rows)) {
      ends.push_back(i);
      start = i;
    }
  }
  return ends;
}

bool UsesStableRowIds(const Dataset& dataset) {
  return (dataset.manifest().reader_feature_flags & table::kFlagStableRowIds) != 0;
}

Status CarryRowIdentity(const Dataset& /*dataset*/, const std::vector<uint64_t>& row_ids,
                        const std::vector<uint64_t>& row_addrs, const std::vector<size_t>& batch_ends,
                        std::vector<Fragment>* fragments) {
  if (row_ids.size() != row_addrs.size()) {
    return Status::Invalid("rewritten rows: ", row_ids.size(), " row ids but ", row_addrs.size(), " addresses");
  }
  size_t next = 0;
  for (auto& fragment : *fragments) {
    if (next == row_ids.size()) {
      // Only new rows from here on: pylance's transaction records their
      // (empty) captured sequence, and the commit gives them ids.
      fragment.row_ids.inline_bytes = table::RowIdSequence().Serialize();
      continue;
    }
    // Rewritten rows fill the fragment, or end in it (new rows follow).
    const uint64_t rows = std::min<uint64_t>(fragment.physical_rows.value_or(0), row_ids.size() - next);
    // A segment per batch piece within the fragment: the reference cuts
    // its captured sequence at the fragment's rows, re-encoding each cut.
    table::RowIdSequence sequence;
    const size_t end = next + rows;
    auto cut = std::upper_bound(batch_ends.begin(), batch_ends.end(), next);
    for (size_t from = next; from < end;) {
      const size_t to = (cut != batch_ends.end() && *cut < end) ? *cut++ : end;
      sequence.Extend(table::RowIdSequence::FromValues(
          std::vector<uint64_t>(row_ids.begin() + from, row_ids.begin() + to)));
      from = to;
    }
    fragment.row_ids.inline_bytes = sequence.Serialize();
    next = end;
  }
  if (next != row_ids.size()) {
    return Status::Invalid("rewritten rows: ", row_ids.size(), " row ids but ", next, " rows written");
  }
  return Status::OK();
}

Result<std::shared_ptr<arrow::Table>> TakeByAddress(const std::shared_ptr<const Dataset>& dataset,
                                                    const std::vector<uint64_t>& row_addrs,
                                                    const std::vector<std::string>& columns) {
  // A row's position among the live rows of the dataset: the live rows of
  // the fragments before its own, then its offset less the deleted rows
  // before it.
  const auto& fragments = dataset->manifest().fragments;
  struct Place {
    uint64_t live_start = 0;
    std::vector<uint32_t> deleted;  // ascending
  };
  std::unordered_map<uint64_t, Place> places;
  uint64_t live = 0;
  for (const auto& fragment : fragments) {
    LANCE_ASSIGN_OR_RAISE(uint64_t physical, dataset->PhysicalRows(fragment));
    LANCE_ASSIGN_OR_RAISE(auto deleted, dataset->DeletedRows(fragment));
    Place place;
    place.live_start = live;
    live += physical - std::min<uint64_t>(physical, deleted.size());
    place.deleted.assign(deleted.begin(), deleted.end());
    places.emplace(fragment.id, std::move(place));
  }
  std::vector<uint64_t> positions;
  positions.reserve(row_addrs.size());
  for (uint64_t addr : row_addrs) {
    auto it = places.find(addr >> 32);
    if (it == places.end()) {
      return Status::KeyError("row address ", addr, " names fragment ", addr >> 32, ", not in dataset ",
                              dataset->uri());
    }
    const uint32_t offset = static_cast<uint32_t>(addr & 0xFFFFFFFFu);
    const auto& deleted = it->second.deleted;
    auto before = std::lower_bound(deleted.begin(), deleted.end(), offset);
    if (before != deleted.end() && *before == offset) {
      return Status::KeyError("row address ", addr, " of dataset ", dataset->uri(), " is a deleted row");
    }
    positions.push_back(it->second.live_start + offset - static_cast<uint64_t>(before - deleted.begin()));
  }
  return Take(dataset, positions, columns);
}

Result<std::shared_ptr<arrow::RecordBatch>> ConformBatch(const std::shared_ptr<arrow::RecordBatch>& batch,
                                                         const std::shared_ptr<arrow::Schema>& target,
                                                         const std::string& what) {
  std::vector<std::shared_ptr<arrow::Array>> columns;
  for (const auto& field : target->fields()) {
    auto column = batch->GetColumnByName(field->name());
    if (!column) return Status::Invalid(what, ": no column '", field->name(), "'");
    if (!column->type()->Equals(*field->type())) {
      auto cast = arrow::compute::Cast(*column, field->type());
      if (!cast.ok()) {
        return Status::Invalid(what, ": column '", field->name(), "' is ", column->type()->ToString(),
                               ", the dataset has ", field->type()->ToString(), ": ",
                               cast.status().message());
      }
      column = *cast;
    }
    columns.push_back(std::move(column));
  }
  if (batch->num_columns() != target->num_fields()) {
    return Status::Invalid(what, ": ", batch->num_columns(), " columns, but the dataset has ",
                           target->num_fields(), " (", target->ToString(), ")");
  }
  return arrow::RecordBatch::Make(target, batch->num_rows(), std::move(columns));
}

}  // namespace lance::ops
