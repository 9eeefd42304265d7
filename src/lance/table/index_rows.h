// What the rows of an index are, by its type as the manifest records it
// (the index_details message and index_version): the one place that
// decides how a rewrite of fragments (compaction) treats each index.
#pragma once

#include "lance/index_metadata.h"

namespace lance::table {

enum class IndexRows {
  /// The dataset's row ids (row addresses without stable row ids): BTREE
  /// (index_version 0), BITMAP, LABEL_LIST, NGRAM, INVERTED, vector indices.
  kRowIds,
  /// Row addresses even with stable row ids, rewritten when rows move:
  /// pylance 14's BTREE over stable row ids (index_version 1).
  kAddresses,
  /// Row addresses in zones, never remapped by pylance 14: ZONEMAP and
  /// BLOOMFILTER.
  kZones,
  /// A type lance-cpp does not know.
  kUnknown,
};

IndexRows RowsOf(const IndexMetadata& index);

/// Whether `index` covers fragment `id`; one without a fragment bitmap
/// may cover any.
bool CoversFragment(const IndexMetadata& index, uint64_t id);

/// The frag-reuse and MemWAL indices: not user indices.
bool IsSystemIndex(const IndexMetadata& index);

}  // namespace lance::table
