// Scans, takes and counts over the fragments of one dataset version.
#include "lance/scanner.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <numeric>
#include <unordered_map>

#include <arrow/api.h>
#include <arrow/array/builder_primitive.h>
#include <arrow/compute/api.h>
#include <arrow/compute/initialize.h>
#include <arrow/util/bit_util.h>

#include "lance/index/filter_plan.h"
#include "lance/scan/filter_parser.h"
#include "lance/scan/fragment_reader.h"
#include "lance/unify_dictionaries.h"

namespace lance {
namespace {

constexpr const char* kRowIdColumn = "_rowid";
constexpr const char* kRowAddrColumn = "_rowaddr";

Status EnsureComputeInitialized() {
  static const Status status = arrow::compute::Initialize();
  return status;
}

// Splits "a.b.c" into its parts (back-quoted parts may contain dots).
std::vector<std::string> SplitPath(const std::string& path) {
  std::vector<std::string> parts;
  std::string cur;
  bool quoted = false;
  for (char c : path) {
    if (c == '`') {
      quoted = !quoted;
    } else if (c == '.' && !quoted) {
      parts.push_back(cur);
      cur.clear();
    } else {
      cur.push_back(c);
    }
  }
  parts.push_back(cur);
  return parts;
}

// A column of the output: a top-level field, or a path inside one.
struct OutputColumn {
  std::string name;              // as asked
  size_t top_level = 0;          // index into the read batch
  std::vector<std::string> path; // child names below the top level
};

// Extracts a nested child, folding parent nulls into it as pylance does.
Result<std::shared_ptr<arrow::Array>> ExtractPath(std::shared_ptr<arrow::Array> array,
                                                  const std::vector<std::string>& path, const std::string& name) {
  for (const auto& part : path) {
    if (array->type_id() != arrow::Type::STRUCT) {
      return Status::KeyError("column '", name, "': '", part, "' is not inside a struct");
    }
    auto st = std::static_pointer_cast<arrow::StructArray>(array);
    int idx = st->struct_type()->GetFieldIndex(part);
    if (idx < 0) return Status::KeyError("column '", name, "' does not exist");
    LANCE_ASSIGN_OR_RAISE(array, st->GetFlattenedField(idx));
  }
  return array;
}

// The scan plan shared by the reader, count and take.
struct Plan {
  std::shared_ptr<const Dataset> dataset;
  ScanOptions options;
  std::vector<const Field*> read_fields;  // top-level fields to read
  std::vector<OutputColumn> outputs;
  std::optional<arrow::compute::Expression> filter;  // bound to the read schema (+ row columns)
  std::shared_ptr<arrow::Schema> output_schema;
  std::vector<const Fragment*> fragments;  // scanned, in order
  // The scalar index query answering (part of) the filter, when any: the
  // fragments it covers read only its candidate rows.
  std::shared_ptr<const index::IndexedFilter> indexed;
  std::shared_ptr<const index::IndexedRows> indexed_rows;
};

// The fragments a scan reads: options.fragment_ids, else all.
Result<std::vector<const Fragment*>> ScannedFragments(const Dataset& dataset, const ScanOptions& options) {
  std::vector<const Fragment*> out;
  const auto& all = dataset.manifest().fragments;
  if (!options.fragment_ids) {
    for (const auto& f : all) out.push_back(&f);
    return out;
  }
  for (uint64_t id : *options.fragment_ids) {
    auto it = std::find_if(all.begin(), all.end(), [&](const Fragment& f) { return f.id == id; });
    if (it == all.end()) {
      return Status::KeyError("version ", dataset.version(), " of dataset ", dataset.uri(), " has no fragment ", id);
    }
    out.push_back(&*it);
  }
  return out;
}

// `count_only`: read just what the filter needs and produce no columns.
// `run_index`: run the index query (not for explaining).
Result<Plan> MakePlan(std::shared_ptr<const Dataset> dataset, ScanOptions options, bool count_only = false,
                      bool run_index = true) {
  LANCE_RETURN_NOT_OK(EnsureComputeInitialized());
  Plan plan;
  plan.dataset = dataset;
  LANCE_ASSIGN_OR_RAISE(plan.fragments, ScannedFragments(*dataset, options));
  const Schema& schema = dataset->manifest().schema;
  LANCE_ASSIGN_OR_RAISE(auto arrow_schema, dataset->ArrowSchema());
  std::map<std::string, size_t> read_index;
  auto need_top = [&](const std::string& top) -> Result<size_t> {
    auto it = read_index.find(top);
    if (it != read_index.end()) return it->second;
    auto f = std::find_if(schema.fields.begin(), schema.fields.end(), [&](const Field& x) { return x.name == top; });
    if (f == schema.fields.end()) return Status::KeyError("dataset ", dataset->uri(), " has no column '", top, "'");
    plan.read_fields.push_back(&*f);
    read_index[top] = plan.read_fields.size() - 1;
    return plan.read_fields.size() - 1;
  };
  std::vector<std::string> names = options.columns;
  if (names.empty() && !count_only) {
    for (const auto& f : schema.fields) names.push_back(f.name);
  }
  for (const auto& name : names) {
    auto parts = SplitPath(name);
    LANCE_ASSIGN_OR_RAISE(size_t top, need_top(parts[0]));
    plan.outputs.push_back({name, top, std::vector<std::string>(parts.begin() + 1, parts.end())});
  }
  if (!options.filter.empty()) {
    LANCE_ASSIGN_OR_RAISE(auto expr, scan::ParseFilter(options.filter, *arrow_schema));
    for (const auto& col : scan::FilterColumns(expr)) LANCE_RETURN_NOT_OK(need_top(col).status());
    plan.filter = expr;
    if (options.use_scalar_index) {
      LANCE_ASSIGN_OR_RAISE(auto indexed, index::IndexedFilter::Plan(dataset, expr, plan.fragments));
      if (indexed) {
        plan.indexed = std::make_shared<const index::IndexedFilter>(std::move(*indexed));
        if (run_index) {
          LANCE_ASSIGN_OR_RAISE(auto rows, plan.indexed->Execute());
          plan.indexed_rows = std::make_shared<const index::IndexedRows>(std::move(rows));
        }
      }
    }
  }
  plan.options = std::move(options);
  // The output schema: projected columns, then the row columns.
  arrow::FieldVector out_fields;
  for (const auto& out : plan.outputs) {
    std::shared_ptr<arrow::Field> f = arrow_schema->GetFieldByName(plan.read_fields[out.top_level]->name);
    for (const auto& part : out.path) {
      auto child = f->type()->id() == arrow::Type::STRUCT
                       ? std::static_pointer_cast<arrow::StructType>(f->type())->GetFieldByName(part)
                       : nullptr;
      if (child == nullptr) return Status::KeyError("dataset ", dataset->uri(), " has no column '", out.name, "'");
      f = child;
    }
    out_fields.push_back(out.path.empty() ? f : f->WithName(out.name));
  }
  if (plan.options.with_row_id) out_fields.push_back(arrow::field(kRowIdColumn, arrow::uint64(), true));
  if (plan.options.with_row_address) out_fields.push_back(arrow::field(kRowAddrColumn, arrow::uint64(), true));
  plan.output_schema = arrow::schema(out_fields);
  return plan;
}

// A scan reads each fragment a window at a time, so memory follows the
// window, not the fragment. Windows aim at this many bytes of data files
// (wide rows such as embeddings get fewer rows), within these row bounds.
constexpr uint64_t kScanWindowBytes = 16 << 20;
constexpr uint64_t kScanWindowMinRows = 1024;
constexpr uint64_t kScanWindowMaxRows = 64 * 1024;

uint64_t ScanWindowRows(uint64_t bytes_per_row) {
  if (bytes_per_row == 0) return kScanWindowMaxRows;
  return std::clamp<uint64_t>(kScanWindowBytes / bytes_per_row, kScanWindowMinRows, kScanWindowMaxRows);
}

// One fragment being scanned window by window.
struct FragmentScan {
  const Fragment* fragment = nullptr;
  std::unique_ptr<scan::FragmentReader> reader;
  std::vector<uint64_t> windows;     // boundaries
  size_t next_window = 0;
  std::vector<uint32_t> deleted;     // ascending offsets
  std::vector<uint64_t> row_ids;     // stable ids, when asked for and present
  // A fragment the index query covers: its live candidate rows, and windows
  // are positions in this list.
  const std::vector<uint64_t>* candidates = nullptr;
};

// Rows per window of an index-selected fragment.
constexpr uint64_t kCandidateWindowRows = 8192;

Result<FragmentScan> StartFragment(const Plan& plan, const Fragment& fragment) {
  const Dataset& ds = *plan.dataset;
  FragmentScan fs;
  fs.fragment = &fragment;
  if (plan.indexed_rows && plan.indexed->Covers(fragment.id)) {
    fs.candidates = &plan.indexed_rows->candidates.at(fragment.id);
    for (uint64_t w = 0; w < fs.candidates->size(); w += kCandidateWindowRows) fs.windows.push_back(w);
    fs.windows.push_back(fs.candidates->size());
    if (fs.candidates->empty()) return fs;  // nothing to read
    LANCE_ASSIGN_OR_RAISE(fs.reader, scan::FragmentReader::Open(ds, fragment, plan.read_fields, plan.options.pool));
  } else {
    LANCE_ASSIGN_OR_RAISE(fs.reader, scan::FragmentReader::Open(ds, fragment, plan.read_fields, plan.options.pool,
                                                                plan.options.cache_file_readers));
    LANCE_ASSIGN_OR_RAISE(fs.windows, fs.reader->ReadWindows(ScanWindowRows(fs.reader->EstimatedBytesPerRow())));
    LANCE_ASSIGN_OR_RAISE(fs.deleted, ds.DeletedRows(fragment));
  }
  if (plan.options.with_row_id && ds.manifest().UsesStableRowIds()) {
    LANCE_ASSIGN_OR_RAISE(fs.row_ids, ds.RowIds(fragment));
  }
  return fs;
}

// The live rows of window `w` of a fragment that pass the filter, as output columns.
Result<std::shared_ptr<arrow::RecordBatch>> ScanWindow(const Plan& plan, FragmentScan& fs) {
  arrow::MemoryPool* pool = plan.options.pool;
  const uint64_t lo = fs.windows[fs.next_window], hi = fs.windows[fs.next_window + 1];
  ++fs.next_window;
  // The window's physical rows: a range, or candidates the index chose
  // (live already; they still pass the filter only when it needs a refine).
  std::vector<uint64_t> picked;
  std::shared_ptr<arrow::RecordBatch> batch;
  if (fs.candidates) {
    picked.assign(fs.candidates->begin() + static_cast<std::ptrdiff_t>(lo),
                  fs.candidates->begin() + static_cast<std::ptrdiff_t>(hi));
    LANCE_ASSIGN_OR_RAISE(batch, fs.reader->Take(picked));
  } else {
    LANCE_ASSIGN_OR_RAISE(batch, fs.reader->ReadRange(lo, hi - lo));
  }
  auto physical = [&](uint64_t i) { return fs.candidates ? picked[i] : lo + i; };
  const int64_t rows = batch->num_rows();
  const uint64_t frag_id = fs.fragment->id;

  // Row addresses and ids of the window's physical rows.
  std::shared_ptr<arrow::Array> addr_array, id_array;
  if (plan.options.with_row_address || plan.options.with_row_id) {
    arrow::UInt64Builder addrs(pool);
    LANCE_RETURN_NOT_OK(addrs.Reserve(rows));
    for (uint64_t i = 0; i < static_cast<uint64_t>(rows); ++i) addrs.UnsafeAppend((frag_id << 32) | physical(i));
    LANCE_RETURN_NOT_OK(addrs.Finish(&addr_array));
    id_array = addr_array;
    if (plan.options.with_row_id && !fs.row_ids.empty()) {
      arrow::UInt64Builder b(pool);
      LANCE_RETURN_NOT_OK(b.Reserve(rows));
      for (uint64_t i = 0; i < static_cast<uint64_t>(rows); ++i) b.UnsafeAppend(fs.row_ids[physical(i)]);
      LANCE_RETURN_NOT_OK(b.Finish(&id_array));
    }
  }

  // Keep mask: not deleted, and the filter is true. No mask at all when
  // nothing in the window is deleted or filtered: the batch goes out as read.
  std::shared_ptr<arrow::Array> keep;
  {
    auto d = std::lower_bound(fs.deleted.begin(), fs.deleted.end(), static_cast<uint32_t>(lo));
    if (d != fs.deleted.end() && *d < hi) {
      LANCE_ASSIGN_OR_RAISE(std::shared_ptr<arrow::Buffer> bits, arrow::AllocateBitmap(rows, pool));
      auto* data = bits->mutable_data();
      std::memset(data, 0xFF, static_cast<size_t>(bits->size()));
      for (; d != fs.deleted.end() && *d < hi; ++d) arrow::bit_util::ClearBit(data, *d - lo);
      keep = std::make_shared<arrow::BooleanArray>(rows, std::move(bits));
    }
  }
  if (plan.filter && (!fs.candidates || plan.indexed->needs_refine())) {
    LANCE_ASSIGN_OR_RAISE(auto bound, plan.filter->Bind(*batch->schema()));
    LANCE_ASSIGN_OR_RAISE(auto input, arrow::compute::MakeExecBatch(*batch->schema(), batch));
    LANCE_ASSIGN_OR_RAISE(auto result, arrow::compute::ExecuteScalarExpression(bound, input));
    std::shared_ptr<arrow::Array> mask;
    if (result.is_scalar()) {
      LANCE_ASSIGN_OR_RAISE(mask, arrow::MakeArrayFromScalar(*result.scalar(), rows, pool));
    } else {
      mask = result.make_array();
    }
    // Null counts as false: and_kleene(null, x) is null, so fill nulls first.
    if (mask->null_count() > 0) {
      LANCE_ASSIGN_OR_RAISE(auto filled, arrow::compute::CallFunction("coalesce", {mask, arrow::Datum(false)}));
      mask = filled.make_array();
    }
    if (keep) {
      LANCE_ASSIGN_OR_RAISE(auto both, arrow::compute::And(keep, mask));
      keep = both.make_array();
    } else {
      keep = std::move(mask);
    }
  }

  // Output columns.
  arrow::ArrayVector columns;
  for (const auto& out : plan.outputs) {
    LANCE_ASSIGN_OR_RAISE(auto col, ExtractPath(batch->column(static_cast<int>(out.top_level)), out.path, out.name));
    columns.push_back(col);
  }
  if (plan.options.with_row_id) columns.push_back(id_array);
  if (plan.options.with_row_address) columns.push_back(addr_array);
  auto full = arrow::RecordBatch::Make(plan.output_schema, rows, columns);
  if (!keep) return full;
  LANCE_ASSIGN_OR_RAISE(auto filtered, arrow::compute::Filter(full, keep));
  return filtered.record_batch();
}

// Streams fragments one at a time, applying offset and limit across them.
class ScanReader : public arrow::RecordBatchReader {
 public:
  explicit ScanReader(Plan plan) : plan_(std::move(plan)) {
    remaining_offset_ = std::max<int64_t>(plan_.options.offset, 0);
    remaining_limit_ = plan_.options.limit;
  }
  std::shared_ptr<arrow::Schema> schema() const override { return plan_.output_schema; }

