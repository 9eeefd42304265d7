#include "lance/ops/index_remap.h"

#include <algorithm>
#include <limits>
#include <set>
#include <unordered_map>

#include <arrow/api.h>
#include <arrow/compute/api.h>

#include "lance/dataset_internal.h"
#include "lance/file_reader.h"
#include "lance/index/frag_reuse.h"
#include "lance/index/index_writer.h"
#include "lance/index/inverted.h"
#include "lance/index/inverted_writer.h"
#include "lance/index/scalar_index.h"
#include "lance/index/vector/ivf_index.h"
#include "lance/index/vector/ivf_writer.h"
#include "lance/ops/index_build_internal.h"
#include "lance/table/frag_reuse.h"
#include "lance/table/index_rows.h"
#include "lance/txn/transaction_builder.h"
#include "lance/util/clock.h"

namespace lance::ops {
namespace {

constexpr uint64_t kGone = std::numeric_limits<uint64_t>::max();

// The new address of each row of the rewritten fragments: a group's old
// fragments' live rows, in order, are its new fragments' rows, in order
// (both re-encoding and binary copy keep the order; binary copy takes no
// deleted rows). Addresses of other fragments stay as they are.
class AddressMap {
 public:
  static Result<AddressMap> Make(const Dataset& dataset, const std::vector<txn::RewriteGroup>& groups) {
    AddressMap m;
    for (const auto& g : groups) {
      size_t target = 0;
      uint64_t offset = 0;
      auto next = [&]() -> Result<uint64_t> {
        while (target < g.new_fragments.size() && offset >= g.new_fragments[target].physical_rows.value_or(0)) {
          ++target;
          offset = 0;
        }
        if (target >= g.new_fragments.size()) {
          return Status::Invalid("compaction: the new fragments hold fewer rows than the old ones' live rows");
        }
        return (g.new_fragments[target].id << 32) | offset++;
      };
      for (const auto& old : g.old_fragments) {
        LANCE_ASSIGN_OR_RAISE(uint64_t physical, dataset.PhysicalRows(old));
        LANCE_ASSIGN_OR_RAISE(auto deleted, dataset.DeletedRows(old));
        auto& to = m.fragments_[static_cast<uint32_t>(old.id)];
        to.assign(physical, kGone);
        size_t d = 0;
        for (uint64_t off = 0; off < physical; ++off) {
          while (d < deleted.size() && deleted[d] < off) ++d;
          if (d < deleted.size() && deleted[d] == off) continue;
          LANCE_ASSIGN_OR_RAISE(to[off], next());
        }
      }
    }
    return m;
  }
  std::optional<uint64_t> operator()(uint64_t address) const {
    auto it = fragments_.find(static_cast<uint32_t>(address >> 32));
    if (it == fragments_.end()) return address;
    const uint64_t off = address & 0xFFFFFFFFu;
    if (off >= it->second.size() || it->second[off] == kGone) return std::nullopt;
    return it->second[off];
  }

