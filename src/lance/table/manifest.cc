#include "lance/manifest.h"

namespace lance {

std::optional<uint64_t> Manifest::NumLiveRows() const {
  uint64_t total = 0;
  for (const auto& fragment : fragments) {
    if (!fragment.physical_rows) return std::nullopt;
    uint64_t deleted = 0;
    if (fragment.deletion_file) {
      if (!fragment.deletion_file->num_deleted_rows) return std::nullopt;
      deleted = *fragment.deletion_file->num_deleted_rows;
    }
    total += *fragment.physical_rows - std::min(deleted, *fragment.physical_rows);
  }
  return total;
}

bool Manifest::UsesStableRowIds() const {
  // Bit 2 of the reader flags; fragments then all carry row-id sequences.
  return (reader_feature_flags & 2) != 0;
}

}  // namespace lance