  Status ReadNext(std::shared_ptr<arrow::RecordBatch>* out) override {
    while (true) {
      if (remaining_limit_ && *remaining_limit_ <= 0) {
        *out = nullptr;
        return Status::OK();
      }
      if (pending_ && pending_pos_ < pending_->num_rows()) {
        int64_t n = std::min(plan_.options.batch_size, pending_->num_rows() - pending_pos_);
        if (remaining_limit_) n = std::min(n, *remaining_limit_);
        *out = pending_->Slice(pending_pos_, n);
        pending_pos_ += n;
        if (remaining_limit_) *remaining_limit_ -= n;
        return Status::OK();
      }
      if (!current_ || current_->next_window + 1 >= current_->windows.size()) {
        if (next_fragment_ >= plan_.fragments.size()) {
          *out = nullptr;
          return Status::OK();
        }
        LANCE_ASSIGN_OR_RAISE(auto fs, StartFragment(plan_, *plan_.fragments[next_fragment_++]));
        current_ = std::make_unique<FragmentScan>(std::move(fs));
        continue;
      }
      LANCE_ASSIGN_OR_RAISE(pending_, ScanWindow(plan_, *current_));
      pending_pos_ = std::min(remaining_offset_, pending_->num_rows());
      remaining_offset_ -= pending_pos_;
    }
  }

