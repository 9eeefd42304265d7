// The seam between the container writer and the per-version encoders.
// A FieldEncoder turns the values of one top-level field into pages of one or
// more columns; the container writer writes each page's buffers as it gets
// them (64-byte aligned) and keeps only their metadata until Finish.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <arrow/array.h>
#include <arrow/buffer.h>

#include "lance/file/column_data.h"
#include "lance/file/version.h"
#include "lance/schema.h"
#include "lance/status.h"

namespace lance::file {

struct EncodedPage {
  /// Index of the column in the file (the encoder's first column + k).
  uint32_t column_index = 0;
  /// length, priority, encoding (Any type URL + serialized message) and
  /// buffers, exactly as the reader's PageData sees them.
  PageData page;
};

/// Column-level metadata an encoder hands over when the file finishes.
struct EncodedColumn {
  std::string encoding_type_url;  // empty = the default ColumnEncoding (values)
  std::string encoding;
  std::vector<std::shared_ptr<arrow::Buffer>> buffers;
};

/// Buffers a field stores outside its pages (blob values), with the file
/// positions they will have: the writer writes them, each padded to 64
/// bytes, before the pages of the same Write (or Flush).
class OutOfLineBuffers {
 public:
  explicit OutOfLineBuffers(uint64_t position) : position_(position) {}
  /// Returns the position `buffer` will be written at.
  uint64_t Add(std::shared_ptr<arrow::Buffer> buffer) {
    const uint64_t at = position_;
    const uint64_t size = static_cast<uint64_t>(buffer->size());
    position_ += size + (64 - size % 64) % 64;
    buffers_.push_back(std::move(buffer));
    return at;
  }
  /// Where the next buffer would be written.
  uint64_t next_position() const { return position_; }
  const std::vector<std::shared_ptr<arrow::Buffer>>& buffers() const { return buffers_; }

 private:
  uint64_t position_;
  std::vector<std::shared_ptr<arrow::Buffer>> buffers_;
};

struct EncoderOptions {
  FileVersion version = FileVersion::kV2_2;
  uint64_t cache_bytes_per_column = 8 * 1024 * 1024;
  uint64_t max_page_bytes = 32 * 1024 * 1024;
};

class FieldEncoder {
 public:
  virtual ~FieldEncoder() = default;
  /// Columns this field occupies in the file (consecutive, from the first
  /// column it was made with).
  virtual uint32_t num_columns() const = 0;
  /// Buffers `array` (the field's values for the next rows); returns the
  /// pages that are ready, in the order they are to be written.
  virtual Result<std::vector<EncodedPage>> Append(const std::shared_ptr<arrow::Array>& array) = 0;
  /// As Append, where `copy` is the writer's copy of `original`, the array
  /// the caller handed over (a slice keeps its offset into its parent's
  /// buffers). The reference sizes its cache and its page splits by the
  /// array it was handed, so the 2.0 encoders count `original`.
  virtual Result<std::vector<EncodedPage>> AppendCopied(const std::shared_ptr<arrow::Array>& copy,
                                                        const std::shared_ptr<arrow::Array>& original) {
    return Append(copy);
  }
  /// Encodes whatever is still buffered (called once, at Finish).
  virtual Result<std::vector<EncodedPage>> Flush() = 0;
  /// One entry per column, after Flush.
  virtual Result<std::vector<EncodedColumn>> FinishColumns() = 0;

  /// Where the next Append or Flush puts out-of-line buffers (set by the
  /// writer before each call; null when none may be made).
  void set_out_of_line_buffers(OutOfLineBuffers* buffers) { out_of_line_ = buffers; }

 protected:
  OutOfLineBuffers* out_of_line_ = nullptr;
};

/// 2.0 encoders (src/lance/file/v2_0/).
Result<std::unique_ptr<FieldEncoder>> MakeFieldEncoderV2_0(const Field& field, uint32_t first_column,
                                                           const EncoderOptions& options);
/// 2.1/2.2 structural encoders (src/lance/file/v2_1/).
Result<std::unique_ptr<FieldEncoder>> MakeFieldEncoderV2_1(const Field& field, uint32_t first_column,
                                                           const EncoderOptions& options);

}  // namespace lance::file
