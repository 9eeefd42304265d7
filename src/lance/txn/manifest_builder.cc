#include "lance/txn/manifest_builder.h"
#include "lance/table/roaring_portable.h"

#include <algorithm>
#include <set>
#include <unordered_map>

#include "lance/file/version.h"
#include "lance/table/feature_flags.h"
#include "lance/table/index_rows.h"
#include "lance/table/row_id_sequence.h"

#ifndef LANCE_CPP_VERSION
#define LANCE_CPP_VERSION "0.0.0"
#endif

namespace lance::txn {
namespace {

constexpr const char* kDefaultDataStorageVersion = "2.2";

template <class... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};
template <class... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;

// The created_at versions of the rows an Update rewrote, by stable row id,
// from the fragments they were deleted from. As the reference, an Update's
// new fragments carry only the row ids of their rewritten rows; each row's
// created_at is looked up when the manifest is built. Range segments (the
// usual row-id sequence) are looked up by arithmetic, other ids by hash.
class RewrittenRowLineage {
 public:
  static Result<RewrittenRowLineage> Build(const Manifest& base, const Update& op) {
    RewrittenRowLineage out;
    std::set<uint64_t> sources(op.removed_fragment_ids.begin(), op.removed_fragment_ids.end());
    for (const auto& f : op.updated_fragments) sources.insert(f.id);
    for (const auto& f : base.fragments) {
      if (!sources.count(f.id)) continue;
      const std::string what = "fragment " + std::to_string(f.id);
      if (f.row_ids.external || f.created_at_versions.external) {
        return Status::NotImplemented("updating rows of ", what,
                                      ": its row ids or created_at versions are in an external file");
      }
      if (!f.row_ids.inline_bytes) continue;
      LANCE_ASSIGN_OR_RAISE(auto ids, table::RowIdSequence::Parse(*f.row_ids.inline_bytes, what + " row ids"));
      std::vector<uint64_t> created;
      if (f.created_at_versions.inline_bytes) {
        LANCE_ASSIGN_OR_RAISE(auto seq, table::RowVersionSequence::Parse(*f.created_at_versions.inline_bytes,
                                                                         what + " created_at versions"));
        created = seq.ToVector();
      }
      const size_t versions = out.created_.size();
      out.created_.insert(out.created_.end(), created.begin(), created.end());
      // Rows without lineage count as created in version 1, as the reference has it.
      out.created_.resize(versions + ids.Length(), 1);
      uint64_t position = versions;
      std::vector<uint64_t> values;
      for (const auto& segment : ids.segments()) {
        if (segment.kind == table::U64Segment::Kind::kRange) {
          out.ranges_.push_back({segment.start, segment.end, position});
        } else {
          values.clear();
          segment.AppendTo(&values);
          for (size_t i = 0; i < values.size(); ++i) out.others_[values[i]] = position + i;
        }
        position += segment.Length();
      }
    }
    std::sort(out.ranges_.begin(), out.ranges_.end(),
              [](const IdRange& a, const IdRange& b) { return a.start < b.start; });
    return out;
  }

  /// The created_at of a rewritten row; rows not found count as version 1.
  uint64_t CreatedAt(uint64_t row_id) const {
    auto it = std::upper_bound(ranges_.begin(), ranges_.end(), row_id,
                               [](uint64_t id, const IdRange& r) { return id < r.start; });
    if (it != ranges_.begin() && row_id < std::prev(it)->end) {
      return created_[std::prev(it)->position + (row_id - std::prev(it)->start)];
    }
    auto other = others_.find(row_id);
    return other == others_.end() ? 1 : created_[other->second];
  }

 private:
  struct IdRange {
    uint64_t start, end;  // ids [start, end)
    uint64_t position;    // index in created_ of the row with id `start`
  };
  std::vector<uint64_t> created_;  // every source row's created_at, fragment after fragment
  std::vector<IdRange> ranges_;
  std::unordered_map<uint64_t, uint64_t> others_;  // id -> index in created_
};

// Gives fragments that are new to the table their ids and, when the dataset
// has stable row ids, their row ids and lineage: rows without ids are
// created now. A fragment may carry ids for its first rows only (a
// merge-insert's rewritten rows, then its inserted ones); the rest are
// filled in, as the reference does. Carried rows keep their created_at
// (`rewritten`, for an Update). Every row of a new fragment was last
// updated now.
class NewFragmentStamper {
 public:
  NewFragmentStamper(Manifest* m, uint64_t first_id, bool stable_row_ids,
                     const RewrittenRowLineage* rewritten = nullptr)
      : m_(m), next_id_(first_id), stable_row_ids_(stable_row_ids), rewritten_(rewritten) {}