 private:
  Plan plan_;
  size_t next_fragment_ = 0;
  std::unique_ptr<FragmentScan> current_;
  std::shared_ptr<arrow::RecordBatch> pending_;
  int64_t pending_pos_ = 0;
  int64_t remaining_offset_ = 0;
  std::optional<int64_t> remaining_limit_;
};

// Rows of the dataset's fragments at (fragment index, physical offset), in
// the order given.
Result<std::shared_ptr<arrow::Table>> TakeAddresses(const Plan& plan,
                                                    const std::vector<std::pair<size_t, uint32_t>>& where) {
  const auto& fragments = plan.dataset->manifest().fragments;
  std::map<size_t, std::vector<size_t>> by_fragment;  // fragment -> positions in `where`
  for (size_t i = 0; i < where.size(); ++i) by_fragment[where[i].first].push_back(i);
  std::vector<std::shared_ptr<arrow::RecordBatch>> pieces;
  std::vector<int64_t> row_of(where.size());  // row of the concatenated pieces for each asked position
  int64_t base = 0;
  for (const auto& [frag_index, positions] : by_fragment) {
    const Fragment& fragment = fragments[frag_index];
    // Each distinct row once, ascending: the file readers fetch only the
    // pages that hold them.
    std::vector<uint64_t> rows;
    for (size_t p : positions) rows.push_back(where[p].second);
    std::sort(rows.begin(), rows.end());
    rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
    LANCE_ASSIGN_OR_RAISE(auto reader,
                          scan::FragmentReader::Open(*plan.dataset, fragment, plan.read_fields, plan.options.pool));
    LANCE_ASSIGN_OR_RAISE(auto batch, reader->Take(rows));
    arrow::ArrayVector columns;
    for (const auto& out : plan.outputs) {
      LANCE_ASSIGN_OR_RAISE(auto col,
                            ExtractPath(batch->column(static_cast<int>(out.top_level)), out.path, out.name));
      columns.push_back(col);
    }
    pieces.push_back(arrow::RecordBatch::Make(plan.output_schema, batch->num_rows(), columns));
    for (size_t p : positions) {
      row_of[p] = base + (std::lower_bound(rows.begin(), rows.end(), where[p].second) - rows.begin());
    }
    base += static_cast<int64_t>(rows.size());
  }
  LANCE_ASSIGN_OR_RAISE(auto table, arrow::Table::FromRecordBatches(plan.output_schema, pieces));
  if (pieces.size() > 1) {
    // The Take below joins the pieces: each fragment's dictionaries must
    // first become one (Arrow cannot join dictionaries with null entries,
    // which 2.0 files give).
    LANCE_ASSIGN_OR_RAISE(auto unified, UnifyDictionaries(std::make_shared<arrow::TableBatchReader>(table),
                                                          plan.options.pool));
    LANCE_ASSIGN_OR_RAISE(table, unified->ToTable());
  }
  // Back to the order asked (repeats included).
  arrow::Int64Builder order(plan.options.pool);
  LANCE_RETURN_NOT_OK(order.AppendValues(row_of));
  std::shared_ptr<arrow::Array> order_array;
  LANCE_RETURN_NOT_OK(order.Finish(&order_array));
  LANCE_ASSIGN_OR_RAISE(auto reordered, arrow::compute::Take(table, order_array));
  return reordered.table();
}

}  // namespace

Result<std::shared_ptr<arrow::RecordBatchReader>> ScanBuilder::ToReader() const {
  LANCE_ASSIGN_OR_RAISE(auto plan, MakePlan(dataset_, options_));
  if (plan.options.batch_size <= 0) return Status::Invalid("batch size must be positive");
  return std::make_shared<ScanReader>(std::move(plan));
}

Result<std::shared_ptr<arrow::Table>> ScanBuilder::ToTable() const {
  LANCE_ASSIGN_OR_RAISE(auto reader, ToReader());
  return reader->ToTable();
}

Result<int64_t> ScanBuilder::CountRows() const {
  if (options_.filter.empty()) {
    // From metadata alone.
    int64_t total = 0;
    LANCE_ASSIGN_OR_RAISE(auto fragments, ScannedFragments(*dataset_, options_));
    for (const Fragment* fragment : fragments) {
      LANCE_ASSIGN_OR_RAISE(uint64_t physical, dataset_->PhysicalRows(*fragment));
      LANCE_ASSIGN_OR_RAISE(uint64_t deleted, dataset_->NumDeletedRows(*fragment));
      total += static_cast<int64_t>(physical - std::min(physical, deleted));
    }
    total = std::max<int64_t>(total - std::max<int64_t>(options_.offset, 0), 0);
    return options_.limit ? std::min(total, *options_.limit) : total;
  }
  ScanOptions counting = options_;
  counting.columns.clear();
  counting.with_row_id = counting.with_row_address = false;
  LANCE_ASSIGN_OR_RAISE(auto plan, MakePlan(dataset_, counting, /*count_only=*/true));
  int64_t total = 0;
  bool clamp = false;  // offset and limit are applied here, not by the reader
  if (plan.indexed_rows && !plan.indexed->needs_refine()) {
    // The index answers the filter on the fragments it covers: count its
    // rows there without reading, and scan the others.
    std::vector<const Fragment*> scanned;
    for (const Fragment* f : plan.fragments) {
      if (plan.indexed->Covers(f->id)) {
        total += static_cast<int64_t>(plan.indexed_rows->candidates.at(f->id).size());
      } else {
        scanned.push_back(f);
      }
    }
    plan.fragments = std::move(scanned);
    plan.options.offset = 0;
    plan.options.limit.reset();
    clamp = true;
  }
  ScanReader reader(std::move(plan));
  std::shared_ptr<arrow::RecordBatch> batch;
  while (true) {
    LANCE_RETURN_NOT_OK(reader.ReadNext(&batch));
    if (!batch) break;
    total += batch->num_rows();
  }
  if (clamp) {
    total = std::max<int64_t>(total - std::max<int64_t>(counting.offset, 0), 0);
    if (counting.limit) total = std::min(total, *counting.limit);
  }
  return total;
}

Result<std::string> ScanBuilder::ExplainPlan() const {
  LANCE_ASSIGN_OR_RAISE(auto plan, MakePlan(dataset_, options_, /*count_only=*/false, /*run_index=*/false));
  auto join = [](const auto& items, auto text) {
    std::string out;
    for (const auto& item : items) out += (out.empty() ? "" : ", ") + text(item);
    return out;
  };
  std::string out = "Scan: uri=" + dataset_->uri() + ", version=" + std::to_string(dataset_->version()) +
                    ", projection=[" + join(plan.output_schema->fields(), [](const auto& f) { return f->name(); }) +
                    "], num_fragments=" + std::to_string(plan.fragments.size()) +
                    ", filter=" + (options_.filter.empty() ? std::string("--") : options_.filter) + "\n";
  if (plan.indexed) {
    std::vector<uint64_t> scanned;
    for (const Fragment* f : plan.fragments) {
      if (!plan.indexed->Covers(f->id)) scanned.push_back(f->id);
    }
    auto ids = [](uint64_t id) { return std::to_string(id); };
    out += "  ScalarIndexQuery: query=" + plan.indexed->Describe() + ", fragments=[" +
           join(plan.indexed->covered_fragments(), ids) + "]\n";
    out += std::string("  Refine: ") + (plan.indexed->needs_refine() ? "filter rechecked on candidate rows" : "--") +
           "\n";
    if (!scanned.empty()) out += "  FilteredScan: unindexed fragments=[" + join(scanned, ids) + "]\n";
  } else if (plan.filter) {
    out += "  FilteredScan: no scalar index used\n";
  }
  return out;
}

Result<std::shared_ptr<arrow::Table>> Take(const std::shared_ptr<const Dataset>& dataset,
                                           const std::vector<uint64_t>& indices,
                                           const std::vector<std::string>& columns) {
  ScanOptions options;
  options.columns = columns;
  LANCE_ASSIGN_OR_RAISE(auto plan, MakePlan(dataset, options));
  const auto& fragments = dataset->manifest().fragments;
  // Live rows per fragment, and the deleted offsets of those we touch.
  std::vector<uint64_t> live_start(fragments.size() + 1, 0);
  for (size_t i = 0; i < fragments.size(); ++i) {
    LANCE_ASSIGN_OR_RAISE(uint64_t physical, dataset->PhysicalRows(fragments[i]));
    LANCE_ASSIGN_OR_RAISE(uint64_t deleted, dataset->NumDeletedRows(fragments[i]));
    live_start[i + 1] = live_start[i] + physical - std::min(physical, deleted);
  }
  std::unordered_map<size_t, std::vector<uint32_t>> deleted_of;
  std::vector<std::pair<size_t, uint32_t>> where;
  where.reserve(indices.size());
  for (uint64_t index : indices) {
    if (index >= live_start.back()) {
      return Status::IndexError("take: index ", index, " is out of range for dataset ", dataset->uri(), " with ",
                                live_start.back(), " rows");
    }
    size_t f = static_cast<size_t>(std::upper_bound(live_start.begin(), live_start.end(), index) -
                                   live_start.begin() - 1);
    uint64_t live_offset = index - live_start[f];
    auto it = deleted_of.find(f);
    if (it == deleted_of.end()) {
      LANCE_ASSIGN_OR_RAISE(auto del, dataset->DeletedRows(fragments[f]));
      it = deleted_of.emplace(f, std::move(del)).first;
    }
    // The live_offset-th row not in the deleted list.
    const auto& del = it->second;
    uint64_t lo = live_offset, hi = live_offset + del.size();
    while (lo < hi) {  // smallest p with p - (#deleted <= p) == live_offset and p not deleted
      uint64_t mid = lo + (hi - lo) / 2;
      uint64_t deleted_upto = std::upper_bound(del.begin(), del.end(), mid) - del.begin();
      if (mid - deleted_upto + 1 <= live_offset) lo = mid + 1; else hi = mid;
    }
    where.emplace_back(f, static_cast<uint32_t>(lo));
  }
  return TakeAddresses(plan, where);
}

Result<std::shared_ptr<arrow::Table>> TakeRows(const std::shared_ptr<const Dataset>& dataset,
                                               const std::vector<uint64_t>& row_ids,
                                               const std::vector<std::string>& columns) {
  ScanOptions options;
  options.columns = columns;
  LANCE_ASSIGN_OR_RAISE(auto plan, MakePlan(dataset, options));
  const auto& fragments = dataset->manifest().fragments;
  std::unordered_map<uint64_t, size_t> index_of_fragment;
  for (size_t i = 0; i < fragments.size(); ++i) index_of_fragment[fragments[i].id] = i;
  std::vector<std::pair<size_t, uint32_t>> where;
  if (dataset->manifest().UsesStableRowIds()) {
    // The row-id index: stable id -> address, over live rows.
    std::unordered_map<uint64_t, std::pair<size_t, uint32_t>> index;
    for (size_t i = 0; i < fragments.size(); ++i) {
      LANCE_ASSIGN_OR_RAISE(auto ids, dataset->RowIds(fragments[i]));
      LANCE_ASSIGN_OR_RAISE(auto del, dataset->DeletedRows(fragments[i]));
      size_t d = 0;
      for (size_t off = 0; off < ids.size(); ++off) {
        if (d < del.size() && del[d] == off) { ++d; continue; }
        index[ids[off]] = {i, static_cast<uint32_t>(off)};
      }
    }
    for (uint64_t id : row_ids) {
      auto it = index.find(id);
      if (it == index.end()) return Status::KeyError("take: row id ", id, " is not in dataset ", dataset->uri());
      where.push_back(it->second);
    }
  } else {
    for (uint64_t addr : row_ids) {
      auto it = index_of_fragment.find(addr >> 32);
      if (it == index_of_fragment.end()) {
        return Status::KeyError("take: row address ", addr, " names fragment ", addr >> 32, ", not in dataset ",
                                dataset->uri());
      }
      where.emplace_back(it->second, static_cast<uint32_t>(addr & 0xFFFFFFFFu));
    }
  }
  return TakeAddresses(plan, where);
}

}  // namespace lance
