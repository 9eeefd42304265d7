#include "lance/index_metadata.h"

#include <string>

namespace lance {

std::string IndexMetadata::UuidString() const {
  static const char* kHex = "0123456789abcdef";
  std::string out;
  out.reserve(36);
  for (size_t i = 0; i < uuid.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out.push_back('-');
    out.push_back(kHex[uuid[i] >> 4]);
    out.push_back(kHex[uuid[i] & 0xF]);
  }
  return out;
}

}  // namespace lance
