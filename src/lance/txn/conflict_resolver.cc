#include "lance/txn/conflict_resolver.h"

#include <google/protobuf/unknown_field_set.h>

#include <algorithm>

#include "lance/table/deletion_file.h"
#include "lance/table/frag_reuse.h"
#include "lance/table/manifest_proto.h"
#include "lance/table/roaring_portable.h"
#include "lance/transaction.pb.h"
#include "lance/util/protobuf.h"

namespace lance::txn {
namespace {

using K = OperationKind;

template <class... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};
template <class... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;

bool SameDataFile(const DataFile& a, const DataFile& b) {
  return a.path == b.path && a.fields == b.fields && a.column_indices == b.column_indices &&
         a.file_major_version == b.file_major_version && a.file_minor_version == b.file_minor_version &&
         a.file_size_bytes == b.file_size_bytes && a.base_id == b.base_id;
}

bool SameFiles(const std::vector<DataFile>& a, const std::vector<DataFile>& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), SameDataFile);
}

bool SameDeletionFile(const std::optional<DeletionFile>& a, const std::optional<DeletionFile>& b) {
  if (a.has_value() != b.has_value()) return false;
  if (!a) return true;
  return a->type == b->type && a->read_version == b->read_version && a->id == b->id &&
         a->num_deleted_rows == b->num_deleted_rows && a->base_id == b->base_id;
}

template <class Ids>
bool AnyIn(const Ids& ids, const std::set<uint64_t>& set) {
  return std::any_of(ids.begin(), ids.end(), [&](uint64_t id) { return set.count(id) > 0; });
}

std::vector<uint64_t> TouchedByDeleteOrUpdate(const OperationFacts& f) {
  std::vector<uint64_t> ids = f.removed_fragment_ids;
  for (const auto& u : f.updated_fragments) ids.push_back(u.id);
  return ids;
}

std::vector<uint64_t> ReplacedFragmentIds(const OperationFacts& f) {
  std::vector<uint64_t> ids;
  for (const auto& [id, fields] : f.replaced_fields) ids.push_back(id);
  return ids;
}

bool HasFragReuseIndex(const OperationFacts& f) {
  return std::any_of(f.new_indices.begin(), f.new_indices.end(),
                     [](const auto& i) { return i.name == table::kFragReuseIndexName; });
}

// c3: one side sets a config key the other sets or removes.
bool UpsertKeyConflict(const OperationFacts& a, const OperationFacts& b) {
  for (const auto& k : a.config_upserts) {
    if (b.config_upserts.count(k) || b.config_deletes.count(k)) return true;
  }
  for (const auto& k : b.config_upserts) {
    if (a.config_upserts.count(k) || a.config_deletes.count(k)) return true;
  }
  return false;
}

bool ModifiesSameMetadata(const OperationFacts& a, const OperationFacts& b) {
  if (a.changes_schema_metadata && b.changes_schema_metadata) return true;
  for (int32_t f : a.field_metadata_changes) {
    if (b.field_metadata_changes.count(f)) return true;
  }
  return false;
}

// c7: a MemWAL changed on both sides.
bool SameMemWal(const std::vector<std::string>& committed, const std::vector<std::string>& mine) {
  for (const auto& c : committed) {
    if (std::find(mine.begin(), mine.end(), c) != mine.end()) return true;
  }
  return false;
}

// c1: a Delete or Update of ours against a committed Delete or Update.
Verdict CheckDeleteUpdate(const OperationFacts& mine, const OperationFacts& theirs,
                          const std::map<uint64_t, Fragment>& initial, bool affected_rows_known,
                          std::set<uint64_t>* rebase) {
  const std::set<uint64_t> modified = mine.ModifiedFragmentIds();
  if (!AnyIn(TouchedByDeleteOrUpdate(theirs), modified)) return Verdict::kCompatible;
  if (!affected_rows_known) return Verdict::kRetryable;
  std::set<uint64_t> needs;
  for (const auto& updated : theirs.updated_fragments) {
    auto it = initial.find(updated.id);
    if (it == initial.end()) continue;
    // Data files changed, not only the deletion file: no row-level merge.
    if (!SameFiles(it->second.files, updated.files)) return Verdict::kRetryable;
    if (!SameDeletionFile(it->second.deletion_file, updated.deletion_file)) needs.insert(updated.id);
  }
  for (uint64_t removed : theirs.removed_fragment_ids) {
    if (initial.count(removed)) return Verdict::kRetryable;
  }
  if (needs.empty()) return Verdict::kCompatible;
  if (rebase) rebase->insert(needs.begin(), needs.end());
  return Verdict::kRebase;
}

// c5: a new index of `index_side` against a Rewrite of `rewritten`.
Verdict IndexAgainstRewrite(const OperationFacts& index_side, const std::vector<uint64_t>& rewritten) {
  std::set<uint64_t> covered;
  for (const auto& index : index_side.new_indices) {
    if (!index.fragments) return Verdict::kRetryable;
    covered.insert(index.fragments->begin(), index.fragments->end());
  }
  return AnyIn(rewritten, covered) ? Verdict::kRetryable : Verdict::kCompatible;
}

