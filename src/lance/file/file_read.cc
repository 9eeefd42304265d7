// FileReader::ReadAll: decodes whole top-level fields with the decoder of the
// file's version.
#include <arrow/table.h>

#include "lance/file/container.h"
#include "lance/file/v2_0/field_decoder.h"
#include "lance/file/v2_1/field_decoder.h"
#include "lance/file/version.h"
#include "lance/file_reader.h"

namespace lance {

Result<std::shared_ptr<arrow::Table>> FileReader::ReadAll(const std::vector<std::string>& columns) const {
  LANCE_ASSIGN_OR_RAISE(auto version, file::FileVersionFromPair(layout_.major_version, layout_.minor_version));
  const bool v20 = version == file::FileVersion::kV2_0;
  // 2.0 files written before pylance 0.16 stored strings as two columns,
  // which only the page encodings reveal; describe every column (without
  // loading buffers) so the 2.0 decoder can tell.
  std::vector<file::ColumnData> described;
  if (v20) {
    for (const auto& c : layout_.columns) {
      file::ColumnData d;
      d.encoding_type_url = c.encoding_type_url;
      d.encoding = c.encoding;
      for (const auto& p : c.pages) {
        file::PageData pd;
        pd.length = p.length;
        pd.priority = p.priority;
        pd.encoding_type_url = p.encoding_type_url;
        pd.encoding = p.encoding;
        d.pages.push_back(std::move(pd));
      }
      described.push_back(std::move(d));
    }
  }

  // Column ranges of the top-level fields, in schema order.
  std::vector<size_t> first_column;
  size_t next = 0;
  for (const auto& f : layout_.schema.fields) {
    first_column.push_back(next);
    if (v20) {
      std::span<const file::ColumnData> rest;
      if (next < described.size()) rest = std::span<const file::ColumnData>(described).subspan(next);
      next += static_cast<size_t>(file::v2_0::NumColumns(f, rest));
    } else {
      next += static_cast<size_t>(file::v2_1::NumColumns(f));
    }
  }
  if (next != layout_.columns.size()) {
    return Status::Invalid("corrupt lance file ", name_, ": the schema needs ", next, " columns but the file has ",
                           layout_.columns.size());
  }

  std::vector<size_t> wanted;
  if (columns.empty()) {
    for (size_t i = 0; i < layout_.schema.fields.size(); ++i) wanted.push_back(i);
  } else {
    for (const auto& name : columns) {
      size_t i = 0;
      while (i < layout_.schema.fields.size() && layout_.schema.fields[i].name != name) ++i;
      if (i == layout_.schema.fields.size()) return Status::KeyError("lance file ", name_, " has no field '", name, "'");
      wanted.push_back(i);
    }
  }

  LANCE_ASSIGN_OR_RAISE(auto full_schema, layout_.schema.ToArrow());
  arrow::FieldVector out_fields;
  arrow::ArrayVector out_arrays;
  // Blob values live outside the pages, at absolute file positions.
  auto read_range = [this](uint64_t position, uint64_t size) -> Result<std::shared_ptr<arrow::Buffer>> {
    if (position > layout_.file_size || size > layout_.file_size - position) {
      return Status::Invalid("corrupt lance file ", name_, ": blob [", position, ", +", size,
                             ") lies outside the file");
    }
    return file_->ReadAt(static_cast<int64_t>(position), static_cast<int64_t>(size));
  };
  for (size_t i : wanted) {
    const Field& field = layout_.schema.fields[i];
    const size_t n = (i + 1 < first_column.size() ? first_column[i + 1] : next) - first_column[i];
    std::vector<file::ColumnData> data;
    for (size_t c = 0; c < n; ++c) {
      LANCE_ASSIGN_OR_RAISE(auto col, file::LoadColumn(*file_, layout_.columns[first_column[i] + c],
                                                       layout_.file_size, name_));
      data.push_back(std::move(col));
    }
    std::shared_ptr<arrow::Array> array;
    if (v20) {
      LANCE_ASSIGN_OR_RAISE(array, file::v2_0::DecodeField(field, data, layout_.num_rows, pool_, read_range));
    } else {
      LANCE_ASSIGN_OR_RAISE(array,
                            file::v2_1::DecodeField(field, data, layout_.num_rows, version, pool_, read_range));
    }
    out_fields.push_back(full_schema->field(static_cast<int>(i)));
    out_arrays.push_back(std::move(array));
  }
  return arrow::Table::Make(arrow::schema(out_fields, full_schema->metadata()), out_arrays, static_cast<int64_t>(layout_.num_rows));
}

}  // namespace lance
