// Compaction (include/lance/compaction.h): the reference's plan
// (plan_compaction), the rewrite of one task (rewrite_files) and the commit
// of their results (commit_compaction), in rust/lance/src/dataset/optimize.rs.
#include "lance/compaction.h"
#include "lance/file_reader.h"

#include <arrow/array.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <set>
#include <thread>

#include "lance/dataset.h"
#include "lance/dataset_internal.h"
#include "lance/file/blob_v2.h"
#include "lance/file/version.h"
#include "lance/ops/blob_v2_values.h"
#include "lance/ops/compact_binary_copy.h"
#include "lance/ops/dataset_ops_internal.h"
#include "lance/ops/fragment_writer.h"
#include "lance/ops/index_remap.h"
#include "lance/table/frag_reuse.h"
#include "lance/table/index_rows.h"
#include "lance/ops/retry.h"
#include "lance/scanner.h"
#include "lance/table/row_id_sequence.h"
#include "lance/txn/commit.h"
#include "lance/util/parallel.h"
#include "lance/util/progress_reporter.h"
#include "lance/util/read_ahead.h"

namespace lance {
namespace {

constexpr const char* kBlobMetaKey = "lance-encoding:blob";
constexpr uint64_t kDefaultMaxOverlaysPerFragment = 10;
// Fragments read at once ahead of the writer, and the bytes of batches
// that may wait (besides the fragment being written).
constexpr size_t kReadAheadThreads = 2;
constexpr uint64_t kReadAheadBytes = 4 << 20;

// The options' values lance-cpp cannot honour, refused by name; and the
// reference's validate(): a threshold of 1.0 or more turns materializing off.
Result<CompactionOptions> Validated(const CompactionOptions& in, const Dataset& dataset) {
  CompactionOptions o = in;
  if (o.materialize_deletions && o.materialize_deletions_threshold >= 1.0f) o.materialize_deletions = false;
  const std::pair<const char*, const std::optional<uint64_t>*> budgets[] = {
      {"max_source_fragments", &o.max_source_fragments},
      {"max_source_rows", &o.max_source_rows},
      {"max_source_bytes", &o.max_source_bytes}};
  for (const auto& [name, value] : budgets) {
    if (*value && **value == 0) {
      return Status::Invalid("compaction option ", name, " must be greater than 0 (unset it for no limit)");
    }
  }
  if (o.target_rows_per_fragment == 0) return Status::Invalid("compaction option target_rows_per_fragment must be at least 1");
  if (o.max_rows_per_group == 0) return Status::Invalid("compaction option max_rows_per_group must be at least 1");
  if (o.max_bytes_per_file && *o.max_bytes_per_file == 0) {
    return Status::Invalid("compaction option max_bytes_per_file must be at least 1");
  }
  if (o.batch_size && *o.batch_size == 0) return Status::Invalid("compaction option batch_size must be at least 1");
  if (o.num_threads && *o.num_threads == 0) return Status::Invalid("compaction option num_threads must be at least 1");
  if (o.defer_index_remap) {
    if (dataset.manifest().UsesStableRowIds()) {
      // As pylance 14: stable row ids never need remapping.
      return Status::NotImplemented("compaction option defer_index_remap: dataset ", dataset.uri(),
                                    " uses stable row ids, whose indices need no remapping, so there is "
                                    "nothing to defer");
    }
  }
  if (!o.max_overlays_per_fragment) {
    // pylance 14 takes this one from the table config only.
    constexpr const char* kKey = "lance.compaction.max_overlays_per_fragment";
    o.max_overlays_per_fragment = std::optional<uint64_t>(kDefaultMaxOverlaysPerFragment);
    auto it = dataset.manifest().config.find(kKey);
    if (it != dataset.manifest().config.end()) {
      std::string v = it->second;
      std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return std::tolower(c); });
      uint64_t n = 0;
      auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
      if (v == "none") {
        o.max_overlays_per_fragment = std::optional<uint64_t>();
      } else if (ec == std::errc() && end == v.data() + v.size() && !v.empty()) {
        o.max_overlays_per_fragment = std::optional<uint64_t>(n);
      } else {
        return Status::Invalid("table config ", kKey, " of dataset ", dataset.uri(), " is '", it->second,
                               "': it must be a non-negative integer or 'none'");
      }
    }
  }
  LANCE_ASSIGN_OR_RAISE(auto version, dataset.DataStorageVersion());
  if (o.data_storage_version) {
    // Another v2.x version than the dataset's: the new files are written at
    // it and the commit sets bit 256, as pylance 14.
    // pylance 14's names: "stable" is 2.2, "legacy" 0.1 (as `write --data-storage-version`).
    const std::string want = file::CanonicalVersionName(*o.data_storage_version);
    if (want != version && (want == "0.1" || version == "0.1")) {
      return Status::NotImplemented("compaction option data_storage_version=", *o.data_storage_version,
                                    ": dataset ", dataset.uri(), " is of version ", version,
                                    ", and v1 (0.1) and v2 files cannot be mixed");
    }
    if (want != "0.1" && want != "2.0" && want != "2.1" && want != "2.2") {
      return Status::NotImplemented("compaction option data_storage_version=", *o.data_storage_version,
                                    ": lance-cpp writes 2.0, 2.1 and 2.2 files");
    }
    if (want != version && ops::HasBlobV2Columns(dataset)) {
      return Status::NotImplemented("compaction option data_storage_version=", want, ": dataset ", dataset.uri(),
                                    " of version ", version, " has blob v2 columns, which only version 2.2 stores");
    }
    o.data_storage_version = want;
  }
  if (version != "0.1" && version != "2.0" && version != "2.1" && version != "2.2") {
    return Status::NotImplemented("cannot compact dataset ", dataset.uri(), " of data storage version ", version,
                                  ": lance-cpp writes 0.1 (legacy), 2.0, 2.1 and 2.2 files");
  }
  return o;
}

