// The v2 container: a 40-byte footer pointing at the column metadata, the
// column-metadata offset table (CMO) and the global-buffer offset table (GBO).
//   ... data ... | global buffers | ColumnMetadata x N | CMO | GBO | footer
// footer: u64 column_meta_start | u64 cmo_pos | u64 gbo_pos | u32 num_global_buffers |
//         u32 num_columns | u16 major | u16 minor | "LANC"
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <arrow/io/interfaces.h>

#include "lance/file/column_data.h"
#include "lance/file_reader.h"
#include "lance/status.h"

namespace lance::file {

inline constexpr size_t kFooterSize = 40;
inline constexpr std::string_view kMagic = "LANC";

struct Footer {
  uint64_t column_meta_start = 0;
  uint64_t cmo_table_pos = 0;
  uint64_t gbo_table_pos = 0;
  uint32_t num_global_buffers = 0;
  uint32_t num_columns = 0;
  uint16_t major = 0;
  uint16_t minor = 0;
};

/// Parses and checks the footer against the file size. `name` names the file in errors.
Result<Footer> ParseFooter(std::string_view footer_bytes, uint64_t file_size, const std::string& name);

/// Parses the column metadata, offset tables and schema given the bytes from
/// `tail_start` to the end of the file (which must include everything from
/// the first global buffer on).
Result<FileLayout> ParseLayout(const Footer& footer, std::string_view tail, uint64_t tail_start,
                               uint64_t file_size, const std::string& name);

/// Reads the footer and metadata of a file.
Result<FileLayout> ReadLayout(arrow::io::RandomAccessFile& file, const std::string& name);

/// Loads every buffer of a column's pages (and its column buffers).
Result<ColumnData> LoadColumn(arrow::io::RandomAccessFile& file, const ColumnInfo& column,
                              uint64_t file_size, const std::string& name);

}  // namespace lance::file
