// Update: the matching rows, with new values, are written as new fragments
// and deleted where they were; one Update transaction (rewrite rows).
#include <arrow/array.h>
#include <arrow/compute/exec.h>
#include <arrow/compute/expression.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "lance/dataset_internal.h"
#include "lance/file/blob_v2.h"
#include "lance/ops/dataset_ops_internal.h"
#include "lance/ops/blob_v2_values.h"
#include "lance/ops/fragment_writer.h"
#include "lance/ops/row_rewrite.h"
#include "lance/row_ops.h"
#include "lance/scan/filter_parser.h"
#include "lance/dataset_ops.h"
#include "lance/scanner.h"
#include "lance/table/feature_flags.h"
#include "lance/txn/commit.h"
#include "lance/util/progress_reporter.h"

namespace lance {
namespace {

namespace cp = arrow::compute;

struct Assignment {
  int column = 0;  // top-level index in the dataset schema
  cp::Expression value;
  std::string text;  // "col = value", for errors
};

Result<std::vector<Assignment>> ParseAssignments(const std::vector<std::pair<std::string, std::string>>& set,
                                                 const arrow::Schema& schema, const std::string& uri) {
  if (set.empty()) return Status::Invalid("update of ", uri, ": no column to set");
  std::vector<Assignment> out;
  std::set<int> seen;
  for (const auto& [name, sql] : set) {
    const int column = schema.GetFieldIndex(name);
    if (column < 0) {
      return Status::Invalid("update of ", uri, ": no column '", name, "' in the dataset (", schema.ToString(),
                             ")");
    }
    if (!seen.insert(column).second) {
      return Status::Invalid("update of ", uri, ": column '", name, "' is set twice");
    }
    auto value = scan::ParseValue(sql, schema, schema.field(column)->type());
    if (!value.ok()) {
      return Status::Invalid("update of ", uri, ": SET ", name, " = ", sql, ": ", value.status().message());
    }
    out.push_back({column, std::move(*value), name + " = " + sql});
  }
  return out;
}

// The batch's dataset columns with the assigned ones replaced; every value
// is computed from the row as it was (SQL semantics).
Result<std::shared_ptr<arrow::RecordBatch>> Apply(const std::shared_ptr<arrow::RecordBatch>& batch,
                                                  const std::vector<Assignment>& assignments,
                                                  const std::shared_ptr<arrow::Schema>& target) {
  std::vector<std::shared_ptr<arrow::Array>> columns;
  for (int i = 0; i < target->num_fields(); ++i) columns.push_back(batch->column(i));
  const cp::ExecBatch input(*batch);
  for (const auto& a : assignments) {
    auto datum = a.value.Bind(*batch->schema()).Map([&](const cp::Expression& bound) {
      return cp::ExecuteScalarExpression(bound, input);
    });
    if (!datum.ok()) return Status::Invalid("SET ", a.text, ": ", datum.status().message());
    std::shared_ptr<arrow::Array> values;
    if (datum->is_scalar()) {
      LANCE_ASSIGN_OR_RAISE(values, arrow::MakeArrayFromScalar(*datum->scalar(), batch->num_rows()));
    } else {
      values = datum->make_array();
    }
    columns[a.column] = std::move(values);
  }
  return arrow::RecordBatch::Make(target, batch->num_rows(), std::move(columns));
}

void AddSubtreeIds(const Field& field, std::vector<uint32_t>* ids) {
  ids->push_back(static_cast<uint32_t>(field.id));
  for (const auto& child : field.children) AddSubtreeIds(child, ids);
}

void AppendU64(const std::shared_ptr<arrow::Array>& column, std::vector<uint64_t>* out) {
  const auto& values = static_cast<const arrow::UInt64Array&>(*column);
  for (int64_t i = 0; i < values.length(); ++i) out->push_back(values.Value(i));
}

// Rows taken per batch when only the matching rows are read.
constexpr size_t kTakeBatchRows = 8192;
// Above this share of the rows, reading everything beats taking the matches.
constexpr double kMaxTakeShare = 0.1;

// Where a scan is in the version: the physical rows before a row address
// (for progress, which a filtered scan gives no other sign of).
class ScanPosition {
 public:
  static Result<ScanPosition> Of(const Dataset& dataset) {
    ScanPosition out;
    for (const auto& f : dataset.manifest().fragments) {
      out.start_[f.id] = out.total_;
      LANCE_ASSIGN_OR_RAISE(uint64_t rows, dataset.PhysicalRows(f));
      out.total_ += rows;
    }
    return out;
  }
  uint64_t total() const { return total_; }
  /// The rows up to and including the last row of `batch` (with "_rowaddr").
  uint64_t After(const arrow::RecordBatch& batch) const {
    if (batch.num_rows() == 0) return 0;
    const auto& addrs = static_cast<const arrow::UInt64Array&>(*batch.GetColumnByName("_rowaddr"));
    const uint64_t last = addrs.Value(addrs.length() - 1);
    auto it = start_.find(last >> 32);
    return it == start_.end() ? 0 : it->second + (last & 0xFFFFFFFFu) + 1;
  }

