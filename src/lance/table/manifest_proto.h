// Conversions between the generated protobuf messages and lance's value types.
// Kept in one place so no other file depends on the generated classes' shape.
#pragma once

#include <string>

#include "lance/index_metadata.h"
#include "lance/manifest.h"
#include "lance/status.h"
#include "lance/file/schema_proto.h"
#include "lance/table.pb.h"

namespace lance::table {

/// `what` names the source (a file path) in error messages.
Result<Manifest> ManifestFromProto(const pb::table::Manifest& proto, const std::string& what);
pb::table::Manifest ManifestToProto(const ::lance::Manifest& manifest);

Result<::lance::Fragment> FragmentFromProto(const pb::table::DataFragment& proto,
                                            const std::string& what);
void FragmentToProto(const ::lance::Fragment& fragment, pb::table::DataFragment* proto);

/// One data overlay file of fragment `fragment_id`; its coverage bitmaps
/// are validated and kept as stored.
Result<DataOverlayFile> OverlayFromProto(const pb::table::DataOverlayFile& proto, const std::string& what,
                                         uint64_t fragment_id);
void OverlayToProto(const DataOverlayFile& overlay, pb::table::DataOverlayFile* proto);

Result<IndexMetadata> IndexMetadataFromProto(const pb::table::IndexMetadata& proto,
                                             const std::string& what);
void IndexMetadataToProto(const IndexMetadata& index, pb::table::IndexMetadata* proto);

}  // namespace lance::table
