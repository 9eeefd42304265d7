// What a transaction does to the table: the operations this library commits,
// as values. Fragments in them are the new state of each fragment named;
// fragments that are new to the table carry no id yet (the commit assigns it).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "lance/fragment.h"
#include "lance/index_metadata.h"
#include "lance/operations.h"
#include "lance/manifest.h"
#include "lance/schema.h"

namespace lance::txn {

/// New fragments added after the existing ones.
struct Append {
  std::vector<Fragment> fragments;
};

/// Replaces the whole table (also what creating a dataset commits).
struct Overwrite {
  std::vector<Fragment> fragments;
  Schema schema;  // with field ids; its metadata becomes the schema metadata
  /// Config entries set on the new version (existing entries are kept).
  std::map<std::string, std::string> config_upsert_values;
  /// Base paths the new dataset registers (creating only).
  std::vector<BasePath> initial_bases;
};

/// Rows removed by `predicate`: fragments with a new deletion file, and
/// fragments whose every row is now deleted.
struct Delete {
  std::vector<Fragment> updated_fragments;
  std::vector<uint64_t> deleted_fragment_ids;
  std::string predicate;
};

/// The content of an older version as the new latest version.
struct Restore {
  uint64_t version = 0;
};

/// Rows rewritten (RewriteRows) or columns replaced in place (RewriteColumns).
struct Update {
  enum class Mode { kRewriteRows = 0, kRewriteColumns = 1 };
  std::vector<uint64_t> removed_fragment_ids;
  std::vector<Fragment> updated_fragments;
  std::vector<Fragment> new_fragments;
  std::vector<uint32_t> fields_modified;
  std::vector<uint32_t> fields_for_preserving_frag_bitmap;
  Mode mode = Mode::kRewriteRows;
};

/// Fragments rewritten into new ones (compaction): each group's old
/// fragments are replaced by its new fragments, which carry their ids
/// (reserved beforehand with ReserveFragments) and, with stable row ids,
/// the row ids and lineage of the rows they hold.
struct RewriteGroup {
  std::vector<Fragment> old_fragments;
  std::vector<Fragment> new_fragments;
  /// The transaction records new_fragments without their files' sizes (the
  /// manifest has them), as pylance 14's binary-copy compaction commits.
  bool new_file_sizes_in_manifest_only = false;
};
/// An index whose files a Rewrite wrote anew over the new row addresses:
/// the entry `old_uuid` becomes `new_uuid` with these files and details,
/// its fragment bitmap following the groups.
struct RewrittenIndex {
  std::array<uint8_t, 16> old_uuid{};
  std::array<uint8_t, 16> new_uuid{};
  std::string details_type_url;
  std::string details_value;
  uint32_t index_version = 0;
  std::vector<IndexFile> files;
};
struct Rewrite {
  std::vector<RewriteGroup> groups;
  std::vector<RewrittenIndex> rewritten_indices;
  /// A compaction with defer_index_remap: the fragment reuse index that
  /// replaces the dataset's (by name), the other indices left as they are.
  /// In memory only, as the reference's: the transaction file does not
  /// record it.
  std::optional<IndexMetadata> frag_reuse_index;
};

/// Raises max_fragment_id by `num_fragments`; the caller owns the ids
/// (new max + 1 - num_fragments) ..= new max.
struct ReserveFragments {
  uint32_t num_fragments = 0;
};

/// Changes to the config, table metadata, schema metadata and field
/// metadata (by field id); absent maps are left alone.
struct UpdateConfig {
  std::optional<UpdateMap> config_updates;
  std::optional<UpdateMap> table_metadata_updates;
  std::optional<UpdateMap> schema_metadata_updates;
  std::map<int32_t, UpdateMap> field_metadata_updates;
};

/// A new dataset made from a version of another (shallow: the new manifest
/// names the source's files through a base path; deep: the files were
/// copied first). Committed as version `ref_version` of a dataset that must
/// not exist yet; the source manifest comes with the commit
/// (CommitOptions::clone_source).
struct Clone {
  bool is_shallow = true;
  std::optional<std::string> ref_name;  // the source's branch; unset = main
  uint64_t ref_version = 0;
  std::string ref_path;                 // the source dataset's uri
  std::optional<std::string> branch_name;  // set when the clone is a branch
};

/// Columns added or rewritten (schema evolution): every fragment of the
/// table in its new state (new data files added beside the old ones) and
/// the whole new schema, with the new fields' ids.
struct Merge {
  std::vector<Fragment> fragments;
  Schema schema;
  /// pylance 14: whether no field becomes required (a non-nullable field
  /// new to the schema), so concurrent writes of the old schema stay valid.
  bool preserves_nullability = true;
};

/// The schema replaced without touching data (drop, rename, nullability):
/// data files left without a field of the new schema leave their
/// fragments.
struct Project {
  Schema schema;
  /// pylance 14: false when a column was made non-nullable.
  bool preserves_nullability = true;
};

/// Overlay files appended to fragments' overlays (feature bit 64), each
/// group's in order (later ones newer); the commit stamps each with the
/// version it produces. A fragment may be named by several groups.
struct DataOverlayGroup {
  uint64_t fragment_id = 0;
  std::vector<DataOverlayFile> overlays;
};
struct DataOverlay {
  std::vector<DataOverlayGroup> groups;
};

/// Indices added and removed (create, replace, drop): the manifest's
/// index list loses the removed ones (by uuid) and gains the new ones.
struct CreateIndex {
  std::vector<IndexMetadata> new_indices;
  std::vector<IndexMetadata> removed_indices;
};

using Operation = std::variant<Append, Overwrite, Delete, Restore, Update, Rewrite, ReserveFragments,
                               UpdateConfig, Clone, Merge, Project, DataOverlay, CreateIndex>;

/// The reference's name of the operation ("Append", "Overwrite", ...).
const char* OperationName(const Operation& op);

}  // namespace lance::txn
