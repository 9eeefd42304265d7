#include "lance/ops/row_rewrite.h"

#include <arrow/compute/api_scalar.h>
#include <arrow/compute/cast.h>

#include <algorithm>
#include <random>
#include <tuple>
#include <unordered_map>

#include "lance/file/blob_v2.h"
#include "lance/scanner.h"
#include "lance/table/deletion_file.h"
#include "lance/table/deletion_vector.h"
#include "lance/table/feature_flags.h"
#include "lance/table/row_id_sequence.h"
#include "lance/txn/commit.h"

namespace lance::ops {
namespace {

constexpr const char* kDataDir = "data";

uint64_t RandomU64() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return rng();
}

// The reference's data file names: 24 bits written as '0'/'1', then 26 hex
// digits, ".lance".
std::string NewDataFileName() {
  const uint64_t a = RandomU64();
  const uint64_t b = RandomU64();
  std::string name;
  for (int bit = 23; bit >= 0; --bit) name += ((a >> bit) & 1) ? '1' : '0';
  static constexpr char kHex[] = "0123456789abcdef";
  for (int i = 0; i < 13; ++i) {
    const uint64_t source = i < 5 ? (a >> (24 + 8 * i)) : (b >> (8 * (i - 5)));
    name += kHex[(source >> 4) & 0xF];
    name += kHex[source & 0xF];
  }
  return name + ".lance";
}

// Field ids a data file records and their column numbers: every field in
// 2.0 files, only leaves from 2.1 on, where a blob v2 column counts as one
// leaf (its children have no columns of their own).
void SetFileFields(const Schema& schema, const std::string& storage_version, DataFile* file) {
  const bool every_field = storage_version == "2.0";
  int32_t column = 0;
  std::vector<int32_t> blob_v2_ids;
  for (const auto& f : schema.FieldsPreOrder()) {
    const Field* full = schema.FieldById(f.id);
    if (std::find(blob_v2_ids.begin(), blob_v2_ids.end(), f.parent_id) != blob_v2_ids.end()) continue;
    const bool blob_v2 = full != nullptr && file::IsBlobV2Field(*full);
    if (blob_v2) blob_v2_ids.push_back(f.id);
    const bool leaf = full == nullptr || full->children.empty() || blob_v2;
    if (!every_field && !leaf) continue;
    file->fields.push_back(f.id);
    file->column_indices.push_back(column++);
  }
}

}  // namespace

NewFragmentWriter::NewFragmentWriter(const io::ObjectStore& store, Schema schema, std::string storage_version,
                                     uint64_t max_rows_per_file)
    : store_(store), schema_(std::move(schema)), max_rows_per_file_(max_rows_per_file) {
  options_.version = std::move(storage_version);
}

NewFragmentWriter::~NewFragmentWriter() = default;

Status NewFragmentWriter::Write(std::shared_ptr<arrow::RecordBatch> batch) {
  while (batch->num_rows() > 0) {
    if (!writer_) LANCE_RETURN_NOT_OK(OpenFile());
    const uint64_t room = max_rows_per_file_ - rows_;
    const int64_t take = static_cast<int64_t>(std::min<uint64_t>(room, batch->num_rows()));
    std::shared_ptr<arrow::RecordBatch> part = batch->Slice(0, take);
    if (sidecars_) {
      LANCE_ASSIGN_OR_RAISE(part, sidecars_->Spill(part));
    }
    LANCE_RETURN_NOT_OK(writer_->Write(*part));
    rows_ += static_cast<uint64_t>(take);
    batch = batch->Slice(take);
    if (rows_ >= max_rows_per_file_) LANCE_RETURN_NOT_OK(FinishFile());
  }
  return Status::OK();
}

Result<std::vector<Fragment>> NewFragmentWriter::Finish() {
  if (writer_) LANCE_RETURN_NOT_OK(FinishFile());
  return fragments_;
}

