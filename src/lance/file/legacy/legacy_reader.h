// Reading legacy (0.1) .lance data files: the format written by pylance < 0.16
// and by data_storage_version="legacy".
//
// Layout: data pages | page table | [statistics] | dictionaries | [manifest] |
// Metadata (u32 length + protobuf) | footer (i64 metadata position, u16 major,
// u16 minor, "LANC"). Every (field, batch) has one page, found through the page
// table: i64 (position, length) pairs for every field id of a contiguous range
// times every batch. Struct fields have no pages; list fields store their
// offsets and their items are in the child's pages.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <arrow/io/interfaces.h>
#include <arrow/memory_pool.h>
#include <arrow/record_batch.h>

#include "lance/schema.h"
#include "lance/status.h"

namespace lance::file::legacy {

struct LegacyOpenOptions {
  /// The field-id range the page table covers. Datasets know it from
  /// DataFile.fields (the reference takes the first id and the largest). When
  /// unset, it comes from the schema embedded in the file; a file without one
  /// cannot be opened without it.
  std::optional<int32_t> min_field_id;
  std::optional<int32_t> max_field_id;
  /// Dictionary values by field id, for dictionary fields whose values the
  /// caller has (e.g. from the dataset manifest). Fields not listed use the
  /// dictionary the file's embedded schema points at.
  std::map<int32_t, std::shared_ptr<arrow::Array>> dictionaries;
};

/// Opens a legacy file. Projections give the fields to read with their ids
/// (from the dataset manifest; legacy files address columns by field id).
/// `name` names the file in errors. Thread-safe once opened.
///
/// Legacy files store no validity. As the reference reads them: a nullable
/// string/binary field reads an empty value as null (string dictionaries'
/// values always do); every other null comes back as whatever the writer's
/// buffer held there (0, false, zero bytes), a null list as an empty list, a
/// null struct as a valid struct.
///
/// Pages are only read from before the page table (where the writer puts
/// them); positions, lengths, offsets and dictionary keys are checked before
/// use, and a page's value count must match its batch's rows.
class LegacyFileReader {
 public:
  static Result<std::unique_ptr<LegacyFileReader>> Open(std::shared_ptr<arrow::io::RandomAccessFile> file,
                                                        std::string name, arrow::MemoryPool* pool);
  static Result<std::unique_ptr<LegacyFileReader>> Open(std::shared_ptr<arrow::io::RandomAccessFile> file,
                                                        std::string name, arrow::MemoryPool* pool,
                                                        const LegacyOpenOptions& options);
  ~LegacyFileReader();

  uint64_t num_rows() const;
  int num_batches() const;
  /// Rows in batch `batch` (0 if out of range).
  uint64_t batch_rows(int batch) const;
  /// (major, minor) from the footer: (0,1) or (0,2) (or (0,0)).
  uint16_t major_version() const { return major_; }
  uint16_t minor_version() const { return minor_; }
  /// The schema of the manifest embedded in the file, when it has one. Its
  /// dictionary offsets point into this file.
  const std::optional<Schema>& embedded_schema() const { return embedded_schema_; }
  /// The field-id range of the page table.
  int32_t min_field_id() const { return min_field_id_; }
  int32_t max_field_id() const { return max_field_id_; }

  /// Reads the given top-level fields (with their children) for all rows; the
  /// result has the Arrow types of ArrowTypeFromField.
  Result<std::shared_ptr<arrow::RecordBatch>> ReadAll(const Schema& projection) const;
  /// Reads one batch.
  Result<std::shared_ptr<arrow::RecordBatch>> ReadBatch(int batch, const Schema& projection) const;

 private:
  struct PageInfo {
    int64_t position = 0;
    int64_t length = 0;
  };
  class BatchReader;

  LegacyFileReader() = default;
  Result<PageInfo> Page(const Field& field, int batch) const;
  Result<std::shared_ptr<arrow::Schema>> ArrowSchemaOf(const Schema& projection) const;
  Result<std::shared_ptr<arrow::Array>> Dictionary(const Field& field,
                                                   const std::shared_ptr<arrow::DataType>& value_type) const;

  std::shared_ptr<arrow::io::RandomAccessFile> file_;
  std::string name_;
  arrow::MemoryPool* pool_ = nullptr;
  uint16_t major_ = 0;
  uint16_t minor_ = 0;
  uint64_t file_size_ = 0;
  uint64_t metadata_position_ = 0;
  uint64_t page_table_position_ = 0;
  std::vector<int32_t> batch_offsets_;
  int32_t min_field_id_ = 0;
  int32_t max_field_id_ = -1;
  std::vector<PageInfo> page_table_;  // [(field - min) * num_batches + batch]
  std::optional<Schema> embedded_schema_;
  std::map<int32_t, std::shared_ptr<arrow::Array>> given_dictionaries_;
  mutable std::mutex dictionaries_mu_;
  mutable std::map<int32_t, std::shared_ptr<arrow::Array>> loaded_dictionaries_;
};

/// Reads dictionary values stored the legacy way: `length` values of
/// `value_type` at `offset` (integers plain; strings/binary as var-binary, with
/// empty values read as null, as the reference does). For dictionaries kept in
/// a legacy manifest file; `name` names the file in errors.
Result<std::shared_ptr<arrow::Array>> ReadLegacyDictionary(arrow::io::RandomAccessFile* file,
                                                           const std::string& name,
                                                           const std::shared_ptr<arrow::DataType>& value_type,
                                                           int64_t offset, int64_t length,
                                                           arrow::MemoryPool* pool);

}  // namespace lance::file::legacy
