// A Lance schema: fields with stable ids, as the manifest stores them.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <arrow/type_fwd.h>

#include "lance/status.h"

namespace lance {

/// One field of a Lance schema. Ids are stable across versions; `parent_id` is
/// -1 at the top level. `logical_type` is the format's type string
/// (e.g. "int32", "list.struct", "fixed_size_list:float:128").
struct Field {
  std::string name;
  int32_t id = -1;
  int32_t parent_id = -1;
  std::string logical_type;
  bool nullable = true;
  std::map<std::string, std::string> metadata;
  std::string extension_name;
  int32_t encoding = 0;                   // legacy (0.1) column encoding
  std::optional<int64_t> dictionary_offset;  // legacy dictionary location
  std::optional<int64_t> dictionary_length;
  // Legacy datasets' dictionary values (the manifest file holds them).
  std::shared_ptr<arrow::Array> dictionary_values;
  bool unenforced_primary_key = false;
  std::vector<Field> children;
};

/// A tree of fields plus schema-level metadata.
struct Schema {
  std::vector<Field> fields;
  std::map<std::string, std::string> metadata;

  /// Every field in pre-order (the manifest's storage order), children
  /// detached.
  std::vector<Field> FieldsPreOrder() const;
  /// Largest field id in the schema, or -1 if it has none.
  int32_t MaxFieldId() const;
  /// The field with `id` (first in pre-order), or nullptr.
  const Field* FieldById(int32_t id) const;
  /// The dotted path of the field with `id` ("a.b", as pylance names index
  /// fields); empty when there is none.
  std::string FieldPath(int32_t id) const;
  /// The Arrow schema this Lance schema describes.
  Result<std::shared_ptr<arrow::Schema>> ToArrow() const;
  /// Builds a Lance schema from Arrow, assigning ids in pre-order from
  /// `first_id`.
  static Result<Schema> FromArrow(const arrow::Schema& schema, int32_t first_id = 0);
};

/// The Lance logical type string of an Arrow type.
Result<std::string> LogicalTypeFromArrow(const arrow::DataType& type);
/// The Arrow type of a Lance field (its logical type and, for nested types,
/// its children).
Result<std::shared_ptr<arrow::DataType>> ArrowTypeFromField(const Field& field);

}  // namespace lance
