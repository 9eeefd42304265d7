// Blob v2 columns (2.2 files): each row of the logical struct<data, uri>
// becomes a descriptor {kind, position, size, blob_id, blob_uri} encoded as
// a packed struct; inline bytes go out of line into the data file itself.
// Rows the dataset writer already put into .blob files or resolved as
// external URIs arrive with their kind, blob id, size, position (and
// blob_uri); an unresolved URI is refused.
#pragma once

#include <memory>

#include "lance/file/field_encoder.h"
#include "lance/schema.h"
#include "lance/status.h"

namespace lance::file::v2_1 {

/// The encoder of a blob v2 field (`logical` as the manifest has it).
Result<std::unique_ptr<FieldEncoder>> MakeBlobV2Encoder(const Field& logical, uint32_t first_column,
                                                        const EncoderOptions& options);

}  // namespace lance::file::v2_1
