// The fragment reuse index `__lance_frag_reuse` (pylance's compaction with
// defer_index_remap): a system index whose details record, per compaction
// ("version"), each rewrite group's old and new fragments and the old row
// addresses that survived. Here: its details read and written, and every
// index's fragment bitmap read as the reference's load_indices returns it
// (old fragments of a group swapped for its new ones). The row address
// mapping itself is index/frag_reuse.h.
//
// The details message is proto/lance/frag_reuse.proto: the versions inline,
// or (above 200 KiB) in an external file under _indices/{uuid}/.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "lance/index_metadata.h"
#include "lance/io/object_store.h"
#include "lance/status.h"

namespace lance::table {

inline constexpr const char* kFragReuseIndexName = "__lance_frag_reuse";
// As pylance 14 writes it (no type.googleapis.com host).
inline constexpr const char* kFragReuseDetailsTypeUrl = "/lance.table.FragmentReuseIndexDetails";
inline constexpr const char* kFragReuseDetailsFile = "details.binpb";
/// Above this many bytes the versions go to an external file (pylance 14).
inline constexpr size_t kFragReuseInlineLimit = 204800;

struct FragDigest {
  uint64_t id = 0;
  uint64_t physical_rows = 0;
  uint64_t num_deleted_rows = 0;
};

struct FragReuseGroup {
  std::string changed_row_addrs;  // serialized RoaringTreemap
  std::vector<FragDigest> old_fragments;
  std::vector<FragDigest> new_fragments;
};

struct FragReuseVersion {
  uint64_t dataset_version = 0;
  std::vector<FragReuseGroup> groups;
};

struct FragReuseDetails {
  std::vector<FragReuseVersion> versions;  // oldest first
};

/// The fragment reuse index among `indices`, or null.
const IndexMetadata* FindFragReuseIndex(const std::vector<IndexMetadata>& indices);

/// Its versions, from the inline details or the external file.
Result<FragReuseDetails> LoadFragReuseDetails(const io::ObjectStore& store, const IndexMetadata& index);

/// InlineContent's bytes (versions sorted by dataset version, as pylance).
std::string SerializeFragReuseVersions(const FragReuseDetails& details);

/// The FragmentReuseIndexDetails value of an index `uuid`: inline, or (above
/// the limit) an external file, whose bytes `external` gets to be written at
/// _indices/{uuid}/details.binpb.
std::string FragReuseDetailsValue(const FragReuseDetails& details, std::string* external);

/// An index's fragment bitmap as pylance 14 reads it under `details`: for
/// each group, its old fragments swapped for its new ones; a bitmap with
/// only some of them loses those and gains nothing.
void RemapFragmentBitmap(const FragReuseDetails& details, std::vector<uint32_t>* fragment_ids);

/// Every bitmap of `indices` (the fragment reuse index's own too) remapped
/// through the fragment reuse index among them, if any; its details, loaded
/// for that (null without one), for the version's readers to keep.
Result<std::shared_ptr<const FragReuseDetails>> ApplyFragReuseToBitmaps(const io::ObjectStore& store,
                                                                        std::vector<IndexMetadata>* indices);

}  // namespace lance::table