// c6: replaced fields that an index covers.
Verdict ReplacementAgainstIndex(const OperationFacts& replacement, const OperationFacts& index_side) {
  std::set<int32_t> indexed;
  for (const auto& index : index_side.new_indices) indexed.insert(index.fields.begin(), index.fields.end());
  for (const auto& [id, fields] : replacement.replaced_fields) {
    for (int32_t f : fields) {
      if (indexed.count(f)) return Verdict::kRetryable;
    }
  }
  return Verdict::kCompatible;
}

Verdict Overlap(const std::vector<uint64_t>& theirs, const std::set<uint64_t>& mine) {
  return AnyIn(theirs, mine) ? Verdict::kRetryable : Verdict::kCompatible;
}

Verdict CheckDelete(const OperationFacts& mine, const OperationFacts& theirs,
                    const std::map<uint64_t, Fragment>& initial, bool known, std::set<uint64_t>* rebase) {
  switch (theirs.kind) {
    case K::kCreateIndex:
    case K::kReserveFragments:
    case K::kClone:
    case K::kProject:
    case K::kAppend:
    case K::kUpdateConfig:
    case K::kUpdateBases:
    // Overlays keep physical offsets, and deletions win over them.
    case K::kDataOverlay:
      return Verdict::kCompatible;
    case K::kRewrite: return Overlap(theirs.rewritten_fragment_ids, mine.ModifiedFragmentIds());
    case K::kDataReplacement: return Overlap(ReplacedFragmentIds(theirs), mine.ModifiedFragmentIds());
    case K::kDelete:
    case K::kUpdate: return CheckDeleteUpdate(mine, theirs, initial, known, rebase);
    case K::kMerge: return Verdict::kRetryable;
    case K::kOverwrite:
    case K::kRestore:
    case K::kUpdateMemWalState: return Verdict::kIncompatible;
  }
  return Verdict::kIncompatible;
}

Verdict CheckUpdate(const OperationFacts& mine, const OperationFacts& theirs,
                    const std::map<uint64_t, Fragment>& initial, bool known, std::set<uint64_t>* rebase) {
  switch (theirs.kind) {
    case K::kCreateIndex:
    case K::kReserveFragments:
    case K::kProject:
    case K::kAppend:
    case K::kClone:
    case K::kUpdateConfig:
    case K::kUpdateBases: return Verdict::kCompatible;
    case K::kDataOverlay: {
      // Rewritten rows or columns would drop the overlay's newer values.
      // Conservative: any overlay on a fragment we rewrite (on a field we
      // rewrite, for an in-place column rewrite) means a re-run.
      const std::set<uint64_t> modified = mine.ModifiedFragmentIds();
      if (!mine.rewrite_columns && !mine.has_new_fragments) return Verdict::kCompatible;
      for (const auto& [id, fields] : theirs.replaced_fields) {
        if (!modified.count(id)) continue;
        if (!mine.rewrite_columns) return Verdict::kRetryable;
        for (int32_t f : fields) {
          if (f >= 0 && std::find(mine.fields_modified.begin(), mine.fields_modified.end(),
                                  static_cast<uint32_t>(f)) != mine.fields_modified.end()) {
            return Verdict::kRetryable;
          }
        }
      }
      return Verdict::kCompatible;
    }
    case K::kRewrite: return Overlap(theirs.rewritten_fragment_ids, mine.ModifiedFragmentIds());
    case K::kDataReplacement: return Overlap(ReplacedFragmentIds(theirs), mine.ModifiedFragmentIds());
    case K::kDelete:
    case K::kUpdate: return CheckDeleteUpdate(mine, theirs, initial, known, rebase);
    case K::kMerge: return Verdict::kRetryable;
    case K::kOverwrite:
    case K::kRestore: return Verdict::kIncompatible;
    case K::kUpdateMemWalState: {
      // c7: only a MemWAL this update merges and they change.
      if (!mine.mem_wal_to_merge) return Verdict::kCompatible;
      const std::vector<std::string> merged{*mine.mem_wal_to_merge};
      return SameMemWal(theirs.mem_wals_added, merged) || SameMemWal(theirs.mem_wals_updated, merged)
                 ? Verdict::kIncompatible
                 : Verdict::kCompatible;
    }
  }
  return Verdict::kIncompatible;
}

Verdict CheckCreateIndex(const OperationFacts& mine, const OperationFacts& theirs) {
  switch (theirs.kind) {
    case K::kAppend:
    case K::kClone:
    case K::kUpdateBases:
    case K::kDataOverlay:
    case K::kDelete:
    case K::kUpdate:
    case K::kMerge:
    case K::kReserveFragments:
    case K::kProject:
    case K::kUpdateConfig: return Verdict::kCompatible;
    case K::kCreateIndex:  // c4
      return HasFragReuseIndex(mine) && HasFragReuseIndex(theirs) ? Verdict::kRetryable : Verdict::kCompatible;
    case K::kRewrite:  // c5
      if (theirs.has_frag_reuse_index) {
        if (!HasFragReuseIndex(mine)) return Verdict::kCompatible;
        return mine.new_indices.size() != 1 || mine.num_removed_indices != 1 ? Verdict::kIncompatible
                                                                             : Verdict::kCompatible;
      }
      return IndexAgainstRewrite(mine, theirs.rewritten_fragment_ids);
    case K::kDataReplacement: return ReplacementAgainstIndex(theirs, mine);  // c6
    case K::kOverwrite:
    case K::kRestore:
    case K::kUpdateMemWalState: return Verdict::kIncompatible;
  }
  return Verdict::kIncompatible;
}

