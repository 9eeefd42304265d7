// Schema evolution as pylance 14 commits it: add_columns (new data files
// per fragment, or the schema only for all-null columns; a Merge),
// drop_columns and alter_columns (renames, nullability; a Project).
#include <arrow/api.h>
#include <arrow/compute/api.h>
#include <arrow/compute/exec.h>

#include <algorithm>
#include <limits>
#include <functional>
#include <set>

#include "lance/dataset_internal.h"
#include "lance/dataset_ops.h"
#include "lance/ops/dataset_ops_internal.h"
#include "lance/ops/fragment_writer.h"
#include "lance/ops/schema_evolution_internal.h"
#include "lance/scan/filter_parser.h"
#include "lance/scan/fragment_reader.h"
#include "lance/scanner.h"
#include "lance/txn/commit.h"

namespace lance {
namespace ops {

int32_t MaxFieldId(const Manifest& manifest) {
  int32_t out = manifest.schema.MaxFieldId();
  for (const auto& fragment : manifest.fragments) {
    for (const auto& file : fragment.files) {
      for (int32_t id : file.fields) out = std::max(out, id);
    }
  }
  return out;
}

Result<Schema> NewFieldsSchema(const Manifest& manifest, const arrow::FieldVector& fields) {
  LANCE_ASSIGN_OR_RAISE(auto out, Schema::FromArrow(arrow::Schema(fields), MaxFieldId(manifest) + 1));
  out.metadata.clear();
  return out;
}

Field* FindFieldByPath(Schema* schema, const std::string& path, std::vector<Field>** siblings) {
  std::vector<Field>* level = &schema->fields;
  Field* found = nullptr;
  size_t start = 0;
  while (true) {
    const size_t dot = path.find('.', start);
    const std::string part = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    auto it = std::find_if(level->begin(), level->end(), [&](const Field& f) { return f.name == part; });
    if (it == level->end()) return nullptr;
    if (siblings) *siblings = level;
    found = &*it;
    if (dot == std::string::npos) return found;
    level = &found->children;
    start = dot + 1;
  }
}

Status ValidateUniqueNames(const std::vector<Field>& fields) {
  std::set<std::string> seen;
  for (const auto& f : fields) {
    if (!seen.insert(f.name).second) return Status::Invalid("Duplicate field name \"", f.name, "\" in schema");
    LANCE_RETURN_NOT_OK(ValidateUniqueNames(f.children));
  }
  return Status::OK();
}

}  // namespace ops

namespace {

// Rows per batch of pylance's fragment updater (LANCE_DEFAULT_BATCH_SIZE
// unset): physical rows, of which the live ones are evaluated.
constexpr uint64_t kUpdaterBatchRows = 1024;

Result<std::shared_ptr<Dataset>> CommitSchemaChange(const Dataset& dataset, txn::Operation op,
                                                    const SchemaEvolutionOptions& options) {
  const txn::BaseVersion base = ops::BaseVersionOf(dataset);
  txn::CommitOptions commit;
  commit.latest = &base;
  commit.num_retries = static_cast<int>(std::max<uint32_t>(options.num_retries, 1));
  auto t = txn::Transaction::Make(dataset.version(), std::move(op));
  LANCE_ASSIGN_OR_RAISE(auto result, ops::CommitTransaction(*DatasetAccess::Store(dataset), std::move(t), commit));
  return ops::AtVersion(dataset, result.version, std::move(result));
}

// pylance 14's check_field_conflict at the top level: a new column of an
// existing name is refused, by its type (a struct onto a struct would add
// sub-columns, which lance-cpp does not do yet).
// The data files a Merge adds (the last file of each fragment it lists):
// removed when it is not committed.
void RemoveNewFiles(const Dataset& dataset, const std::vector<Fragment>& fragments) {
  for (const auto& f : fragments) {
    if (!f.files.empty()) (void)DatasetAccess::Store(dataset)->Delete("data/" + f.files.back().path);
  }
}

Result<std::shared_ptr<Dataset>> CommitWithNewFiles(const Dataset& dataset, txn::Merge merge,
                                                    const SchemaEvolutionOptions& options) {
  std::vector<Fragment> written = merge.fragments;
  auto committed = CommitSchemaChange(dataset, std::move(merge), options);
  // Only a conflict proves nothing was committed; otherwise the files may be
  // referenced and are left for cleanup.
  if (!committed.ok() && txn::IsCommitConflict(committed.status())) RemoveNewFiles(dataset, written);
  return committed;
}

Status CheckNewNames(const Dataset& dataset, const arrow::FieldVector& fields, const std::string& what) {
  LANCE_ASSIGN_OR_RAISE(auto schema, dataset.ArrowSchema());
  std::set<std::string> seen;
  for (const auto& field : fields) {
    const std::string& name = field->name();
    if (auto existing = schema->GetFieldByName(name)) {
      if (existing->type()->id() == arrow::Type::STRUCT && field->type()->id() == arrow::Type::STRUCT) {
        return Status::NotImplemented(what, ": adding sub-columns to struct column ", name,
                                      " is not implemented in lance-cpp yet");
      }
      if (existing->type()->Equals(*field->type())) {
        return Status::Invalid(what, ": Column ", name, " already exists in the dataset");
      }
      return Status::Invalid(what, ": Type conflicts between ", name, "(", existing->type()->ToString(), ") and ",
                             name, "(", field->type()->ToString(), ")");
    }
    if (!seen.insert(name).second) return Status::Invalid(what, ": column ", name, " is given twice");
  }
  return Status::OK();
}

// The values of the new columns for one fragment, as pylance's updater
// computes them: each batch of physical rows is evaluated on its live rows,
// and each deleted row takes the batch's first value (the reference's
// add_blanks).
struct SqlColumn {
  std::string name;
  scan::NewColumnValue value;
  std::string error_prefix;  // of evaluation errors ("Cast error: " for a cast, as pylance)
};

// The reference's blank plans (pylance 14, v2 files): a deleted row of a
// fixed-width column copies the batch's first value; of a variable-width
// one it is null when the column is nullable, else empty.
Result<std::shared_ptr<arrow::Array>> AddBlanks(const std::shared_ptr<arrow::Array>& values,
                                                const std::vector<bool>& is_deleted, bool nullable,
                                                uint64_t fragment_id) {
  const auto id = values->type_id();
  const bool var_width = id == arrow::Type::STRING || id == arrow::Type::LARGE_STRING ||
                         id == arrow::Type::BINARY || id == arrow::Type::LARGE_BINARY;
  const bool fixed_width = arrow::is_fixed_width(id) && id != arrow::Type::DICTIONARY &&
                           id != arrow::Type::EXTENSION;
  if (!var_width && !fixed_width) {
    return Status::NotImplemented("fragment ", fragment_id, " has deleted rows, and filling them in a new column of type ",
                                  values->type()->ToString(), " as pylance does is not implemented yet");
  }
  std::shared_ptr<arrow::Array> source = values;
  uint32_t filler = 0;
  if (var_width) {
    std::shared_ptr<arrow::Array> blank;
    if (nullable) {
      LANCE_ASSIGN_OR_RAISE(blank, arrow::MakeArrayOfNull(values->type(), 1));
    } else {
      LANCE_ASSIGN_OR_RAISE(auto empty, arrow::MakeScalar(values->type(), std::string()));
      LANCE_ASSIGN_OR_RAISE(blank, arrow::MakeArrayFromScalar(*empty, 1));
    }
    LANCE_ASSIGN_OR_RAISE(source, arrow::Concatenate({values, blank}));
    filler = static_cast<uint32_t>(values->length());
  }
  arrow::UInt32Builder idx;
  uint32_t at = 0;
  for (bool deleted : is_deleted) LANCE_RETURN_NOT_OK(idx.Append(deleted ? filler : at++));
  std::shared_ptr<arrow::Array> indices;
  LANCE_RETURN_NOT_OK(idx.Finish(&indices));
  LANCE_ASSIGN_OR_RAISE(auto taken, arrow::compute::Take(source, indices));
  return taken.make_array();
}

Result<DataFile> WriteFragmentColumns(const Dataset& dataset, const Fragment& fragment,
                                      const std::vector<SqlColumn>& columns,
                                      const std::vector<const Field*>& read_fields, const Schema& new_fields,
                                      const std::shared_ptr<arrow::Schema>& out_schema,
                                      const std::string& storage_version) {
  const auto& store = DatasetAccess::Store(dataset);
  LANCE_ASSIGN_OR_RAISE(auto reader,
                        scan::FragmentReader::Open(dataset, fragment, read_fields, arrow::default_memory_pool()));
  LANCE_ASSIGN_OR_RAISE(auto deleted, dataset.DeletedRows(fragment));
  ops::FragmentWriterOptions writer_options;
  writer_options.storage_version = storage_version;
  // One data file per fragment, whatever its size.
  writer_options.max_rows_per_file = std::numeric_limits<uint64_t>::max();
  writer_options.max_bytes_per_file = std::numeric_limits<uint64_t>::max();
  ops::FragmentWriter writer(*store, new_fields, std::move(writer_options));
  auto written = [&]() -> Result<std::vector<Fragment>> {
    const uint64_t rows = reader->num_rows();
    size_t next_deleted = 0;
    // A batch whose rows are all deleted has no value of its own to copy:
    // as pylance 14's updater, its blanks copy the first live value of the
    // last batch that had one, or, before any, of the next one.
    std::vector<std::shared_ptr<arrow::Array>> source;  // one row per column
    uint64_t pending = 0;                               // blanks waiting for a source
    auto write_blanks = [&](uint64_t n) -> Status {
      std::vector<bool> blank(n, true);
      blank.push_back(false);  // the source row itself, dropped below
      std::vector<std::shared_ptr<arrow::Array>> arrays;
      for (size_t i = 0; i < columns.size(); ++i) {
        LANCE_ASSIGN_OR_RAISE(auto values, AddBlanks(source[i], blank, columns[i].value.nullable, fragment.id));
        arrays.push_back(values->Slice(0, static_cast<int64_t>(n)));
      }
      return writer.Write(arrow::RecordBatch::Make(out_schema, static_cast<int64_t>(n), arrays));
    };
    for (uint64_t start = 0; start < rows; start += kUpdaterBatchRows) {
      const uint64_t count = std::min(kUpdaterBatchRows, rows - start);
      std::vector<uint64_t> live;
      std::vector<bool> is_deleted(count, false);
      for (uint64_t r = start; r < start + count; ++r) {
        while (next_deleted < deleted.size() && deleted[next_deleted] < r) ++next_deleted;
        if (next_deleted < deleted.size() && deleted[next_deleted] == r) {
          is_deleted[r - start] = true;
        } else {
          live.push_back(r);
        }
      }
      if (live.empty()) {
        if (source.empty()) {
          pending += count;
        } else {
          LANCE_RETURN_NOT_OK(write_blanks(count));
        }
        continue;
      }
      LANCE_ASSIGN_OR_RAISE(auto batch, reader->Take(live));
      const arrow::compute::ExecBatch input(*batch);
      std::vector<std::shared_ptr<arrow::Array>> arrays;
      std::vector<std::shared_ptr<arrow::Array>> first;
      for (const auto& c : columns) {
        auto datum = arrow::compute::ExecuteScalarExpression(c.value.expr, input);
        if (!datum.ok()) {
          return Status::Invalid(c.error_prefix, "column ", c.name, ": ", datum.status().message());
        }
        std::shared_ptr<arrow::Array> values;
        if (datum->is_scalar()) {
          LANCE_ASSIGN_OR_RAISE(values, arrow::MakeArrayFromScalar(*datum->scalar(), batch->num_rows()));
        } else {
          values = datum->make_array();
        }
        first.push_back(values->Slice(0, 1));
        if (live.size() < count) {
          LANCE_ASSIGN_OR_RAISE(values, AddBlanks(values, is_deleted, c.value.nullable, fragment.id));
        }
        arrays.push_back(std::move(values));
      }
      source = std::move(first);
      if (pending > 0) {
        LANCE_RETURN_NOT_OK(write_blanks(pending));
        pending = 0;
      }
      LANCE_RETURN_NOT_OK(writer.Write(arrow::RecordBatch::Make(out_schema, static_cast<int64_t>(count), arrays)));
    }
    if (pending > 0) {
      return Status::Invalid("fragment ", fragment.id, " has no live row; a fragment whose rows are all deleted "
                                                       "should have left the manifest");
    }
    return writer.Finish();
  }();
  if (!written.ok()) {
    writer.RemoveFiles();
    return written.status();
  }
  if (written->size() != 1 || written->front().files.size() != 1) {
    writer.RemoveFiles();
    return Status::Invalid("fragment ", fragment.id, ": expected one data file for the new columns, got ",
                           written->size());
  }
  return written->front().files.front();
}

}  // namespace

// Every fragment with one new data file holding `columns` (the fields of
// `new_fields`, with their ids), computed from the columns they name.
Result<std::vector<Fragment>> WriteNewColumns(const Dataset& ds, std::vector<SqlColumn> columns,
                                              const Schema& new_fields, const std::string& storage_version,
                                              const std::string& what) {
  const Manifest& m = ds.manifest();
  // Only the columns the expressions name are read, and only once each.
  std::vector<std::string> read_names;
  for (const auto& c : columns) {
    for (const auto& n : scan::FilterColumns(c.value.expr)) {
      if (std::find(read_names.begin(), read_names.end(), n) == read_names.end()) read_names.push_back(n);
    }
  }
  std::vector<const Field*> read_fields;
  arrow::FieldVector read_arrow;
  LANCE_ASSIGN_OR_RAISE(auto ds_arrow, ds.ArrowSchema());
  for (const auto& f : m.schema.fields) {
    if (std::find(read_names.begin(), read_names.end(), f.name) == read_names.end()) continue;
    read_fields.push_back(&f);
    read_arrow.push_back(ds_arrow->GetFieldByName(f.name));
  }
  // The expressions bind to the columns read, in the reader's order.
  const arrow::Schema read_schema(read_arrow);
  for (auto& c : columns) {
    auto rebound = c.value.expr.Bind(read_schema);
    if (!rebound.ok()) return Status::Invalid(what, ": column ", c.name, ": ", rebound.status().message());
    c.value.expr = std::move(*rebound);
  }
  LANCE_ASSIGN_OR_RAISE(auto out_schema, new_fields.ToArrow());
  std::vector<Fragment> out;
  for (const auto& fragment : m.fragments) {
    auto file = WriteFragmentColumns(ds, fragment, columns, read_fields, new_fields, out_schema, storage_version);
    if (!file.ok()) {
      RemoveNewFiles(ds, out);
      return file.status().WithMessage(what, ": ", file.status().message());
    }
    Fragment updated = fragment;
    updated.files.push_back(std::move(*file));
    out.push_back(std::move(updated));
  }
  return out;
}

// ---- add_columns ----

Result<std::shared_ptr<Dataset>> AddColumnsBuilder::Commit() {
  const Dataset& ds = *dataset_;
  const std::string what = "add columns to " + ds.uri();
  LANCE_RETURN_NOT_OK(ops::CheckWritable(ds));
  if (sql_.empty() && nulls_.empty()) return Status::Invalid(what, ": no column to add");
  if (!sql_.empty() && !nulls_.empty()) {
    return Status::Invalid(what, ": columns from SQL expressions and all-null columns are added in separate "
                                 "calls, as pylance takes one kind or the other");
  }
  LANCE_ASSIGN_OR_RAISE(auto storage_version, ds.DataStorageVersion());
  const Manifest& m = ds.manifest();

  txn::Merge merge;
  arrow::FieldVector new_arrow;
  std::vector<SqlColumn> columns;
  if (!nulls_.empty()) {
    for (const auto& f : nulls_) {
      if (!f->nullable()) {
        return Status::Invalid(what, ": All-null columns must be nullable, but field '", f->name(), "' is not.");
      }
      new_arrow.push_back(f);
    }
    if (storage_version == "0.1") {
      return Status::NotImplemented(what, ": Cannot add all-null columns to legacy dataset version.");
    }
    LANCE_RETURN_NOT_OK(CheckNewNames(ds, new_arrow, what));
    merge.fragments = m.fragments;
  } else {
    LANCE_ASSIGN_OR_RAISE(auto schema, ds.ArrowSchema());
    for (const auto& [name, sql] : sql_) {
      auto value = scan::ParseNewColumn(sql, *schema);
      if (!value.ok()) return Status::Invalid(what, ": ", name, " = ", sql, ": ", value.status().message());
      new_arrow.push_back(arrow::field(name, value->type, value->nullable));
      columns.push_back({name, std::move(*value), ""});
    }
    LANCE_RETURN_NOT_OK(CheckNewNames(ds, new_arrow, what));
  }
  LANCE_ASSIGN_OR_RAISE(Schema new_fields, ops::NewFieldsSchema(m, new_arrow));
  merge.schema = m.schema;
  for (const auto& f : new_fields.fields) {
    merge.schema.fields.push_back(f);
    // pylance 14: a required field new to the schema is a nullability change.
    if (!f.nullable) merge.preserves_nullability = false;
  }

  if (!columns.empty()) {
    LANCE_ASSIGN_OR_RAISE(merge.fragments, WriteNewColumns(ds, std::move(columns), new_fields, storage_version, what));
    return CommitWithNewFiles(ds, std::move(merge), options_);
  }
  return CommitSchemaChange(ds, std::move(merge), options_);
}

// ---- drop_columns ----

Result<std::shared_ptr<Dataset>> DropColumnsBuilder::Commit() {
  const Dataset& ds = *dataset_;
  const std::string what = "drop columns of " + ds.uri();
  LANCE_RETURN_NOT_OK(ops::CheckWritable(ds));
  if (columns_.empty()) return Status::Invalid(what, ": no column to drop");
  Schema schema = ds.manifest().schema;
  for (const auto& path : columns_) {
    if (ops::FindFieldByPath(&schema, path, nullptr) == nullptr) {
      Schema original = ds.manifest().schema;
      const bool existed = ops::FindFieldByPath(&original, path, nullptr) != nullptr;
      if (!existed) return Status::Invalid(what, ": Column ", path, " does not exist in the dataset");
      continue;  // named twice, or below a column already dropped
    }
    std::vector<Field>* siblings = nullptr;
    Field* field = ops::FindFieldByPath(&schema, path, &siblings);
    const std::string name = field->name;
    std::erase_if(*siblings, [&](const Field& f) { return f.name == name; });
    // A struct left without children goes too.
    const size_t dot = path.rfind('.');
    if (dot != std::string::npos && siblings->empty()) {
      std::vector<Field>* parent_siblings = nullptr;
      Field* parent = ops::FindFieldByPath(&schema, path.substr(0, dot), &parent_siblings);
      if (parent != nullptr) {
        const std::string parent_name = parent->name;
        std::erase_if(*parent_siblings, [&](const Field& f) { return f.name == parent_name; });
      }
    }
  }
  if (schema.fields.empty()) return Status::Invalid(what, ": Cannot drop all columns from a dataset");
  txn::Project project;
  project.schema = std::move(schema);
  return CommitSchemaChange(ds, std::move(project), options_);
}

// ---- alter_columns ----

namespace {

// Whether the top-level column `name` holds a null in any live row.
Result<bool> HasNulls(const std::shared_ptr<const Dataset>& dataset, const std::string& name) {
  ScanOptions scan;
  scan.columns = {name};
  LANCE_ASSIGN_OR_RAISE(auto reader, ScanBuilder(dataset).Options(scan).ToReader());
  while (true) {
    std::shared_ptr<arrow::RecordBatch> batch;
    LANCE_RETURN_NOT_OK(reader->ReadNext(&batch));
    if (!batch) return false;
    if (batch->num_columns() > 0 && batch->column(0)->null_count() > 0) return true;
  }
}

// The reference's cast rule: within one family of types (integers, floats,
// temporal types, strings, binaries; booleans to booleans), a top-level
// column, no index on it.
Status CheckCast(const Dataset& ds, const Field& src, const ColumnAlteration& a, const std::string& what) {
  if (a.path.find('.') != std::string::npos) {
    return Status::NotImplemented(what, ": casting the nested column \"", a.path,
                                  "\" is not implemented in lance-cpp yet");
  }
  LANCE_ASSIGN_OR_RAISE(auto from, ArrowTypeFromField(src));
  const auto& to = a.data_type;
  auto family = [](const arrow::DataType& t) -> int {
    const auto id = t.id();
    if (arrow::is_integer(id)) return 1;
    if (arrow::is_floating(id)) return 2;
    if (arrow::is_temporal(id)) return 3;
    if (id == arrow::Type::BOOL) return 4;
    if (id == arrow::Type::STRING || id == arrow::Type::LARGE_STRING) return 5;
    if (id == arrow::Type::BINARY || id == arrow::Type::LARGE_BINARY) return 6;
    return 0;
  };
  const bool decimal_or_list = arrow::is_decimal(from->id()) || arrow::is_list_like(from->id());
  if (decimal_or_list) {
    return Status::NotImplemented(what, ": casting column \"", a.path, "\" of type ", from->ToString(),
                                  " is not implemented in lance-cpp yet");
  }
  if (family(*from) == 0 || family(*from) != family(*to) ||
      (arrow::is_temporal(from->id()) && !arrow::compute::CanCast(*from, *to))) {
    return Status::Invalid(what, ": Cannot cast column \"", a.path, "\" from ", from->ToString(), " to ",
                           to->ToString());
  }
  for (const auto& index : ds.indices()) {
    if (std::find(index.fields.begin(), index.fields.end(), src.id) != index.fields.end()) {
      return Status::Invalid(what, ": Cannot cast column(s) [", src.name, "] to a new type: index '", index.name,
                             "' is attached; drop the index before altering, then recreate it after the cast");
    }
  }
  return Status::OK();
}

}  // namespace

Result<std::shared_ptr<Dataset>> AlterColumnsBuilder::Commit() {
  const Dataset& ds = *dataset_;
  const std::string what = "alter columns of " + ds.uri();
  LANCE_RETURN_NOT_OK(ops::CheckWritable(ds));
  if (alterations_.empty()) return Status::Invalid(what, ": no alteration given");
  Schema schema = ds.manifest().schema;
  bool tightens = false;
  int32_t next_id = ops::MaxFieldId(ds.manifest()) + 1;
  std::vector<std::pair<Field, Field>> casts;  // old, new
  for (const auto& a : alterations_) {
    Schema original = ds.manifest().schema;
    const Field* src = ops::FindFieldByPath(&original, a.path, nullptr);
    if (src == nullptr) return Status::Invalid(what, ": Column \"", a.path, "\" does not exist in the dataset");
    if (a.data_type) LANCE_RETURN_NOT_OK(CheckCast(ds, *src, a, what));
    if (a.nullable && !*a.nullable && src->nullable) {
      if (a.path.find('.') != std::string::npos) {
        return Status::NotImplemented(what, ": making the nested column \"", a.path,
                                      "\" non-nullable is not implemented in lance-cpp yet");
      }
      LANCE_ASSIGN_OR_RAISE(bool nulls, HasNulls(dataset_, a.path));
      if (nulls) {
        return Status::Invalid(what, ": Column \"", a.path, "\" contains NULL values and cannot be made non-nullable");
      }
      tightens = true;
    }
    // The same field in the schema being built (an earlier rename may have
    // changed its path): found by id.
    std::function<Field*(std::vector<Field>&)> by_id = [&](std::vector<Field>& fields) -> Field* {
      for (auto& f : fields) {
        if (f.id == src->id) return &f;
        if (Field* c = by_id(f.children)) return c;
      }
      return nullptr;
    };
    Field* dest = by_id(schema.fields);
    if (a.rename) dest->name = *a.rename;
    if (a.nullable) dest->nullable = *a.nullable;
    if (a.data_type) {
      // The column under a new field id (the reference's set_id from
      // max_field_id + 1, one alteration after the other); its metadata
      // does not carry over.
      LANCE_ASSIGN_OR_RAISE(Schema cast, Schema::FromArrow(arrow::Schema({arrow::field(dest->name, a.data_type,
                                                                                       dest->nullable)}),
                                                           next_id));
      next_id = cast.MaxFieldId() + 1;
      Field old = *src;
      *dest = cast.fields[0];
      casts.emplace_back(std::move(old), *dest);
    }
  }
  if (auto st = ops::ValidateUniqueNames(schema.fields); !st.ok()) return st.WithMessage(what, ": ", st.message());
  if (!casts.empty()) {
    if (tightens) {
      return Status::Invalid(what, ": cannot make a column non-nullable and cast columns in the same call: apply "
                                   "the cast first, then the nullability change");
    }
    LANCE_ASSIGN_OR_RAISE(auto storage_version, ds.DataStorageVersion());
    LANCE_ASSIGN_OR_RAISE(auto ds_arrow, ds.ArrowSchema());
    Schema new_fields;
    std::vector<SqlColumn> columns;
    txn::Merge merge;
    for (const auto& [old, cast] : casts) {
      new_fields.fields.push_back(cast);
      LANCE_ASSIGN_OR_RAISE(auto type, ArrowTypeFromField(cast));
      // As arrow-rs with safe: false: an overflow is an error, not a null;
      // a finer time unit is truncated.
      arrow::compute::CastOptions options = arrow::compute::CastOptions::Safe(type);
      options.allow_time_truncate = true;
      scan::NewColumnValue value;
      value.expr = arrow::compute::call("cast", {arrow::compute::field_ref(old.name)}, options);
      value.type = type;
      value.nullable = cast.nullable;
      columns.push_back({cast.name, std::move(value), "Cast error: "});
      // A required recast field is a nullability change (pylance 14).
      if (!cast.nullable) merge.preserves_nullability = false;
    }
    LANCE_ASSIGN_OR_RAISE(auto fragments, WriteNewColumns(ds, std::move(columns), new_fields, storage_version, what));
    // Files left with no field of the new schema leave their fragments.
    std::set<int32_t> live;
    for (const auto& f : schema.FieldsPreOrder()) live.insert(f.id);
    std::vector<Fragment> written = fragments;
    for (auto& f : fragments) {
      std::erase_if(f.files, [&](const DataFile& file) {
        return std::none_of(file.fields.begin(), file.fields.end(), [&](int32_t id) { return live.count(id) > 0; });
      });
    }
    merge.fragments = std::move(fragments);
    merge.schema = std::move(schema);
    auto committed = CommitSchemaChange(ds, std::move(merge), options_);
    if (!committed.ok() && txn::IsCommitConflict(committed.status())) RemoveNewFiles(ds, written);
    return committed;
  }
  txn::Project project;
  project.schema = std::move(schema);
  project.preserves_nullability = !tightens;
  return CommitSchemaChange(ds, std::move(project), options_);
}

AddColumnsBuilder Dataset::NewAddColumns() const { return AddColumnsBuilder(shared_from_this()); }
DropColumnsBuilder Dataset::NewDropColumns(std::vector<std::string> columns) const {
  return DropColumnsBuilder(shared_from_this(), std::move(columns));
}
AlterColumnsBuilder Dataset::NewAlterColumns() const { return AlterColumnsBuilder(shared_from_this()); }

}  // namespace lance
