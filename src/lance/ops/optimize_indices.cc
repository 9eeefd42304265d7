// optimize-indices (lance/index_ops.h): new fragments brought into the
// scalar indices as pylance 14's optimize_indices() does with its default
// OptimizeOptions (see OptimizeIndicesBuilder for the rules).
#include <algorithm>
#include <map>
#include <set>

#include <arrow/api.h>
#include <arrow/compute/api.h>

#include "lance/dataset_internal.h"
#include "lance/ops/dataset_ops_internal.h"
#include "lance/file_reader.h"
#include "lance/index/bloom_filter.h"
#include "lance/index/frag_reuse.h"
#include "lance/index/index_writer.h"
#include "lance/index/inverted_writer.h"
#include "lance/index/scalar_index.h"
#include "lance/index_ops.h"
#include "lance/ops/index_build_internal.h"
#include "lance/ops/schema_evolution_internal.h"
#include "lance/scanner.h"
#include "lance/txn/transaction_builder.h"
#include "lance/util/clock.h"

namespace lance {
namespace {

enum class Kind { kBTree, kBitmap, kLabelList, kZoneMap, kBloomFilter, kNGram, kInverted };

Result<Kind> KindOf(const IndexMetadata& index) {
  const auto* type = index::FindScalarIndexType(index.index_details_type_url);
  const std::string name = type ? std::string(type->name) : index.index_details_type_url;
  if (name == "BTree") return Kind::kBTree;
  if (name == "Bitmap") return Kind::kBitmap;
  if (name == "LabelList") return Kind::kLabelList;
  if (name == "ZoneMap") return Kind::kZoneMap;
  if (name == "BloomFilter") return Kind::kBloomFilter;
  if (name == "NGram") return Kind::kNGram;
  if (name == "Inverted" || name.ends_with(".InvertedIndexDetails")) return Kind::kInverted;
  return Status::NotImplemented("optimizing index '", index.name, "' of type ", name.empty() ? "(unknown)" : name,
                                " is not implemented in lance-cpp (BTREE, BITMAP, LABEL_LIST, ZONEMAP, ",
                                "BLOOMFILTER, NGRAM and INVERTED are)");
}

// Keeps old index rows as pylance 14 does: by fragment (the row address's
// high bits) for indices of row addresses, by live row id for bitmaps of
// stable row ids (deleted rows go too).
struct OldRowFilter {
  bool by_id = false;
  std::set<uint64_t> fragments;
  std::vector<uint64_t> live_ids;  // sorted
  // Row addresses from before a deferred compaction remap are mapped to
  // today's first (null: none to map).
  std::shared_ptr<const index::FragReuseMap> reuse;
  bool Keep(uint64_t id) const {
    if (by_id) return std::binary_search(live_ids.begin(), live_ids.end(), id);
    return fragments.count(id >> 32) > 0;
  }
  /// The kept ids as they are now, the others gone.
  index::RowIdMap AsMap() const {
    return index::ThroughFragReuse(reuse.get(), [this](uint64_t id) {
      return Keep(id) ? std::optional<uint64_t>(id) : std::nullopt;
    });
  }
};

Result<OldRowFilter> MakeFilter(const Dataset& ds, const std::set<uint64_t>& effective, bool by_id) {
  OldRowFilter f;
  f.by_id = by_id;
  f.fragments = effective;
  if (!by_id) return f;
  for (const auto& fragment : ds.manifest().fragments) {
    if (!effective.count(fragment.id)) continue;
    LANCE_ASSIGN_OR_RAISE(auto ids, ds.RowIds(fragment));
    LANCE_ASSIGN_OR_RAISE(auto deleted, ds.DeletedRows(fragment));
    for (size_t off = 0; off < ids.size(); ++off) {
      if (!std::binary_search(deleted.begin(), deleted.end(), static_cast<uint32_t>(off))) f.live_ids.push_back(ids[off]);
    }
  }
  std::sort(f.live_ids.begin(), f.live_ids.end());
  return f;
}

using ops::OpenFile;
using ops::ReadRowSet;

// The (value, id) rows of a bitmap_page_lookup.lance that `filter` keeps.
Status OldBitmapRows(const Dataset& ds, const IndexMetadata& index, const OldRowFilter& filter,
                     arrow::ArrayVector* values, arrow::ArrayVector* ids, std::vector<uint64_t>* list_nulls) {
  return ops::BitmapRows(ds, index, filter.AsMap(), values, ids, list_nulls);
}

// Old BTREE rows (page_data.lance, read in ranges), then the scan's rows.
class BTreeMergeReader : public arrow::RecordBatchReader {
 public:
  BTreeMergeReader(std::vector<std::shared_ptr<FileReader>> old, const OldRowFilter* filter,
                   std::shared_ptr<arrow::RecordBatchReader> scan, std::shared_ptr<arrow::Schema> schema)
      : old_(std::move(old)), filter_(filter), scan_(std::move(scan)), schema_(std::move(schema)) {}
  std::shared_ptr<arrow::Schema> schema() const override { return schema_; }
  arrow::Status ReadNext(std::shared_ptr<arrow::RecordBatch>* out) override {
    constexpr uint64_t kRange = 65536;
    while (file_ < old_.size()) {
      const auto& reader = *old_[file_];
      if (pos_ >= reader.num_rows()) {
        ++file_;
        pos_ = 0;
        continue;
      }
      const uint64_t n = std::min(kRange, reader.num_rows() - pos_);
      ARROW_ASSIGN_OR_RAISE(auto t, reader.ReadRange({"values", "ids"}, pos_, n));
      pos_ += n;
      ARROW_ASSIGN_OR_RAISE(auto batch, t->CombineChunksToBatch());
      const auto& ids = static_cast<const arrow::UInt64Array&>(*batch->column(1));
      // Kept rows under their addresses now (mapped through the fragment
      // reuse index when there is one); mapping keeps the value order.
      const auto map = filter_->AsMap();
      arrow::BooleanBuilder keep;
      arrow::UInt64Builder now;
      for (int64_t i = 0; i < ids.length(); ++i) {
        auto to = map(ids.Value(i));
        ARROW_RETURN_NOT_OK(keep.Append(to.has_value()));
        if (to) ARROW_RETURN_NOT_OK(now.Append(*to));
      }
      ARROW_ASSIGN_OR_RAISE(auto mask, keep.Finish());
      ARROW_ASSIGN_OR_RAISE(auto kept, arrow::compute::Filter(batch->column(0), mask));
      ARROW_ASSIGN_OR_RAISE(auto kept_ids, now.Finish());
      *out = arrow::RecordBatch::Make(schema_, kept_ids->length(), {kept.make_array(), kept_ids});
      return arrow::Status::OK();
    }
    if (!scan_) {
      *out = nullptr;
      return arrow::Status::OK();
    }
    return scan_->ReadNext(out);
  }

