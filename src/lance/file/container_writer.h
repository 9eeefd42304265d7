// Writes the v2 container around encoded pages: page buffers as they arrive
// (each padded to 64 bytes), then at Finish the column buffers, the schema
// (global buffer 0), the column metadata, the CMO and GBO tables and the
// footer, in the order the reference writer uses.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <arrow/io/interfaces.h>

#include "lance/file.pb.h"
#include "lance/file/field_encoder.h"
#include "lance/file/version.h"
#include "lance/file2.pb.h"
#include "lance/status.h"

namespace lance::file {

/// Page buffers (and column and extra global buffers) start at multiples of this.
inline constexpr uint64_t kPageBufferAlignment = 64;
/// The byte the reference pads buffers with.
inline constexpr uint8_t kPadByte = 72;

/// The (major, minor) pair a v2 footer records: 2.0 files say (0, 3).
std::pair<uint16_t, uint16_t> FooterVersionPair(FileVersion version);

/// Not thread-safe.
class ContainerWriter {
 public:
  /// `name` names the output in errors.
  ContainerWriter(std::shared_ptr<arrow::io::OutputStream> out, std::string name, uint32_t num_columns,
                  FileVersion version);

  /// Writes buffers stored outside pages, each padded to 64 bytes, at the
  /// positions an OutOfLineBuffers started at position() promised.
  Status WriteOutOfLine(const OutOfLineBuffers& buffers);
  /// Writes the page's buffers and records it in its column's metadata.
  Status WritePage(const EncodedPage& page);
  /// Writes the column-level buffers and the column encoding of `column`.
  /// An empty type URL records the default column encoding (plain values).
  Status FinishColumn(uint32_t column, const EncodedColumn& encoded);
  /// Writes `size` bytes as the next global buffer, padded, at the current
  /// position (as the reference's add_global_buffer); returns its index
  /// (1, 2, ...: 0 is the schema, written at Finish).
  Result<uint32_t> AddGlobalBuffer(const void* data, uint64_t size);
  /// Writes the schema, column metadata, offset tables and footer and closes
  /// the output.
  Status Finish(const pb::file::FileDescriptor& descriptor);
  /// Closes the output without finishing (after an error).
  void Abort();

  uint64_t position() const { return position_; }
  /// Buffers are padded to a multiple of `alignment` bytes (1..64; 64
  /// unless set) with `byte` (kPadByte unless set): the reference's binary
  /// copy pads 2.1+ files with zeros and does not pad 2.0 files.
  void set_padding(uint64_t alignment, uint8_t byte) {
    alignment_ = alignment == 0 || alignment > kPageBufferAlignment ? kPageBufferAlignment : alignment;
    pad_byte_ = byte;
  }

 private:
  Status WriteRaw(const void* data, uint64_t size);
  Status FlushPending();
  Status WritePadded(const void* data, uint64_t size);
  Status WriteU64(uint64_t v);

  std::shared_ptr<arrow::io::OutputStream> out_;
  std::string name_;
  FileVersion version_;
  uint64_t position_ = 0;
  uint64_t alignment_ = kPageBufferAlignment;
  uint8_t pad_byte_ = kPadByte;
  // Small writes (padding, short pages, metadata) gathered into one write
  // call: a file is otherwise tens of thousands of tiny system calls.
  std::vector<uint8_t> pending_;
  std::vector<pb::file2::ColumnMetadata> columns_;
  std::vector<std::pair<uint64_t, uint64_t>> global_buffers_;  // after the schema's: position, size
};

}  // namespace lance::file
