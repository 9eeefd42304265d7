#include "lance/manifest.h"

namespace lance {

bool Manifest::UsesStableRowIds() const {
  // Bit 2 of the reader flags; fragments then all carry row-id sequences.
  return (reader_feature_flags & 2) != 0;
}

}  // namespace lance