void NewFragmentWriter::RemoveFiles() {
  writer_.reset();
  if (sidecars_) {
    (void)sidecars_->Finish();
    sidecar_files_.insert(sidecar_files_.end(), sidecars_->created().begin(), sidecars_->created().end());
    sidecars_.reset();
  }
  for (const auto& path : sidecar_files_) (void)store_.Delete(path);
  for (const auto& name : created_) (void)store_.Delete(std::string(kDataDir) + "/" + name);
}

Status NewFragmentWriter::OpenFile() {
  name_ = NewDataFileName();
  created_.push_back(name_);
  LANCE_ASSIGN_OR_RAISE(auto out, store_.OpenOutputStream(std::string(kDataDir) + "/" + name_));
  LANCE_ASSIGN_OR_RAISE(writer_, FileWriter::Open(std::move(out), name_, schema_, options_));
  // Blob v2 values too large to stay inline go to .blob files beside it.
  if (std::any_of(schema_.fields.begin(), schema_.fields.end(), file::IsBlobV2Field)) {
    const std::string stem = name_.substr(0, name_.size() - std::string(".lance").size());
    sidecars_ = std::make_unique<BlobV2Sidecars>(store_, std::string(kDataDir) + "/" + stem, schema_);
  }
  rows_ = 0;
  return Status::OK();
}

Status NewFragmentWriter::FinishFile() {
  if (sidecars_) {
    LANCE_RETURN_NOT_OK(sidecars_->Finish());
    sidecar_files_.insert(sidecar_files_.end(), sidecars_->created().begin(), sidecars_->created().end());
    sidecars_.reset();
  }
  LANCE_ASSIGN_OR_RAISE(uint64_t rows, writer_->Finish());
  DataFile file;
  file.path = name_;
  SetFileFields(schema_, options_.version, &file);
  std::tie(file.file_major_version, file.file_minor_version) = writer_->version_pair();
  writer_.reset();
  LANCE_ASSIGN_OR_RAISE(int64_t size, store_.Size(std::string(kDataDir) + "/" + name_));
  file.file_size_bytes = static_cast<uint64_t>(size);
  Fragment fragment;
  fragment.files.push_back(std::move(file));
  fragment.physical_rows = rows;
  fragments_.push_back(std::move(fragment));
  return Status::OK();
}

