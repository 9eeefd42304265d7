// Blob v2 columns (2.2 datasets): the manifest describes the column as the
// logical struct<data: large_binary, uri: string> tagged with the
// extension name below, while the data file stores one packed struct per row
// describing where the bytes are — the descriptor. Scans return the
// descriptor, as the reference's to_table does.
#pragma once

#include <cstdint>
#include <string>
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

/// Where a blob v2 field's values go by size (the reference's defaults,
/// or the field's `lance-encoding:blob-*-threshold` metadata): up to
/// `inline_max` bytes inline, over `dedicated` a `.blob` file of their
/// own, in between a shared `.blob` file of at most `pack_file` bytes.
struct BlobV2Thresholds {
  uint64_t inline_max = 64 * 1024;
  uint64_t dedicated = 4 * 1024 * 1024;
  uint64_t pack_file = 1024 * 1024 * 1024;
};
BlobV2Thresholds BlobV2ThresholdsOf(const Field& field);

/// True for a manifest field holding a blob v2 column.
bool IsBlobV2Field(const Field& field);

/// The descriptor struct the data file stores for a blob v2 field `logical`:
/// same name, id and nullability, children kind/position/size/blob_id/blob_uri.
Field BlobV2DescriptorField(const Field& logical);

/// True for a data file's descriptor field: a packed blob struct.
bool IsBlobV2Descriptor(const Field& field);

/// The name of a packed or dedicated `.blob` file, inside the directory
/// named by its data file's stem: the id's 32 bits, least significant
/// first, then ".blob".
std::string BlobV2SidecarFileName(uint32_t blob_id);

}  // namespace lance::file