 private:
  std::vector<std::shared_ptr<FileReader>> old_;
  const OldRowFilter* filter_;
  std::shared_ptr<arrow::RecordBatchReader> scan_;
  std::shared_ptr<arrow::Schema> schema_;
  size_t file_ = 0;
  uint64_t pos_ = 0;
};

// The zones and null rows of a zonemap.lance.
Status OldZones(const Dataset& ds, const IndexMetadata& index, index::ZoneMapZones* zones,
                std::vector<uint64_t>* null_rows) {
  LANCE_ASSIGN_OR_RAISE(auto reader, OpenFile(ds, index, "zonemap.lance"));
  const std::string what = "index '" + index.name + "' (" + index.UuidString() + ")";
  LANCE_ASSIGN_OR_RAISE(auto nulls, ReadRowSet(*reader, "null_bitmap", what));
  null_rows->insert(null_rows->end(), nulls.begin(), nulls.end());
  LANCE_ASSIGN_OR_RAISE(auto table, reader->ReadAll({"min", "max", "null_count", "nan_count", "fragment_id",
                                                     "zone_start", "zone_length"}));
  LANCE_ASSIGN_OR_RAISE(auto b, table->CombineChunksToBatch());
  auto u32 = [&](int c) { return std::static_pointer_cast<arrow::UInt32Array>(b->column(c)); };
  auto u64 = [&](int c) { return std::static_pointer_cast<arrow::UInt64Array>(b->column(c)); };
  for (int64_t z = 0; z < b->num_rows(); ++z) {
    zones->mins.push_back(b->column(0)->Slice(z, 1));
    zones->maxs.push_back(b->column(1)->Slice(z, 1));
    zones->null_counts.push_back(u32(2)->Value(z));
    zones->nan_counts.push_back(u32(3)->Value(z));
    zones->fragment_ids.push_back(u64(4)->Value(z));
    zones->starts.push_back(u64(5)->Value(z));
    zones->lengths.push_back(u64(6)->Value(z));
  }
  return Status::OK();
}

// pylance 14 updates a zone map with use_seeds from the seeds its writer
// put in each new fragment's first data file (`lance.seed.COLUMN` =
// "BUFFER:ROWS_PER_ZONE"), when every one has a seed of the index's zone
// size. A seed holds the zones of the rows as written: rows deleted since
// stay in them. Those zones are the ones trained over the fragment's
// physical rows, which is what lance-cpp does then.
Result<bool> SeedsCover(const Dataset& ds, const std::string& column, const std::vector<uint64_t>& fragments,
                        uint64_t rows_per_zone) {
  for (uint64_t id : fragments) {
    auto f = std::find_if(ds.manifest().fragments.begin(), ds.manifest().fragments.end(),
                          [&](const Fragment& x) { return x.id == id; });
    if (f == ds.manifest().fragments.end() || f->files.empty()) return false;
    auto reader = ds.OpenDataFileReader(f->files.front());
    if (!reader.ok()) return false;
    const auto& meta = (*reader)->schema().metadata;
    auto it = meta.find("lance.seed." + column);
    if (it == meta.end()) return false;
    const size_t colon = it->second.find(':');
    if (colon == std::string::npos || it->second.substr(colon + 1) != std::to_string(rows_per_zone)) return false;
  }
  return true;
}

// Zones over every physical row of `fragments` (deleted ones too).
Status TrainPhysicalZones(const Dataset& ds, const Field& field, const std::vector<uint64_t>& fragments,
                          index::ZoneMapTrainer* trainer) {
  for (uint64_t id : fragments) {
    auto f = std::find_if(ds.manifest().fragments.begin(), ds.manifest().fragments.end(),
                          [&](const Fragment& x) { return x.id == id; });
    auto file = std::find_if(f->files.begin(), f->files.end(), [&](const DataFile& d) {
      return std::find(d.fields.begin(), d.fields.end(), field.id) != d.fields.end();
    });
    if (file == f->files.end()) return Status::NotImplemented("fragment ", id, " has no data file of ", field.name);
    LANCE_ASSIGN_OR_RAISE(auto reader, ds.OpenDataFileReader(*file));
    LANCE_ASSIGN_OR_RAISE(auto table, reader->ReadAll({field.name}));
    LANCE_ASSIGN_OR_RAISE(auto values, arrow::Concatenate(table->column(0)->chunks()));
    arrow::UInt64Builder addresses;
    for (int64_t k = 0; k < values->length(); ++k) LANCE_RETURN_NOT_OK(addresses.Append((id << 32) | k));
    LANCE_ASSIGN_OR_RAISE(auto a, addresses.Finish());
    LANCE_RETURN_NOT_OK(trainer->Add(values, static_cast<const arrow::UInt64Array&>(*a)));
  }
  return trainer->Finish();
}

}  // namespace

Result<std::shared_ptr<const Dataset>> OptimizeIndicesBuilder::Commit() {
  added_.clear();
  removed_.clear();
  // A delta (0) commits a segment of a name it removes nothing of, which the
  // manifest builder reads as a replacement: not done by lance-cpp.
  if (options_.num_indices_to_merge == 0) {
    return Status::NotImplemented("optimize-indices with num_indices_to_merge 0 (a delta segment) is not "
                                  "implemented in lance-cpp");
  }
  const Dataset& ds = *dataset_;
  const bool stable = ds.manifest().UsesStableRowIds();
  std::set<uint64_t> live, with_deletions;
  std::vector<uint64_t> live_order;
  for (const auto& f : ds.manifest().fragments) {
    live.insert(f.id);
    live_order.push_back(f.id);
    if (f.deletion_file) with_deletions.insert(f.id);
  }
  // Segments by name (names in order: pylance lists the new ones so).
  std::map<std::string, std::vector<const IndexMetadata*>> by_name;
  for (const auto& i : ds.indices()) {
    if (ops::IsSystemIndex(i)) continue;
    if (!options_.index_names.empty() &&
        std::find(options_.index_names.begin(), options_.index_names.end(), i.name) == options_.index_names.end()) {
      continue;
    }
    by_name[i.name].push_back(&i);
  }
  for (const auto& n : options_.index_names) {
    if (!by_name.count(n)) return Status::KeyError("index not found: name=", n);
  }
  LANCE_ASSIGN_OR_RAISE(std::string file_version, ds.DataStorageVersion());
  const io::ObjectStore& store = *DatasetAccess::Store(ds);
  std::vector<std::string> written;
  std::set<const IndexMetadata*> removed_set;
  auto work = [&]() -> Status {
    for (const auto& [name, segments] : by_name) {
      std::set<uint64_t> covered;
      for (const auto* s : segments) {
        if (!s->fragment_ids) {
          return Status::NotImplemented("index '", name, "' (", s->UuidString(), ") does not record its fragments");
        }
        covered.insert(s->fragment_ids->begin(), s->fragment_ids->end());
      }
      std::vector<uint64_t> unindexed;
      for (uint64_t f : live_order) {
        if (!covered.count(f)) unindexed.push_back(f);
      }
      // The segments merged: the last num_indices_to_merge; with stable row
      // ids also every older one covering a fragment with deletions.
      const size_t n = std::min<size_t>(options_.num_indices_to_merge, segments.size());
      std::vector<const IndexMetadata*> selected;
      for (size_t k = 0; k < segments.size(); ++k) {
        bool pick = k >= segments.size() - n;
        if (!pick && n > 0 && stable) {
          for (uint32_t f : *segments[k]->fragment_ids) pick = pick || with_deletions.count(f) > 0;
        }
        if (pick) selected.push_back(segments[k]);
      }
      if (unindexed.empty() && selected.size() <= 1) continue;
      const IndexMetadata& reference = selected.empty() ? *segments.back() : *selected.front();
      LANCE_ASSIGN_OR_RAISE(Kind kind, KindOf(reference));
      for (const auto* s : segments) {
        LANCE_ASSIGN_OR_RAISE(Kind k, KindOf(*s));
        if (k != kind) return Status::NotImplemented("index '", name, "' has segments of different types");
      }
      if (reference.fields.size() != 1) {
        return Status::NotImplemented("index '", name, "' over ", reference.fields.size(), " fields");
      }
      const std::string column = ds.manifest().schema.FieldPath(reference.fields[0]);
      const Field* field = ops::FindFieldByPath(ds.manifest().schema, column);
      if (field == nullptr) return Status::Invalid("index '", name, "': its field ", reference.fields[0], " is gone");
      LANCE_ASSIGN_OR_RAISE(auto value_type, ArrowTypeFromField(*field));

      std::set<uint64_t> effective;
      for (const auto* s : selected) {
        for (uint32_t f : *s->fragment_ids) {
          if (live.count(f)) effective.insert(f);
        }
      }
      std::set<uint64_t> coverage(unindexed.begin(), unindexed.end());
      coverage.insert(effective.begin(), effective.end());
      const bool merge = !effective.empty() && (kind == Kind::kBTree || kind == Kind::kBitmap || kind == Kind::kNGram ||
                                                  kind == Kind::kInverted || selected.size() == 1);

      IndexMetadata meta;
      meta.uuid = ops::UuidBytes(txn::NewUuid());
      meta.name = name;
      meta.fields = segments.back()->fields;
      meta.index_details_type_url = reference.index_details_type_url;
      meta.index_details_value = reference.index_details_value;
      meta.dataset_version = ds.version();
      if (merge) {
        meta.dataset_version = selected.front()->dataset_version;
        for (const auto* s : selected) meta.dataset_version = std::min(meta.dataset_version, s->dataset_version);
      }
      meta.fragment_ids = std::vector<uint32_t>(coverage.begin(), coverage.end());
      const std::string dir = "_indices/" + meta.UuidString();
      written.push_back(dir);
      const std::vector<uint64_t> scan_fragments = merge ? unindexed : std::vector<uint64_t>(coverage.begin(), coverage.end());
      // Old rows of live covered fragments, as pylance filters them.
      const bool ids_are_addresses =
          kind == Kind::kBTree || kind == Kind::kZoneMap || kind == Kind::kBloomFilter || !stable;
      OldRowFilter filter;
      if (merge) {
        LANCE_ASSIGN_OR_RAISE(filter, MakeFilter(ds, effective, !ids_are_addresses));
        // Segments from before a compaction with defer_index_remap name the
        // rows' old addresses: they are mapped to the new ones (those the
        // compaction dropped go), as pylance 14 merges them. (Zone maps and
        // Bloom filters keep their old zones as they are, as pylance's.)
        for (const auto* s : selected) {
          LANCE_ASSIGN_OR_RAISE(bool old_rows, index::HoldsOldRowAddresses(ds, *s));
          if (!old_rows) continue;
          // pylance 14 stamps such an NGRAM segment with today's version,
          // as one trained anew (its postings are the mapped ones all the same).
          if (kind == Kind::kNGram) meta.dataset_version = ds.version();
          const auto& details = DatasetAccess::FragReuse(ds);
          LANCE_ASSIGN_OR_RAISE(auto map, index::FragReuseMap::Make(*details));
          filter.reuse = std::make_shared<const index::FragReuseMap>(std::move(map));
          break;
        }
      }
      std::vector<IndexFile> files;
      switch (kind) {
        case Kind::kBTree: {
          meta.index_version = stable ? 1 : 0;
          std::vector<std::shared_ptr<FileReader>> old;
          if (merge) {
            for (const auto* s : selected) {
              LANCE_ASSIGN_OR_RAISE(auto r, OpenFile(ds, *s, "page_data.lance"));
              old.push_back(r);
            }
          }
          ScanOptions options;
          options.columns = {column};
          options.use_scalar_index = false;
          options.with_row_address = true;
          options.fragment_ids = scan_fragments;
          std::shared_ptr<arrow::RecordBatchReader> scan;
          if (!scan_fragments.empty()) {
            LANCE_ASSIGN_OR_RAISE(scan, ScanBuilder(dataset_).Options(options).ToReader());
          }
          auto schema = arrow::schema({arrow::field("values", value_type), arrow::field("ids", arrow::uint64())});
          BTreeMergeReader rows(std::move(old), &filter, scan, schema);
          LANCE_ASSIGN_OR_RAISE(files, index::WriteBTreeIndexSpilling(store, dir, rows, value_type, file_version,
                                                                     ops::SortRunRows()));
          break;
        }
        case Kind::kBitmap:
        case Kind::kLabelList: {
          const bool list = kind == Kind::kLabelList;
          meta.index_version = list ? 1 : 0;
          arrow::ArrayVector values, ids;
          std::vector<uint64_t> list_nulls;
          if (merge) {
            for (const auto* s : selected) {
              LANCE_RETURN_NOT_OK(OldBitmapRows(ds, *s, filter, &values, &ids, list ? &list_nulls : nullptr));
            }
          }
          if (!scan_fragments.empty()) {
            LANCE_ASSIGN_OR_RAISE(auto t, ops::ReadColumnForIndex(dataset_, column, ids_are_addresses, scan_fragments));
            if (list) {
              LANCE_RETURN_NOT_OK(ops::FlattenLists(*t->column(0), *t->column(1), &values, &ids, &list_nulls));
            } else {
              for (const auto& c : t->column(0)->chunks()) values.push_back(c);
              for (const auto& c : t->column(1)->chunks()) ids.push_back(c);
            }
          }
          const auto key_type =
              list ? static_cast<const arrow::BaseListType&>(*value_type).value_type() : value_type;
          LANCE_ASSIGN_OR_RAISE(auto input, ops::Concat(values, ids, key_type));
          if (list) {
            std::sort(list_nulls.begin(), list_nulls.end());
            list_nulls.erase(std::unique(list_nulls.begin(), list_nulls.end()), list_nulls.end());
            LANCE_ASSIGN_OR_RAISE(files, index::WriteLabelListIndex(store, dir, input, list_nulls, file_version));
          } else {
            LANCE_ASSIGN_OR_RAISE(files, index::WriteBitmapIndex(store, dir, input, file_version));
          }
          break;
        }
        case Kind::kZoneMap: {
          meta.index_version = 0;
          uint64_t rows_per_zone = 0;
          bool use_seeds = false;
          Status parsed = ops::ParseZoneMapDetails(reference.index_details_value, &rows_per_zone, &use_seeds);
          if (!parsed.ok()) return parsed.WithMessage("index '", name, "': ", parsed.message());
          meta.index_details_value = ops::ZoneMapDetails(rows_per_zone, use_seeds);
          index::ZoneMapZones zones;
          std::vector<uint64_t> null_rows;
          // Zone maps keep every old zone (pylance applies no filter to them).
          if (merge) LANCE_RETURN_NOT_OK(OldZones(ds, reference, &zones, &null_rows));
          index::ZoneMapTrainer trainer(value_type, rows_per_zone);
          bool seeded = false;
          if (merge && use_seeds && field->parent_id < 0 && !scan_fragments.empty()) {
            LANCE_ASSIGN_OR_RAISE(seeded, SeedsCover(ds, column, scan_fragments, rows_per_zone));
          }
          if (seeded) {
            LANCE_RETURN_NOT_OK(TrainPhysicalZones(ds, *field, scan_fragments, &trainer));
          } else if (!scan_fragments.empty()) {
            LANCE_RETURN_NOT_OK(ops::TrainZones(dataset_, column, scan_fragments, &trainer));
          }
          zones.Append(trainer.zones());
          null_rows.insert(null_rows.end(), trainer.null_rows().begin(), trainer.null_rows().end());
          std::sort(null_rows.begin(), null_rows.end());
          null_rows.erase(std::unique(null_rows.begin(), null_rows.end()), null_rows.end());
          LANCE_ASSIGN_OR_RAISE(files, index::WriteZoneMapIndex(store, dir, value_type, zones, null_rows,
                                                                 rows_per_zone, file_version));
          break;
        }
        case Kind::kNGram: {
          meta.index_version = 0;
          std::vector<index::NGramPostings> old;
          if (merge) {
            for (const auto* s : selected) {
              LANCE_ASSIGN_OR_RAISE(auto r, OpenFile(ds, *s, "ngram_postings.lance"));
              old.push_back({r, filter.AsMap()});
            }
          }
          // The new fragments' rows (none when only old segments merge).
          std::shared_ptr<arrow::Table> table;
          if (!scan_fragments.empty()) {
            LANCE_ASSIGN_OR_RAISE(table, ops::ReadColumnForIndex(dataset_, column, ids_are_addresses, scan_fragments));
          } else {
            LANCE_ASSIGN_OR_RAISE(table, arrow::Table::MakeEmpty(arrow::schema(
                                             {arrow::field(column, value_type), arrow::field("ids", arrow::uint64())})));
          }
          arrow::TableBatchReader rows(*table);
          LANCE_ASSIGN_OR_RAISE(files, index::WriteNGramIndex(store, dir, rows, column, file_version,
                                                              ops::SortRunRows(), old));
          break;
        }
        case Kind::kInverted: {
          // Old documents kept, merged into new partitions, then the new
          // fragments' in partitions of their own (inverted_writer.h).
          meta.index_version = 2;
          LANCE_ASSIGN_OR_RAISE(auto params, index::ReadInvertedParams(ds, reference));
          std::vector<const IndexMetadata*> old;
          if (merge) old = selected;
          std::shared_ptr<arrow::RecordBatchReader> rows;
          if (!scan_fragments.empty()) {
            LANCE_ASSIGN_OR_RAISE(rows, ScanBuilder(dataset_)
                                            .Options(ops::IndexColumnScan(column, ids_are_addresses, scan_fragments))
                                            .ToReader());
          }
          LANCE_ASSIGN_OR_RAISE(files, index::WriteMergedInvertedIndex(ds, store, dir, old, params, filter.AsMap(),
                                                                       rows.get(), file_version));
          break;
        }
        case Kind::kBloomFilter: {
          meta.index_version = 0;
          // The parameters are the old file's; its zones all stay (as
          // pylance's update) and the new fragments' zones follow.
          LANCE_ASSIGN_OR_RAISE(auto reader, OpenFile(ds, reference, "bloomfilter.lance"));
          LANCE_ASSIGN_OR_RAISE(
              auto old, index::ReadBloomFilterFile(*reader, "index '" + name + "' (" + reference.UuidString() + ")"));
          index::BloomFilterZones zones;
          std::optional<std::vector<uint64_t>> null_rows = std::vector<uint64_t>();
          if (merge) {
            zones = std::move(old.zones);
            // Without the old null rows (files before pylance 14) none are
            // written: IS NULL then checks every zone's has_null.
            null_rows = std::move(old.null_rows);
          }
          index::BloomFilterTrainer trainer(old.number_of_items, old.probability);
          if (!scan_fragments.empty()) LANCE_RETURN_NOT_OK(ops::TrainZones(dataset_, column, scan_fragments, &trainer));
          zones.Append(trainer.zones());
          if (null_rows) {
            null_rows->insert(null_rows->end(), trainer.null_rows().begin(), trainer.null_rows().end());
            std::sort(null_rows->begin(), null_rows->end());
            null_rows->erase(std::unique(null_rows->begin(), null_rows->end()), null_rows->end());
          }
          LANCE_ASSIGN_OR_RAISE(files, index::WriteBloomFilterIndex(store, dir, zones, null_rows, old.number_of_items,
                                                                    old.probability, file_version));
          break;
        }
      }
      meta.files = files;
      meta.created_at_ms = static_cast<uint64_t>(util::NowNanos() / 1000000);
      added_.push_back(std::move(meta));
      removed_set.insert(selected.begin(), selected.end());
    }
    return Status::OK();
  };
  Status st = work();
  auto cleanup = [&]() {
    for (const auto& dir : written) (void)store.DeleteDirectory(dir);
  };
  if (!st.ok()) {
    cleanup();
    added_.clear();
    return st;
  }
  if (added_.empty()) return dataset_;
  // Removed segments in manifest order, as pylance lists them.
  for (const auto& i : ds.indices()) {
    if (removed_set.count(&i)) removed_.push_back(i);
  }
  auto committed = ops::CommitIndexTransaction(ds, txn::CreateIndex{added_, removed_});
  if (!committed.ok()) {
    cleanup();
    return committed.status();
  }
  const uint64_t version = committed->version;
  LANCE_ASSIGN_OR_RAISE(auto out, ops::AtVersion(ds, version, std::move(*committed)));
  return std::shared_ptr<const Dataset>(out);
}

}  // namespace lance
