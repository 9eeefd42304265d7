// Blob columns in 2.1+ files: each non-empty value is written out of line
// (64-byte aligned, before the pages of the same write) and the page holds
// a packed {position, size} description per level, wrapped in a BlobLayout
// that carries the blob's rep/def layers. A null keeps its def level in the
// position (def << 16, size 0); an empty value is {0, 0}.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <arrow/array.h>

#include "lance/file/field_encoder.h"
#include "lance/file/v2_1/repdef.h"
#include "lance/status.h"

namespace lance::file::v2_1 {

/// The key that makes a large_binary field a blob column (the reference
/// looks only for its presence, whatever the value).
inline constexpr const char* kBlobMetadataKey = "lance-encoding:blob";

/// The encoder of one blob leaf column.
class BlobLeafEncoder {
 public:
  /// `name` is the leaf's (for messages and the description field).
  static Result<std::unique_ptr<BlobLeafEncoder>> Make(std::string name, bool nullable, uint32_t column,
                                                       const EncoderOptions& options);

  /// Encodes the values of the next rows: one per level (no repetition),
  /// `def` their def levels in `layers` (empty if all 0). Non-empty values
  /// go to `out_of_line`. Returns the pages that are ready.
  Result<std::vector<EncodedPage>> Append(const arrow::LargeBinaryArray& values, const std::vector<uint16_t>& def,
                                          const std::vector<Layer>& layers, OutOfLineBuffers* out_of_line);
  Result<std::vector<EncodedPage>> Flush();
  Result<std::vector<EncodedColumn>> FinishColumns();

 private:
  BlobLeafEncoder(std::string name, std::unique_ptr<FieldEncoder> descriptions)
      : name_(std::move(name)), descriptions_(std::move(descriptions)) {}
  Status Wrap(std::vector<EncodedPage> inner, const std::vector<Layer>& layers, std::vector<EncodedPage>* out) const;

  std::string name_;
  std::unique_ptr<FieldEncoder> descriptions_;
  std::optional<std::vector<Layer>> layers_;  // of the buffered descriptions
};

}  // namespace lance::file::v2_1
