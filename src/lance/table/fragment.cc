#include "lance/fragment.h"

#include <string>

namespace lance {

std::string DeletionFile::FileName(uint64_t fragment_id) const {
  return std::to_string(fragment_id) + "-" + std::to_string(read_version) + "-" + std::to_string(id) + "." +
         Extension();
}

std::string DeletionFile::RelativePath(uint64_t fragment_id) const { return "_deletions/" + FileName(fragment_id); }

}  // namespace lance
