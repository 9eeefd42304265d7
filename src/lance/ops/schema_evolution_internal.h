// Pieces of schema evolution shared with its unit tests. Internal to
// src/lance/ops.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <arrow/type_fwd.h>

#include "lance/manifest.h"
#include "lance/schema.h"
#include "lance/status.h"

namespace lance::ops {

/// The reference's Manifest::max_field_id: the largest field id of the
/// schema and of every data file's `fields` (so ids of dropped columns
/// still held by a file are never handed out again); -1 when none.
int32_t MaxFieldId(const Manifest& manifest);

/// `fields` as Lance fields with ids from MaxFieldId(manifest) + 1 on, in
/// pre-order (the reference's set_field_id).
Result<Schema> NewFieldsSchema(const Manifest& manifest, const arrow::FieldVector& fields);

/// The field at `path` ("a" or "a.b", names matched exactly), or null;
/// `*siblings` gets the list it is in.
Field* FindFieldByPath(Schema* schema, const std::string& path, std::vector<Field>** siblings);
/// The same, read-only.
const Field* FindFieldByPath(const Schema& schema, const std::string& path);

/// Refuses two fields of the same name under one parent (as the
/// reference's Schema::validate).
Status ValidateUniqueNames(const std::vector<Field>& fields);

}  // namespace lance::ops