// What lance-cpp cannot rewrite without losing something.
Status CheckCompactable(const Dataset& dataset, const CompactionOptions& options) {
  // Top-level blob v2 columns are rewritten as update does (their bytes read
  // and written anew beside the new files, as pylance 14 compacts them);
  // nested ones and the legacy blob encoding are not.
  std::set<int32_t> blob_v2;  // top-level blob v2 fields and everything below them
  for (const auto& field : dataset.manifest().schema.fields) {
    if (file::IsBlobV2Field(field)) blob_v2.insert(field.id);
  }
  for (const auto& field : dataset.manifest().schema.FieldsPreOrder()) {
    if (blob_v2.count(field.id) || blob_v2.count(field.parent_id)) {
      blob_v2.insert(field.id);
      continue;
    }
    if (file::IsBlobV2Field(field) || field.metadata.count(kBlobMetaKey)) {
      return Status::NotImplemented("cannot compact dataset ", dataset.uri(), ": column '", field.name,
                                    "' holds ", file::IsBlobV2Field(field) ? "nested blob v2 values" : "legacy blobs",
                                    ", which lance-cpp does not compact yet");
    }
  }
  return Status::OK();
}

// The fragments each index covers; an index without a bitmap covers, as the
// reference has it, ids 0 .. max_fragment_id (exclusive) of its version.
// System indices cover no data: the fragment reuse index's bitmap would keep
// a deferred compaction's fragments from merging with later ones, which
// pylance 14 merges.
Result<std::vector<std::set<uint32_t>>> IndexFragmaps(const Dataset& dataset) {
  std::vector<std::set<uint32_t>> out;
  for (const auto& index : dataset.indices()) {
    if (table::IsSystemIndex(index)) continue;
    if (index.fragment_ids) {
      out.emplace_back(index.fragment_ids->begin(), index.fragment_ids->end());
      continue;
    }
    LANCE_ASSIGN_OR_RAISE(auto old, dataset.Checkout(std::to_string(index.dataset_version)));
    std::set<uint32_t> ids;
    for (uint32_t i = 0; i < old->manifest().max_fragment_id.value_or(0); ++i) ids.insert(i);
    out.push_back(std::move(ids));
  }
  return out;
}

enum class Candidacy { kCompactWithNeighbors, kCompactItself };

struct Bin {
  std::vector<const Fragment*> fragments;
  std::vector<Candidacy> candidacy;
  std::vector<uint64_t> live_rows;
  std::vector<size_t> indices;  // positions of the indices covering its fragments

  bool IsNoop() const {
    return fragments.empty() || (fragments.size() == 1 && candidacy[0] == Candidacy::kCompactWithNeighbors);
  }
};

// The reference's split_for_size: cut a bin once it has `min_rows` live
// rows, when what remains reaches `min_rows` too.
std::vector<Bin> SplitForSize(Bin bin, uint64_t min_rows) {
  std::vector<Bin> out;
  size_t start = 0;
  while (true) {
    size_t len = 0;
    uint64_t rows = 0;
    while (rows < min_rows && start + len < bin.fragments.size()) rows += bin.live_rows[start + len++];
    uint64_t rest = 0;
    for (size_t i = start + len; i < bin.fragments.size(); ++i) rest += bin.live_rows[i];
    Bin part;
    const size_t end = rest >= min_rows ? start + len : bin.fragments.size();
    part.fragments.assign(bin.fragments.begin() + start, bin.fragments.begin() + end);
    part.candidacy.assign(bin.candidacy.begin() + start, bin.candidacy.begin() + end);
    part.live_rows.assign(bin.live_rows.begin() + start, bin.live_rows.begin() + end);
    out.push_back(std::move(part));
    if (end == bin.fragments.size()) return out;
    start = end;
  }
}

