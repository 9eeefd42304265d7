// Writing legacy (0.1) .lance data files, laid out byte for byte as pylance
// 14's v1 writer lays them out (data_storage_version="legacy"):
//   pages of every (field, row group) | page table | statistics pages and
//   their page table | manifest (u32 length + protobuf, the file's schema) |
//   Metadata (u32 length + protobuf) | i64 metadata position, u16 0, u16 2, "LANC"
// Rows are cut into row groups of max_rows_per_group (the reference buffers
// its input into groups of exactly that size; the last group of a file may
// be shorter). Legacy files store no validity: nulls are written as whatever
// the input's buffers hold there, as the reference does.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <arrow/io/interfaces.h>
#include <arrow/record_batch.h>

#include "lance/schema.h"
#include "lance/status.h"

namespace lance::file::legacy {

/// Whether a legacy file can hold `schema`: OK, or NotImplemented naming the
/// first field whose type lance-cpp does not write as legacy.
Status CheckLegacyWritable(const Schema& schema);

/// Appends legacy dictionary `values` to `out`, as if written at file
/// position `base` (binary values: bytes, then absolute positions); returns
/// the offset a field's dictionary records (the positions for binary values).
Result<int64_t> AppendLegacyDictionary(const arrow::Array& values, int64_t base, std::string* out);

/// Writes one legacy file. Not thread-safe.
class LegacyFileWriter {
 public:
  /// `schema` carries the dataset's field ids; batches must have its
  /// top-level fields in order. `name` names the file in errors.
  static Result<std::unique_ptr<LegacyFileWriter>> Open(std::shared_ptr<arrow::io::OutputStream> out,
                                                        std::string name, const Schema& schema,
                                                        uint64_t max_rows_per_group);
  ~LegacyFileWriter();

  /// Buffers rows; every full row group is written at once.
  Status Write(const std::shared_ptr<arrow::RecordBatch>& batch);
  /// Writes the last row group, the footer and closes the output. Returns
  /// the number of rows written.
  Result<uint64_t> Finish();

  /// Dictionary values by field id: the schema's, or else the data's.
  const std::map<int32_t, std::shared_ptr<arrow::Array>>& dictionaries() const;

  /// The (major, minor) pair the footer records: (0, 2).
  static constexpr std::pair<uint32_t, uint32_t> kVersionPair{0, 2};

 private:
  class Impl;
  explicit LegacyFileWriter(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace lance::file::legacy
