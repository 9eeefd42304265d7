// Building a transaction to commit: the operation plus the version it was
// based on, serialized as the reference's `Transaction` message.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "lance/txn/operation.h"

namespace lance::txn {

/// One unit of change, ready to commit. A value: it can be inspected,
/// serialized and committed later (e.g. by another process).
struct Transaction {
  /// The version the operation read (0 when creating a dataset).
  uint64_t read_version = 0;
  /// Hyphenated v4 UUID, unique per transaction.
  std::string uuid;
  Operation operation;
  std::string tag;
  std::map<std::string, std::string> properties;

  /// A transaction with a fresh uuid.
  static Transaction Make(uint64_t read_version, Operation operation);
  /// `{read_version}-{uuid}.txn`, the name under `_transactions/`.
  std::string FileName() const;
  /// The `lance.table.Transaction` protobuf bytes, as the reference writes
  /// them (no length prefix).
  std::string Serialize() const;
};

/// A random (version 4) UUID in the 8-4-4-4-12 hex form.
std::string NewUuid();

}  // namespace lance::txn