Verdict CheckRewrite(const OperationFacts& mine, const OperationFacts& theirs) {
  const std::set<uint64_t> rewritten(mine.rewritten_fragment_ids.begin(), mine.rewritten_fragment_ids.end());
  switch (theirs.kind) {
    case K::kAppend:
    case K::kReserveFragments:
    case K::kProject:
    case K::kClone:
    case K::kUpdateConfig:
    case K::kUpdateMemWalState:
    case K::kUpdateBases: return Verdict::kCompatible;
    case K::kDelete:
    case K::kUpdate: return Overlap(TouchedByDeleteOrUpdate(theirs), rewritten);
    case K::kRewrite:
      if (AnyIn(theirs.rewritten_fragment_ids, rewritten)) return Verdict::kRetryable;
      return theirs.has_frag_reuse_index && mine.has_frag_reuse_index ? Verdict::kRetryable
                                                                      : Verdict::kCompatible;
    case K::kDataReplacement:
    // Overlays on fragments we rewrite would be lost with them.
    case K::kDataOverlay: return Overlap(ReplacedFragmentIds(theirs), rewritten);
    case K::kMerge: return Verdict::kRetryable;
    case K::kCreateIndex: {  // c5
      const bool theirs_fri = HasFragReuseIndex(theirs);
      if (theirs_fri) {
        if (theirs.new_indices.size() != 1 || theirs.num_removed_indices != 1) return Verdict::kIncompatible;
        return Verdict::kCompatible;
      }
      if (mine.has_frag_reuse_index) return Verdict::kCompatible;
      return IndexAgainstRewrite(theirs, mine.rewritten_fragment_ids);
    }
    case K::kOverwrite:
    case K::kRestore: return Verdict::kIncompatible;
  }
  return Verdict::kIncompatible;
}

Verdict CheckOverwrite(const OperationFacts& mine, const OperationFacts& theirs) {
  switch (theirs.kind) {
    case K::kOverwrite:
    case K::kUpdateConfig:  // c3
      return UpsertKeyConflict(mine, theirs) ? Verdict::kIncompatible : Verdict::kCompatible;
    case K::kUpdateMemWalState: return Verdict::kIncompatible;
    default: return Verdict::kCompatible;
  }
}

Verdict CheckAppend(const OperationFacts& theirs) {
  switch (theirs.kind) {
    case K::kOverwrite:
    case K::kRestore:
    case K::kUpdateMemWalState: return Verdict::kIncompatible;
    default: return Verdict::kCompatible;
  }
}

Verdict CheckDataReplacement(const OperationFacts& mine, const OperationFacts& theirs) {
  switch (theirs.kind) {
    case K::kAppend:
    case K::kClone:
    case K::kDelete:
    case K::kUpdate:
    case K::kMerge:
    case K::kUpdateConfig:
    case K::kReserveFragments:
    case K::kProject:
    case K::kUpdateBases:
    case K::kDataOverlay: return Verdict::kCompatible;
    case K::kCreateIndex: return ReplacementAgainstIndex(mine, theirs);  // c6
    case K::kRewrite: {  // c2
      const auto ids = ReplacedFragmentIds(mine);
      return Overlap(theirs.rewritten_fragment_ids, std::set<uint64_t>(ids.begin(), ids.end()));
    }
    case K::kDataReplacement:  // c6: the same field of the same fragment
      for (const auto& [id, fields] : mine.replaced_fields) {
        for (const auto& [other_id, other_fields] : theirs.replaced_fields) {
          if (id != other_id) continue;
          for (int32_t f : fields) {
            if (std::find(other_fields.begin(), other_fields.end(), f) != other_fields.end()) {
              return Verdict::kRetryable;
            }
          }
        }
      }
      return Verdict::kCompatible;
    case K::kOverwrite:
    case K::kRestore:
    case K::kUpdateMemWalState: return Verdict::kIncompatible;
  }
  return Verdict::kIncompatible;
}

