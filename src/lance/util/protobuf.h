// Parsing protobuf messages from untrusted bytes.
#pragma once

#include <climits>
#include <cstddef>
#include <string_view>

#include <google/protobuf/stubs/logging.h>

namespace lance::util {

/// Parses `bytes` into `message`. Corrupt input (including invalid UTF-8 in
/// string fields, which protobuf would log) is reported only through the
/// return value: callers turn it into a Status naming the file. Inputs too
/// large for protobuf's int sizes are refused rather than truncated.
template <typename Message>
bool ParseMessage(std::string_view bytes, Message* message) {
  if (bytes.size() > static_cast<size_t>(INT_MAX)) return false;
  google::protobuf::LogSilencer silence;
  return message->ParseFromArray(bytes.data(), static_cast<int>(bytes.size()));
}

}  // namespace lance::util