// Bytes of a task's data files that back a field of the schema (the
// reference's task_source_bytes: files only of dropped columns are not read).
Result<uint64_t> SourceBytes(const Dataset& dataset, const std::vector<const Fragment*>& fragments) {
  std::set<int32_t> field_ids;
  for (const auto& f : dataset.manifest().schema.FieldsPreOrder()) field_ids.insert(f.id);
  uint64_t total = 0;
  for (const Fragment* fragment : fragments) {
    for (const auto& file : fragment->files) {
      if (std::none_of(file.fields.begin(), file.fields.end(), [&](int32_t id) { return field_ids.count(id) > 0; })) {
        continue;
      }
      if (file.file_size_bytes == 0) {
        return Status::Invalid("max_source_bytes is set but file '", file.path, "' of fragment ", fragment->id,
                               " has no size recorded in the manifest; unset max_source_bytes to compact ",
                               dataset.uri());
      }
      total += file.file_size_bytes;
    }
    // The overlay files are read too; pylance's writers leave their size
    // unrecorded, so it comes from the file.
    for (const auto& overlay : fragment->overlays) {
      uint64_t size = overlay.data_file.file_size_bytes;
      if (size == 0) {
        LANCE_ASSIGN_OR_RAISE(auto reader, dataset.OpenDataFileReader(overlay.data_file));
        size = reader->layout().file_size;
      }
      total += size;
    }
  }
  return total;
}

Result<CompactionPlan> PlanOf(const Dataset& dataset, const CompactionOptions& options) {
  LANCE_RETURN_NOT_OK(CheckCompactable(dataset, options));
  LANCE_ASSIGN_OR_RAISE(auto fragmaps, IndexFragmaps(dataset));
  const std::set<uint64_t> excluded(options.excluded_fragment_ids.begin(), options.excluded_fragment_ids.end());
  std::vector<Bin> bins;
  std::optional<Bin> current;
  for (const auto& fragment : dataset.manifest().fragments) {
    if (excluded.count(fragment.id)) {
      // An excluded fragment ends the run, so the candidates on either side
      // are never planned together.
      if (current) bins.push_back(std::move(*current));
      current.reset();
      continue;
    }
    LANCE_ASSIGN_OR_RAISE(uint64_t physical, dataset.PhysicalRows(fragment));
    LANCE_ASSIGN_OR_RAISE(uint64_t deleted, dataset.NumDeletedRows(fragment));
    deleted = std::min(deleted, physical);
    // f32, as the reference computes it.
    const float deleted_fraction =
        physical > 0 ? static_cast<float>(deleted) / static_cast<float>(physical) : 0.0f;
    std::optional<Candidacy> candidacy;
    // Validated() has resolved the option.
    const std::optional<uint64_t> max_overlays = options.max_overlays_per_fragment.value_or(std::nullopt);
    const bool too_many_overlays = max_overlays && fragment.overlays.size() > *max_overlays;
    if (too_many_overlays ||
        (options.materialize_deletions && deleted_fraction > options.materialize_deletions_threshold)) {
      candidacy = Candidacy::kCompactItself;
    } else if (physical < options.target_rows_per_fragment) {
      candidacy = Candidacy::kCompactWithNeighbors;
    }
    std::vector<size_t> covering;
    for (size_t i = 0; i < fragmaps.size(); ++i) {
      if (fragmaps[i].count(static_cast<uint32_t>(fragment.id))) covering.push_back(i);
    }
    if (!candidacy) {
      if (current) bins.push_back(std::move(*current));
      current.reset();
      continue;
    }
    // Indexed and unindexed fragments (or fragments of different indices)
    // are never rewritten together.
    if (current && current->indices != covering) {
      bins.push_back(std::move(*current));
      current.reset();
    }
    if (!current) {
      current.emplace();
      current->indices = covering;
    }
    current->fragments.push_back(&fragment);
    current->candidacy.push_back(*candidacy);
    current->live_rows.push_back(physical - deleted);
  }
  if (current) bins.push_back(std::move(*current));

  std::vector<Bin> tasks;
  for (auto& bin : bins) {
    if (bin.IsNoop()) continue;
    for (auto& part : SplitForSize(std::move(bin), options.target_rows_per_fragment)) tasks.push_back(std::move(part));
  }

  // The per-run budgets: tasks in order while every total stays within.
  CompactionPlan plan;
  plan.read_version = dataset.version();
  uint64_t total_fragments = 0, total_rows = 0, total_bytes = 0;
  for (const auto& task : tasks) {
    total_fragments += task.fragments.size();
    for (uint64_t rows : task.live_rows) total_rows += rows;
    if (options.max_source_bytes) {
      LANCE_ASSIGN_OR_RAISE(uint64_t bytes, SourceBytes(dataset, task.fragments));
      total_bytes += bytes;
    }
    if ((options.max_source_fragments && total_fragments > *options.max_source_fragments) ||
        (options.max_source_rows && total_rows > *options.max_source_rows) ||
        (options.max_source_bytes && total_bytes > *options.max_source_bytes)) {
      break;
    }
    CompactionTask out;
    out.read_version = plan.read_version;
    for (const Fragment* f : task.fragments) out.fragment_ids.push_back(f->id);
    plan.tasks.push_back(std::move(out));
  }

  return plan;
}

