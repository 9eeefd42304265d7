// A committed transaction, read back from the inline manifest section or a
// _transactions/*.txn file.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "lance/status.h"

namespace lance::txn {

struct TransactionSummary {
  uint64_t read_version = 0;
  std::string uuid;
  std::string tag;
  /// "Append", "Delete", "Overwrite", ... as the reference names operations;
  /// "Unknown" when the oneof holds nothing this build knows.
  std::string operation;
  std::map<std::string, std::string> properties;
};

/// Parses serialized `Transaction` bytes. `what` names the source in errors.
Result<TransactionSummary> ParseTransaction(std::string_view bytes, const std::string& what);

}  // namespace lance::txn
