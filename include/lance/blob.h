// Reading the bytes of blob columns, as pylance's Dataset.take_blobs: a scan
// or take returns each row's descriptor (where the bytes live); these
// functions resolve the descriptors and read just those byte ranges.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <arrow/array/array_binary.h>
#include <arrow/memory_pool.h>

#include "lance/dataset.h"
#include "lance/status.h"

namespace lance {

/// How TakeBlobs reads its row numbers; pylance's `indices=`, `ids=` and
/// `addresses=` arguments of take_blobs.
enum class BlobRows {
  kIndices,        // offsets among live rows, in dataset order (as Take)
  kRowIds,         // stable row ids, or row addresses if the dataset has none (as TakeRows)
  kRowAddresses,   // (fragment id << 32) | physical offset
};

/// Where one row's blob bytes are: `size` bytes from `position` of a file.
struct BlobLocation {
  /// The file, for messages: a path of the dataset's filesystem, or the
  /// external URI as stored.
  std::string location;
  uint64_t position = 0;
  uint64_t size = 0;
};

/// Where the blob values of `column` are for the rows asked, in that order
/// (repeats allowed); nullopt for a null value. `column` is a top-level blob
/// column: blob v2 (2.2 datasets: inline, packed and dedicated .blob files,
/// external URIs) or the legacy blob encoding of 2.0/2.1 datasets.
/// External values of unknown size are stat'ed; nothing else is read
/// beyond the descriptors. Legacy columns: NotImplemented (their file
/// reader resolves descriptors to values itself).
Result<std::vector<std::optional<BlobLocation>>> LocateBlobs(const std::shared_ptr<const Dataset>& dataset,
                                                             const std::string& column,
                                                             const std::vector<uint64_t>& rows, BlobRows by);

/// The blob values of `column` for the rows asked, in that order; null
/// values stay null. Reads one byte range per value (external URIs: local
/// paths and file:// only; other schemes are an error).
Result<std::shared_ptr<arrow::LargeBinaryArray>> TakeBlobs(const std::shared_ptr<const Dataset>& dataset,
                                                           const std::string& column,
                                                           const std::vector<uint64_t>& rows, BlobRows by,
                                                           arrow::MemoryPool* pool = arrow::default_memory_pool());

}  // namespace lance
