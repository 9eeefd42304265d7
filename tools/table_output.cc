#include "table_output.h"

#include <cstdio>
#include <filesystem>
#include <iostream>

#include <arrow/api.h>
#include <arrow/array.h>
#include <arrow/csv/writer.h>
#include <arrow/io/file.h>
#include <arrow/io/stdio.h>
#include <arrow/ipc/writer.h>
#include <arrow/scalar.h>
#include <nlohmann/json.hpp>

#include "lance/unify_dictionaries.h"

namespace lance::cli {
namespace {

using Json = nlohmann::ordered_json;

Json ScalarToJson(const arrow::Scalar& s) {
  if (!s.is_valid) return nullptr;
  switch (s.type->id()) {
    case arrow::Type::BOOL: return static_cast<const arrow::BooleanScalar&>(s).value;
    case arrow::Type::INT8: return static_cast<const arrow::Int8Scalar&>(s).value;
    case arrow::Type::INT16: return static_cast<const arrow::Int16Scalar&>(s).value;
    case arrow::Type::INT32: return static_cast<const arrow::Int32Scalar&>(s).value;
    case arrow::Type::INT64: return static_cast<const arrow::Int64Scalar&>(s).value;
    case arrow::Type::UINT8: return static_cast<const arrow::UInt8Scalar&>(s).value;
    case arrow::Type::UINT16: return static_cast<const arrow::UInt16Scalar&>(s).value;
    case arrow::Type::UINT32: return static_cast<const arrow::UInt32Scalar&>(s).value;
    case arrow::Type::UINT64: return static_cast<const arrow::UInt64Scalar&>(s).value;
    case arrow::Type::FLOAT: return static_cast<const arrow::FloatScalar&>(s).value;
    case arrow::Type::DOUBLE: return static_cast<const arrow::DoubleScalar&>(s).value;
    case arrow::Type::STRING:
    case arrow::Type::LARGE_STRING:
      return std::string(static_cast<const arrow::BaseBinaryScalar&>(s).view());
    case arrow::Type::BINARY:
    case arrow::Type::LARGE_BINARY:
    case arrow::Type::FIXED_SIZE_BINARY: {
      // Bytes are not text: show them as hex.
      static const char* kHex = "0123456789abcdef";
      std::string out = "0x";
      for (unsigned char c : static_cast<const arrow::BaseBinaryScalar&>(s).view()) {
        out.push_back(kHex[c >> 4]);
        out.push_back(kHex[c & 15]);
      }
      return out;
    }
    case arrow::Type::LIST:
    case arrow::Type::LARGE_LIST:
    case arrow::Type::FIXED_SIZE_LIST: {
      const auto& values = *static_cast<const arrow::BaseListScalar&>(s).value;
      Json out = Json::array();
      for (int64_t i = 0; i < values.length(); ++i) {
        auto item = values.GetScalar(i);
        out.push_back(item.ok() ? ScalarToJson(**item) : Json(nullptr));
      }
      return out;
    }
    case arrow::Type::STRUCT: {
      const auto& st = static_cast<const arrow::StructScalar&>(s);
      Json out = Json::object();
      for (int i = 0; i < st.type->num_fields(); ++i) out[st.type->field(i)->name()] = ScalarToJson(*st.value[i]);
      return out;
    }
    case arrow::Type::DICTIONARY: {
      auto decoded = static_cast<const arrow::DictionaryScalar&>(s).GetEncodedValue();
      return decoded.ok() ? ScalarToJson(**decoded) : Json(nullptr);
    }
    default:
      return s.ToString();  // dates, times, decimals, binary: Arrow's text form
  }
}

Status PrintJson(arrow::RecordBatchReader& reader) {
  std::shared_ptr<arrow::RecordBatch> batch;
  while (true) {
    LANCE_RETURN_NOT_OK(reader.ReadNext(&batch));
    if (!batch) break;
    for (int64_t r = 0; r < batch->num_rows(); ++r) {
      Json row = Json::object();
      for (int c = 0; c < batch->num_columns(); ++c) {
        LANCE_ASSIGN_OR_RAISE(auto scalar, batch->column(c)->GetScalar(r));
        row[batch->schema()->field(c)->name()] = ScalarToJson(*scalar);
      }
      std::cout << row.dump(-1, ' ', false, Json::error_handler_t::replace) << "\n";
    }
  }
  return Status::OK();
}

// CSV has no nested or binary types: such columns become their JSON text.
Result<std::shared_ptr<arrow::RecordBatch>> FlattenForCsv(const std::shared_ptr<arrow::RecordBatch>& batch) {
  arrow::FieldVector fields;
  arrow::ArrayVector columns;
  for (int c = 0; c < batch->num_columns(); ++c) {
    auto col = batch->column(c);
    const auto id = col->type_id();
    const bool textual = arrow::is_nested(id) || id == arrow::Type::DICTIONARY || arrow::is_binary(id) ||
                         id == arrow::Type::LARGE_BINARY || id == arrow::Type::FIXED_SIZE_BINARY;
    if (!textual) {
      fields.push_back(batch->schema()->field(c));
      columns.push_back(col);
      continue;
    }
    arrow::StringBuilder b;
    for (int64_t r = 0; r < col->length(); ++r) {
      if (col->IsNull(r)) {
        LANCE_RETURN_NOT_OK(b.AppendNull());
        continue;
      }
      LANCE_ASSIGN_OR_RAISE(auto scalar, col->GetScalar(r));
      Json j = ScalarToJson(*scalar);
      LANCE_RETURN_NOT_OK(b.Append(j.is_string() ? j.get<std::string>()
                                                 : j.dump(-1, ' ', false, Json::error_handler_t::replace)));
    }
    std::shared_ptr<arrow::Array> text;
    LANCE_RETURN_NOT_OK(b.Finish(&text));
    fields.push_back(arrow::field(batch->schema()->field(c)->name(), arrow::utf8()));
    columns.push_back(text);
  }
  return arrow::RecordBatch::Make(arrow::schema(fields), batch->num_rows(), columns);
}

Status PrintCsv(arrow::RecordBatchReader& reader) {
  arrow::io::StdoutStream out;
  auto options = arrow::csv::WriteOptions::Defaults();
  std::shared_ptr<arrow::RecordBatch> batch;
  bool first = true;
  while (true) {
    LANCE_RETURN_NOT_OK(reader.ReadNext(&batch));
    if (!batch) break;
    LANCE_ASSIGN_OR_RAISE(auto flat, FlattenForCsv(batch));
    options.include_header = first;
    first = false;
    LANCE_RETURN_NOT_OK(arrow::csv::WriteCSV(*flat, options, &out));
  }
  return Status::OK();
}

Status WriteIpcFile(arrow::RecordBatchReader& reader, const std::string& out_path) {
  // Write beside the target, then rename: no partial file on failure.
  const std::string tmp = out_path + ".tmp-lance-cpp";
  auto write = [&]() -> Status {
    LANCE_ASSIGN_OR_RAISE(auto sink, arrow::io::FileOutputStream::Open(tmp));
    // Unified dictionaries grow from batch to batch: written as deltas.
    auto options = arrow::ipc::IpcWriteOptions::Defaults();
    options.emit_dictionary_deltas = true;
    LANCE_ASSIGN_OR_RAISE(auto writer, arrow::ipc::MakeFileWriter(sink, reader.schema(), options));
    std::shared_ptr<arrow::RecordBatch> batch;
    while (true) {
      LANCE_RETURN_NOT_OK(reader.ReadNext(&batch));
      if (!batch) break;
      LANCE_RETURN_NOT_OK(writer->WriteRecordBatch(*batch));
    }
    LANCE_RETURN_NOT_OK(writer->Close());
    return sink->Close();
  };
  Status st = write();
  std::error_code ec;
  if (!st.ok()) {
    std::filesystem::remove(tmp, ec);
    return st;
  }
  std::filesystem::rename(tmp, out_path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    return Status::IOError("cannot write ", out_path, ": ", ec.message());
  }
  return Status::OK();
}

// One cell as text: strings bare, everything else as its JSON.
std::string CellText(const arrow::Array& column, int64_t row) {
  auto scalar = column.GetScalar(row);
  if (!scalar.ok()) return "?";
  if ((*scalar)->is_valid && (*scalar)->type->id() == arrow::Type::DICTIONARY) {
    // A dictionary cell shows as its value does.
    scalar = static_cast<const arrow::DictionaryScalar&>(**scalar).GetEncodedValue();
    if (!scalar.ok()) return "?";
  }
  const auto& s = **scalar;
  if (!s.is_valid) return "null";
  if (s.type->id() == arrow::Type::STRING || s.type->id() == arrow::Type::LARGE_STRING) {
    return std::string(static_cast<const arrow::BaseBinaryScalar&>(s).view());
  }
  return ScalarToJson(s).dump();
}

// Aligned columns under a header, one line per row.
Status PrintTable(arrow::RecordBatchReader& reader) {
  LANCE_ASSIGN_OR_RAISE(auto table, reader.ToTable());
  LANCE_ASSIGN_OR_RAISE(table, table->CombineChunks());
  const int ncols = table->num_columns();
  std::vector<std::vector<std::string>> cells(static_cast<size_t>(ncols));
  std::vector<size_t> width(static_cast<size_t>(ncols));
  for (int c = 0; c < ncols; ++c) {
    const auto& name = table->schema()->field(c)->name();
    width[c] = name.size();
    if (table->column(c)->num_chunks() == 0) continue;
    const auto& column = *table->column(c)->chunk(0);
    for (int64_t r = 0; r < column.length(); ++r) {
      cells[c].push_back(CellText(column, r));
      width[c] = std::max(width[c], cells[c].back().size());
    }
  }
  auto line = [&](auto cell) {
    std::string out;
    for (int c = 0; c < ncols; ++c) {
      std::string text = cell(c);
      if (c + 1 < ncols) text.resize(width[c], ' ');
      out += (c ? "  " : "") + text;
    }
    std::cout << out << "\n";
  };
  line([&](int c) { return table->schema()->field(c)->name(); });
  line([&](int c) { return std::string(width[c], '-'); });
  for (int64_t r = 0; r < table->num_rows(); ++r) line([&](int c) { return cells[c][r]; });
  std::cout << "(" << table->num_rows() << " row" << (table->num_rows() == 1 ? "" : "s") << ")" << std::endl;
  return Status::OK();
}

}  // namespace

Status EmitResult(const std::shared_ptr<arrow::RecordBatchReader>& input, const std::string& format,
                  const std::string& out_path) {
  // Results carry each fragment's (and each 2.0 page's) own dictionaries; an
  // IPC file takes one per field, and the printers join batches.
  LANCE_ASSIGN_OR_RAISE(auto reader, UnifyDictionaries(input));
  if (!out_path.empty()) return WriteIpcFile(*reader, out_path);
  if (format == "json") return PrintJson(*reader);
  if (format == "csv") return PrintCsv(*reader);
  return PrintTable(*reader);
}

}  // namespace lance::cli