// With stable row ids the rows keep their ids: each old fragment's row id
// segments and created_at / last_updated_at runs, less the deleted rows, cut
// at the new fragments' boundaries (the reference's rechunk_stable_row_ids
// and recalc_versions_for_rewritten_fragments, so the encodings match its:
// pieces re-encoded, spans keeping the old positions; rows without lineage
// count as created in version 1, last updated when created). One old
// fragment and one new fragment's sequences in memory at a time.
Status RechunkRowIdentity(const Dataset& dataset, const std::vector<Fragment>& old_fragments,
                          std::vector<Fragment>* new_fragments) {
  std::vector<uint64_t> sizes;
  for (const auto& f : *new_fragments) sizes.push_back(f.physical_rows.value_or(0));
  table::SequenceRechunker rechunker(std::move(sizes));
  std::vector<table::RowIdSequence> ids_out;
  std::vector<table::RowVersionSequence> created_out, updated_out;
  size_t assigned = 0;
  for (const auto& old : old_fragments) {
    const std::string what = "fragment " + std::to_string(old.id) + " of " + dataset.uri();
    if (!old.row_ids.present()) return Status::Invalid(what, ": no row ids in a dataset with stable row ids");
    LANCE_ASSIGN_OR_RAISE(auto bytes, DatasetAccess::SequenceBytes(dataset, old.row_ids));
    LANCE_ASSIGN_OR_RAISE(auto ids, table::RowIdSequence::Parse(bytes, "row ids of " + what));
    const uint64_t physical = old.physical_rows.value_or(ids.Length());
    if (ids.Length() != physical) {
      return Status::Invalid(what, " has ", ids.Length(), " row ids for ", physical, " rows");
    }
    auto versions = [&](const SequenceRef& ref, const char* name) -> Result<std::optional<table::RowVersionSequence>> {
      if (!ref.present()) return std::nullopt;
      LANCE_ASSIGN_OR_RAISE(auto b, DatasetAccess::SequenceBytes(dataset, ref));
      LANCE_ASSIGN_OR_RAISE(auto seq, table::RowVersionSequence::Parse(b, std::string(name) + " of " + what));
      if (seq.Length() != physical) {
        return Status::Invalid(what, " has ", name, " for ", seq.Length(), " rows, not ", physical);
      }
      return seq;
    };
    LANCE_ASSIGN_OR_RAISE(auto created_at, versions(old.created_at_versions, "created_at versions"));
    LANCE_ASSIGN_OR_RAISE(auto updated_at, versions(old.last_updated_at_versions, "last_updated_at versions"));
    table::RowVersionSequence created =
        created_at ? std::move(*created_at)
                   : table::RowVersionSequence(physical ? std::vector<table::VersionRun>{{physical, 1, std::nullopt}}
                                                        : std::vector<table::VersionRun>{});
    table::RowVersionSequence updated = updated_at ? std::move(*updated_at) : created;
    LANCE_ASSIGN_OR_RAISE(auto deleted, dataset.DeletedRows(old));
    if (!deleted.empty() && deleted.back() >= physical) {
      return Status::Invalid("deletion file of ", what, " deletes row ", deleted.back(), " of ", physical);
    }
    ids.CoalesceRanges();
    ids.Mask(deleted);
    created.Mask(deleted);
    updated.Mask(deleted);
    Status st = rechunker.Push(ids, created, updated, &ids_out, &created_out, &updated_out);
    if (!st.ok()) return st.WithMessage("compaction of ", what, ": ", st.message());
    for (size_t i = 0; i < ids_out.size(); ++i, ++assigned) {
      Fragment& f = (*new_fragments)[assigned];
      f.row_ids.inline_bytes = ids_out[i].Serialize();
      f.created_at_versions.inline_bytes = created_out[i].Serialize();
      f.last_updated_at_versions.inline_bytes = updated_out[i].Serialize();
    }
    ids_out.clear();
    created_out.clear();
    updated_out.clear();
  }
  if (!rechunker.finished()) {
    return Status::Invalid("compaction of ", dataset.uri(), ": the live rows filled only ", rechunker.done(),
                           " of ", new_fragments->size(), " new fragments with their row ids");
  }
  return Status::OK();
}

uint64_t FilesOf(const std::vector<Fragment>& fragments) {
  uint64_t n = 0;
  for (const auto& f : fragments) n += f.files.size() + (f.deletion_file ? 1 : 0);
  return n;
}

