// A column of a v2.x file with its page buffers loaded: what the per-version
// field decoders consume. Produced by the file reader from the column
// metadata; knows nothing of how pages are encoded.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <arrow/buffer.h>

namespace lance::file {

struct PageData {
  /// Rows in the page (2.1+), or values in the page (2.0; items for the
  /// column of a list's child).
  uint64_t length = 0;
  uint64_t priority = 0;
  /// The page encoding: the Any's type URL (e.g. "/lance.encodings21.PageLayout")
  /// and its serialized message.
  std::string encoding_type_url;
  std::string encoding;
  /// The page's buffers, in the order the column metadata lists them.
  std::vector<std::shared_ptr<arrow::Buffer>> buffers;
};

struct ColumnData {
  /// The column encoding ("/lance.encodings.ColumnEncoding"), may be empty.
  std::string encoding_type_url;
  std::string encoding;
  std::vector<PageData> pages;
  /// Column-level buffers (buffer_type = column in 2.0 encodings).
  std::vector<std::shared_ptr<arrow::Buffer>> buffers;
};

}  // namespace lance::file
