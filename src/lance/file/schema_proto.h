// Schema fields as stored in protobuf (manifests and v2 file descriptors):
// flattened in pre-order with parent links.
#pragma once

#include <string>

#include "lance/file.pb.h"
#include "lance/schema.h"
#include "lance/status.h"

namespace lance::file {

/// Rebuilds the field tree. A child attaches to the first field (in
/// pre-order) with its parent id, as the reference does when ids repeat.
/// `what` names the source in error messages.
Result<Schema> SchemaFromProtoFields(
    const google::protobuf::RepeatedPtrField<pb::file::Field>& fields,
    const google::protobuf::Map<std::string, std::string>& metadata, const std::string& what);
void SchemaToProtoFields(const Schema& schema,
                         google::protobuf::RepeatedPtrField<pb::file::Field>* fields);

}  // namespace lance::file
