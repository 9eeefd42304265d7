// Conflicts between a transaction being committed and the ones committed
// since it read the dataset: the reference's conflict matrix
// (rust/lance/src/io/commit/conflict_resolver.rs) with its conditions
// c1-c7, and the row-level rebase of deletes and updates.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lance/fragment.h"
#include "lance/io/object_store.h"
#include "lance/manifest.h"
#include "lance/status.h"
#include "lance/table/deletion_vector.h"
#include "lance/txn/transaction_builder.h"

namespace lance::txn {

/// Every operation a transaction can hold, lance-cpp's and other writers'.
enum class OperationKind {
  kAppend,
  kDelete,
  kUpdate,
  kOverwrite,
  kCreateIndex,
  kRewrite,
  kMerge,
  kProject,
  kRestore,
  kReserveFragments,
  kUpdateConfig,
  kDataReplacement,
  kDataOverlay,
  kUpdateMemWalState,
  kClone,
  kUpdateBases,
};

/// The reference's name of the operation ("Append", "DataOverlay", ...).
const char* OperationKindName(OperationKind kind);

/// What the conflict rules look at in one transaction's operation.
struct OperationFacts {
  OperationKind kind = OperationKind::kAppend;

  /// Delete / Update: the new state of the fragments it changed (data files
  /// and deletion file), and the fragments it removed. Merge: its fragments.
  std::vector<Fragment> updated_fragments;
  std::vector<uint64_t> removed_fragment_ids;
  /// Update: whether it wrote rows into new fragments, whether it rewrote
  /// columns in place, and the MemWAL it merges (its serialized identity).
  bool has_new_fragments = false;
  bool rewrite_columns = false;
  std::optional<std::string> mem_wal_to_merge;
  std::vector<uint32_t> fields_modified;

  /// Merge / Project: whether it may make a nullability-affecting schema
  /// change (pylance 14: preserves_nullability not set).
  bool may_alter_nullability = false;

  /// Rewrite: the fragments it replaced, and whether it carries a fragment
  /// reuse index (in memory only: never when read back).
  std::vector<uint64_t> rewritten_fragment_ids;
  bool has_frag_reuse_index = false;

  /// DataReplacement / DataOverlay: per fragment, the field ids written.
  std::vector<std::pair<uint64_t, std::vector<int32_t>>> replaced_fields;

  /// CreateIndex: the new indices.
  struct NewIndex {
    std::string name;
    std::vector<int32_t> fields;
    /// The fragments it covers; nullopt when the bitmap is missing.
    std::optional<std::set<uint32_t>> fragments;
  };
  std::vector<NewIndex> new_indices;
  size_t num_removed_indices = 0;

  /// Overwrite / UpdateConfig: config keys set and keys removed; whether
  /// schema metadata changes, and the fields whose metadata changes.
  std::set<std::string> config_upserts;
  std::set<std::string> config_deletes;
  bool changes_schema_metadata = false;
  std::set<int32_t> field_metadata_changes;

  /// UpdateMemWalState: the MemWALs added and updated, each by its
  /// serialized identity.
  std::vector<std::string> mem_wals_added;
  std::vector<std::string> mem_wals_updated;

  /// UpdateBases: the base paths added.
  struct Base {
    uint32_t id = 0;
    std::optional<std::string> name;
    std::string path;
  };
  std::vector<Base> new_bases;

  /// The fragment ids this operation modifies or removes (for the rebase).
  std::set<uint64_t> ModifiedFragmentIds() const;
};

/// The facts of a committed transaction from its protobuf bytes. An
/// operation this build cannot parse (one newer than it) is an error, never
/// taken as compatible. `what` names the source in errors.
Result<OperationFacts> ParseOperationFacts(std::string_view transaction_bytes, const std::string& what);

/// The facts of one of ours.
OperationFacts FactsOf(const Operation& op);

/// How a transaction stands against one committed concurrently.
enum class Verdict {
  kCompatible,    // commit on top of it as is
  kRebase,        // compatible once shared deletion files are merged row by row
  kRetryable,     // the operation must be re-run on the new version
  kIncompatible,  // cannot be committed at all
};
const char* VerdictName(Verdict v);

/// The conflict matrix: `mine` (read at some version) against `theirs`,
/// committed since. `initial_fragments`: my modified fragments as they were
/// at my read version (c1 compares their data files). `affected_rows_known`:
/// whether mine carries the rows it touched (c1). On kRebase,
/// `*rebase_fragments` gets the shared fragments whose deletion file changed.
Verdict CheckConflict(const OperationFacts& mine, const OperationFacts& theirs,
                      const std::map<uint64_t, Fragment>& initial_fragments, bool affected_rows_known,
                      std::set<uint64_t>* rebase_fragments);

/// Row offsets (by fragment id) a delete, update or merge-insert marked
/// deleted: the reference's affected_rows. Kept in memory, never written.
using AffectedRows = std::map<uint64_t, table::DeletionVector>;

/// One transaction's check against every version committed since it read,
/// then its rebase. Not thread-safe.
class TransactionRebase {
 public:
  /// `read_manifest`: the version `txn` read. `affected_rows` may be null
  /// (unknown: a shared fragment is then a retryable conflict).
  TransactionRebase(Transaction txn, const Manifest& read_manifest,
                    std::shared_ptr<const AffectedRows> affected_rows);

  /// Checks against the transaction committed as `their_version`. Returns
  /// a retryable or incompatible conflict (see lance/status.h) naming both
  /// operations and versions.
  Status Check(const OperationFacts& theirs, uint64_t their_version);

  /// The transaction to commit on top of `latest`: where a concurrent one
  /// changed the deletion file of a fragment we change, the new deletion
  /// file is theirs ∪ our affected rows, written as a bitmap at `latest`'s
  /// version, and a fragment left without live rows is removed. The read
  /// version becomes latest's. Overlapping rows are a retryable conflict.
  /// `written` gets the deletion files this wrote.
  Result<Transaction> Finish(const io::ObjectStore& store, const Manifest& latest,
                             std::vector<std::string>* written);

 private:
  Transaction txn_;
  OperationFacts facts_;
  std::map<uint64_t, Fragment> initial_fragments_;
  std::shared_ptr<const AffectedRows> affected_rows_;
  std::set<uint64_t> rebase_fragments_;
  /// For each fragment to rebase, the commit that last changed it
  /// ("Delete committed concurrently as version 7"), for messages.
  std::map<uint64_t, std::string> changed_by_;
};

}  // namespace lance::txn