// compaction_mode try_binary_copy / force_binary_copy: the task's pages
// copied when pylance 14 would copy them (true), else left to re-encoding
// (false), or refused with pylance's words under force_binary_copy.
Result<bool> BinaryCopyTask(const Dataset& dataset, const CompactionOptions& options, const std::string& version,
                            const std::vector<uint64_t>& file_rows, util::ProgressStage* progress,
                            RewriteResult* result) {
  if (options.compaction_mode == CompactionMode::kReencode) return false;
  const std::string target = options.data_storage_version.value_or(version);
  if (options.compaction_mode == CompactionMode::kForceBinaryCopy) {
    Status st = ops::CheckBinaryCopyTarget(result->original_fragments, target);
    if (!st.ok()) return st.WithMessage("compaction of fragments of ", dataset.uri(), ": ", st.message());
  }
  auto layouts = ops::BinaryCopyLayouts(dataset, result->original_fragments, target);
  if (!layouts) {
    if (options.compaction_mode == CompactionMode::kTryBinaryCopy) return false;
    std::string ids;
    for (const auto& f : result->original_fragments) ids += (ids.empty() ? "" : ", ") + std::to_string(f.id);
    return Status::NotImplemented("compaction task over fragments ", ids, " of ", dataset.uri(),
                                  ": binary copy is not supported (compaction_mode=force_binary_copy needs "
                                  "fragments without deletions, blobs or overlays, whose files share one "
                                  "version and layout)");
  }
  auto written = ops::BinaryCopyFragments(dataset, result->original_fragments, *layouts, file_rows);
  if (!written.ok()) return written.status().WithMessage("compaction of fragments of ", dataset.uri(), ": ",
                                                         written.status().message());
  result->new_fragments = std::move(*written);
  if (dataset.manifest().UsesStableRowIds()) {
    Status st = RechunkRowIdentity(dataset, result->original_fragments, &result->new_fragments);
    if (!st.ok()) {
      for (const auto& f : result->new_fragments) (void)DatasetAccess::Store(dataset)->Delete("data/" + f.files[0].path);
      return st;
    }
    ops::ConcatenateLineage(result->original_fragments, &result->new_fragments);
  }
  result->metrics.fragments_removed = result->original_fragments.size();
  result->metrics.fragments_added = result->new_fragments.size();
  result->metrics.files_removed = FilesOf(result->original_fragments);
  result->metrics.files_added = FilesOf(result->new_fragments);
  result->binary_copy = true;
  if (progress) {
    for (const auto& f : result->new_fragments) progress->Add(f.physical_rows.value_or(0));
  }
  return true;
}