namespace {

Status MarkDeletedInto(const io::ObjectStore& store, const Dataset& dataset,
                       const std::map<uint64_t, std::vector<uint32_t>>& offsets, DeletionOutcome* result) {
  DeletionOutcome& out = *result;
  out.affected_rows = std::make_shared<txn::AffectedRows>();
  const uint64_t read_version = dataset.version();
  for (const auto& fragment : dataset.manifest().fragments) {
    auto it = offsets.find(fragment.id);
    if (it == offsets.end() || it->second.empty()) continue;
    LANCE_ASSIGN_OR_RAISE(auto old_rows, dataset.DeletedRows(fragment));
    auto deleted = table::DeletionVector::FromOffsets(old_rows);
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
                                    const std::map<uint64_t, std::vector<uint32_t>>& offsets) {
  DeletionOutcome out;
  Status st = MarkDeletedInto(store, dataset, offsets, &out);
  if (!st.ok()) {
    // No deletion file of a failed operation stays behind.
    for (const auto& path : out.written_files) (void)store.Delete(path);
    return st;
  }
  return out;
}

Result<uint64_t> CommitRowRewrite(const io::ObjectStore& store, const Dataset& dataset, RowRewrite rewrite,
                                  const RetryParams& retry) {
  if (UsesStableRowIds(dataset)) {
    LANCE_RETURN_NOT_OK(CarryRowIdentity(dataset, rewrite.rewritten_row_ids, rewrite.rewritten_row_addrs,
                                         dataset.latest_version() + 1, &rewrite.rewritten));
  }
  std::map<uint64_t, std::vector<uint32_t>> offsets;
  for (const auto* list : {&rewrite.rewritten_row_addrs, &rewrite.deleted_row_addrs}) {
    for (uint64_t a : *list) offsets[a >> 32].push_back(static_cast<uint32_t>(a & 0xFFFFFFFFu));
  }
  LANCE_ASSIGN_OR_RAISE(auto deletions, MarkDeleted(store, dataset, offsets));

  txn::Update op;
  op.removed_fragment_ids = std::move(deletions.removed_fragment_ids);
  op.updated_fragments = std::move(deletions.updated_fragments);
  op.new_fragments = std::move(rewrite.rewritten);
  for (auto& f : rewrite.inserted) op.new_fragments.push_back(std::move(f));
  op.fields_for_preserving_frag_bitmap = std::move(rewrite.fields_for_preserving_frag_bitmap);
  op.mode = txn::Update::Mode::kRewriteRows;
  txn::CommitOptions options;
  options.num_retries = static_cast<int>(retry.num_retries);
  options.affected_rows = std::move(deletions.affected_rows);
  auto committed = txn::Commit(store, txn::Transaction::Make(dataset.version(), std::move(op)), options);
  if (!committed.ok()) {
    for (const auto& f : deletions.written_files) (void)store.Delete(f);
    return committed.status();
  }
  return committed->version;
}

bool UsesStableRowIds(const Dataset& dataset) {
  return (dataset.manifest().reader_feature_flags & table::kFlagStableRowIds) != 0;
}

Status CarryRowIdentity(const Dataset& dataset, const std::vector<uint64_t>& row_ids,
                        const std::vector<uint64_t>& row_addrs, uint64_t new_version,
                        std::vector<Fragment>* fragments) {
  if (row_ids.size() != row_addrs.size()) {
    return Status::Invalid("rewritten rows: ", row_ids.size(), " row ids but ", row_addrs.size(), " addresses");
  }
  // created_at of every row of the fragments rows come from, loaded once.
  std::unordered_map<uint64_t, std::vector<uint64_t>> created;
  std::unordered_map<uint64_t, const Fragment*> by_id;
  for (const auto& f : dataset.manifest().fragments) by_id[f.id] = &f;
  auto created_at = [&](uint64_t addr) -> Result<uint64_t> {
    const uint64_t frag = addr >> 32;
    const uint64_t offset = addr & 0xFFFFFFFFu;
    auto cached = created.find(frag);
    if (cached == created.end()) {
      std::vector<uint64_t> versions;
      auto f = by_id.find(frag);
      if (f != by_id.end()) {
        LANCE_ASSIGN_OR_RAISE(auto v, dataset.RowCreatedAtVersions(*f->second));
        if (v) versions = std::move(*v);
      }
      cached = created.emplace(frag, std::move(versions)).first;
    }
    // Rows without lineage count as created in version 1, as the reference has it.
    return offset < cached->second.size() ? cached->second[offset] : 1;
  };

  size_t next = 0;
  for (auto& fragment : *fragments) {
    const uint64_t rows = fragment.physical_rows.value_or(0);
    if (next + rows > row_ids.size()) {
      return Status::Invalid("rewritten rows: ", row_ids.size(), " row ids for more rows than that");
    }
    std::vector<uint64_t> ids(row_ids.begin() + next, row_ids.begin() + next + rows);
    fragment.row_ids.inline_bytes = table::RowIdSequence::FromValues(ids).Serialize();
    std::vector<table::VersionRun> runs;
    for (uint64_t i = 0; i < rows; ++i) {
      LANCE_ASSIGN_OR_RAISE(uint64_t v, created_at(row_addrs[next + i]));
      if (!runs.empty() && runs.back().version == v) {
        ++runs.back().length;
      } else {
        runs.push_back({1, v});
      }
    }
    fragment.created_at_versions.inline_bytes = table::RowVersionSequence(runs).Serialize();
    fragment.last_updated_at_versions.inline_bytes =
        table::RowVersionSequence({{rows, new_version}}).Serialize();
    next += rows;
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
