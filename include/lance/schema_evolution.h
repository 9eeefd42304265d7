// Schema evolution, as pylance's LanceDataset.add_columns / drop_columns /
// alter_columns: the options of the builders Dataset::NewAddColumns,
// NewDropColumns and NewAlterColumns (lance/dataset_ops.h). Each commits
// one transaction on the version the dataset was opened at and is not
// re-run on a conflict (pylance commits them once): a retryable conflict
// is returned as such.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <arrow/type_fwd.h>

namespace lance {

struct SchemaEvolutionOptions {
  /// Commit attempts while other writers take the next version first
  /// (CommitConfig num_retries, default 20).
  uint32_t num_retries = 20;
};

/// One change of alter_columns (the reference's ColumnAlteration).
struct ColumnAlteration {
  /// The column, nested ones as "a.b".
  std::string path;
  /// New name (of the last part of `path`); unset = unchanged.
  std::optional<std::string> rename;
  /// New nullability; unset = unchanged. Making a column non-nullable
  /// scans it and is refused if it holds a null.
  std::optional<bool> nullable;
  /// New type; null = unchanged. Within the reference's type families
  /// (integers, floats, temporal types, strings, binaries, booleans), a
  /// top-level column without an index: it is rewritten under a new field
  /// id. Nested columns, decimals and lists are refused (NotImplemented).
  std::shared_ptr<arrow::DataType> data_type;
};

}  // namespace lance
