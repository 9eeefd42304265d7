// The field encoders of file version 2.0 (the reference's "legacy" field
// encoders): a primitive field is one column; a list is an offsets column
// followed by its items' columns; a struct is a header column followed by
// its children's columns.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include <arrow/array.h>

#include "lance/file/field_encoder.h"
#include "lance/schema.h"
#include "lance/status.h"

namespace lance::file::v2_0 {

inline constexpr const char* kBlobMetaKey = "lance-encoding:blob";
inline constexpr const char* kPackedStructMetaKey = "lance-encoding:packed";
inline constexpr const char* kPackedStructLegacyMetaKey = "packed";

/// Buffers arrays until they hold more than `cache_bytes`, as the reference's
/// AccumulationQueue.
class AccumulationQueue {
 public:
  explicit AccumulationQueue(uint64_t cache_bytes) : cache_bytes_(cache_bytes) {}
  /// The arrays of a page once `array` pushes the queue over its limit.
  /// `memory` is what the reference counts for it (see ArrayMemorySize).
  std::optional<arrow::ArrayVector> Insert(std::shared_ptr<arrow::Array> array, uint64_t memory);
  /// Whatever is buffered, if anything.
  std::optional<arrow::ArrayVector> Flush();
  bool empty() const { return arrays_.empty(); }

 private:
  uint64_t cache_bytes_;
  uint64_t current_bytes_ = 0;
  arrow::ArrayVector arrays_;
};

class LegacyFieldEncoder {
 public:
  virtual ~LegacyFieldEncoder() = default;
  virtual uint32_t num_columns() const = 0;
  /// The pages `array` completes, in the order the reference emits them.
  /// `unsliced` is the array `array` was sliced from (its buffers are what
  /// the reference counts), or null if it is not a slice.
  virtual Result<std::vector<EncodedPage>> Append(const std::shared_ptr<arrow::Array>& array,
                                                  const std::shared_ptr<arrow::Array>& unsliced) = 0;
  /// Encodes what is buffered (a list also calls this on its items when its
  /// offsets page fills).
  virtual Result<std::vector<EncodedPage>> FlushData() = 0;
  /// Pages written when the file finishes (struct headers; they have no buffers).
  virtual void AddFinalPages(std::vector<EncodedPage>* pages) = 0;
  /// The column-level encodings of its columns, in order.
  virtual void AddColumns(std::vector<EncodedColumn>* columns) = 0;
};

/// State a field's encoders share with the writer during one call.
struct EncodeContext {
  OutOfLineBuffers* out_of_line = nullptr;
};

/// The encoder of `field` and its children, from column `*next_column` on
/// (advanced past its columns).
Result<std::unique_ptr<LegacyFieldEncoder>> MakeLegacyFieldEncoder(const Field& field, uint32_t* next_column,
                                                                   const EncoderOptions& options,
                                                                   const std::shared_ptr<EncodeContext>& context);

std::unique_ptr<LegacyFieldEncoder> MakePrimitiveEncoder(const Field& field, uint32_t column,
                                                         const EncoderOptions& options);
std::unique_ptr<LegacyFieldEncoder> MakeListEncoder(const Field& field, uint32_t column,
                                                    std::unique_ptr<LegacyFieldEncoder> items,
                                                    const EncoderOptions& options);
/// A large_binary field with `lance-encoding:blob` metadata: values go out of
/// line, the column holds packed {position, size} descriptions.
std::unique_ptr<LegacyFieldEncoder> MakeBlobEncoder(const Field& field, uint32_t column, const EncoderOptions& options,
                                                    std::shared_ptr<EncodeContext> context);
std::unique_ptr<LegacyFieldEncoder> MakeStructEncoder(const Field& field, uint32_t column,
                                                      std::vector<std::unique_ptr<LegacyFieldEncoder>> children);

}  // namespace lance::file::v2_0