  Status Stamp(Fragment* f) {
    f->id = next_id_++;
    m_->max_fragment_id = static_cast<uint32_t>(
        std::max<uint64_t>(m_->max_fragment_id.value_or(0), f->id));
    if (!stable_row_ids_) return Status::OK();
    if (!f->physical_rows) {
      return Status::Invalid("new fragment ", f->id, " has no physical row count; stable row ids need it");
    }
    const uint64_t rows = *f->physical_rows;
    const std::string what = "new fragment " + std::to_string(f->id);
    std::vector<uint64_t> carried_ids;  // the rows that already had ids
    if (!f->row_ids.present()) {
      f->row_ids.inline_bytes = table::RowIdSequence::FromRange(m_->next_row_id, rows).Serialize();
      m_->next_row_id += rows;
    } else if (f->row_ids.inline_bytes) {
      LANCE_ASSIGN_OR_RAISE(auto seq, table::RowIdSequence::Parse(*f->row_ids.inline_bytes, what + " row ids"));
      carried_ids = seq.ToVector();
      const uint64_t carried = carried_ids.size();
      if (carried > rows) {
        return Status::Invalid(what, " has ", carried, " row ids for ", rows, " rows");
      }
      if (carried < rows) {
        std::vector<uint64_t> ids = carried_ids;
        for (uint64_t i = 0; i < rows - carried; ++i) ids.push_back(m_->next_row_id + i);
        m_->next_row_id += rows - carried;
        f->row_ids.inline_bytes = table::RowIdSequence::FromValues(ids).Serialize();
      }
    }
    if (!f->created_at_versions.present() && rewritten_ != nullptr && !carried_ids.empty()) {
      table::RowVersionSequence seq;
      for (uint64_t id : carried_ids) seq.Append(1, rewritten_->CreatedAt(id));
      if (carried_ids.size() < rows) seq.Append(rows - carried_ids.size(), m_->version);
      f->created_at_versions.inline_bytes = seq.Serialize();
    } else if (!f->created_at_versions.present()) {
      f->created_at_versions.inline_bytes = table::RowVersionSequence({{rows, m_->version}}).Serialize();
    } else if (f->created_at_versions.inline_bytes) {
      LANCE_ASSIGN_OR_RAISE(auto seq, table::RowVersionSequence::Parse(*f->created_at_versions.inline_bytes,
                                                                       what + " created_at versions"));
      const uint64_t carried = seq.Length();
      if (carried > rows) {
        return Status::Invalid(what, " has created_at versions for ", carried, " rows, not ", rows);
      }
      if (carried < rows) {
        seq.Append(rows - carried, m_->version);
        f->created_at_versions.inline_bytes = seq.Serialize();
      }
    }
    if (!f->last_updated_at_versions.present()) {
      f->last_updated_at_versions.inline_bytes = table::RowVersionSequence({{rows, m_->version}}).Serialize();
    }
    return Status::OK();
  }