Result<RewriteResult> Execute(const std::shared_ptr<const Dataset>& dataset, const CompactionTask& task,
                              const CompactionOptions& options, util::ProgressStage* progress) {
  const io::ObjectStore& store = *DatasetAccess::Store(*dataset);
  RewriteResult result;
  result.read_version = dataset->version();
  uint64_t surviving = 0;  // live rows
  for (uint64_t id : task.fragment_ids) {
    const auto& all = dataset->manifest().fragments;
    auto it = std::find_if(all.begin(), all.end(), [&](const Fragment& f) { return f.id == id; });
    if (it == all.end()) {
      return Status::KeyError("compaction task: version ", dataset->version(), " of dataset ", dataset->uri(),
                              " has no fragment ", id);
    }
    Fragment old = *it;
    // Older writers may not have recorded it; the new fragments' sizes and
    // the row-id rechunking need it.
    LANCE_ASSIGN_OR_RAISE(uint64_t physical, dataset->PhysicalRows(old));
    LANCE_ASSIGN_OR_RAISE(uint64_t deleted, dataset->NumDeletedRows(old));
    old.physical_rows = physical;
    surviving += physical - std::min(physical, deleted);
    result.original_fragments.push_back(std::move(old));
  }
  // As pylance 14: as many files as the target fits into the live rows (at
  // least one), the rows spread evenly over them, the first ones taking one
  // more, rather than full files and a short tail.
  std::vector<uint64_t> file_rows;
  if (surviving > 0) {
    const uint64_t count = std::max<uint64_t>(surviving / options.target_rows_per_fragment, 1);
    for (uint64_t i = 0; i < count; ++i) file_rows.push_back(surviving / count + (i < surviving % count ? 1 : 0));
  }
  LANCE_ASSIGN_OR_RAISE(auto version, dataset->DataStorageVersion());
  LANCE_ASSIGN_OR_RAISE(bool copied, BinaryCopyTask(*dataset, options, version, file_rows, progress, &result));
  if (copied) return result;
  ops::FragmentWriterOptions writer_options;
  writer_options.storage_version = options.data_storage_version.value_or(version);
  writer_options.max_rows_per_file = file_rows.empty() ? options.target_rows_per_fragment : file_rows.front();
  writer_options.file_row_counts = file_rows;
  writer_options.max_rows_per_group = options.max_rows_per_group;
  if (options.max_bytes_per_file) writer_options.max_bytes_per_file = *options.max_bytes_per_file;
  ops::FragmentWriter writer(store, dataset->manifest().schema, std::move(writer_options));
  auto written = [&]() -> Result<std::vector<Fragment>> {
    const bool blob_v2 = ops::HasBlobV2Columns(*dataset);
    ScanOptions scan;
    scan.fragment_ids = task.fragment_ids;
    scan.with_row_address = blob_v2;  // where the blob bytes are read from
    if (options.batch_size) scan.batch_size = static_cast<int64_t>(*options.batch_size);
    // Each old file is read once: its reader need not stay open after it.
    scan.cache_file_readers = false;
    std::shared_ptr<arrow::RecordBatchReader> reader;
    // The next fragments are read (files opened, pages decoded, deleted rows
    // dropped), two at once, each on a thread of its own, while this thread
    // hands the batches before to the writer: the same batches in the same
    // order, one fragment's scan after another's. Not when this task runs on
    // the CPU pool, whose threads the reading waits on.
    std::unique_ptr<util::ReadAhead> ahead;
    if (!arrow::internal::GetCpuThreadPool()->OwnsThisThread()) {
      auto open = [dataset, scan, ids = task.fragment_ids](size_t i) {
        ScanOptions one = scan;
        one.fragment_ids = std::vector<uint64_t>{ids[i]};
        return ScanBuilder(dataset).Options(std::move(one)).ToReader();
      };
      ahead = std::make_unique<util::ReadAhead>(task.fragment_ids.size(), std::move(open), kReadAheadThreads,
                                                kReadAheadBytes);
    } else {
      LANCE_ASSIGN_OR_RAISE(reader, ScanBuilder(dataset).Options(scan).ToReader());
    }
    while (true) {
      std::shared_ptr<arrow::RecordBatch> batch;
      LANCE_RETURN_NOT_OK(ahead ? ahead->ReadNext(&batch) : reader->ReadNext(&batch));
      if (!batch) break;
      if (batch->num_rows() == 0) continue;
      const uint64_t rows = static_cast<uint64_t>(batch->num_rows());
      if (blob_v2) {
        const int last = batch->num_columns() - 1;
        auto addrs = std::static_pointer_cast<arrow::UInt64Array>(batch->column(last));
        std::vector<uint64_t> row_addrs(addrs->raw_values(), addrs->raw_values() + addrs->length());
        LANCE_ASSIGN_OR_RAISE(batch, batch->RemoveColumn(last));
        LANCE_ASSIGN_OR_RAISE(batch, ops::ReadBlobV2Values(store, *dataset, batch, row_addrs));
      }
      LANCE_RETURN_NOT_OK(writer.Write(std::move(batch)));
      if (progress) progress->Add(rows);
    }
    LANCE_ASSIGN_OR_RAISE(auto fragments, writer.Finish());
    if (dataset->manifest().UsesStableRowIds()) {
      LANCE_RETURN_NOT_OK(RechunkRowIdentity(*dataset, result.original_fragments, &fragments));
    }
    return fragments;
  }();
  if (!written.ok()) {
    writer.RemoveFiles();
    return written.status().WithMessage("compaction of fragments of ", dataset->uri(), ": ",
                                        written.status().message());
  }
  result.new_fragments = std::move(*written);
  result.metrics.fragments_removed = result.original_fragments.size();
  result.metrics.fragments_added = result.new_fragments.size();
  result.metrics.files_removed = FilesOf(result.original_fragments);
  result.metrics.files_added = FilesOf(result.new_fragments);
  return result;
}

