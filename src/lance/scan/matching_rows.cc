#include "lance/scan/matching_rows.h"

#include <algorithm>
#include <atomic>
#include <optional>

#include <arrow/api.h>
#include <arrow/compute/api.h>
#include <arrow/util/bit_run_reader.h>
#include <arrow/util/thread_pool.h>

#include "lance/file/version.h"
#include "lance/index/filter_plan.h"
#include "lance/scan/filter_functions.h"
#include "lance/scan/filter_parser.h"
#include "lance/scan/fragment_reader.h"
#include "lance/util/parallel.h"

namespace lance::scan {
namespace {

namespace cp = arrow::compute;

// Rows decoded and evaluated at a time: the filter columns of one window
// stay in cache-sized arrays, however large the fragment.
constexpr uint64_t kWindowRows = 64 * 1024;
// A fragment is split into parts (each read by its own reader) only down
// to this many rows: smaller parts cost more in file opening than they gain.
constexpr uint64_t kMinPartRows = 128 * 1024;

// Rows [lo, hi) of one fragment.
struct Part {
  size_t fragment = 0;  // index in the manifest
  uint64_t lo = 0, hi = 0;
};

// Calls fn(pos, len) for each run of rows where `mask` is true (null is
// false).
template <typename Fn>
void ForEachSelectedRun(const arrow::Datum& mask, int64_t rows, Fn&& fn) {
  if (mask.is_scalar()) {
    const auto& s = static_cast<const arrow::BooleanScalar&>(*mask.scalar());
    if (s.is_valid && s.value) fn(0, rows);
    return;
  }
  const arrow::ArrayData& data = *mask.array();
  const uint8_t* validity = data.null_count == 0 ? nullptr : data.buffers[0] ? data.buffers[0]->data() : nullptr;
  (void)arrow::internal::VisitTwoSetBitRuns(data.buffers[1]->data(), data.offset, validity, data.offset, data.length,
                                            [&](int64_t pos, int64_t len) {
                                              fn(pos, len);
                                              return arrow::Status::OK();
                                            });
}

// Appends the offsets first_row + i where `mask` is true and the row is not
// in `deleted` (ascending; *next_deleted is the first entry not below
// first_row, advanced past the window).
void AppendSelected(const arrow::Datum& mask, uint64_t first_row, int64_t rows,
                    const std::vector<uint32_t>& deleted, size_t* next_deleted, std::vector<uint32_t>* out) {
  ForEachSelectedRun(mask, rows, [&](int64_t pos, int64_t len) {
    for (int64_t i = pos; i < pos + len; ++i) {
      const uint64_t row = first_row + static_cast<uint64_t>(i);
      while (*next_deleted < deleted.size() && deleted[*next_deleted] < row) ++*next_deleted;
      if (*next_deleted < deleted.size() && deleted[*next_deleted] == row) continue;
      out->push_back(static_cast<uint32_t>(row));
    }
  });
}

Result<arrow::Datum> EvaluateMask(const cp::Expression& expr, std::optional<cp::Expression>* bound,
                                  const std::shared_ptr<arrow::RecordBatch>& batch, const Dataset& dataset,
                                  const std::string& filter) {
  if (!*bound) {
    LANCE_ASSIGN_OR_RAISE(*bound, expr.Bind(*batch->schema()));
  }
  LANCE_ASSIGN_OR_RAISE(auto input, cp::MakeExecBatch(*batch->schema(), batch));
  LANCE_ASSIGN_OR_RAISE(auto mask, cp::ExecuteScalarExpression(**bound, input));
  if (mask.type() == nullptr || mask.type()->id() != arrow::Type::BOOL) {
    return Status::Invalid("filter '", filter, "' on ", dataset.uri(), " did not give booleans");
  }
  return mask;
}

std::atomic<bool> filter_setup_done{false};

}  // namespace

FilterSetupInBackground::FilterSetupInBackground() {
  if (filter_setup_done.load(std::memory_order_relaxed)) return;
  thread_ = std::thread([] {
    (void)filter::EnsureFilterFunctions();  // its error, if any, comes again from ParseFilter
    filter_setup_done = true;
  });
}

FilterSetupInBackground::~FilterSetupInBackground() {
  if (thread_.joinable()) thread_.join();
}

Result<std::vector<std::vector<uint32_t>>> MatchingRows(std::shared_ptr<const Dataset> dataset_ptr,
                                                        const std::string& filter, arrow::MemoryPool* pool,
                                                        util::ProgressStage* progress,
                                                        std::vector<std::vector<uint32_t>>* deleted_rows,
                                                        bool use_scalar_index) {
  const Dataset& dataset = *dataset_ptr;
  const Manifest& manifest = dataset.manifest();
  const auto& fragments = manifest.fragments;
  std::vector<std::vector<uint32_t>> out(fragments.size());
  if (deleted_rows) deleted_rows->clear();
  if (fragments.empty()) return out;

  LANCE_ASSIGN_OR_RAISE(auto arrow_schema, dataset.ArrowSchema());
  LANCE_ASSIGN_OR_RAISE(auto expr, ParseFilter(filter, *arrow_schema));
  std::vector<const Field*> fields;  // only what the filter reads
  for (const auto& name : FilterColumns(expr)) {
    auto f = std::find_if(manifest.schema.fields.begin(), manifest.schema.fields.end(),
                          [&](const Field& x) { return x.name == name; });
    if (f == manifest.schema.fields.end()) {
      return Status::KeyError("dataset ", dataset.uri(), " has no column '", name, "'");
    }
    fields.push_back(&*f);
  }

  // The fragments indices cover: their candidate rows come from the index
  // query (deleted rows already out), the rest are scanned.
  std::optional<index::IndexedFilter> indexed;
  if (use_scalar_index) {
    std::vector<const Fragment*> all;
    for (const auto& f : fragments) all.push_back(&f);
    LANCE_ASSIGN_OR_RAISE(indexed, index::IndexedFilter::Plan(dataset_ptr, expr, all));
  }
  auto covered = [&](size_t i) { return indexed && indexed->Covers(fragments[i].id); };

  // Row counts and deleted rows of every fragment, then the parts: enough
  // for every core when there are fewer fragments than cores.
  std::vector<uint64_t> rows(fragments.size());
  std::vector<std::vector<uint32_t>> deleted(fragments.size());
  LANCE_RETURN_NOT_OK(util::ParallelFor(fragments.size(), [&](size_t i) -> Status {
    LANCE_ASSIGN_OR_RAISE(rows[i], dataset.PhysicalRows(fragments[i]));
    LANCE_ASSIGN_OR_RAISE(deleted[i], dataset.DeletedRows(fragments[i]));
    return Status::OK();
  }));
  // The index query, given the deleted rows just read.
  index::IndexedRows indexed_rows;
  if (indexed) {
    index::IndexedFilter::KnownDeleted known;
    for (size_t i = 0; i < fragments.size(); ++i) known.emplace(fragments[i].id, &deleted[i]);
    LANCE_ASSIGN_OR_RAISE(indexed_rows, indexed->Execute(&known));
  }
  const size_t cores = static_cast<size_t>(std::max(1, arrow::internal::GetCpuThreadPool()->GetCapacity()));
  const size_t parts_per_fragment = (cores + fragments.size() - 1) / fragments.size();
  std::vector<Part> parts;
  for (size_t i = 0; i < fragments.size(); ++i) {
    if (covered(i)) continue;
    // Legacy files are decoded whole by each reader: never split them.
    bool splittable = !fragments[i].files.empty();
    for (const auto& f : fragments[i].files) {
      auto v = file::FileVersionFromPair(f.file_major_version, f.file_minor_version);
      splittable &= v.ok() && *v != file::FileVersion::kLegacy;
    }
    const uint64_t n = splittable ? std::clamp<uint64_t>(rows[i] / kMinPartRows, 1, parts_per_fragment) : 1;
    // Part bounds on window multiples, so a part's windows are whole.
    const uint64_t windows = (rows[i] + kWindowRows - 1) / kWindowRows;
    for (uint64_t k = 0; k < n; ++k) {
      const uint64_t lo = std::min(rows[i], windows * k / n * kWindowRows);
      const uint64_t hi = std::min(rows[i], windows * (k + 1) / n * kWindowRows);
      if (lo < hi) parts.push_back({i, lo, hi});
    }
  }

  std::vector<std::vector<uint32_t>> selected(parts.size());
  LANCE_RETURN_NOT_OK(util::ParallelFor(parts.size(), [&](size_t p) -> Status {
    const Part& part = parts[p];
    const Fragment& fragment = fragments[part.fragment];
    LANCE_ASSIGN_OR_RAISE(auto reader, FragmentReader::Open(dataset, fragment, fields, pool));
    const auto& dels = deleted[part.fragment];
    size_t next_deleted = std::lower_bound(dels.begin(), dels.end(), static_cast<uint32_t>(part.lo)) - dels.begin();
    std::optional<cp::Expression> bound;
    for (uint64_t lo = part.lo; lo < part.hi; lo += kWindowRows) {
      const uint64_t count = std::min(kWindowRows, part.hi - lo);
      LANCE_ASSIGN_OR_RAISE(auto batch, reader->ReadRange(lo, count));
      LANCE_ASSIGN_OR_RAISE(auto mask, EvaluateMask(expr, &bound, batch, dataset, filter));
      AppendSelected(mask, lo, batch->num_rows(), dels, &next_deleted, &selected[p]);
      if (progress) progress->Add(count);
    }
    return Status::OK();
  }));

  // Covered fragments: the candidates, rechecked against the whole filter
  // (reading only them) when some part of it no index answered.
  std::vector<size_t> covered_fragments;
  for (size_t i = 0; i < fragments.size(); ++i) {
    if (covered(i)) covered_fragments.push_back(i);
  }
  LANCE_RETURN_NOT_OK(util::ParallelFor(covered_fragments.size(), [&](size_t c) -> Status {
    const size_t i = covered_fragments[c];
    const auto& candidates = indexed_rows.candidates.at(fragments[i].id);
    auto& dst = out[i];
    if (!indexed->needs_refine()) {
      dst.assign(candidates.begin(), candidates.end());
    } else if (!candidates.empty()) {
      LANCE_ASSIGN_OR_RAISE(auto reader, FragmentReader::Open(dataset, fragments[i], fields, pool));
      std::optional<cp::Expression> bound;
      for (size_t lo = 0; lo < candidates.size(); lo += kWindowRows) {
        const size_t hi = std::min<size_t>(candidates.size(), lo + kWindowRows);
        const std::vector<uint64_t> window(candidates.begin() + static_cast<std::ptrdiff_t>(lo),
                                           candidates.begin() + static_cast<std::ptrdiff_t>(hi));
        LANCE_ASSIGN_OR_RAISE(auto batch, reader->Take(window));
        LANCE_ASSIGN_OR_RAISE(auto mask, EvaluateMask(expr, &bound, batch, dataset, filter));
        ForEachSelectedRun(mask, batch->num_rows(), [&](int64_t pos, int64_t len) {
          for (int64_t k = pos; k < pos + len; ++k) dst.push_back(static_cast<uint32_t>(window[k]));
        });
      }
    }
    if (progress) progress->Add(rows[i]);
    return Status::OK();
  }));

  if (deleted_rows) *deleted_rows = std::move(deleted);
  // Parts are in fragment and row order: concatenate.
  for (size_t p = 0; p < parts.size(); ++p) {
    auto& dst = out[parts[p].fragment];
    if (dst.empty()) {
      dst = std::move(selected[p]);
    } else {
      dst.insert(dst.end(), selected[p].begin(), selected[p].end());
    }
  }
  return out;
}

}  // namespace lance::scan