 private:
  std::unordered_map<uint32_t, std::vector<uint64_t>> fragments_;
};

enum class Action { kNone, kRemap };

bool IsInverted(const IndexMetadata& index) {
  return index.index_details_type_url.ends_with(".InvertedIndexDetails");
}

// What a rewrite of fragments does to `index`: nothing (its rows did not
// move, or pylance leaves it), or a remap of the types lance-cpp remaps;
// anything else is refused.
Result<Action> ActionFor(const Dataset& dataset, const IndexMetadata& index) {
  const table::IndexRows rows = table::RowsOf(index);
  const bool stable = dataset.manifest().UsesStableRowIds();
  if (rows == table::IndexRows::kZones) return Action::kNone;
  if (rows == table::IndexRows::kRowIds && stable) return Action::kNone;
  const auto* type = index::FindScalarIndexType(index.index_details_type_url);
  const std::string name = type ? std::string(type->name) : index.index_details_type_url;
  if (IsInverted(index) && index.index_version.value_or(-1) != 2) {
    // The one layout lance-cpp writes (pylance 14's); older ones refused
    // before anything is written.
    const std::string version = index.index_version ? std::to_string(*index.index_version) : "(none)";
    return Status::NotImplemented("index '", index.name, "' (", index.UuidString(), ") of type Inverted, ",
                                  "index_version ", version, ", covers the fragments and would have to be remapped, ",
                                  "which lance-cpp cannot do for that version (2, as pylance 14 writes, it can)");
  }
  if (rows != table::IndexRows::kUnknown &&
      (name == "BTree" || name == "Bitmap" || name == "LabelList" || name == "NGram" || IsInverted(index))) {
    return Action::kRemap;
  }
  if (index::vector::IsVectorIndex(index)) {
    // IVF_FLAT, IVF_PQ and IVF_SQ as lance-cpp reads them; the rest
    // (HNSW, RQ, older layouts) refused, naming index and type, before
    // anything is written.
    auto segment = index::vector::IvfSegment::Open(dataset, index);
    if (!segment.ok()) {
      return Status::NotImplemented("index '", index.name, "' (", index.UuidString(), ") covers the fragments ",
                                    "and would have to be remapped, which lance-cpp cannot do for it (IVF_FLAT, ",
                                    "IVF_PQ and IVF_SQ of pylance 14 it can; exclude the fragments it covers, or ",
                                    "drop the index): ", segment.status().message());
    }
    return Action::kRemap;
  }
  return Status::NotImplemented("index '", index.name, "' (", index.UuidString(), ") of type ",
                                name.empty() ? "(unknown)" : name,
                                " covers the fragments and would have to be remapped, which lance-cpp cannot do for ",
                                "that type yet (BTREE, BITMAP, LABEL_LIST, NGRAM, INVERTED, IVF_FLAT, IVF_PQ and ",
                                "IVF_SQ are; exclude the fragments it covers, or drop the index)");
}

// page_data.lance of a BTREE in ranges, its ids mapped, the gone rows out.
class RemappedBTreeRows : public arrow::RecordBatchReader {
 public:
  RemappedBTreeRows(std::shared_ptr<FileReader> file, const index::RowIdMap* map, std::shared_ptr<arrow::Schema> schema)
      : file_(std::move(file)), map_(map), schema_(std::move(schema)) {}
  std::shared_ptr<arrow::Schema> schema() const override { return schema_; }
  arrow::Status ReadNext(std::shared_ptr<arrow::RecordBatch>* out) override {
    *out = nullptr;
    while (at_ < file_->num_rows()) {
      const uint64_t n = std::min<uint64_t>(65536, file_->num_rows() - at_);
      auto table = file_->ReadRange({"values", "ids"}, at_, n);
      if (!table.ok()) return arrow::Status::IOError(table.status().ToString());
      at_ += n;
      ARROW_ASSIGN_OR_RAISE(auto batch, (*table)->CombineChunksToBatch());
      const auto& ids = static_cast<const arrow::UInt64Array&>(*batch->column(1));
      arrow::Int64Builder take;
      arrow::UInt64Builder mapped;
      for (int64_t i = 0; i < ids.length(); ++i) {
        if (auto to = (*map_)(ids.Value(i))) {
          ARROW_RETURN_NOT_OK(take.Append(i));
          ARROW_RETURN_NOT_OK(mapped.Append(*to));
        }
      }
      ARROW_ASSIGN_OR_RAISE(auto indices, take.Finish());
      if (indices->length() == 0) continue;
      ARROW_ASSIGN_OR_RAISE(auto values, arrow::compute::Take(batch->column(0), indices));
      ARROW_ASSIGN_OR_RAISE(auto new_ids, mapped.Finish());
      *out = arrow::RecordBatch::Make(schema_, indices->length(), {values.make_array(), new_ids});
      return arrow::Status::OK();
    }
    return arrow::Status::OK();
  }