 private:
  std::map<uint64_t, uint64_t> start_;  // fragment id -> physical rows before it
  uint64_t total_ = 0;
};

struct Matches {
  std::vector<uint64_t> row_ids;
  std::vector<uint64_t> row_addrs;
};

// The rows `predicate` selects, found by reading only the columns it
// names, when they are few enough to take one by one (as the reference's
// late materialization does); nullopt when every column is better read in
// one scan (no predicate, one that names no column, or many matches).
Result<std::optional<Matches>> FindMatches(const std::shared_ptr<const Dataset>& dataset, const arrow::Schema& schema,
                                           const std::string& predicate, const ScanPosition& position,
                                           const ProgressCallback& progress) {
  if (predicate.empty()) return std::nullopt;
  auto parsed = scan::ParseFilter(predicate, schema);
  // A bad predicate fails in the scan, with the scanner's message.
  if (!parsed.ok()) return std::nullopt;
  const auto columns = scan::FilterColumns(*parsed);
  if (columns.empty()) return std::nullopt;
  ScanOptions scan;
  scan.columns = columns;
  scan.filter = predicate;
  scan.with_row_id = true;
  scan.with_row_address = true;
  LANCE_ASSIGN_OR_RAISE(auto reader, ScanBuilder(dataset).Options(scan).ToReader());
  util::ProgressStage scanning(progress, "scanning", "rows", position.total());
  Matches matches;
  while (true) {
    std::shared_ptr<arrow::RecordBatch> batch;
    LANCE_RETURN_NOT_OK(reader->ReadNext(&batch));
    if (!batch) break;
    AppendU64(batch->GetColumnByName("_rowid"), &matches.row_ids);
    AppendU64(batch->GetColumnByName("_rowaddr"), &matches.row_addrs);
    scanning.AdvanceTo(position.After(*batch));
  }
  scanning.Finish();
  LANCE_ASSIGN_OR_RAISE(int64_t total, ScanBuilder(dataset).CountRows());
  if (static_cast<double>(matches.row_addrs.size()) > kMaxTakeShare * static_cast<double>(total)) {
    return std::nullopt;
  }
  return matches;
}

bool HoldsStruct(const Field& field) {
  if (field.logical_type == "struct") return true;
  return std::any_of(field.children.begin(), field.children.end(), HoldsStruct);
}

// update --overlay: the new values of the assigned columns as one dense
// overlay file per fragment with matching rows, committed as a DataOverlay.
Result<UpdateResult> UpdateAsOverlay(const std::shared_ptr<const Dataset>& dataset,
                                     const std::vector<Assignment>& assignments,
                                     const std::shared_ptr<arrow::Schema>& schema, const std::string& predicate,
                                     const std::string& storage_version, const UpdateOptions& options) {
  const std::string& uri = dataset->uri();
  if (!table::DataOverlayFilesEnabled()) {
    return Status::NotImplemented("update --overlay of ", uri, ": data overlay files are unstable (feature bit 64); set ",
                                  table::kEnableDataOverlayFilesEnv, " to opt in");
  }
  // The overlay file holds the assigned columns, in dataset order.
  std::vector<int> columns;
  for (const auto& a : assignments) columns.push_back(a.column);
  std::sort(columns.begin(), columns.end());
  Schema overlay_schema;
  arrow::FieldVector overlay_fields;
  for (int c : columns) {
    const Field& field = dataset->manifest().schema.fields[static_cast<size_t>(c)];
    if (HoldsStruct(field) || field.metadata.count("lance-encoding:blob")) {
      return Status::NotImplemented("update --overlay of ", uri, ": column '", field.name,
                                    "' holds a struct or blobs, which lance-cpp does not overlay");
    }
    overlay_schema.fields.push_back(field);
    overlay_fields.push_back(schema->field(c));
  }
  auto overlay_arrow = arrow::schema(overlay_fields);
  const auto& store = DatasetAccess::Store(*dataset);
  ScanOptions scan;
  scan.filter = predicate;
  scan.with_row_address = true;
  LANCE_ASSIGN_OR_RAISE(auto reader, ScanBuilder(dataset).Options(scan).ToReader());
  // Per fragment: its matching physical offsets (ascending, as scanned) and
  // the new values.
  std::map<uint64_t, std::vector<uint32_t>> offsets;
  std::map<uint64_t, std::vector<std::shared_ptr<arrow::RecordBatch>>> values;
  uint64_t updated = 0;
  while (true) {
    std::shared_ptr<arrow::RecordBatch> batch;
    LANCE_RETURN_NOT_OK(reader->ReadNext(&batch));
    if (!batch) break;
    if (batch->num_rows() == 0) continue;
    LANCE_ASSIGN_OR_RAISE(auto rows, Apply(batch, assignments, schema));
    std::vector<std::shared_ptr<arrow::Array>> picked;
    for (int c : columns) picked.push_back(rows->column(c));
    auto projected = arrow::RecordBatch::Make(overlay_arrow, rows->num_rows(), picked);
    const auto& addrs = static_cast<const arrow::UInt64Array&>(*batch->GetColumnByName("_rowaddr"));
    int64_t start = 0;
    for (int64_t i = 0; i <= addrs.length(); ++i) {
      if (i < addrs.length() && (addrs.Value(i) >> 32) == (addrs.Value(start) >> 32)) continue;
      const uint64_t frag = addrs.Value(start) >> 32;
      for (int64_t k = start; k < i; ++k) offsets[frag].push_back(static_cast<uint32_t>(addrs.Value(k)));
      values[frag].push_back(projected->Slice(start, i - start));
      start = i;
    }
    updated += static_cast<uint64_t>(batch->num_rows());
  }
  UpdateResult result;
  result.num_rows_updated = updated;
  if (offsets.empty()) {
    // Nothing matched: nothing to overlay, and no new version.
    result.version = dataset->version();
    return result;
  }
  std::vector<std::unique_ptr<ops::FragmentWriter>> writers;
  auto builder = dataset->NewDataOverlay();
  builder.Options(options.retry).DisableTransactionFile(options.disable_transaction_file);
  auto written = [&]() -> Status {
    for (auto& [frag, batches] : values) {
      ops::FragmentWriterOptions writer_options;
      writer_options.storage_version = storage_version;
      writers.push_back(std::make_unique<ops::FragmentWriter>(*store, overlay_schema, std::move(writer_options)));
      for (auto& b : batches) LANCE_RETURN_NOT_OK(writers.back()->Write(b));
      LANCE_ASSIGN_OR_RAISE(auto fragments, writers.back()->Finish());
      if (fragments.size() != 1 || fragments[0].files.size() != 1) {
        return Status::Invalid("update --overlay of ", uri, ": the values of fragment ", frag,
                               " did not fit one file");
      }
      builder.AddDense(frag, fragments[0].files[0], offsets[frag]);
    }
    return Status::OK();
  }();
  auto committed = written.ok() ? builder.Commit() : Result<std::shared_ptr<Dataset>>(written);
  if (!committed.ok()) {
    for (auto& w : writers) w->RemoveFiles();
    return committed.status().WithMessage("update of ", uri, ": ", committed.status().message());
  }
  result.version = (*committed)->version();
  return result;
}

}  // namespace

// One attempt: rewrite on the dataset's version, commit on top of it.
Result<UpdateResult> ops::UpdateOnce(const std::shared_ptr<const Dataset>& dataset,
                                     const std::vector<std::pair<std::string, std::string>>& set,
                                     const std::string& predicate, const UpdateOptions& options,
                                     ops::Committed* committed_out) {
  const std::string& uri = dataset->uri();
  const auto& store = DatasetAccess::Store(*dataset);
  LANCE_RETURN_NOT_OK(ops::CheckWritable(*dataset));
  LANCE_ASSIGN_OR_RAISE(auto schema, dataset->ArrowSchema());
  for (const auto& field : dataset->manifest().schema.fields) {
    // As pylance 14 refuses it.
    const bool assigned = std::any_of(set.begin(), set.end(), [&](const auto& a) { return a.first == field.name; });
    if (assigned && file::IsBlobV2Field(field)) {
      return Status::NotImplemented("update of ", uri, ": direct updates to column '", field.name,
                                    "' containing blob v2 values are not supported");
    }
  }
  LANCE_ASSIGN_OR_RAISE(auto assignments, ParseAssignments(set, *schema, uri));
  LANCE_ASSIGN_OR_RAISE(auto storage_version, dataset->DataStorageVersion());
  if (options.overlay) return UpdateAsOverlay(dataset, assignments, schema, predicate, storage_version, options);
  const bool stable = ops::UsesStableRowIds(*dataset);
  const bool blob_v2 = ops::HasBlobV2Columns(*dataset);

  ScanPosition position;
  if (options.progress) {
    LANCE_ASSIGN_OR_RAISE(position, ScanPosition::Of(*dataset));
  }
  LANCE_ASSIGN_OR_RAISE(auto matches, FindMatches(dataset, *schema, predicate, position, options.progress));

  // pylance's update writes with the default limits.
  ops::FragmentWriterOptions writer_options;
  writer_options.storage_version = storage_version;
  ops::FragmentWriter writer(*store, dataset->manifest().schema, std::move(writer_options));
  std::vector<uint64_t> row_ids;
  std::vector<uint64_t> row_addrs;
  auto written = [&]() -> Result<std::vector<Fragment>> {
    // `addrs`: the batch's row addresses, where its blob v2 values are read.
    auto rewrite = [&](const std::shared_ptr<arrow::RecordBatch>& batch,
                       const std::vector<uint64_t>& addrs) -> Status {
      LANCE_ASSIGN_OR_RAISE(auto updated, Apply(batch, assignments, schema));
      if (blob_v2) {
        LANCE_ASSIGN_OR_RAISE(updated, ops::ReadBlobV2Values(*store, *dataset, updated, addrs));
      }
      return writer.Write(std::move(updated));
    };
    if (matches) {
      // Few rows match: take just them, a batch at a time.
      row_ids = std::move(matches->row_ids);
      row_addrs = std::move(matches->row_addrs);
      util::ProgressStage updating(options.progress, "updating", "rows", row_addrs.size());
      for (size_t at = 0; at < row_addrs.size(); at += kTakeBatchRows) {
        const size_t n = std::min(kTakeBatchRows, row_addrs.size() - at);
        std::vector<uint64_t> addrs(row_addrs.begin() + at, row_addrs.begin() + at + n);
        LANCE_ASSIGN_OR_RAISE(auto rows, ops::TakeByAddress(dataset, addrs, {}));
        LANCE_ASSIGN_OR_RAISE(auto batch, rows->CombineChunksToBatch());
        LANCE_RETURN_NOT_OK(rewrite(batch, addrs));
        updating.Add(n);
      }
      return writer.Finish();
    }
    ScanOptions scan;
    scan.filter = predicate;
    scan.with_row_id = true;
    scan.with_row_address = true;
    LANCE_ASSIGN_OR_RAISE(auto reader, ScanBuilder(dataset).Options(scan).ToReader());
    // Progress by position: the scan returns only the rows it updates.
    util::ProgressStage updating(options.progress, "updating", "rows", position.total());
    while (true) {
      std::shared_ptr<arrow::RecordBatch> batch;
      LANCE_RETURN_NOT_OK(reader->ReadNext(&batch));
      if (!batch) break;
      if (batch->num_rows() == 0) continue;
      const size_t first = row_addrs.size();
      AppendU64(batch->GetColumnByName("_rowid"), &row_ids);
      AppendU64(batch->GetColumnByName("_rowaddr"), &row_addrs);
      std::vector<uint64_t> addrs;
      if (blob_v2) addrs.assign(row_addrs.begin() + static_cast<std::ptrdiff_t>(first), row_addrs.end());
      LANCE_RETURN_NOT_OK(rewrite(batch, addrs));
      updating.AdvanceTo(position.After(*batch));
    }
    updating.Finish();
    return writer.Finish();
  }();
  if (!written.ok()) {
    writer.RemoveFiles();
    return written.status().WithMessage("update of ", uri, ": ", written.status().message());
  }
  UpdateResult result;
  result.num_rows_updated = row_addrs.size();
  // Even when nothing matched there is a new version, as the reference has it.

  ops::RowRewrite rewrite;
  rewrite.new_fragments = std::move(*written);
  if (stable) rewrite.rewritten_row_ids = std::move(row_ids);
  // With a filter, pylance's batches follow its plan: small results come
  // coalesced across fragments (one segment per new fragment, as here),
  // large ones a fragment and 8192 live rows at a time, and rows found
  // through a scalar index a fragment at a time; only the first is
  // reproduced.
  if (stable && predicate.empty()) {
    rewrite.row_id_batch_ends = ops::ScanBatchEnds(row_addrs, ops::kReferenceScanBatchRows);
  }
  rewrite.rewritten_row_addrs = std::move(row_addrs);
  for (const auto& a : assignments) {
    // The assigned columns with every field below them (a list's items, a
    // struct's children), as pylance 14 records them.
    AddSubtreeIds(dataset->manifest().schema.fields[a.column], &rewrite.fields_for_preserving_frag_bitmap);
  }
  auto committed = ops::CommitRowRewrite(*store, *dataset, std::move(rewrite), options.retry,
                                          options.disable_transaction_file, committed_out);
  if (!committed.ok()) {
    writer.RemoveFiles();
    return committed.status();
  }
  result.version = *committed;
  return result;
}

}  // namespace lance
