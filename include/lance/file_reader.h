// Reading a single .lance file (versions 2.0, 2.1, 2.2).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <arrow/io/interfaces.h>
#include <arrow/memory_pool.h>
#include <arrow/table.h>

#include "lance/schema.h"
#include "lance/status.h"

namespace lance {

namespace file {
class PageCutsCache;
}  // namespace file

/// A byte range of the file.
struct BufferRange {
  uint64_t position = 0;
  uint64_t size = 0;
};

/// One page of a column, as the column metadata describes it.
struct PageInfo {
  uint64_t length = 0;    // rows (2.1+) or values (2.0)
  uint64_t priority = 0;  // first row of the page (2.1+)
  std::string encoding_type_url;
  std::string encoding;   // the serialized encoding message
  std::vector<BufferRange> buffers;
};

struct ColumnInfo {
  std::string encoding_type_url;
  std::string encoding;
  std::vector<PageInfo> pages;
  std::vector<BufferRange> buffers;  // column-level buffers
};

/// Everything the footer and metadata sections of a v2 file say.
struct FileLayout {
  uint16_t major_version = 0;
  uint16_t minor_version = 0;
  std::string version;  // "2.0", "2.1", "2.2"
  uint64_t num_rows = 0;
  uint64_t file_size = 0;
  Schema schema;
  std::vector<ColumnInfo> columns;
  std::vector<BufferRange> global_buffers;  // 0 holds the schema
};

/// An open .lance file. Thread-safe once opened.
class FileReader {
 public:
  /// Opens a local path or arrow::fs URI: a single file, outside any
  /// dataset (a dataset's data files are opened through its filesystem,
  /// Dataset::OpenDataFileReader).
  static Result<std::shared_ptr<FileReader>> Open(const std::string& path,
                                                  arrow::MemoryPool* pool = arrow::default_memory_pool());
  /// Opens an already open file; `name` is used in error messages.
  static Result<std::shared_ptr<FileReader>> Open(std::shared_ptr<arrow::io::RandomAccessFile> file,
                                                  std::string name,
                                                  arrow::MemoryPool* pool = arrow::default_memory_pool());

  const FileLayout& layout() const { return layout_; }
  const Schema& schema() const { return layout_.schema; }
  uint64_t num_rows() const { return layout_.num_rows; }
  Result<std::shared_ptr<arrow::Schema>> ArrowSchema() const { return layout_.schema.ToArrow(); }

  /// Reads every row of the named top-level fields (all fields if empty).
  Result<std::shared_ptr<arrow::Table>> ReadAll(const std::vector<std::string>& columns = {}) const;

  /// Rows [offset, offset + count). For 2.1+ files only the bytes holding
  /// those rows are read and decoded: whole pages, or for the layouts that
  /// allow it (full-zip rows, mini-block chunks, constant pages, also inside
  /// fixed-size lists of structs) the part of a page that holds them; of a
  /// mini-block chunk only the kept values are expanded where the encoding
  /// allows (FSST strings, bit-packed integers). 2.0 files, whose list pages
  /// do not align with rows, decode whole fields.
  Result<std::shared_ptr<arrow::Table>> ReadRange(const std::vector<std::string>& columns, uint64_t offset,
                                                  uint64_t count) const;

  /// The smallest run of rows of one top-level field that contains
  /// [offset, offset + count) and can be decoded on its own (whole pages, or
  /// cut where the layout allows; the whole field for 2.0 files), decoded.
  /// Returns its first row and the array. Lets a sequential reader decode
  /// each part of each field once while slicing windows of its own choosing.
  Result<std::pair<uint64_t, std::shared_ptr<arrow::Array>>> ReadFieldWindow(const std::string& column,
                                                                             uint64_t offset,
                                                                             uint64_t count) const;

  /// Rows at `offsets` (ascending; repeats allowed), in that order, reading
  /// only the bytes that hold them: in 2.1+ files as ReadRange does, in 2.0
  /// files value by value (strings and lists through their offsets).
  Result<std::shared_ptr<arrow::Table>> Take(const std::vector<std::string>& columns,
                                             const std::vector<uint64_t>& offsets) const;

  /// The bytes of global buffer `index` (0 holds the schema; writers put
  /// other data, such as an index's extra sections, in the ones after it).
  Result<std::shared_ptr<arrow::Buffer>> ReadGlobalBuffer(size_t index) const;

  /// Whether ReadRange/Take read only the pages they need (file version 2.1+).
  bool ReadsPagesSelectively() const;

  /// Row boundaries 0 = b0 < b1 < ... = num_rows that cut the named fields
  /// only where their pages can be cut (between pages, or between chunks or
  /// rows of pages that allow it), each window holding at least
  /// `target_rows` rows (but the last): reading window by window decodes
  /// every byte once. 2.0 files give the single window [0, num_rows).
  Result<std::vector<uint64_t>> ReadWindows(const std::vector<std::string>& columns, uint64_t target_rows) const;

 private:
  FileReader(std::shared_ptr<arrow::io::RandomAccessFile> file, std::string name, FileLayout layout,
             arrow::MemoryPool* pool);
  std::shared_ptr<arrow::io::RandomAccessFile> file_;
  std::string name_;
  FileLayout layout_;
  arrow::MemoryPool* pool_;
  // Where pages can be cut, found on first use.
  std::shared_ptr<file::PageCutsCache> cuts_;
};

}  // namespace lance