Verdict CheckDataOverlay(const OperationFacts& mine, const OperationFacts& theirs) {
  const auto ids = ReplacedFragmentIds(mine);
  const std::set<uint64_t> overlaid(ids.begin(), ids.end());
  switch (theirs.kind) {
    case K::kAppend:
    case K::kCreateIndex:
    case K::kReserveFragments:
    case K::kProject:
    case K::kUpdateConfig:
    case K::kUpdateBases:
    case K::kClone:
    case K::kDataReplacement:
    case K::kDataOverlay: return Verdict::kCompatible;
    case K::kDelete: return Overlap(theirs.removed_fragment_ids, overlaid);
    case K::kUpdate:
      if (AnyIn(theirs.removed_fragment_ids, overlaid)) return Verdict::kRetryable;
      // Rows moved out of an overlaid fragment lose its values.
      if (theirs.has_new_fragments && !theirs.rewrite_columns) {
        std::vector<uint64_t> updated;
        for (const auto& f : theirs.updated_fragments) updated.push_back(f.id);
        return Overlap(updated, overlaid);
      }
      return Verdict::kCompatible;
    case K::kRewrite: return Overlap(theirs.rewritten_fragment_ids, overlaid);
    case K::kMerge: return Verdict::kRetryable;
    case K::kOverwrite:
    case K::kRestore:
    case K::kUpdateMemWalState: return Verdict::kIncompatible;
  }
  return Verdict::kIncompatible;
}

Verdict CheckMerge(const OperationFacts& theirs) {
  switch (theirs.kind) {
    case K::kCreateIndex:
    case K::kReserveFragments:
    case K::kClone:
    case K::kUpdateConfig:
    case K::kUpdateBases: return Verdict::kCompatible;
    case K::kUpdate:
    case K::kAppend:
    case K::kDelete:
    case K::kRewrite:
    case K::kMerge:
    case K::kDataReplacement:
    case K::kDataOverlay: return Verdict::kRetryable;
    case K::kOverwrite:
    case K::kRestore:
    case K::kProject:
    case K::kUpdateMemWalState: return Verdict::kIncompatible;
  }
  return Verdict::kIncompatible;
}

Verdict CheckProject(const OperationFacts& theirs) {
  switch (theirs.kind) {
    case K::kMerge:
    case K::kProject: return Verdict::kRetryable;  // the schema must be recomputed
    case K::kOverwrite:
    case K::kRestore:
    case K::kUpdateMemWalState: return Verdict::kIncompatible;
    default: return Verdict::kCompatible;
  }
}

Verdict CheckRestore(const OperationFacts& theirs) {
  return theirs.kind == K::kUpdateMemWalState ? Verdict::kIncompatible : Verdict::kCompatible;
}

Verdict CheckReserveFragments(const OperationFacts& theirs) {
  return theirs.kind == K::kOverwrite || theirs.kind == K::kRestore ? Verdict::kIncompatible
                                                                    : Verdict::kCompatible;
}

Verdict CheckUpdateConfig(const OperationFacts& mine, const OperationFacts& theirs) {
  switch (theirs.kind) {
    case K::kOverwrite:  // c3
      return mine.changes_schema_metadata || !mine.field_metadata_changes.empty() ||
                     UpsertKeyConflict(mine, theirs)
                 ? Verdict::kIncompatible
                 : Verdict::kCompatible;
    case K::kUpdateConfig:
      return UpsertKeyConflict(mine, theirs) || ModifiesSameMetadata(mine, theirs) ? Verdict::kIncompatible
                                                                                   : Verdict::kCompatible;
    default: return Verdict::kCompatible;
  }
}

Verdict CheckUpdateMemWalState(const OperationFacts& mine, const OperationFacts& theirs) {
  switch (theirs.kind) {
    case K::kUpdateMemWalState: {  // c7
      const bool theirs_trim = theirs.mem_wals_added.empty() && theirs.mem_wals_updated.empty();
      const bool mine_trim = mine.mem_wals_added.empty() && mine.mem_wals_updated.empty();
      if (theirs_trim || mine_trim) return Verdict::kCompatible;
      for (const auto* c : {&theirs.mem_wals_added, &theirs.mem_wals_updated}) {
        for (const auto* m : {&mine.mem_wals_added, &mine.mem_wals_updated}) {
          if (SameMemWal(*c, *m)) return Verdict::kIncompatible;
        }
      }
      return Verdict::kCompatible;
    }
    case K::kUpdate: return theirs.mem_wal_to_merge ? Verdict::kCompatible : Verdict::kIncompatible;
    case K::kUpdateConfig:
    case K::kRewrite:
    case K::kCreateIndex:
    case K::kReserveFragments:
    case K::kUpdateBases: return Verdict::kCompatible;
    default: return Verdict::kIncompatible;
  }
}

Verdict CheckUpdateBases(const OperationFacts& mine, const OperationFacts& theirs) {
  if (theirs.kind != K::kUpdateBases) return Verdict::kCompatible;
  for (const auto& a : mine.new_bases) {
    for (const auto& b : theirs.new_bases) {
      if (a.id != 0 && b.id != 0 && a.id == b.id) return Verdict::kIncompatible;
      if (a.name && a.name == b.name) return Verdict::kIncompatible;
      if (a.path == b.path) return Verdict::kIncompatible;
    }
  }
  return Verdict::kCompatible;
}

bool SuppliesValues(const OperationFacts& f) {
  return f.kind == K::kAppend || f.kind == K::kUpdate || f.kind == K::kDataReplacement ||
         f.kind == K::kDataOverlay;
}