// `dataset` is the handle the caller holds; the indices remapped are those
// of the version the results read.
Result<CompactionResult> Commit(const Dataset& dataset, const std::vector<RewriteResult>& results,
                                const CompactionOptions& options) {
  const io::ObjectStore& store = *DatasetAccess::Store(dataset);
  CompactionResult out;
  if (results.empty()) {
    LANCE_ASSIGN_OR_RAISE(auto latest, txn::LoadLatestForWrite(store));
    out.version = latest ? latest->location.version : 0;
    return out;
  }
  const uint64_t read_version = results.front().read_version;
  uint32_t num_new = 0;
  for (const auto& r : results) {
    if (r.read_version != read_version) {
      return Status::Invalid("compaction results of different plans (read versions ", read_version, " and ",
                             r.read_version, ") cannot be committed together");
    }
    if (r.original_fragments.empty()) return Status::Invalid("compaction result without old fragments");
    num_new += static_cast<uint32_t>(r.new_fragments.size());
    out.metrics.fragments_removed += r.metrics.fragments_removed;
    out.metrics.fragments_added += r.metrics.fragments_added;
    out.metrics.files_removed += r.metrics.files_removed;
    out.metrics.files_added += r.metrics.files_added;
  }
  txn::CommitOptions commit_options;
  commit_options.num_retries = static_cast<int>(options.retry.num_retries);
  commit_options.disable_transaction_file = options.disable_transaction_file;
  txn::Rewrite rewrite;
  std::vector<uint64_t> ids;
  uint64_t reserved_version = 0;
  {
    // pylance 14 reserves the ids of every new fragment at commit, in one
    // ReserveFragments version of its own (even for none), then commits
    // the Rewrite.
    LANCE_ASSIGN_OR_RAISE(auto latest, txn::LoadLatestForWrite(store));
    if (!latest) return Status::IOError("dataset not found: ", store.uri());
    txn::ReserveFragments reserve{num_new};
    LANCE_ASSIGN_OR_RAISE(auto reserved,
                          ops::CommitTransaction(store, txn::Transaction::Make(latest->location.version, reserve), commit_options));
    const uint64_t end = uint64_t{reserved.manifest.max_fragment_id.value_or(0)} + 1;
    reserved_version = reserved.version;
    for (uint64_t id = end - num_new; id < end; ++id) ids.push_back(id);
  }
  size_t next = 0;
  for (const auto& r : results) {
    txn::RewriteGroup group;
    group.old_fragments = r.original_fragments;
    group.new_fragments = r.new_fragments;
    group.new_file_sizes_in_manifest_only = r.binary_copy;
    for (auto& f : group.new_fragments) f.id = ids[next++];
    rewrite.groups.push_back(std::move(group));
  }
  // The indices over the old rows, written anew over the new addresses.
  std::vector<std::string> index_dirs;
  auto remove_indices = [&]() {
    for (const auto& dir : index_dirs) (void)store.DeleteDirectory(dir);
  };
  auto read = ops::AtVersion(dataset, read_version);
  if (!read.ok()) return read.status();
  if (options.defer_index_remap) {
    auto reuse = ops::FragReuseIndexFor(**read, rewrite.groups, reserved_version, &index_dirs);
    if (!reuse.ok()) {
      remove_indices();
      return reuse.status();
    }
    rewrite.frag_reuse_index = std::move(*reuse);
  } else {
    auto remapped = ops::RemapIndices(**read, rewrite.groups, &index_dirs);
    if (!remapped.ok()) {
      remove_indices();
      return remapped.status();
    }
    rewrite.rewritten_indices = std::move(*remapped);
  }
  auto committed =
      ops::CommitTransaction(store, txn::Transaction::Make(read_version, std::move(rewrite)), commit_options);
  if (!committed.ok()) {
    remove_indices();
    return committed.status();
  }
  out.version = committed->version;
  out.committed = true;
  return out;
}

// Plan, execute and commit on `dataset`'s version, once.
Result<CompactionResult> CompactOnce(const std::shared_ptr<const Dataset>& dataset, const CompactionOptions& options);

void RemoveNewFiles(const io::ObjectStore& store, const std::vector<RewriteResult>& results) {
  for (const auto& r : results) {
    for (const auto& f : r.new_fragments) {
      for (const auto& file : f.files) {
        (void)store.Delete("data/" + file.path);
        // Blob v2 values too large to stay inline live in a directory named
        // after the data file.
        const std::string stem = file.path.substr(0, file.path.rfind('.'));
        auto sidecars = store.ListFiles("data/" + stem);
        if (sidecars.ok()) {
          for (const auto& info : *sidecars) (void)store.Delete("data/" + stem + "/" + info.name);
        }
      }
    }
  }
}

Result<CompactionResult> CompactOnce(const std::shared_ptr<const Dataset>& dataset, const CompactionOptions& options) {
  const io::ObjectStore& store = *DatasetAccess::Store(*dataset);
  LANCE_RETURN_NOT_OK(ops::CheckConfigSupported(*dataset));
  LANCE_ASSIGN_OR_RAISE(auto validated, Validated(options, *dataset));
  auto plan = PlanOf(*dataset, validated);
  if (!plan.ok()) return plan.status().WithMessage("compaction plan: ", plan.status().message());
  if (plan->tasks.empty()) {
    CompactionResult none;
    none.version = dataset->version();
    return none;
  }
  std::vector<uint64_t> rewritten;
  for (const auto& task : plan->tasks) rewritten.insert(rewritten.end(), task.fragment_ids.begin(), task.fragment_ids.end());
  if (!validated.defer_index_remap) LANCE_RETURN_NOT_OK(ops::CheckIndicesRemappable(*dataset, rewritten));
  uint64_t total = 0;
  for (const auto& task : plan->tasks) {
    for (uint64_t id : task.fragment_ids) {
      for (const auto& f : dataset->manifest().fragments) {
        if (f.id != id) continue;
        LANCE_ASSIGN_OR_RAISE(uint64_t physical, dataset->PhysicalRows(f));
        LANCE_ASSIGN_OR_RAISE(uint64_t deleted, dataset->NumDeletedRows(f));
        total += physical - std::min(physical, deleted);
      }
    }
  }
  util::ProgressStage progress(validated.progress, "compacting", "rows", total);
  // num_threads tasks at a time, as the reference runs them; the results
  // keep the plan's order, so the reserved ids do not depend on timing.
  const size_t n = plan->tasks.size();
  const size_t threads =
      validated.num_threads ? *validated.num_threads : std::max<size_t>(std::thread::hardware_concurrency(), 1);
  std::vector<std::optional<RewriteResult>> slots(n);
  auto done = [&]() {
    std::vector<RewriteResult> out;
    for (auto& slot : slots) {
      if (slot) out.push_back(std::move(*slot));
    }
    return out;
  };
  for (size_t start = 0; start < n; start += threads) {
    const size_t count = std::min(threads, n - start);
    Status st = util::ParallelFor(count, [&](size_t i) -> Status {
      LANCE_ASSIGN_OR_RAISE(auto r, Execute(dataset, plan->tasks[start + i], validated, &progress));
      slots[start + i] = std::move(r);
      return Status::OK();
    });
    if (!st.ok()) {
      RemoveNewFiles(store, done());
      return st;
    }
  }
  std::vector<RewriteResult> results = done();
  progress.Finish();
  auto committed = Commit(*dataset, results, validated);
  if (!committed.ok()) RemoveNewFiles(store, results);
  return committed;
}

}  // namespace