 private:
  Manifest* m_;
  uint64_t next_id_;
  bool stable_row_ids_;
  const RewrittenRowLineage* rewritten_;
};

uint64_t NextFragmentId(const Manifest& m) {
  if (m.max_fragment_id) return uint64_t{*m.max_fragment_id} + 1;
  // Datasets from before max_fragment_id was recorded.
  uint64_t next = 0;
  for (const auto& f : m.fragments) next = std::max(next, f.id + 1);
  return next;
}

// The rows a DataOverlay group covers (any field) were last updated now:
// their last_updated_at versions say so, as pylance 14 records them.
Status StampOverlaidRows(const DataOverlayGroup& g, uint64_t version, Fragment* f) {
  if (!f->last_updated_at_versions.present()) return Status::OK();
  const std::string what = "fragment " + std::to_string(f->id) + " last_updated_at versions";
  if (!f->last_updated_at_versions.inline_bytes) {
    return Status::NotImplemented("cannot add data overlay files to fragment ", f->id,
                                  ": its last_updated_at versions are in an external file, which lance-cpp "
                                  "does not rewrite");
  }
  LANCE_ASSIGN_OR_RAISE(auto seq, table::RowVersionSequence::Parse(*f->last_updated_at_versions.inline_bytes, what));
  std::vector<uint64_t> versions = seq.ToVector();
  for (const auto& o : g.overlays) {
    std::vector<const std::string*> bitmaps;
    if (o.shared_offsets) bitmaps.push_back(&*o.shared_offsets);
    if (o.field_offsets) {
      for (const auto& b : *o.field_offsets) bitmaps.push_back(&b);
    }
    for (const std::string* b : bitmaps) {
      LANCE_ASSIGN_OR_RAISE(auto offsets, table::DecodePortableRoaring(*b, "overlay " + o.data_file.path));
      for (uint32_t off : offsets) {
        if (off >= versions.size()) {
          return Status::Invalid("data overlay file ", o.data_file.path, " covers row ", off, " of fragment ",
                                 f->id, ", which has ", versions.size(), " rows");
        }
        versions[off] = version;
      }
    }
  }
  table::RowVersionSequence out;
  for (uint64_t v : versions) out.Append(1, v);
  f->last_updated_at_versions.inline_bytes = out.Serialize();
  return Status::OK();
}

// Replaces fragments by id; every one must exist in `m`. The overlays stay
// those of `m`: no lance-cpp writer changes a kept fragment's overlays, and
// a DataOverlay committed since the writer read its fragments (compatible
// with a delete) must not be lost.
Status ReplaceFragments(Manifest* m, const std::vector<Fragment>& updated) {
  for (const auto& u : updated) {
    auto it = std::find_if(m->fragments.begin(), m->fragments.end(),
                           [&](const Fragment& f) { return f.id == u.id; });
    if (it == m->fragments.end()) {
      return CommitConflict("fragment " + std::to_string(u.id) + " to update is no longer in the dataset");
    }
    std::vector<DataOverlayFile> overlays = std::move(it->overlays);
    *it = u;
    it->overlays = std::move(overlays);
  }
  return Status::OK();
}

void RemoveFragments(Manifest* m, const std::vector<uint64_t>& ids) {
  const std::set<uint64_t> gone(ids.begin(), ids.end());
  std::erase_if(m->fragments, [&](const Fragment& f) { return gone.count(f.id) > 0; });
}

// A Rewrite: each group's new fragments where its old ones were (the
// reference splices them in when the old ones are contiguous, else removes
// them and appends; the final sort by id decides the order either way).
Status ApplyRewrite(const Rewrite& op, bool stable_row_ids, table::ManifestFile* out) {
  Manifest& m = out->manifest;
  uint64_t next_id = NextFragmentId(m);
  for (const auto& g : op.groups) {
    if (g.old_fragments.empty()) return Status::Invalid("rewrite group without old fragments");
    std::vector<Fragment> fresh = g.new_fragments;
    for (auto& f : fresh) {
      if (f.id == 0) f.id = next_id++;  // not reserved: handed out here, as the reference does
      m.max_fragment_id = static_cast<uint32_t>(std::max<uint64_t>(m.max_fragment_id.value_or(0), f.id));
      if (stable_row_ids && (!f.row_ids.present() || !f.created_at_versions.present() ||
                             !f.last_updated_at_versions.present())) {
        return Status::Invalid("rewritten fragment ", f.id,
                               " carries no row ids or lineage of its rows; stable row ids need them");
      }
    }
    auto start = std::find_if(m.fragments.begin(), m.fragments.end(),
                              [&](const Fragment& f) { return f.id == g.old_fragments[0].id; });
    for (const auto& old : g.old_fragments) {
      if (std::none_of(m.fragments.begin(), m.fragments.end(), [&](const Fragment& f) { return f.id == old.id; })) {
        return CommitConflict("the dataset no longer holds fragment " + std::to_string(old.id) +
                              " that the rewrite replaces");
      }
    }
    bool contiguous = static_cast<size_t>(m.fragments.end() - start) >= g.old_fragments.size();
    for (size_t i = 0; contiguous && i < g.old_fragments.size(); ++i) {
      contiguous = (start + static_cast<std::ptrdiff_t>(i))->id == g.old_fragments[i].id;
    }
    if (contiguous) {
      const auto at = m.fragments.erase(start, start + static_cast<std::ptrdiff_t>(g.old_fragments.size()));
      m.fragments.insert(at, fresh.begin(), fresh.end());
    } else {
      std::vector<uint64_t> gone;
      for (const auto& old : g.old_fragments) gone.push_back(old.id);
      RemoveFragments(&m, gone);
      m.fragments.insert(m.fragments.end(), fresh.begin(), fresh.end());
    }
  }
  // A rewrite moves its rows to new addresses. The indices rewritten over
  // them take their new files, and each one's fragment bitmap swaps the
  // groups' old fragments for their new ones (the reference's
  // handle_rewrite_indices). The others, as pylance 14 leaves them: with
  // stable row ids those of row ids follow the groups too (their ids did
  // not move) and the zone maps and Bloom filters (of addresses, never
  // remapped) lose the old fragments; without, zone maps and Bloom filters
  // keep their bitmaps (which name fragments that are gone, so they cover
  // none of the new ones). Any other index over an old fragment would
  // answer with addresses that no longer hold its rows: refused.
  auto follow_groups = [&](IndexMetadata* index) -> Status {
    if (!index->fragment_ids) {
      return Status::Invalid("cannot rewrite index '", index->name, "' (", index->UuidString(),
                             "), which did not store its fragment bitmap");
    }
    std::set<uint32_t> bitmap(index->fragment_ids->begin(), index->fragment_ids->end());
    for (const auto& g : op.groups) {
      const size_t in = static_cast<size_t>(std::count_if(g.old_fragments.begin(), g.old_fragments.end(),
                                                          [&](const Fragment& f) { return bitmap.count(f.id); }));
      if (in == 0) continue;
      if (in != g.old_fragments.size()) {
        return Status::Invalid("the compaction plan included a rewrite group that was a split of indexed and "
                               "non-indexed data (index '", index->name, "')");
      }
      for (const auto& f : g.old_fragments) bitmap.erase(static_cast<uint32_t>(f.id));
      for (const auto& f : g.new_fragments) bitmap.insert(static_cast<uint32_t>(f.id));
    }
    index->fragment_ids = std::vector<uint32_t>(bitmap.begin(), bitmap.end());
    return Status::OK();
  };
  std::set<std::array<uint8_t, 16>> rewritten;
  for (const auto& ri : op.rewritten_indices) {
    if (!rewritten.insert(ri.old_uuid).second) {
      return Status::Invalid("an invalid compaction plan: more than one task rewrote the same index");
    }
    auto it = std::find_if(out->indices.begin(), out->indices.end(),
                           [&](const IndexMetadata& i) { return i.uuid == ri.old_uuid; });
    if (it == out->indices.end()) continue;  // dropped meanwhile, as the reference skips it
    LANCE_RETURN_NOT_OK(follow_groups(&*it));
    it->uuid = ri.new_uuid;
    it->files = ri.files;
    it->index_details_type_url = ri.details_type_url;
    it->index_details_value = ri.details_value;
    it->index_version = static_cast<int32_t>(ri.index_version);
  }
  if (op.frag_reuse_index) {
    // Deferred: the indices keep their files and bitmaps; readers map them
    // through the fragment reuse index, which replaces the old one.
    std::erase_if(out->indices, [&](const IndexMetadata& i) { return i.name == op.frag_reuse_index->name; });
    out->indices.push_back(*op.frag_reuse_index);
    return Status::OK();
  }
  std::set<std::array<uint8_t, 16>> fresh;
  for (const auto& ri : op.rewritten_indices) fresh.insert(ri.new_uuid);
  for (auto& index : out->indices) {
    if (fresh.count(index.uuid)) continue;
    bool touched = false;
    for (const auto& g : op.groups) {
      for (const auto& f : g.old_fragments) touched = touched || table::CoversFragment(index, f.id);
    }
    if (!touched || table::IsSystemIndex(index)) continue;
    const table::IndexRows rows = table::RowsOf(index);
    if (rows == table::IndexRows::kZones) {
      if (stable_row_ids && index.fragment_ids) {
        std::set<uint32_t> bitmap(index.fragment_ids->begin(), index.fragment_ids->end());
        for (const auto& g : op.groups) {
          for (const auto& f : g.old_fragments) bitmap.erase(static_cast<uint32_t>(f.id));
        }
        index.fragment_ids = std::vector<uint32_t>(bitmap.begin(), bitmap.end());
      }
      continue;
    }
    if (stable_row_ids && rows == table::IndexRows::kRowIds) {
      LANCE_RETURN_NOT_OK(follow_groups(&index));
      continue;
    }
    return Status::NotImplemented("cannot rewrite fragments of index '", index.name, "' (", index.UuidString(),
                                  "): it is not rewritten over the new row addresses");
  }
  return Status::OK();
}

// The reference's apply_update_map.
void ApplyUpdateMap(const UpdateMap& update, std::map<std::string, std::string>* target) {
  if (update.replace) target->clear();
  for (const auto& [key, value] : update.entries) {
    if (value) {
      (*target)[key] = *value;
    } else if (!update.replace) {
      target->erase(key);
    }
  }
}

Field* FindField(std::vector<Field>* fields, int32_t id) {
  for (auto& f : *fields) {
    if (f.id == id) return &f;
    if (Field* child = FindField(&f.children, id)) return child;
  }
  return nullptr;
}

// A Clone's manifest, as the reference's Manifest::shallow_clone makes it:
// the source version's content at its own version number. Shallow: files
// without a base id get a new base path (id one above the source's, a
// dataset root at `ref_path`, named after the source branch), so they are
// read where they are; files already under a base keep it. Deep: the files
// were copied into the new dataset, which then has no base paths at all.
Status ApplyClone(const Clone& op, const table::ManifestFile& source, table::ManifestFile* out) {
  Manifest& m = out->manifest;
  m = source.manifest;
  out->indices = source.indices;
  m.branch = op.branch_name;
  if (!op.is_shallow) {
    for (auto& f : m.fragments) {
      for (auto& file : f.files) file.base_id.reset();
      if (f.deletion_file) f.deletion_file->base_id.reset();
    }
    for (auto& index : out->indices) index.base_id.reset();
    m.base_paths.clear();
    return Status::OK();
  }
  uint32_t new_id = 0;
  for (const auto& b : m.base_paths) new_id = std::max(new_id, b.id + 1);
  for (auto& f : m.fragments) {
    for (auto& file : f.files) {
      if (!file.base_id) file.base_id = new_id;
    }
    if (f.deletion_file && !f.deletion_file->base_id) f.deletion_file->base_id = new_id;
  }
  for (auto& index : out->indices) {
    if (!index.base_id) index.base_id = new_id;
  }
  BasePath base;
  base.id = new_id;
  base.name = op.ref_name;
  base.is_dataset_root = true;
  base.path = op.ref_path;
  m.base_paths.push_back(std::move(base));
  return Status::OK();
}

// Indices on a field the new schema no longer has describe data that is
// gone (the reference's retain_relevant_indices); its system indices stay.
void RetainRelevantIndices(const Schema& schema, std::vector<IndexMetadata>* indices) {
  std::set<int32_t> ids;
  for (const auto& f : schema.FieldsPreOrder()) ids.insert(f.id);
  std::erase_if(*indices, [&](const IndexMetadata& index) {
    if (table::IsSystemIndex(index)) return false;
    return std::any_of(index.fields.begin(), index.fields.end(), [&](int32_t id) { return !ids.count(id); });
  });
}

// Data files none of whose fields is live any more (all tombstoned, or all
// outside `schema` when given) leave their fragments.
void DropDeadDataFiles(Manifest* m, const Schema* schema) {
  std::set<int32_t> ids;
  if (schema) {
    for (const auto& f : schema->FieldsPreOrder()) ids.insert(f.id);
  }
  for (auto& fragment : m->fragments) {
    std::erase_if(fragment.files, [&](const DataFile& file) {
      return std::none_of(file.fields.begin(), file.fields.end(),
                          [&](int32_t id) { return schema ? ids.count(id) > 0 : id != -2; });
    });
  }
}

bool BaseUsesStableRowIds(const table::ManifestFile* base) {
  return base != nullptr && (base->manifest.reader_feature_flags & table::kFlagStableRowIds) != 0;
}

}  // namespace