bool UpdatesSchemaOrFieldMetadata(const OperationFacts& f) {
  return f.kind == K::kUpdateConfig && (f.changes_schema_metadata || !f.field_metadata_changes.empty());
}

// The identity of a MemWAL message (field 1, its id), kept opaque: the
// whole message when it has none.
std::string MemWalIdentity(const std::string& bytes) {
  google::protobuf::UnknownFieldSet fields;
  if (fields.ParseFromString(bytes)) {
    for (int i = 0; i < fields.field_count(); ++i) {
      const auto& f = fields.field(i);
      if (f.number() == 1 && f.type() == google::protobuf::UnknownField::TYPE_LENGTH_DELIMITED) {
        return f.length_delimited();
      }
    }
  }
  return bytes;
}

Status AddFragments(const google::protobuf::RepeatedPtrField<pb::table::DataFragment>& in,
                    const std::string& what, std::vector<Fragment>* out) {
  for (const auto& pf : in) {
    LANCE_ASSIGN_OR_RAISE(auto f, table::FragmentFromProto(pf, what));
    out->push_back(std::move(f));
  }
  return Status::OK();
}

void AddUpdateMap(const pb::table::Transaction::UpdateMap& map, OperationFacts* f) {
  for (const auto& e : map.update_entries()) {
    if (e.has_value()) {
      f->config_upserts.insert(e.key());
    } else {
      f->config_deletes.insert(e.key());
    }
  }
}

}  // namespace

const char* OperationKindName(OperationKind kind) {
  switch (kind) {
    case K::kAppend: return "Append";
    case K::kDelete: return "Delete";
    case K::kUpdate: return "Update";
    case K::kOverwrite: return "Overwrite";
    case K::kCreateIndex: return "CreateIndex";
    case K::kRewrite: return "Rewrite";
    case K::kMerge: return "Merge";
    case K::kProject: return "Project";
    case K::kRestore: return "Restore";
    case K::kReserveFragments: return "ReserveFragments";
    case K::kUpdateConfig: return "UpdateConfig";
    case K::kDataReplacement: return "DataReplacement";
    case K::kDataOverlay: return "DataOverlay";
    case K::kUpdateMemWalState: return "UpdateMemWalState";
    case K::kClone: return "Clone";
    case K::kUpdateBases: return "UpdateBases";
  }
  return "Unknown";
}

const char* VerdictName(Verdict v) {
  switch (v) {
    case Verdict::kCompatible: return "compatible";
    case Verdict::kRebase: return "rebase";
    case Verdict::kRetryable: return "retryable";
    case Verdict::kIncompatible: return "incompatible";
  }
  return "?";
}

std::set<uint64_t> OperationFacts::ModifiedFragmentIds() const {
  std::set<uint64_t> ids(removed_fragment_ids.begin(), removed_fragment_ids.end());
  for (const auto& f : updated_fragments) ids.insert(f.id);
  ids.insert(rewritten_fragment_ids.begin(), rewritten_fragment_ids.end());
  for (const auto& [id, fields] : replaced_fields) ids.insert(id);
  return ids;
}