// ---- On a dataset handle ----

CompactionBuilder Dataset::NewCompaction() const { return CompactionBuilder(shared_from_this()); }

Result<CompactionPlan> CompactionBuilder::Plan() const { return PlanCompaction(*dataset_, options_); }

Result<std::shared_ptr<Dataset>> CompactionBuilder::Commit() {
  std::shared_ptr<const Dataset> ran_on;
  LANCE_ASSIGN_OR_RAISE(auto result, ops::RunOnDatasetWithRetries(
                                         options_.retry, "compaction of " + dataset_->uri(), dataset_,
                                         [&](const std::shared_ptr<const Dataset>& ds) {
                                           return CompactOnce(ds, options_);
                                         },
                                         &ran_on));
  result_ = result;
  return ops::AtVersion(*ran_on, result.version);
}

Result<CompactionPlan> PlanCompaction(const Dataset& dataset, const CompactionOptions& options) {
  LANCE_ASSIGN_OR_RAISE(auto validated, Validated(options, dataset));
  auto plan = PlanOf(dataset, validated);
  if (!plan.ok()) return plan.status().WithMessage("compaction plan: ", plan.status().message());
  return plan;
}

Result<RewriteResult> ExecuteCompactionTask(const Dataset& handle, const CompactionTask& task,
                                            const CompactionOptions& options) {
  // The version the plan read, through the handle's store.
  LANCE_ASSIGN_OR_RAISE(std::shared_ptr<const Dataset> dataset, ops::AtVersion(handle, task.read_version));
  LANCE_ASSIGN_OR_RAISE(auto validated, Validated(options, *dataset));
  LANCE_RETURN_NOT_OK(CheckCompactable(*dataset, validated));
  // Deferred, the indices are not rewritten: any kind may stay.
  if (!validated.defer_index_remap) LANCE_RETURN_NOT_OK(ops::CheckIndicesRemappable(*dataset, task.fragment_ids));
  util::ProgressStage progress(validated.progress, "compacting", "rows");
  return Execute(dataset, task, validated, &progress);
}

Result<CompactionResult> CommitCompaction(const Dataset& dataset, const std::vector<RewriteResult>& results,
                                          const CompactionOptions& options) {
  LANCE_RETURN_NOT_OK(ops::CheckConfigSupported(dataset));
  return Commit(dataset, results, options);
}

// ---- The URI functions: open, then the handle ----

Result<CompactionPlan> PlanCompaction(const std::string& uri, const CompactionOptions& options) {
  LANCE_ASSIGN_OR_RAISE(auto dataset, Dataset::Open(uri));
  return PlanCompaction(*dataset, options);
}

Result<RewriteResult> ExecuteCompactionTask(const std::string& uri, const CompactionTask& task,
                                            const CompactionOptions& options) {
  OpenOptions open;
  open.version = std::to_string(task.read_version);
  LANCE_ASSIGN_OR_RAISE(auto dataset, Dataset::Open(uri, open));
  return ExecuteCompactionTask(*dataset, task, options);
}

Result<CompactionResult> CommitCompaction(const std::string& uri, const std::vector<RewriteResult>& results,
                                          const CompactionOptions& options) {
  LANCE_ASSIGN_OR_RAISE(auto dataset, Dataset::Open(uri));
  return CommitCompaction(*dataset, results, options);
}

Result<CompactionResult> CompactFiles(const std::string& uri, const CompactionOptions& options) {
  LANCE_ASSIGN_OR_RAISE(auto dataset, Dataset::Open(uri));
  auto compaction = dataset->NewCompaction();
  LANCE_RETURN_NOT_OK(compaction.Options(options).Commit().status());
  return compaction.result();
}

}  // namespace lance
