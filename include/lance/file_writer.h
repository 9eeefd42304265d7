// Writing a single .lance file (versions 2.0, 2.1, 2.2).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <arrow/io/interfaces.h>
#include <arrow/record_batch.h>

#include "lance/schema.h"
#include "lance/status.h"

namespace lance {

/// The knobs of the reference's LanceFileWriter, with its defaults.
struct FileWriterOptions {
  /// "2.0", "2.1", "2.2" (also "stable" = 2.2, "legacy" is refused).
  std::string version = "2.2";
  /// Bytes a column may buffer before it encodes a page; unset = 8 MiB per
  /// column. When set, it is divided among the top-level fields.
  std::optional<uint64_t> data_cache_bytes;
  /// Largest page a column writes; unset = LANCE_FILE_WRITER_MAX_PAGE_BYTES
  /// from the environment, else 32 MiB.
  std::optional<uint64_t> max_page_bytes;
};

/// Writes one .lance file. Batches are encoded as they arrive; memory is
/// bounded by the data cache and page sizes, not by the input.
class FileWriter {
 public:
  /// `schema` carries the field ids recorded in the file (a dataset's ids
  /// for a data file); batches must have its top-level fields in order.
  static Result<std::unique_ptr<FileWriter>> Open(std::shared_ptr<arrow::io::OutputStream> out,
                                                  std::string name, const Schema& schema,
                                                  FileWriterOptions options = {});
  /// Creates a local file or arrow::fs URI: a single file, outside any
  /// dataset (a dataset's writes go through its filesystem and the stream
  /// overload above).
  static Result<std::unique_ptr<FileWriter>> Open(const std::string& path, const Schema& schema,
                                                  FileWriterOptions options = {});
  /// As above with ids assigned in pre-order from 0, as LanceFileWriter does.
  static Result<std::unique_ptr<FileWriter>> Open(const std::string& path, const arrow::Schema& schema,
                                                  FileWriterOptions options = {});
  ~FileWriter();

  /// One write_batch call of the reference. The batch is checked at once;
  /// it may be encoded in the background (on Arrow's CPU pool) while later
  /// batches arrive, so an encoding or output error can be reported by a
  /// later Write or by Finish. The batch's buffers are referenced until then.
  Status Write(const arrow::RecordBatch& batch);
  /// Schema-level metadata recorded in the file's schema.
  Status AddSchemaMetadata(const std::string& key, const std::string& value);
  /// Writes `bytes` as the file's next global buffer (after the pages
  /// written so far) and returns its index, 1 for the first: index 0 is the
  /// schema. Record the index in the schema metadata for readers to find it.
  Result<uint32_t> AddGlobalBuffer(std::string_view bytes);
  /// Flushes every column, writes the metadata and footer and closes the
  /// output. Returns the number of rows written.
  Result<uint64_t> Finish();

  uint64_t num_rows_written() const;
  /// The (major, minor) pair the footer records.
  std::pair<uint32_t, uint32_t> version_pair() const;

  struct Impl;

 private:
  explicit FileWriter(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace lance
