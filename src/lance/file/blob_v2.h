// Blob v2 columns (2.2 datasets): the manifest describes the column as the
// logical struct<data: large_binary, uri: string> tagged with the
// extension name below, while the data file stores one packed struct per row
// describing where the bytes are — the descriptor. Scans return the
// descriptor, as the reference's to_table does.
#pragma once

#include <string_view>

#include "lance/schema.h"

namespace lance::file {

inline constexpr std::string_view kBlobV2ExtensionName = "lance.blob.v2";

/// Where a blob v2 value's bytes live (the descriptor's `kind`).
enum class BlobV2Kind : uint8_t {
  kInline = 0,     // an out-of-line buffer of the data file itself
  kPacked = 1,     // a slice of a shared `.blob` file beside the data file
  kDedicated = 2,  // a `.blob` file of its own
  kExternal = 3,   // a URI outside the dataset
};

/// True for a manifest field holding a blob v2 column.
bool IsBlobV2Field(const Field& field);

/// The descriptor struct the data file stores for a blob v2 field `logical`:
/// same name, id and nullability, children kind/position/size/blob_id/blob_uri.
Field BlobV2DescriptorField(const Field& logical);

/// True for a data file's descriptor field: a packed blob struct.
bool IsBlobV2Descriptor(const Field& field);

}  // namespace lance::file