 private:
  std::shared_ptr<FileReader> file_;
  const index::RowIdMap* map_;
  std::shared_ptr<arrow::Schema> schema_;
  uint64_t at_ = 0;
};

// `index`'s rows from before a compaction with defer_index_remap are mapped
// through the fragment reuse index first (`reuse`, null: none to map).
Result<std::vector<IndexFile>> RemapFiles(const Dataset& dataset, const IndexMetadata& index, const AddressMap& map,
                                          const index::FragReuseMap* reuse, const std::string& dir,
                                          const std::string& file_version) {
  const io::ObjectStore& store = *DatasetAccess::Store(dataset);
  const index::RowIdMap row_map = index::ThroughFragReuse(reuse, [&map](uint64_t id) { return map(id); });
  if (IsInverted(index)) return index::WriteRemappedInvertedIndex(dataset, store, dir, index, row_map, file_version);
  if (index::vector::IsVectorIndex(index)) {
    return index::vector::RemapIvfIndex(dataset, store, dir, index, row_map, file_version);
  }
  const std::string name = index::FindScalarIndexType(index.index_details_type_url)->name.data();
  if (name == "BTree") {
    LANCE_ASSIGN_OR_RAISE(auto file, OpenFile(dataset, index, "page_data.lance"));
    LANCE_ASSIGN_OR_RAISE(auto schema, file->ArrowSchema());
    auto values = schema->GetFieldByName("values");
    if (values == nullptr || schema->GetFieldByName("ids") == nullptr) {
      return Status::NotImplemented("index '", index.name, "': page_data.lance is not the layout lance-cpp remaps");
    }
    auto rows_schema =
        arrow::schema({arrow::field("values", values->type()), arrow::field("ids", arrow::uint64())});
    RemappedBTreeRows rows(file, &row_map, rows_schema);
    return index::WriteBTreeIndexSpilling(store, dir, rows, values->type(), file_version, SortRunRows());
  }
  if (name == "NGram") {
    LANCE_ASSIGN_OR_RAISE(auto file, OpenFile(dataset, index, "ngram_postings.lance"));
    return index::RemapNGramIndex(store, dir, file, row_map, file_version);
  }
  // BITMAP and LABEL_LIST: every (key, row) pair, the rows mapped.
  const bool list = name == "LabelList";
  arrow::ArrayVector values, ids;
  std::vector<uint64_t> list_nulls;
  LANCE_RETURN_NOT_OK(BitmapRows(dataset, index, row_map, &values, &ids, list ? &list_nulls : nullptr));
  LANCE_ASSIGN_OR_RAISE(auto file, OpenFile(dataset, index, "bitmap_page_lookup.lance"));
  LANCE_ASSIGN_OR_RAISE(auto schema, file->ArrowSchema());
  auto keys = schema->GetFieldByName("keys");
  if (keys == nullptr) return Status::NotImplemented("index '", index.name, "': no keys column");
  LANCE_ASSIGN_OR_RAISE(auto input, Concat(values, ids, keys->type()));
  if (list) {
    std::sort(list_nulls.begin(), list_nulls.end());
    list_nulls.erase(std::unique(list_nulls.begin(), list_nulls.end()), list_nulls.end());
    return index::WriteLabelListIndex(store, dir, input, list_nulls, file_version);
  }
  return index::WriteBitmapIndex(store, dir, input, file_version);
}

// Refuses remapping `index` when it still names rows by their addresses
// from before a deferred compaction and is of a kind pylance 14 remaps
// without the fragment reuse index: pylance moves its bitmap, not those
// addresses, and then finds none of the rows. BITMAP, LABEL_LIST and the
// IVF vector indices it maps (lance-cpp maps all, through the reuse index
// then the compaction).
// Their rows are looked at: optimize-indices leaves them on today's
// addresses under the old dataset version.
Status CheckOldRowsRemappable(const Dataset& dataset, const IndexMetadata& index) {
  LANCE_ASSIGN_OR_RAISE(bool old_rows, index::HoldsOldRowAddresses(dataset, index));
  if (!old_rows || index::vector::IsVectorIndex(index)) return Status::OK();
  const auto* type = index::FindScalarIndexType(index.index_details_type_url);
  const std::string name = type ? std::string(type->name) : "Inverted";
  if (name == "Bitmap" || name == "LabelList") return Status::OK();
  auto refuse = [&]() {
    return Status::NotImplemented(
        "index '", index.name, "' (", index.UuidString(), ") of type ", name, " still holds row addresses from ",
        "before a compaction recorded in the fragment reuse index (", table::kFragReuseIndexName, "): pylance 14 ",
        "would remap it without them and lose those rows (run optimize-indices first, or compact with ",
        "defer_index_remap)");
  };
  // One optimized since holds today's addresses only: fine.
  LANCE_ASSIGN_OR_RAISE(auto map, index::FragReuseMap::Make(*DatasetAccess::FragReuse(dataset)));
  auto moved = [&](uint64_t id) { return map(id) != std::optional<uint64_t>(id); };
  if (IsInverted(index)) {
    LANCE_ASSIGN_OR_RAISE(auto inverted, index::InvertedIndex::Open(dataset, index));
    for (size_t p = 0; p < inverted->num_partitions(); ++p) {
      for (size_t d = 0; d < inverted->PartitionDocs(p); ++d) {
        if (moved(inverted->RowId(p, static_cast<uint32_t>(d)))) return refuse();
      }
    }
    return Status::OK();
  }
  if (name == "BTree") {
    LANCE_ASSIGN_OR_RAISE(auto file, OpenFile(dataset, index, "page_data.lance"));
    LANCE_ASSIGN_OR_RAISE(auto ids, file->ReadAll({"ids"}));
    for (const auto& chunk : ids->column(0)->chunks()) {
      const auto& a = static_cast<const arrow::UInt64Array&>(*chunk);
      for (int64_t i = 0; i < a.length(); ++i) {
        if (moved(a.Value(i))) return refuse();
      }
    }
    return Status::OK();
  }
  LANCE_ASSIGN_OR_RAISE(auto file, OpenFile(dataset, index, "ngram_postings.lance"));
  LANCE_ASSIGN_OR_RAISE(auto lists, file->ReadAll({"posting_list"}));
  for (const auto& chunk : lists->column(0)->chunks()) {
    const auto& a = static_cast<const arrow::BinaryArray&>(*chunk);
    for (int64_t i = 0; i < a.length(); ++i) {
      if (a.IsNull(i)) continue;
      LANCE_ASSIGN_OR_RAISE(auto ids, index::DecodeRoaringTreemap(a.GetView(i), "ngram index posting list"));
      if (std::any_of(ids.begin(), ids.end(), moved)) return refuse();
    }
  }
  return Status::OK();
}

}  // namespace

Status CheckIndicesRemappable(const Dataset& dataset, const std::vector<uint64_t>& fragment_ids) {
  for (const auto& index : dataset.indices()) {
    if (table::IsSystemIndex(index)) continue;
    if (std::none_of(fragment_ids.begin(), fragment_ids.end(), [&](uint64_t id) { return table::CoversFragment(index, id); })) {
      continue;
    }
    auto action = ActionFor(dataset, index);
    if (action.ok() && *action == Action::kRemap) {
      Status old_rows = CheckOldRowsRemappable(dataset, index);
      if (!old_rows.ok()) action = old_rows;
    }
    if (!action.ok()) {
      return action.status().WithMessage("cannot compact fragments of dataset ", dataset.uri(), ": ",
                                          action.status().message());
    }
  }
  return Status::OK();
}

Result<std::vector<txn::RewrittenIndex>> RemapIndices(const Dataset& dataset,
                                                      const std::vector<txn::RewriteGroup>& groups,
                                                      std::vector<std::string>* written) {
  std::vector<txn::RewrittenIndex> out;
  std::optional<AddressMap> map;
  LANCE_ASSIGN_OR_RAISE(std::string file_version, dataset.DataStorageVersion());
  for (const auto& index : dataset.indices()) {
    if (table::IsSystemIndex(index)) continue;
    const bool touched = std::any_of(groups.begin(), groups.end(), [&](const txn::RewriteGroup& g) {
      return std::any_of(g.old_fragments.begin(), g.old_fragments.end(),
                         [&](const Fragment& f) { return table::CoversFragment(index, f.id); });
    });
    if (!touched) continue;
    LANCE_ASSIGN_OR_RAISE(Action action, ActionFor(dataset, index));
    if (action == Action::kNone) continue;
    if (!map) {
      LANCE_ASSIGN_OR_RAISE(auto m, AddressMap::Make(dataset, groups));
      map = std::move(m);
    }
    txn::RewrittenIndex r;
    r.old_uuid = index.uuid;
    const std::string uuid = txn::NewUuid();
    r.new_uuid = UuidBytes(uuid);
    r.details_type_url = index.index_details_type_url;
    r.details_value = index.index_details_value;
    r.index_version = static_cast<uint32_t>(index.index_version.value_or(0));
    const std::string dir = "_indices/" + uuid;
    written->push_back(dir);
    // An index older than a deferred compaction is mapped through the
    // fragment reuse index, then through this compaction (the reuse index
    // stays, as pylance 14 keeps it).
    std::optional<index::FragReuseMap> reuse;
    LANCE_ASSIGN_OR_RAISE(bool old_rows, index::HoldsOldRowAddresses(dataset, index));
    if (old_rows) {
      LANCE_ASSIGN_OR_RAISE(auto m, index::FragReuseMap::Make(*DatasetAccess::FragReuse(dataset)));
      reuse = std::move(m);
    }
    auto files = RemapFiles(dataset, index, *map, reuse ? &*reuse : nullptr, dir, file_version);
    if (!files.ok()) {
      return files.status().WithMessage("remapping index '", index.name, "' (", index.UuidString(),
                                        ") over the compacted rows: ", files.status().message());
    }
    r.files = std::move(*files);
    out.push_back(std::move(r));
  }
  return out;
}

Result<IndexMetadata> FragReuseIndexFor(const Dataset& dataset, const std::vector<txn::RewriteGroup>& groups,
                                        uint64_t dataset_version, std::vector<std::string>* written) {
  const io::ObjectStore& store = *DatasetAccess::Store(dataset);
  const IndexMetadata* current = table::FindFragReuseIndex(dataset.indices());
  table::FragReuseDetails details;
  if (const auto& kept = DatasetAccess::FragReuse(dataset)) details = *kept;
  // The fragments it covers, as pylance 14 records them: the current
  // entry's (as read) and the new ones; old fragments are not taken out.
  std::set<uint32_t> bitmap;
  if (current && current->fragment_ids) bitmap.insert(current->fragment_ids->begin(), current->fragment_ids->end());
  table::FragReuseVersion version;
  version.dataset_version = dataset_version;
  for (const auto& g : groups) {
    table::FragReuseGroup group;
    index::RowIds kept;  // the old fragments' live rows, in order: the new fragments' rows
    for (const auto& old : g.old_fragments) {
      LANCE_ASSIGN_OR_RAISE(uint64_t physical, dataset.PhysicalRows(old));
      LANCE_ASSIGN_OR_RAISE(auto deleted, dataset.DeletedRows(old));
      const uint64_t num_deleted = old.deletion_file ? old.deletion_file->num_deleted_rows.value_or(0) : 0;
      group.old_fragments.push_back({old.id, physical, num_deleted});
      size_t d = 0;
      for (uint64_t off = 0; off < physical; ++off) {
        while (d < deleted.size() && deleted[d] < off) ++d;
        if (d < deleted.size() && deleted[d] == off) continue;
        kept.push_back((old.id << 32) | off);
      }
    }
    for (const auto& f : g.new_fragments) {
      group.new_fragments.push_back({f.id, f.physical_rows.value_or(0), 0});
      bitmap.insert(static_cast<uint32_t>(f.id));
    }
    // pylance's bitmaps of surviving rows come out run-optimized.
    group.changed_row_addrs = index::EncodeRoaringTreemap(kept, /*run_optimize=*/true);
    version.groups.push_back(std::move(group));
  }
  details.versions.push_back(std::move(version));

  IndexMetadata out;
  const std::string uuid = txn::NewUuid();
  out.uuid = UuidBytes(uuid);
  out.name = table::kFragReuseIndexName;
  out.dataset_version = dataset_version;
  out.fragment_ids = std::vector<uint32_t>(bitmap.begin(), bitmap.end());
  out.index_details_type_url = table::kFragReuseDetailsTypeUrl;
  std::string external;
  out.index_details_value = table::FragReuseDetailsValue(details, &external);
  if (!external.empty()) {
    const std::string dir = "_indices/" + uuid;
    written->push_back(dir);
    LANCE_RETURN_NOT_OK(store.Write(dir + "/" + table::kFragReuseDetailsFile, external));
  }
  out.index_version = current ? current->index_version.value_or(0) : 0;
  out.created_at_ms = static_cast<uint64_t>(util::NowNanos() / 1000000);
  return out;
}

}  // namespace lance::ops