Result<OperationFacts> ParseOperationFacts(std::string_view bytes, const std::string& what) {
  pb::table::Transaction proto;
  if (!util::ParseMessage(bytes, &proto)) {
    return Status::Invalid("corrupt transaction ", what, ": not a valid Transaction protobuf message");
  }
  using T = pb::table::Transaction;
  OperationFacts f;
  switch (proto.operation_case()) {
    case T::kAppend: f.kind = K::kAppend; break;
    case T::kDelete:
      f.kind = K::kDelete;
      LANCE_RETURN_NOT_OK(AddFragments(proto.delete_().updated_fragments(), what, &f.updated_fragments));
      f.removed_fragment_ids.assign(proto.delete_().deleted_fragment_ids().begin(),
                                    proto.delete_().deleted_fragment_ids().end());
      break;
    case T::kUpdate: {
      f.kind = K::kUpdate;
      const auto& u = proto.update();
      LANCE_RETURN_NOT_OK(AddFragments(u.updated_fragments(), what, &f.updated_fragments));
      f.removed_fragment_ids.assign(u.removed_fragment_ids().begin(), u.removed_fragment_ids().end());
      f.has_new_fragments = u.new_fragments_size() > 0;
      f.rewrite_columns = u.update_mode() == T::REWRITE_COLUMNS;
      f.fields_modified.assign(u.fields_modified().begin(), u.fields_modified().end());
      if (!u.mem_wal_to_merge().empty()) f.mem_wal_to_merge = MemWalIdentity(u.mem_wal_to_merge());
      break;
    }
    case T::kOverwrite:
      // The reference reads a non-empty config_upsert_values back as none
      // (a quirk of its decoding), so a committed Overwrite upserts no key
      // as far as conflicts go.
      f.kind = K::kOverwrite;
      break;
    case T::kCreateIndex:
      f.kind = K::kCreateIndex;
      for (const auto& pi : proto.create_index().new_indices()) {
        OperationFacts::NewIndex index;
        index.name = pi.name();
        index.fields.assign(pi.fields().begin(), pi.fields().end());
        if (!pi.fragment_bitmap().empty()) {
          LANCE_ASSIGN_OR_RAISE(auto ids, table::DecodePortableRoaring(pi.fragment_bitmap(), what));
          index.fragments = std::set<uint32_t>(ids.begin(), ids.end());
        }
        f.new_indices.push_back(std::move(index));
      }
      f.num_removed_indices = static_cast<size_t>(proto.create_index().removed_indices_size());
      break;
    case T::kRewrite:
      f.kind = K::kRewrite;
      for (const auto& old : proto.rewrite().old_fragments()) f.rewritten_fragment_ids.push_back(old.id());
      for (const auto& g : proto.rewrite().groups()) {
        for (const auto& old : g.old_fragments()) f.rewritten_fragment_ids.push_back(old.id());
      }
      break;
    case T::kMerge:
      f.kind = K::kMerge;
      LANCE_RETURN_NOT_OK(AddFragments(proto.merge().fragments(), what, &f.updated_fragments));
      f.may_alter_nullability = !proto.merge().preserves_nullability();
      break;
    case T::kRestore: f.kind = K::kRestore; break;
    case T::kReserveFragments: f.kind = K::kReserveFragments; break;
    case T::kProject:
      f.kind = K::kProject;
      f.may_alter_nullability = !proto.project().preserves_nullability();
      break;
    case T::kUpdateConfig: {
      f.kind = K::kUpdateConfig;
      const auto& c = proto.update_config();
      if (c.has_config_updates()) AddUpdateMap(c.config_updates(), &f);
      for (const auto& [k, v] : c.upsert_values()) f.config_upserts.insert(k);
      for (const auto& k : c.delete_keys()) f.config_deletes.insert(k);
      // As the reference: a schema metadata update present, and every field
      // named, count as changes (whatever the maps hold).
      f.changes_schema_metadata = c.has_schema_metadata_updates() || c.schema_metadata_size() > 0;
      for (const auto& [id, m] : c.field_metadata_updates()) f.field_metadata_changes.insert(id);
      for (const auto& [id, m] : c.field_metadata()) f.field_metadata_changes.insert(static_cast<int32_t>(id));
      break;
    }
    case T::kDataReplacement:
      f.kind = K::kDataReplacement;
      for (const auto& r : proto.data_replacement().replacements()) {
        f.replaced_fields.emplace_back(r.fragment_id(), std::vector<int32_t>(r.new_file().fields().begin(),
                                                                             r.new_file().fields().end()));
      }
      break;
    case T::kDataOverlay:
      f.kind = K::kDataOverlay;
      for (const auto& g : proto.data_overlay().groups()) {
        std::vector<int32_t> fields;
        for (const auto& o : g.overlays()) {
          fields.insert(fields.end(), o.data_file().fields().begin(), o.data_file().fields().end());
        }
        f.replaced_fields.emplace_back(g.fragment_id(), std::move(fields));
      }
      break;
    case T::kUpdateMemWalState:
      f.kind = K::kUpdateMemWalState;
      for (const auto& m : proto.update_mem_wal_state().added()) f.mem_wals_added.push_back(MemWalIdentity(m));
      for (const auto& m : proto.update_mem_wal_state().updated()) f.mem_wals_updated.push_back(MemWalIdentity(m));
      break;
    case T::kClone: f.kind = K::kClone; break;
    case T::kUpdateBases:
      f.kind = K::kUpdateBases;
      for (const auto& b : proto.update_bases().new_bases()) {
        OperationFacts::Base base;
        base.id = b.id();
        if (b.has_name()) base.name = b.name();
        base.path = b.path();
        f.new_bases.push_back(std::move(base));
      }
      break;
    case T::OPERATION_NOT_SET:
    default:
      return Status::NotImplemented("transaction ", what,
                                    " holds an operation this build of lance-cpp does not know (written by a "
                                    "newer Lance); it cannot be checked for conflicts, so nothing is committed "
                                    "on top of it");
  }
  return f;
}

