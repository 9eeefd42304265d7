#include "lance/scan/fragment_reader.h"
#include "lance/util/parallel.h"

#include <algorithm>

#include <arrow/api.h>
#include <arrow/array/util.h>
#include <arrow/compute/api.h>
#include <arrow/util/bitmap_ops.h>

#include "lance/file/blob_v2.h"
#include "lance/file/version.h"

namespace lance::scan {
namespace {

// One data file's part of a column: its array and the file's field.
struct StructPart {
  size_t position = 0;  // of the file in the fragment
  std::shared_ptr<arrow::Array> array;
  const Field* file = nullptr;
};

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

bool SameShape(const Field& file, const Field& dataset) {
  if (file.children.size() != dataset.children.size()) return false;
  for (size_t i = 0; i < file.children.size(); ++i) {
    if (file.children[i].id != dataset.children[i].id || !SameShape(file.children[i], dataset.children[i])) {
      return false;
    }
  }
  return true;
}

// A struct column as the dataset's schema has it now: children dropped
// from the schema (drop_columns of a.b) are left out, children the file
// does not hold are nulls, matched by field id (names may have changed).
Result<std::shared_ptr<arrow::Array>> ProjectStruct(const std::shared_ptr<arrow::Array>& array, const Field& file,
                                                    const Field& dataset, const std::shared_ptr<arrow::DataType>& type,
                                                    arrow::MemoryPool* pool) {
  // A field without children in the schema reads as the file gives it
  // (a blob column's descriptors are a struct the schema does not spell).
  // Blob v2 columns read as their descriptors, not as the schema's struct.
  if (dataset.children.empty() || file::IsBlobV2Field(dataset) || SameShape(file, dataset)) return array;
  if (array->type_id() != arrow::Type::STRUCT || type->id() != arrow::Type::STRUCT ||
      array->type()->num_fields() != static_cast<int>(file.children.size()) ||
      type->num_fields() != static_cast<int>(dataset.children.size())) {
    return Status::NotImplemented("reading column '", dataset.name, "' (", type->ToString(),
                                  "): its data file holds other sub-fields than the schema, and only structs "
                                  "are projected so far");
  }
  const auto& in = static_cast<const arrow::StructArray&>(*array);
  const auto& out_type = static_cast<const arrow::StructType&>(*type);
  std::vector<std::shared_ptr<arrow::Array>> children;
  for (size_t i = 0; i < dataset.children.size(); ++i) {
    const Field& want = dataset.children[i];
    const auto child_type = out_type.field(static_cast<int>(i))->type();
    auto it = std::find_if(file.children.begin(), file.children.end(),
                           [&](const Field& f) { return f.id == want.id; });
    if (it == file.children.end()) {
      LANCE_ASSIGN_OR_RAISE(auto nulls, arrow::MakeArrayOfNull(child_type, in.length(), pool));
      children.push_back(std::move(nulls));
      continue;
    }
    std::shared_ptr<arrow::Array> child = in.field(static_cast<int>(it - file.children.begin()));
    LANCE_ASSIGN_OR_RAISE(child, ProjectStruct(child, *it, want, child_type, pool));
    children.push_back(std::move(child));
  }
  std::shared_ptr<arrow::Buffer> validity;
  if (in.null_count() > 0) {
    LANCE_ASSIGN_OR_RAISE(validity, arrow::internal::CopyBitmap(pool, in.null_bitmap_data(), in.offset(), in.length()));
  }
  return std::make_shared<arrow::StructArray>(type, in.length(), std::move(children), std::move(validity),
                                              in.null_count());
}

// A struct column from the parts several data files hold: each child
// from the first part (in file order) whose file field has the child's id,
// recursively; children no part holds are nulls. The struct's validity is
// the first part's.
Result<std::shared_ptr<arrow::Array>> AssembleStruct(const std::vector<StructPart>& parts, const Field& dataset,
                                                     const std::shared_ptr<arrow::DataType>& type,
                                                     arrow::MemoryPool* pool) {
  if (type->id() != arrow::Type::STRUCT || static_cast<size_t>(type->num_fields()) != dataset.children.size()) {
    return Status::NotImplemented("reading column '", dataset.name, "' (", type->ToString(),
                                  "): its sub-fields are in more than one data file, and only structs are "
                                  "assembled across files");
  }
  for (const auto& p : parts) {
    if (p.array->type_id() != arrow::Type::STRUCT ||
        p.array->type()->num_fields() != static_cast<int>(p.file->children.size())) {
      return Status::Invalid("column '", dataset.name, "': a data file's part of it is not the struct its schema says");
    }
  }
  const int64_t length = parts.front().array->length();
  std::vector<std::shared_ptr<arrow::Array>> children;
  for (size_t c = 0; c < dataset.children.size(); ++c) {
    const Field& want = dataset.children[c];
    const auto child_type = type->field(static_cast<int>(c))->type();
    std::vector<StructPart> sub;
    for (const auto& p : parts) {
      const auto& kids = p.file->children;
      auto it = std::find_if(kids.begin(), kids.end(), [&](const Field& f) { return f.id == want.id; });
      if (it == kids.end()) continue;
      const auto& st = static_cast<const arrow::StructArray&>(*p.array);
      sub.push_back({p.position, st.field(static_cast<int>(it - kids.begin())), &*it});
    }
    if (sub.empty()) {
      LANCE_ASSIGN_OR_RAISE(auto nulls, arrow::MakeArrayOfNull(child_type, length, pool));
      children.push_back(std::move(nulls));
    } else if (sub.size() == 1 || want.children.empty()) {
      LANCE_ASSIGN_OR_RAISE(auto child, ProjectStruct(sub[0].array, *sub[0].file, want, child_type, pool));
      children.push_back(std::move(child));
    } else {
      LANCE_ASSIGN_OR_RAISE(auto child, AssembleStruct(sub, want, child_type, pool));
      children.push_back(std::move(child));
    }
  }
  const auto& first = static_cast<const arrow::StructArray&>(*parts.front().array);
  std::shared_ptr<arrow::Buffer> validity;
  if (first.null_count() > 0) {
    LANCE_ASSIGN_OR_RAISE(validity,
                          arrow::internal::CopyBitmap(pool, first.null_bitmap_data(), first.offset(), first.length()));
  }
  return std::make_shared<arrow::StructArray>(type, length, std::move(children), std::move(validity),
                                              first.null_count());
}

}  // namespace

Result<std::unique_ptr<FragmentReader>> FragmentReader::Open(const Dataset& dataset, const Fragment& fragment,
                                                            const std::vector<const Field*>& fields,
                                                            arrow::MemoryPool* pool, bool cache_file_readers) {
  auto reader = std::unique_ptr<FragmentReader>(new FragmentReader());
  reader->dataset_ = &dataset;
  reader->fields_ = fields;
  reader->pool_ = pool;
  LANCE_ASSIGN_OR_RAISE(reader->rows_, dataset.PhysicalRows(fragment));
  // The dataset's Arrow fields, so names, nullability and metadata match.
  LANCE_ASSIGN_OR_RAISE(auto dataset_schema, dataset.ArrowSchema());
  arrow::FieldVector out_fields;
  for (const Field* f : fields) {
    auto af = dataset_schema->GetFieldByName(f->name);
    if (af == nullptr) return Status::Invalid("dataset schema has no top-level field '", f->name, "'");
    out_fields.push_back(af);
  }
  reader->schema_ = arrow::schema(out_fields);

  // Field i read from `file` (its source opened once, shared by fields).
  auto attach = [&](const DataFile* file, size_t i) -> Status {
    auto it = std::find_if(reader->sources_.begin(), reader->sources_.end(),
                           [&](const Source& s) { return s.file == file; });
    if (it == reader->sources_.end()) {
      Source source;
      source.file = file;
      source.position = static_cast<size_t>(file - fragment.files.data());
      LANCE_ASSIGN_OR_RAISE(source.location, dataset.DataFileLocation(*file));
      LANCE_ASSIGN_OR_RAISE(auto version,
                            file::FileVersionFromPair(file->file_major_version, file->file_minor_version));
      if (version == file::FileVersion::kLegacy) {
        LANCE_ASSIGN_OR_RAISE(auto handle, dataset.OpenDataFile(*file));
        LANCE_ASSIGN_OR_RAISE(auto legacy, file::legacy::LegacyFileReader::Open(handle, source.location, pool));
        source.legacy = std::move(legacy);
      } else {
        if (cache_file_readers) {
          LANCE_ASSIGN_OR_RAISE(source.v2, dataset.OpenDataFileReader(*file, pool));
        } else {
          LANCE_ASSIGN_OR_RAISE(auto handle, dataset.OpenDataFile(*file));
          LANCE_ASSIGN_OR_RAISE(source.v2, FileReader::Open(std::move(handle), source.location, pool));
        }
        if (source.v2->num_rows() != reader->rows_) {
          return Status::Invalid("data file ", source.location, " has ", source.v2->num_rows(),
                                 " rows but its fragment has ", reader->rows_);
        }
      }
      reader->sources_.push_back(std::move(source));
      it = reader->sources_.end() - 1;
    }
    it->outputs.push_back(i);
    if (it->v2) {
      // The file's own schema carries the dataset's field ids; names may
      // differ after a rename, so match by id.
      const auto& file_fields = it->v2->schema().fields;
      auto match = std::find_if(file_fields.begin(), file_fields.end(),
                                [&](const Field& ff) { return ff.id == fields[i]->id; });
      if (match == file_fields.end()) {
        return Status::Invalid("data file ", it->location, " is listed as holding field '", fields[i]->name,
                               "' (id ", fields[i]->id, ") but its schema has no such top-level field");
      }
      it->names.push_back(match->name);
      it->file_fields.push_back(*match);
    }
    return Status::OK();
  };
  for (size_t i = 0; i < fields.size(); ++i) {
    const DataFile* file = FileHolding(fragment, *fields[i]);
    if (file == nullptr) {
      reader->null_fields_.push_back(i);
      continue;
    }
    LANCE_RETURN_NOT_OK(attach(file, i));
    // A struct's sub-fields may be in later data files too (pylance's cast
    // of a nested column, or sub-columns added with data): each file's part
    // is read, and the struct assembled from them by field id.
    if (fields[i]->children.empty()) continue;
    std::vector<int32_t> ids;
    CollectIds(*fields[i], &ids);
    for (const auto& other : fragment.files) {
      if (&other == file) continue;
      const bool holds = std::any_of(ids.begin(), ids.end(), [&](int32_t id) {
        return std::find(other.fields.begin(), other.fields.end(), id) != other.fields.end();
      });
      if (!holds) continue;
      LANCE_RETURN_NOT_OK(attach(&other, i));
      if (reader->sources_.back().legacy || std::any_of(reader->sources_.begin(), reader->sources_.end(),
                                                        [&](const Source& s) { return s.file == file && s.legacy; })) {
        return Status::NotImplemented("reading column '", fields[i]->name, "' of fragment ", fragment.id,
                                      ": its sub-fields are in more than one data file, one of them legacy");
      }
    }
  }
  std::vector<std::shared_ptr<arrow::DataType>> types;
  for (const auto& f : out_fields) types.push_back(f->type());
  LANCE_ASSIGN_OR_RAISE(reader->overlays_, OverlayResolver::Open(dataset, fragment, fields, types, pool));
  return reader;
}

uint64_t FragmentReader::EstimatedBytesPerRow() const {
  if (rows_ == 0) return 0;
  uint64_t bytes = 0;
  for (const auto& source : sources_) {
    if (source.v2) bytes += source.v2->layout().file_size;
  }
  return bytes / rows_;
}

bool FragmentReader::ReadsPagesSelectively() const {
  return std::all_of(sources_.begin(), sources_.end(),
                     [](const Source& s) { return s.v2 && s.v2->ReadsPagesSelectively(); });
}

Result<std::vector<uint64_t>> FragmentReader::ReadWindows(uint64_t target_rows) const {
  std::vector<uint64_t> bounds{0};
  const uint64_t step = std::max<uint64_t>(target_rows, 1);
  while (bounds.back() < rows_) bounds.push_back(bounds.back() + std::min(step, rows_ - bounds.back()));
  return bounds;
}

Result<std::vector<std::shared_ptr<arrow::Array>>> FragmentReader::ReadSource(Source& source, uint64_t offset,
                                                                             uint64_t count,
                                                                             const std::vector<uint64_t>* offsets) {
  std::vector<std::shared_ptr<arrow::Array>> out;
  if (source.v2 && !offsets) {
    // Slice each field from its cached window, decoding the next one when
    // the range runs past it.
    source.windows.resize(source.names.size());
    std::vector<size_t> stale;
    for (size_t k = 0; k < source.names.size(); ++k) {
      auto& [start, array] = source.windows[k];
      if (!array || offset < start || offset + count > start + static_cast<uint64_t>(array->length())) {
        array.reset();  // release the old window before decoding the next
        stale.push_back(k);
      }
    }
    // Fields decode their windows on all cores.
    LANCE_RETURN_NOT_OK(util::ParallelFor(stale.size(), [&](size_t j) -> Status {
      const size_t k = stale[j];
      LANCE_ASSIGN_OR_RAISE(source.windows[k], source.v2->ReadFieldWindow(source.names[k], offset, count));
      return Status::OK();
    }));
    for (size_t k = 0; k < source.names.size(); ++k) {
      const auto& [start, array] = source.windows[k];
      out.push_back(array->Slice(static_cast<int64_t>(offset - start), static_cast<int64_t>(count)));
    }
    return out;
  }
  if (source.v2) {
    std::shared_ptr<arrow::Table> table;
    LANCE_ASSIGN_OR_RAISE(table, source.v2->Take(source.names, *offsets));
    LANCE_ASSIGN_OR_RAISE(table, table->CombineChunks(pool_));
    for (int c = 0; c < table->num_columns(); ++c) {
      const auto& chunked = table->column(c);
      if (chunked->num_chunks() == 1) {
        out.push_back(chunked->chunk(0));
      } else {
        LANCE_ASSIGN_OR_RAISE(auto empty, arrow::MakeEmptyArray(chunked->type(), pool_));
        out.push_back(empty);
      }
    }
    return out;
  }
  // Legacy files are small and old: decode them once, then slice.
  if (!source.legacy_rows) {
    Schema projection;
    for (size_t i : source.outputs) projection.fields.push_back(*fields_[i]);
    LANCE_ASSIGN_OR_RAISE(source.legacy_rows, source.legacy->ReadAll(projection));
    if (static_cast<uint64_t>(source.legacy_rows->num_rows()) != rows_) {
      return Status::Invalid("data file ", source.location, " has ", source.legacy_rows->num_rows(),
                             " rows but its fragment has ", rows_);
    }
  }
  for (int c = 0; c < source.legacy_rows->num_columns(); ++c) {
    auto column = source.legacy_rows->column(c);
    if (offsets) {
      arrow::UInt64Builder idx(pool_);
      LANCE_RETURN_NOT_OK(idx.AppendValues(*offsets));
      std::shared_ptr<arrow::Array> indices;
      LANCE_RETURN_NOT_OK(idx.Finish(&indices));
      LANCE_ASSIGN_OR_RAISE(auto taken, arrow::compute::Take(column, indices));
      out.push_back(taken.make_array());
    } else {
      out.push_back(column->Slice(static_cast<int64_t>(offset), static_cast<int64_t>(count)));
    }
  }
  return out;
}

Result<std::shared_ptr<arrow::RecordBatch>> FragmentReader::Read(uint64_t offset, uint64_t count,
                                                                 const std::vector<uint64_t>* offsets) {
  const int64_t rows = offsets ? static_cast<int64_t>(offsets->size()) : static_cast<int64_t>(count);
  std::vector<std::shared_ptr<arrow::Array>> columns(fields_.size());
  for (size_t i : null_fields_) {
    LANCE_ASSIGN_OR_RAISE(columns[i], arrow::MakeArrayOfNull(schema_->field(static_cast<int>(i))->type(), rows, pool_));
  }
  // Each field's parts, one per data file holding some of it, in the
  // fragment's file order.
  std::vector<std::vector<StructPart>> parts(fields_.size());
  for (auto& source : sources_) {
    LANCE_ASSIGN_OR_RAISE(auto arrays, ReadSource(source, offset, count, offsets));
    for (size_t k = 0; k < source.outputs.size(); ++k) {
      if (arrays[k]->length() != rows) {
        return Status::Invalid("data file ", source.location, " gave ", arrays[k]->length(), " rows, expected ", rows);
      }
      const size_t i = source.outputs[k];
      if (!source.v2) {
        columns[i] = std::move(arrays[k]);
        continue;
      }
      parts[i].push_back({source.position, std::move(arrays[k]), &source.file_fields[k]});
    }
  }
  for (size_t i = 0; i < parts.size(); ++i) {
    if (parts[i].empty()) continue;
    const auto& type = schema_->field(static_cast<int>(i))->type();
    if (parts[i].size() == 1) {
      LANCE_ASSIGN_OR_RAISE(columns[i], ProjectStruct(parts[i][0].array, *parts[i][0].file, *fields_[i], type, pool_));
    } else {
      std::sort(parts[i].begin(), parts[i].end(),
                [](const StructPart& a, const StructPart& b) { return a.position < b.position; });
      LANCE_ASSIGN_OR_RAISE(columns[i], AssembleStruct(parts[i], *fields_[i], type, pool_));
    }
  }
  if (!overlays_->empty()) LANCE_RETURN_NOT_OK(overlays_->Apply(offset, count, offsets, &columns));
  return arrow::RecordBatch::Make(schema_, rows, columns);
}

Result<std::shared_ptr<arrow::RecordBatch>> FragmentReader::ReadRange(uint64_t offset, uint64_t count) {
  if (offset > rows_ || count > rows_ - offset) {
    return Status::IndexError("rows [", offset, ", +", count, ") are past the fragment's ", rows_, " rows");
  }
  return Read(offset, count, nullptr);
}

Result<std::shared_ptr<arrow::RecordBatch>> FragmentReader::Take(const std::vector<uint64_t>& offsets) {
  for (uint64_t o : offsets) {
    if (o >= rows_) return Status::IndexError("row ", o, " is past the fragment's ", rows_, " rows");
  }
  return Read(0, 0, &offsets);
}

}  // namespace lance::scan
