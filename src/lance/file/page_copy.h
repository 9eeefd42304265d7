// Binary copy: a v2 file made of other v2 files' pages, their bytes copied
// rather than decoded and encoded again (pylance 14's compaction_mode
// try_binary_copy / force_binary_copy). Each input's columns are copied in
// turn, column by column (pages, then column buffers), each buffer padded to
// 64 bytes (2.1+, with zeros; 2.0 buffers unpadded); page priorities shift by the rows of the inputs before; the
// footer (schema, column metadata, offset tables) is written anew by the
// container writer.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <arrow/io/interfaces.h>

#include "lance/file/container_writer.h"
#include "lance/file/version.h"
#include "lance/file_reader.h"
#include "lance/schema.h"
#include "lance/status.h"

namespace lance::file {

/// Not thread-safe.
class PageCopyWriter {
 public:
  /// `name` names the output in errors; `num_columns` and `version` are the
  /// inputs' (every input must have them).
  PageCopyWriter(std::shared_ptr<arrow::io::OutputStream> out, std::string name, uint32_t num_columns,
                 FileVersion version);

  /// Columns whose pages are not copied but merged into one: a 2.0
  /// struct's column holds a single page without buffers saying how many
  /// rows the file has, so the output keeps the first input's page with
  /// the total rows (as the reference's copy does).
  void SetRowCountColumns(std::set<uint32_t> columns) { row_count_columns_ = std::move(columns); }

  /// Appends every row of the input `file` (whose metadata is `layout`,
  /// named `file_name` in errors). Its column encodings must be those of the
  /// first input: their column buffers are concatenated.
  Status Append(arrow::io::RandomAccessFile& file, const FileLayout& layout, const std::string& file_name);
  /// Writes the footer, with `schema` (the dataset's) as the file schema,
  /// and closes the output. Returns the rows written.
  Result<uint64_t> Finish(const Schema& schema);
  /// Closes the output without finishing (after an error).
  void Abort() { container_.Abort(); }

  uint64_t rows() const { return rows_; }

 private:
  ContainerWriter container_;
  std::string name_;
  uint32_t num_columns_;
  FileVersion version_;
  uint64_t rows_ = 0;
  std::set<uint32_t> row_count_columns_;
  std::map<uint32_t, PageData> row_count_pages_;  // the first input's, per such column
  // The first input's column encodings (type URL, message), per column.
  std::vector<std::pair<std::string, std::string>> column_encodings_;
};

}  // namespace lance::file
