// Deletion files: the one place that decides their format and writes and
// reads them (`_deletions/{fragment}-{read_version}-{id}.{arrow|bin}`).
#pragma once

#include <cstdint>
#include <optional>

#include "lance/fragment.h"
#include "lance/io/object_store.h"
#include "lance/status.h"
#include "lance/table/deletion_vector.h"
#include "lance/table/file_locations.h"

namespace lance::table {

/// The reference keeps a deletion vector as a set (written as .arrow) until
/// it reaches this many rows, then as a bitmap (.bin), and never goes back.
inline constexpr uint64_t kDeletionBitmapThreshold = 5000;

/// The file type the reference's in-memory deletion vector has after
/// growing from the fragment's `previous` file (nullopt: no deletions yet,
/// `previous_rows` 0) to `rows` deleted rows: from empty, a bitmap at 5000
/// rows or more; a set grows into a bitmap past 5000; a bitmap stays one.
DeletionFile::Type DeletionFileTypeFor(const std::optional<DeletionFile>& previous, uint64_t previous_rows,
                                       uint64_t rows);

/// Writes `deleted` (non-empty) as fragment `fragment_id`'s deletion file of
/// `type`, named with `read_version` and a random id, and returns its
/// entry (with the row count).
Result<DeletionFile> WriteDeletionFile(const io::ObjectStore& store, uint64_t fragment_id,
                                       uint64_t read_version, const DeletionVector& deleted,
                                       DeletionFile::Type type);

/// Reads fragment `fragment_id`'s deletion file `file`, in the root or the
/// base path its base id names.
Result<DeletionVector> ReadDeletionFile(const FileLocator& files, uint64_t fragment_id, const DeletionFile& file);

}  // namespace lance::table