Result<table::ManifestFile> BuildManifest(const Transaction& txn, const BuildInputs& in,
                                          const CommitOptions& options) {
  table::ManifestFile out;
  Manifest& m = out.manifest;
  if (in.base) {
    out.indices = in.base->indices;
    m = in.base->manifest;
  }
  const uint64_t version = in.base ? in.base->manifest.version + 1 : 1;
  const bool is_clone = std::holds_alternative<Clone>(txn.operation);
  // A clone has no base: its flags derive from the version it copies.
  const table::ManifestFile* derived_from = is_clone ? in.clone_source : in.base;
  const bool stable_row_ids = derived_from ? BaseUsesStableRowIds(derived_from) : options.enable_stable_row_ids;

  LANCE_RETURN_NOT_OK(std::visit(
      Overloaded{
          [&](const Append& op) -> Status {
            if (!in.base) return Status::Invalid("cannot append: the dataset does not exist yet");
            m.version = version;
            NewFragmentStamper stamper(&m, NextFragmentId(m), stable_row_ids);
            for (Fragment f : op.fragments) {
              LANCE_RETURN_NOT_OK(stamper.Stamp(&f));
              m.fragments.push_back(std::move(f));
            }
            return Status::OK();
          },
          [&](const Overwrite& op) -> Status {
            m.version = version;
            m.schema = op.schema;
            m.fragments.clear();
            out.indices.clear();  // indices describe data that is gone
            for (const auto& [k, v] : op.config_upsert_values) m.config[k] = v;
            if (!op.initial_bases.empty()) {
              if (in.base) return Status::Invalid("initial base paths can only be registered when creating a dataset");
              m.base_paths = op.initial_bases;
            }
            if (!options.data_storage_version.empty()) m.data_storage_version = options.data_storage_version;
            if (m.data_storage_version.empty()) m.data_storage_version = kDefaultDataStorageVersion;
            // pylance 14 keeps counting from max_fragment_id (older writers
            // restarted at 0); ids are never reused within a dataset.
            NewFragmentStamper stamper(&m, in.base ? NextFragmentId(m) : 0, stable_row_ids);
            for (Fragment f : op.fragments) {
              LANCE_RETURN_NOT_OK(stamper.Stamp(&f));
              m.fragments.push_back(std::move(f));
            }
            return Status::OK();
          },
          [&](const Delete& op) -> Status {
            if (!in.base) return Status::Invalid("cannot delete: the dataset does not exist");
            m.version = version;
            LANCE_RETURN_NOT_OK(ReplaceFragments(&m, op.updated_fragments));
            RemoveFragments(&m, op.deleted_fragment_ids);
            return Status::OK();
          },
          [&](const Update& op) -> Status {
            if (!in.base) return Status::Invalid("cannot update: the dataset does not exist");
            m.version = version;
            RewrittenRowLineage rewritten;
            if (stable_row_ids && std::any_of(op.new_fragments.begin(), op.new_fragments.end(),
                                              [](const Fragment& f) { return f.row_ids.present(); })) {
              LANCE_ASSIGN_OR_RAISE(rewritten, RewrittenRowLineage::Build(m, op));
            }
            LANCE_RETURN_NOT_OK(ReplaceFragments(&m, op.updated_fragments));
            RemoveFragments(&m, op.removed_fragment_ids);
            NewFragmentStamper stamper(&m, NextFragmentId(m), stable_row_ids, &rewritten);
            for (Fragment f : op.new_fragments) {
              LANCE_RETURN_NOT_OK(stamper.Stamp(&f));
              m.fragments.push_back(std::move(f));
            }
            return Status::OK();
          },
          [&](const Rewrite& op) -> Status {
            if (!in.base) return Status::Invalid("cannot rewrite fragments: the dataset does not exist");
            m.version = version;
            return ApplyRewrite(op, stable_row_ids, &out);
          },
          [&](const UpdateConfig& op) -> Status {
            if (!in.base) return Status::Invalid("cannot update the config: the dataset does not exist");
            m.version = version;
            if (op.config_updates) ApplyUpdateMap(*op.config_updates, &m.config);
            if (op.table_metadata_updates) ApplyUpdateMap(*op.table_metadata_updates, &m.table_metadata);
            if (op.schema_metadata_updates) ApplyUpdateMap(*op.schema_metadata_updates, &m.schema.metadata);
            for (const auto& [id, update] : op.field_metadata_updates) {
              Field* field = FindField(&m.schema.fields, id);
              if (!field) return Status::Invalid("field with id ", id, " does not exist");
              ApplyUpdateMap(update, &field->metadata);
            }
            return Status::OK();
          },
          [&](const ReserveFragments& op) -> Status {
            if (!in.base) return Status::Invalid("cannot reserve fragment ids: the dataset does not exist");
            m.version = version;
            m.max_fragment_id = m.max_fragment_id.value_or(0) + op.num_fragments;
            return Status::OK();
          },
          [&](const Clone& op) -> Status {
            if (in.base) return Status::Invalid("cannot clone into an existing dataset");
            if (!in.clone_source) return Status::Invalid("clone of version ", op.ref_version, " without its manifest");
            if (in.clone_source->manifest.version != op.ref_version) {
              return Status::Invalid("clone of version ", op.ref_version, " given the manifest of version ",
                                     in.clone_source->manifest.version);
            }
            return ApplyClone(op, *in.clone_source, &out);
          },
          [&](const Merge& op) -> Status {
            if (!in.base) return Status::Invalid("cannot merge columns: the dataset does not exist");
            m.version = version;
            // The operation lists every fragment of the table it read; one
            // added or removed since would be lost (the conflict check makes
            // such a commit retry, so this only guards that rule).
            if (op.fragments.size() != m.fragments.size()) {
              return CommitConflict("the columns were added to " + std::to_string(op.fragments.size()) +
                                    " fragments, but the dataset now has " + std::to_string(m.fragments.size()));
            }
            for (const auto& f : op.fragments) {
              if (std::none_of(m.fragments.begin(), m.fragments.end(),
                               [&](const Fragment& e) { return e.id == f.id; })) {
                return CommitConflict("fragment " + std::to_string(f.id) + " of the merge is no longer in the dataset");
              }
            }
            std::vector<Fragment> merged = op.fragments;
            if (stable_row_ids) {
              // As pylance 14: every row of a fragment given new data files
              // was last updated now (all-null columns change no fragment).
              for (auto& f : merged) {
                auto old = std::find_if(m.fragments.begin(), m.fragments.end(),
                                        [&](const Fragment& e) { return e.id == f.id; });
                const bool new_files = std::any_of(f.files.begin(), f.files.end(), [&](const DataFile& d) {
                  return std::none_of(old->files.begin(), old->files.end(),
                                      [&](const DataFile& o) { return o.path == d.path && o.base_id == d.base_id; });
                });
                if (!new_files) continue;
                if (!f.physical_rows) {
                  return Status::Invalid("fragment ", f.id, " has no physical row count; stable row ids need it");
                }
                f.last_updated_at_versions = SequenceRef{};
                f.last_updated_at_versions.inline_bytes =
                    table::RowVersionSequence({{*f.physical_rows, version}}).Serialize();
              }
            }
            m.fragments = std::move(merged);
            m.schema.fields = op.schema.fields;
            RetainRelevantIndices(m.schema, &out.indices);
            return Status::OK();
          },
          [&](const Project& op) -> Status {
            if (!in.base) return Status::Invalid("cannot change the schema: the dataset does not exist");
            m.version = version;
            m.schema.fields = op.schema.fields;
            DropDeadDataFiles(&m, &m.schema);
            RetainRelevantIndices(m.schema, &out.indices);
            return Status::OK();
          },
          [&](const DataOverlay& op) -> Status {
            if (!in.base) return Status::Invalid("cannot add data overlay files: the dataset does not exist");
            m.version = version;
            // Appended after the fragment's overlays (concurrent ones kept),
            // stamped with this version: newer wins where coverages overlap.
            for (const auto& g : op.groups) {
              auto it = std::find_if(m.fragments.begin(), m.fragments.end(),
                                     [&](const Fragment& f) { return f.id == g.fragment_id; });
              if (it == m.fragments.end()) {
                return Status::Invalid("DataOverlay targets fragment ", g.fragment_id, ", which does not exist");
              }
              for (DataOverlayFile o : g.overlays) {
                o.committed_version = version;
                it->overlays.push_back(std::move(o));
              }
              LANCE_RETURN_NOT_OK(StampOverlaidRows(g, version, &*it));
            }
            return Status::OK();
          },
          [&](const CreateIndex& op) -> Status {
            if (!in.base) return Status::Invalid("cannot change indices: the dataset does not exist");
            m.version = version;
            // An index of a new one's name goes too (a concurrent create of
            // the same name is replaced, not doubled), unless the transaction
            // removes indices of that name: then it said which go, and the
            // others stay (optimize merges the last segments of a name and
            // keeps the older ones, as pylance 14).
            auto removes_name = [&](const std::string& name) {
              return std::any_of(op.removed_indices.begin(), op.removed_indices.end(),
                                 [&](const IndexMetadata& r) { return r.name == name; });
            };
            std::erase_if(out.indices, [&](const IndexMetadata& i) {
              return std::any_of(op.new_indices.begin(), op.new_indices.end(),
                                 [&](const IndexMetadata& n) { return n.name == i.name && !removes_name(i.name); }) ||
                     std::any_of(op.removed_indices.begin(), op.removed_indices.end(),
                                 [&](const IndexMetadata& r) { return r.uuid == i.uuid; });
            });
            for (const auto& added : op.new_indices) out.indices.push_back(added);
            return Status::OK();
          },
          [&](const Restore& op) -> Status {
            if (!in.base || !in.restore_source) {
              return Status::Invalid("cannot restore version ", op.version, ": the dataset does not exist");
            }
            // The old version's content and indices; the id counters stay
            // those of the latest version, as pylance 14 keeps them, so ids
            // handed out since are not handed out again.
            const auto max_fragment_id = m.max_fragment_id;
            const uint64_t next_row_id = m.next_row_id;
            m = in.restore_source->manifest;
            out.indices = in.restore_source->indices;
            m.version = version;
            if (max_fragment_id) {
              m.max_fragment_id = std::max(*max_fragment_id, m.max_fragment_id.value_or(0));
            }
            m.next_row_id = std::max(next_row_id, m.next_row_id);
            return Status::OK();
          }},
      txn.operation));

  std::sort(m.fragments.begin(), m.fragments.end(),
            [](const Fragment& a, const Fragment& b) { return a.id < b.id; });
  // As the reference after every operation but Restore (which copies the
  // old manifest as it was): files holding only tombstoned fields go.
  if (!std::holds_alternative<Restore>(txn.operation)) DropDeadDataFiles(&m, nullptr);
  m.timestamp_nanos = in.timestamp_nanos;
  m.writer_version = WriterVersion{"lance-cpp", LANCE_CPP_VERSION, std::nullopt, std::nullopt};
  m.tag.clear();
  // Inline only: no _transactions/ file to name (writer flag 32 says so).
  m.transaction_file = options.disable_transaction_file ? "" : txn.FileName();
  m.index_section.reset();
  m.transaction_section.reset();
  m.data_file_format = "lance";
  // A dataset whose manifest does not record its storage version (written
  // before 0.10) keeps not recording it: readers infer it from the files.
  if (m.data_storage_version.empty() && !in.base && !is_clone) {
    m.data_storage_version =
        options.data_storage_version.empty() ? kDefaultDataStorageVersion : options.data_storage_version;
  }
  // A legacy dataset keeps its dictionaries' values in the manifest file, at
  // the offsets its fields record: a field that has them recorded but not
  // loaded (or written) cannot be carried into the new manifest.
  const bool legacy = file::IsLegacyVersionName(m.data_storage_version);
  for (const auto& f : m.schema.FieldsPreOrder()) {
    const bool dictionary = f.logical_type.rfind("dict:", 0) == 0;
    if (f.dictionary_values == nullptr &&
        (f.dictionary_length.value_or(0) > 0 || (legacy && dictionary))) {  // v2 manifests record none
      return Status::NotImplemented("committing to a legacy (0.1) dataset with dictionary column '",
                                    m.schema.FieldPath(f.id), "': lance-cpp has no dictionary values for it");
    }
  }
  LANCE_ASSIGN_OR_RAISE(auto flags, table::ComputeFeatureFlags(m, out.indices,
                                                               derived_from ? &derived_from->manifest : nullptr,
                                                               stable_row_ids,
                                                               options.disable_transaction_file));
  m.reader_feature_flags = flags.reader;
  m.writer_feature_flags = flags.writer;
  return out;
}

}  // namespace lance::txn