OperationFacts FactsOf(const Operation& op) {
  OperationFacts f;
  std::visit(Overloaded{[&](const Append&) { f.kind = K::kAppend; },
                        [&](const Overwrite& o) {
                          f.kind = K::kOverwrite;
                          for (const auto& [k, v] : o.config_upsert_values) f.config_upserts.insert(k);
                        },
                        [&](const Delete& d) {
                          f.kind = K::kDelete;
                          f.updated_fragments = d.updated_fragments;
                          f.removed_fragment_ids = d.deleted_fragment_ids;
                        },
                        [&](const Restore&) { f.kind = K::kRestore; },
                        [&](const Update& u) {
                          f.kind = K::kUpdate;
                          f.updated_fragments = u.updated_fragments;
                          f.removed_fragment_ids = u.removed_fragment_ids;
                          f.has_new_fragments = !u.new_fragments.empty();
                          f.rewrite_columns = u.mode == Update::Mode::kRewriteColumns;
                          f.fields_modified = u.fields_modified;
                        },
                        [&](const Rewrite& r) {
                          f.kind = K::kRewrite;
                          f.has_frag_reuse_index = r.frag_reuse_index.has_value();
                          for (const auto& g : r.groups) {
                            for (const auto& old : g.old_fragments) f.rewritten_fragment_ids.push_back(old.id);
                          }
                        },
                        [&](const ReserveFragments&) { f.kind = K::kReserveFragments; },
                        [&](const UpdateConfig& u) {
                          f.kind = K::kUpdateConfig;
                          if (u.config_updates) {
                            for (const auto& [key, value] : u.config_updates->entries) {
                              (value ? f.config_upserts : f.config_deletes).insert(key);
                            }
                          }
                          // As the reference: any schema metadata update, and
                          // every field named, count as changes.
                          f.changes_schema_metadata = u.schema_metadata_updates.has_value();
                          for (const auto& [id, map] : u.field_metadata_updates) f.field_metadata_changes.insert(id);
                        },
                        [&](const Clone&) { f.kind = K::kClone; },
                        [&](const Merge& m) {
                          f.kind = K::kMerge;
                          f.updated_fragments = m.fragments;
                          f.may_alter_nullability = !m.preserves_nullability;
                        },
                        [&](const Project& p) {
                          f.kind = K::kProject;
                          f.may_alter_nullability = !p.preserves_nullability;
                        },
                        [&](const DataOverlay& d) {
                          f.kind = K::kDataOverlay;
                          for (const auto& g : d.groups) {
                            std::vector<int32_t> fields;
                            for (const auto& o : g.overlays) {
                              fields.insert(fields.end(), o.data_file.fields.begin(), o.data_file.fields.end());
                            }
                            f.replaced_fields.emplace_back(g.fragment_id, std::move(fields));
                          }
                        },
                        [&](const CreateIndex& c) {
                          f.kind = K::kCreateIndex;
                          for (const auto& i : c.new_indices) {
                            OperationFacts::NewIndex index;
                            index.name = i.name;
                            index.fields = i.fields;
                            if (i.fragment_ids) index.fragments = std::set<uint32_t>(i.fragment_ids->begin(), i.fragment_ids->end());
                            f.new_indices.push_back(std::move(index));
                          }
                          f.num_removed_indices = c.removed_indices.size();
                        }},
             op);
  return f;
}

Verdict CheckConflict(const OperationFacts& mine, const OperationFacts& theirs,
                      const std::map<uint64_t, Fragment>& initial_fragments, bool affected_rows_known,
                      std::set<uint64_t>* rebase_fragments) {
  // pylance 14, before the matrix and in either order: a schema change that
  // may tighten nullability against a write that supplies values, and a
  // Merge (it carries a whole schema) against a metadata update.
  if ((mine.may_alter_nullability && SuppliesValues(theirs)) ||
      (SuppliesValues(mine) && theirs.may_alter_nullability)) {
    return Verdict::kRetryable;
  }
  if ((mine.kind == K::kMerge && UpdatesSchemaOrFieldMetadata(theirs)) ||
      (UpdatesSchemaOrFieldMetadata(mine) && theirs.kind == K::kMerge)) {
    return Verdict::kRetryable;
  }
  switch (mine.kind) {
    case K::kAppend: return CheckAppend(theirs);
    case K::kDelete: return CheckDelete(mine, theirs, initial_fragments, affected_rows_known, rebase_fragments);
    case K::kUpdate: return CheckUpdate(mine, theirs, initial_fragments, affected_rows_known, rebase_fragments);
    case K::kOverwrite: return CheckOverwrite(mine, theirs);
    case K::kCreateIndex: return CheckCreateIndex(mine, theirs);
    case K::kRewrite: return CheckRewrite(mine, theirs);
    case K::kMerge: return CheckMerge(theirs);
    case K::kProject: return CheckProject(theirs);
    case K::kRestore: return CheckRestore(theirs);
    case K::kReserveFragments: return CheckReserveFragments(theirs);
    case K::kUpdateConfig: return CheckUpdateConfig(mine, theirs);
    case K::kDataReplacement: return CheckDataReplacement(mine, theirs);
    case K::kDataOverlay: return CheckDataOverlay(mine, theirs);
    case K::kUpdateMemWalState: return CheckUpdateMemWalState(mine, theirs);
    case K::kClone: return Verdict::kCompatible;
    case K::kUpdateBases: return CheckUpdateBases(mine, theirs);
  }
  return Verdict::kIncompatible;
}

TransactionRebase::TransactionRebase(Transaction txn, const Manifest& read_manifest,
                                     std::shared_ptr<const AffectedRows> affected_rows)
    : txn_(std::move(txn)), facts_(FactsOf(txn_.operation)), affected_rows_(std::move(affected_rows)) {
  // A delete or update that only removes whole fragments has no deletion
  // vector to merge: any overlap is a re-run, as the reference has it.
  if (facts_.updated_fragments.empty()) affected_rows_.reset();
  const std::set<uint64_t> modified = facts_.ModifiedFragmentIds();
  for (const auto& f : read_manifest.fragments) {
    if (modified.count(f.id)) initial_fragments_.emplace(f.id, f);
  }
}

