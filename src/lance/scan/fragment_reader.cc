#include "lance/scan/fragment_reader.h"

#include <algorithm>
#include <map>

#include <arrow/api.h>
#include <arrow/array/util.h>

#include "lance/file/legacy/legacy_reader.h"
#include "lance/file/version.h"
#include "lance/file_reader.h"

namespace lance::scan {
namespace {

void CollectIds(const Field& field, std::vector<int32_t>* ids) {
  ids->push_back(field.id);
  for (const auto& child : field.children) CollectIds(child, ids);
}

// The first data file of the fragment that holds `field`. Files list the ids
// of the fields they hold, which for 2.1+ files are only the leaves, so a
// nested field is found by any of its descendants' ids.
const DataFile* FileHolding(const Fragment& fragment, const Field& field) {
  std::vector<int32_t> ids;
  CollectIds(field, &ids);
  for (const auto& file : fragment.files) {
    for (int32_t id : ids) {
      if (std::find(file.fields.begin(), file.fields.end(), id) != file.fields.end()) return &file;
    }
  }
  return nullptr;
}

// Reads `fields` (dataset fields, all held by `file`) from one data file.
Result<std::vector<std::shared_ptr<arrow::Array>>> ReadFromFile(const Dataset& dataset, const DataFile& file,
                                                               const std::vector<const Field*>& fields,
                                                               uint64_t physical_rows, arrow::MemoryPool* pool) {
  LANCE_ASSIGN_OR_RAISE(const std::string location, dataset.DataFileLocation(file));
  LANCE_ASSIGN_OR_RAISE(auto handle, dataset.OpenDataFile(file));
  LANCE_ASSIGN_OR_RAISE(auto version, file::FileVersionFromPair(file.file_major_version, file.file_minor_version));
  std::vector<std::shared_ptr<arrow::Array>> out;
  if (version == file::FileVersion::kLegacy) {
    LANCE_ASSIGN_OR_RAISE(auto reader, file::legacy::LegacyFileReader::Open(handle, location, pool));
    Schema projection;
    for (const Field* f : fields) projection.fields.push_back(*f);
    LANCE_ASSIGN_OR_RAISE(auto batch, reader->ReadAll(projection));
    for (int i = 0; i < batch->num_columns(); ++i) out.push_back(batch->column(i));
  } else {
    LANCE_ASSIGN_OR_RAISE(auto reader, FileReader::Open(handle, location, pool));
    // The file's own schema carries the dataset's field ids; names may differ
    // after a rename, so match by id.
    std::vector<std::string> names;
    for (const Field* f : fields) {
      auto it = std::find_if(reader->schema().fields.begin(), reader->schema().fields.end(),
                             [&](const Field& ff) { return ff.id == f->id; });
      if (it == reader->schema().fields.end()) {
        return Status::Invalid("data file ", location, " is listed as holding field '", f->name, "' (id ", f->id,
                               ") but its schema has no such top-level field");
      }
      names.push_back(it->name);
    }
    LANCE_ASSIGN_OR_RAISE(auto table, reader->ReadAll(names));
    LANCE_ASSIGN_OR_RAISE(table, table->CombineChunks(pool));
    for (int i = 0; i < table->num_columns(); ++i) {
      auto chunked = table->column(i);
      if (chunked->num_chunks() == 1) {
        out.push_back(chunked->chunk(0));
      } else {
        LANCE_ASSIGN_OR_RAISE(auto empty, arrow::MakeEmptyArray(chunked->type(), pool));
        out.push_back(empty);
      }
    }
  }
  for (auto& array : out) {
    if (static_cast<uint64_t>(array->length()) != physical_rows) {
      return Status::Invalid("data file ", location, " has ", array->length(), " rows but its fragment has ",
                             physical_rows);
    }
  }
  return out;
}

}  // namespace

Result<std::shared_ptr<arrow::RecordBatch>> ReadFragmentFields(const Dataset& dataset, const Fragment& fragment,
                                                                const std::vector<const Field*>& fields,
                                                                arrow::MemoryPool* pool) {
  LANCE_ASSIGN_OR_RAISE(uint64_t rows, dataset.PhysicalRows(fragment));
  std::vector<std::shared_ptr<arrow::Array>> columns(fields.size());
  // Group the fields by the file that holds them so each file opens once.
  std::map<const DataFile*, std::vector<size_t>> by_file;
  for (size_t i = 0; i < fields.size(); ++i) {
    if (const DataFile* file = FileHolding(fragment, *fields[i])) {
      by_file[file].push_back(i);
    } else {
      LANCE_ASSIGN_OR_RAISE(auto type, ArrowTypeFromField(*fields[i]));
      LANCE_ASSIGN_OR_RAISE(columns[i], arrow::MakeArrayOfNull(type, static_cast<int64_t>(rows), pool));
    }
  }
  for (const auto& [file, indexes] : by_file) {
    std::vector<const Field*> wanted;
    for (size_t i : indexes) wanted.push_back(fields[i]);
    LANCE_ASSIGN_OR_RAISE(auto arrays, ReadFromFile(dataset, *file, wanted, rows, pool));
    for (size_t k = 0; k < indexes.size(); ++k) columns[indexes[k]] = std::move(arrays[k]);
  }
  // The dataset's Arrow fields, so names, nullability and metadata match.
  LANCE_ASSIGN_OR_RAISE(auto dataset_schema, dataset.ArrowSchema());
  arrow::FieldVector out_fields;
  for (const Field* f : fields) {
    auto af = dataset_schema->GetFieldByName(f->name);
    if (af == nullptr) return Status::Invalid("dataset schema has no top-level field '", f->name, "'");
    out_fields.push_back(af);
  }
  return arrow::RecordBatch::Make(arrow::schema(out_fields), static_cast<int64_t>(rows), columns);
}

}  // namespace lance::scan
