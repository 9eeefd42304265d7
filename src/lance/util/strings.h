// Small string checks shared across layers.
#pragma once

#include <algorithm>
#include <cctype>
#include <string_view>

namespace lance::util {

/// Whether `s` is a non-empty run of ASCII digits (a version number or an id
/// as written, not a name).
inline bool AllDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
}

}  // namespace lance::util