Status TransactionRebase::Check(const OperationFacts& theirs, uint64_t their_version) {
  std::set<uint64_t> rebase;
  const Verdict v = CheckConflict(facts_, theirs, initial_fragments_, affected_rows_ != nullptr, &rebase);
  const std::string mine = std::string(OperationKindName(facts_.kind)) + " based on version " +
                           std::to_string(txn_.read_version);
  const std::string other = std::string(OperationKindName(theirs.kind)) + " committed concurrently as version " +
                            std::to_string(their_version);
  for (uint64_t id : rebase) {
    rebase_fragments_.insert(id);
    changed_by_[id] = other;
  }
  if (v == Verdict::kCompatible || v == Verdict::kRebase) return Status::OK();
  if (v == Verdict::kRetryable) {
    return MakeError(ErrorKind::kRetryableCommitConflict,
                     "retryable commit conflict: this " + mine + " was preempted by the " + other +
                         "; run it again on the new version");
  }
  return MakeError(ErrorKind::kCommitConflict,
                   "commit conflict: this " + mine + " is incompatible with the " + other);
}

Result<Transaction> TransactionRebase::Finish(const io::ObjectStore& store, const Manifest& latest,
                                              std::vector<std::string>* written) {
  if (rebase_fragments_.empty()) return txn_;
  if (!affected_rows_) {
    return Status::Invalid("internal: row-level rebase of ", OperationKindName(facts_.kind),
                           " without its affected rows");
  }
  std::map<uint64_t, const Fragment*> current;
  for (const auto& f : latest.fragments) current[f.id] = &f;
  std::map<uint64_t, std::optional<DeletionFile>> new_files;  // nullopt: every row deleted
  // The latest deletion files may live under a base path (a shallow clone's
  // source); the locator only lives through this call, so it does not own
  // the caller's store.
  const table::FileLocator files(std::shared_ptr<const io::ObjectStore>(&store, [](const io::ObjectStore*) {}),
                                 latest);
  for (uint64_t id : rebase_fragments_) {
    auto it = current.find(id);
    if (it == current.end() || !it->second->deletion_file) {
      return Status::Invalid("internal: fragment ", id, " to rebase has no deletion file in version ",
                             latest.version, " of ", store.uri());
    }
    const Fragment& fragment = *it->second;
    LANCE_ASSIGN_OR_RAISE(auto merged, table::ReadDeletionFile(files, id, *fragment.deletion_file));
    auto ours = affected_rows_->find(id);
    if (ours != affected_rows_->end()) {
      auto common = merged.Intersection(ours->second);
      if (!common.Empty()) {
        std::string sample;
        const auto rows = common.ToVector();
        for (size_t i = 0; i < rows.size() && i < 5; ++i) {
          sample += (i ? ", " : "") + std::to_string((id << 32) | rows[i]);
        }
        return MakeError(ErrorKind::kRetryableCommitConflict,
                         "retryable commit conflict: this " + std::string(OperationKindName(facts_.kind)) +
                             " based on version " + std::to_string(txn_.read_version) + " and the " +
                             changed_by_[id] + " both modified rows at addresses [" + sample + "] of fragment " +
                             std::to_string(id) + "; run it again on the new version " +
                             std::to_string(latest.version));
      }
      merged.UnionWith(ours->second);
    }
    const auto initial = initial_fragments_.find(id);
    const std::optional<uint64_t> physical =
        initial != initial_fragments_.end() ? initial->second.physical_rows : fragment.physical_rows;
    if (physical && merged.Cardinality() >= *physical) {
      new_files[id] = std::nullopt;
      continue;
    }
    // Rebased vectors are always written as bitmaps, as the reference's.
    LANCE_ASSIGN_OR_RAISE(auto file, table::WriteDeletionFile(store, id, latest.version, merged,
                                                              DeletionFile::Type::kBitmap));
    if (written) written->push_back(file.RelativePath(id));
    new_files[id] = file;
  }
  auto apply = [&](std::vector<Fragment>* updated, std::vector<uint64_t>* removed) {
    std::vector<Fragment> kept;
    for (auto& f : *updated) {
      auto it = new_files.find(f.id);
      if (it == new_files.end()) {
        kept.push_back(std::move(f));
      } else if (!it->second) {
        removed->push_back(f.id);
      } else {
        f.deletion_file = *it->second;
        kept.push_back(std::move(f));
      }
    }
    *updated = std::move(kept);
  };
  Transaction out = txn_;
  std::visit(Overloaded{[&](Delete& d) { apply(&d.updated_fragments, &d.deleted_fragment_ids); },
                        [&](Update& u) { apply(&u.updated_fragments, &u.removed_fragment_ids); },
                        [](auto&) {}},
             out.operation);
  out.read_version = latest.version;
  return out;
}

}  // namespace lance::txn
