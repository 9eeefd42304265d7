// Schema evolution as pylance 14 commits it: add_columns (new data files
// per fragment, or the schema only for all-null columns; a Merge),
// drop_columns and alter_columns (renames, nullability: a Project; casts,
// nested children included: new data files, a Merge).
#include <arrow/api.h>
#include <arrow/compute/api.h>
#include <arrow/compute/exec.h>
#include <arrow/util/bitmap_ops.h>
#include <arrow/util/decimal.h>

#include <algorithm>
#include <limits>
#include <optional>
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

const Field* FindFieldByPath(const Schema& schema, const std::string& path) {
  // The lookup changes nothing; only the caller of the other form may.
  return FindFieldByPath(const_cast<Schema*>(&schema), path, nullptr);
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

// pylance 14's check_field_conflict: a new field of an existing name is
// refused (by its type: "already exists", "Type conflicts"), except a
// struct onto a struct, whose children are checked the same way (lists'
// items too); what is left are sub-columns added to the struct, which
// files before 2.2 cannot hold.
Status CheckFieldConflict(const arrow::Field& left, const arrow::Field& right, const std::string& version,
                          const std::string& what) {
  if (left.name() != right.name()) return Status::OK();
  const auto& l = *left.type();
  const auto& r = *right.type();
  if (l.id() == arrow::Type::STRUCT && r.id() == arrow::Type::STRUCT) {
    if (version == "0.1" || version == "2.0" || version == "2.1") {
      return Status::Invalid(what, ": Column ", left.name(), " is a struct col, add sub column is not supported in "
                             "Lance file version ", version);
    }
    auto packed = [](const arrow::Field& f) {
      const auto& md = f.metadata();
      if (!md) return false;
      if (auto v = md->Get("packed"); v.ok()) {
        std::string t = *v;
        std::transform(t.begin(), t.end(), t.begin(), [](unsigned char c) { return std::tolower(c); });
        return t == "1" || t == "true" || t == "yes" || t == "y" || t == "on";
      }
      return md->Contains("lance-encoding:packed");
    };
    if (packed(left) || packed(right)) {
      return Status::Invalid(what, ": Column ", left.name(), " is packed struct and already exists in the dataset");
    }
    for (const auto& lc : l.fields()) {
      if (auto rc = static_cast<const arrow::StructType&>(r).GetFieldByName(lc->name())) LANCE_RETURN_NOT_OK(CheckFieldConflict(*lc, *rc, version, what));
    }
    return Status::OK();
  }
  if (l.id() == r.id() &&
      (l.id() == arrow::Type::LIST || l.id() == arrow::Type::LARGE_LIST || l.id() == arrow::Type::FIXED_SIZE_LIST)) {
    return CheckFieldConflict(*l.field(0), *r.field(0), version, what);
  }
  if (l.Equals(r)) return Status::Invalid(what, ": Column ", left.name(), " already exists in the dataset");
  return Status::Invalid(what, ": Type conflicts between ", left.name(), "(", l.ToString(), ") and ", right.name(), "(",
                         r.ToString(), ")");
}

// Whether any new field lands in an existing struct (sub-columns).
bool AddsSubColumns(const arrow::Schema& schema, const arrow::FieldVector& fields) {
  for (const auto& f : fields) {
    if (auto existing = schema.GetFieldByName(f->name())) {
      if (existing->type()->id() == arrow::Type::STRUCT && f->type()->id() == arrow::Type::STRUCT) return true;
    }
  }
  return false;
}

Status CheckNewNames(const Dataset& dataset, const arrow::FieldVector& fields, const std::string& what) {
  LANCE_ASSIGN_OR_RAISE(auto schema, dataset.ArrowSchema());
  LANCE_ASSIGN_OR_RAISE(auto version, dataset.DataStorageVersion());
  std::set<std::string> seen;
  for (const auto& field : fields) {
    const std::string& name = field->name();
    if (auto existing = schema->GetFieldByName(name)) {
      LANCE_RETURN_NOT_OK(CheckFieldConflict(*existing, *field, version, what));
    }
    if (!seen.insert(name).second) return Status::Invalid(what, ": column ", name, " is given twice");
  }
  return Status::OK();
}

// The reference's Schema::merge then set_field_id: new top-level fields go
// last, new children of an existing struct after its children; every new
// field then takes the next id in the merged schema's pre-order.
Result<Schema> MergeNewFields(const Manifest& manifest, const arrow::FieldVector& fields) {
  Schema merged = manifest.schema;
  std::function<void(Field*)> unset = [&](Field* f) {
    f->id = -1;
    for (auto& c : f->children) unset(&c);
  };
  std::function<void(std::vector<Field>*, const Field&)> merge_into = [&](std::vector<Field>* level, const Field& add) {
    auto it = std::find_if(level->begin(), level->end(), [&](const Field& f) { return f.name == add.name; });
    if (it == level->end()) {
      level->push_back(add);
      return;
    }
    for (const auto& c : add.children) merge_into(&it->children, c);
  };
  for (const auto& f : fields) {
    LANCE_ASSIGN_OR_RAISE(auto one, Schema::FromArrow(arrow::Schema({f}), 0));
    Field converted = one.fields.at(0);
    unset(&converted);
    merge_into(&merged.fields, converted);
  }
  int32_t next = ops::MaxFieldId(manifest) + 1;
  std::function<void(std::vector<Field>*, int32_t)> assign = [&](std::vector<Field>* level, int32_t parent) {
    for (auto& f : *level) {
      if (f.id < 0) {
        f.id = next++;
        f.parent_id = parent;
      }
      assign(&f.children, f.id);
    }
  };
  assign(&merged.fields, -1);
  return merged;
}

// The reference's merge_introduces_required_field: the first new node on
// each path decides (a required one, or any new node under a required
// top-level column).
bool IntroducesRequiredField(const Schema& old, const Schema& merged) {
  std::function<std::pair<bool, bool>(const std::vector<Field>&, const std::vector<Field>&)> walk =
      [&](const std::vector<Field>& o, const std::vector<Field>& m) {
        bool any_new = false, any_required = false;
        for (const auto& f : m) {
          auto it = std::find_if(o.begin(), o.end(), [&](const Field& x) { return x.name == f.name; });
          if (it == o.end()) {
            any_new = true;
            any_required |= !f.nullable;
          } else {
            auto [n, r] = walk(it->children, f.children);
            any_new |= n;
            any_required |= r;
          }
        }
        return std::make_pair(any_new, any_required);
      };
  for (const auto& f : merged.fields) {
    auto it = std::find_if(old.fields.begin(), old.fields.end(), [&](const Field& x) { return x.name == f.name; });
    if (it == old.fields.end()) {
      if (!f.nullable) return true;
      continue;
    }
    auto [any_new, any_required] = walk(it->children, f.children);
    if (any_required || (any_new && !f.nullable)) return true;
  }
  return false;
}

// The values of the new columns for one fragment, as pylance's updater
// computes them: each batch of physical rows is evaluated on its live rows,
// and each deleted row takes the batch's first value (the reference's
// add_blanks).
struct SqlColumn {
  std::string name;
  scan::NewColumnValue value;
  std::string error_prefix;  // of evaluation errors ("Cast error: " for a cast, as pylance)
  // Applied to the expression's values, when set (a cast as arrow-rs does it).
  std::function<Result<std::shared_ptr<arrow::Array>>(const std::shared_ptr<arrow::Array>&)> then;
};

// The reference's blank plans (pylance 14, v2 files), per column and
// recursively: a fixed-width value copies the batch's first row; a string,
// binary or list takes a null when its field is nullable, else an empty
// value (a list's child values are kept as they are); a fixed-size list or a
// struct with such a child fills each child by its own plan, the list's
// validity null when nullable, the struct's copied from the first row.
bool CopiesFirstRow(const arrow::DataType& type) {
  switch (type.id()) {
    case arrow::Type::STRING:
    case arrow::Type::LARGE_STRING:
    case arrow::Type::BINARY:
    case arrow::Type::LARGE_BINARY:
    case arrow::Type::LIST:
    case arrow::Type::LARGE_LIST:
      return false;
    case arrow::Type::FIXED_SIZE_LIST:
      return CopiesFirstRow(*type.field(0)->type());
    case arrow::Type::STRUCT:
      for (const auto& f : type.fields()) {
        if (!CopiesFirstRow(*f->type())) return false;
      }
      return true;
    default:
      return true;
  }
}

Result<std::shared_ptr<arrow::Array>> TakeRows(const std::shared_ptr<arrow::Array>& values,
                                               const std::vector<uint32_t>& rows) {
  arrow::UInt32Builder idx;
  LANCE_RETURN_NOT_OK(idx.AppendValues(rows));
  std::shared_ptr<arrow::Array> indices;
  LANCE_RETURN_NOT_OK(idx.Finish(&indices));
  LANCE_ASSIGN_OR_RAISE(auto taken, arrow::compute::Take(values, indices));
  return taken.make_array();
}

Result<std::shared_ptr<arrow::Buffer>> Validity(const std::vector<bool>& valid, int64_t* null_count) {
  arrow::TypedBufferBuilder<bool> bits;
  *null_count = 0;
  for (bool v : valid) {
    LANCE_RETURN_NOT_OK(bits.Append(v));
    if (!v) ++*null_count;
  }
  if (*null_count == 0) return std::shared_ptr<arrow::Buffer>();
  std::shared_ptr<arrow::Buffer> out;
  LANCE_RETURN_NOT_OK(bits.Finish(&out));
  return out;
}

// Output row i is live row take[i], or a blank when blank[i] (take[i] is
// then the first row).
Result<std::shared_ptr<arrow::Array>> ApplyBlanks(const std::shared_ptr<arrow::Array>& values,
                                                  const arrow::Field& field, const std::vector<uint32_t>& take,
                                                  const std::vector<bool>& blank) {
  const auto& type = values->type();
  if (CopiesFirstRow(*type)) return TakeRows(values, take);
  const bool nullable = field.nullable();
  switch (type->id()) {
    case arrow::Type::STRING:
    case arrow::Type::LARGE_STRING:
    case arrow::Type::BINARY:
    case arrow::Type::LARGE_BINARY:
    case arrow::Type::LIST:
    case arrow::Type::LARGE_LIST: {
      std::shared_ptr<arrow::Array> filler;
      if (nullable) {
        LANCE_ASSIGN_OR_RAISE(filler, arrow::MakeArrayOfNull(type, 1));
      } else {
        std::shared_ptr<arrow::Scalar> empty;
        if (type->id() == arrow::Type::LIST || type->id() == arrow::Type::LARGE_LIST) {
          LANCE_ASSIGN_OR_RAISE(auto no_values, arrow::MakeEmptyArray(type->field(0)->type()));
          if (type->id() == arrow::Type::LIST) {
            empty = std::make_shared<arrow::ListScalar>(no_values, type);
          } else {
            empty = std::make_shared<arrow::LargeListScalar>(no_values, type);
          }
        } else {
          LANCE_ASSIGN_OR_RAISE(empty, arrow::MakeScalar(type, std::string()));
        }
        LANCE_ASSIGN_OR_RAISE(filler, arrow::MakeArrayFromScalar(*empty, 1));
      }
      LANCE_ASSIGN_OR_RAISE(auto source, arrow::Concatenate({values, filler}));
      std::vector<uint32_t> rows(take);
      for (size_t i = 0; i < rows.size(); ++i) {
        if (blank[i]) rows[i] = static_cast<uint32_t>(values->length());
      }
      return TakeRows(source, rows);
    }
    case arrow::Type::FIXED_SIZE_LIST: {
      const auto& list = static_cast<const arrow::FixedSizeListArray&>(*values);
      const int32_t size = list.value_length();
      auto child = list.values()->Slice(list.value_offset(0), values->length() * size);
      std::vector<uint32_t> child_take;
      std::vector<bool> child_blank;
      std::vector<bool> valid;
      for (size_t i = 0; i < take.size(); ++i) {
        for (int32_t k = 0; k < size; ++k) {
          child_take.push_back(take[i] * static_cast<uint32_t>(size) + static_cast<uint32_t>(k));
          child_blank.push_back(blank[i]);
        }
        valid.push_back(list.IsValid(take[i]) && !(blank[i] && nullable));
      }
      LANCE_ASSIGN_OR_RAISE(auto child_out, ApplyBlanks(child, *type->field(0), child_take, child_blank));
      int64_t null_count = 0;
      LANCE_ASSIGN_OR_RAISE(auto bitmap, Validity(valid, &null_count));
      return std::make_shared<arrow::FixedSizeListArray>(type, static_cast<int64_t>(take.size()), child_out, bitmap,
                                                         null_count);
    }
    case arrow::Type::STRUCT: {
      const auto& st = static_cast<const arrow::StructArray&>(*values);
      arrow::ArrayVector children;
      for (int i = 0; i < st.num_fields(); ++i) {
        LANCE_ASSIGN_OR_RAISE(auto c, ApplyBlanks(st.field(i), *type->field(i), take, blank));
        children.push_back(std::move(c));
      }
      std::vector<bool> valid;
      for (uint32_t r : take) valid.push_back(st.IsValid(r));
      int64_t null_count = 0;
      LANCE_ASSIGN_OR_RAISE(auto bitmap, Validity(valid, &null_count));
      return std::make_shared<arrow::StructArray>(type, static_cast<int64_t>(take.size()), children, bitmap,
                                                  null_count);
    }
    default:
      return Status::NotImplemented("filling deleted rows in a new column of type ", type->ToString(),
                                    " as pylance does is not implemented yet");
  }
}

Result<std::shared_ptr<arrow::Array>> AddBlanks(const std::shared_ptr<arrow::Array>& values,
                                                const std::vector<bool>& is_deleted, const arrow::Field& field,
                                                uint64_t fragment_id) {
  std::vector<uint32_t> take;
  uint32_t at = 0;
  for (bool deleted : is_deleted) take.push_back(deleted ? 0 : at++);
  auto out = ApplyBlanks(values, field, take, is_deleted);
  if (!out.ok()) return out.status().WithMessage("fragment ", fragment_id, " has deleted rows: ", out.status().message());
  return out;
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
        LANCE_ASSIGN_OR_RAISE(auto values, AddBlanks(source[i], blank, *out_schema->field(static_cast<int>(i)), fragment.id));
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
        if (c.then) {
          auto done = c.then(values);
          if (!done.ok()) return Status::Invalid(c.error_prefix, "column ", c.name, ": ", done.status().message());
          values = std::move(*done);
        }
        first.push_back(values->Slice(0, 1));
        if (live.size() < count) {
          LANCE_ASSIGN_OR_RAISE(values, AddBlanks(values, is_deleted, *out_schema->field(static_cast<int>(arrays.size())), fragment.id));
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
    LANCE_ASSIGN_OR_RAISE(auto schema, ds.ArrowSchema());
    if (AddsSubColumns(*schema, new_arrow)) {
      // Sub-columns of an existing struct, schema only: read as nulls.
      LANCE_ASSIGN_OR_RAISE(merge.schema, MergeNewFields(m, new_arrow));
      merge.preserves_nullability = !IntroducesRequiredField(m.schema, merge.schema);
      return CommitSchemaChange(ds, std::move(merge), options_);
    }
  } else {
    LANCE_ASSIGN_OR_RAISE(auto schema, ds.ArrowSchema());
    for (const auto& [name, sql] : sql_) {
      auto value = scan::ParseNewColumn(sql, *schema);
      if (!value.ok()) return Status::Invalid(what, ": ", name, " = ", sql, ": ", value.status().message());
      new_arrow.push_back(arrow::field(name, value->type, value->nullable));
      columns.push_back({name, std::move(*value), ""});
    }
    LANCE_RETURN_NOT_OK(CheckNewNames(ds, new_arrow, what));
    if (AddsSubColumns(*schema, new_arrow)) {
      // pylance writes them to new data files (the struct with the new
      // children only); lance-cpp's expressions do not build structs yet.
      return Status::NotImplemented(what, ": adding sub-columns to an existing struct from SQL expressions is not "
                                    "implemented in lance-cpp yet (all-null sub-columns are: add-columns --null)");
    }
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
      if (ops::FindFieldByPath(ds.manifest().schema, path) == nullptr) {
        return Status::Invalid(what, ": Column ", path, " does not exist in the dataset");
      }
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

// Whether the column at `path` ("a" or "a.b") holds a null in any live
// row: the top-level column read, and its children followed by name.
Result<bool> HasNulls(const std::shared_ptr<const Dataset>& dataset, const std::string& path) {
  std::vector<std::string> parts;
  for (size_t start = 0;;) {
    const size_t dot = path.find('.', start);
    parts.push_back(path.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  ScanOptions scan;
  scan.columns = {parts[0]};
  LANCE_ASSIGN_OR_RAISE(auto reader, ScanBuilder(dataset).Options(scan).ToReader());
  while (true) {
    std::shared_ptr<arrow::RecordBatch> batch;
    LANCE_RETURN_NOT_OK(reader->ReadNext(&batch));
    if (!batch) return false;
    if (batch->num_columns() == 0) continue;
    std::shared_ptr<arrow::Array> column = batch->column(0);
    for (size_t i = 1; i < parts.size() && column; ++i) {
      if (column->type_id() != arrow::Type::STRUCT) return Status::Invalid("column ", path, " is not under a struct");
      column = static_cast<const arrow::StructArray&>(*column).GetFieldByName(parts[i]);
    }
    if (!column) return Status::Invalid("column ", path, " was not read");
    if (column->null_count() > 0) return true;
  }
}

bool IsListLike(arrow::Type::type id) {
  return id == arrow::Type::LIST || id == arrow::Type::LARGE_LIST || id == arrow::Type::FIXED_SIZE_LIST;
}

// The reference's cast rule (is_upcast_downcast and arrow-rs's
// can_cast_types): within one family of types (integers, floats, temporal
// types, booleans, strings, binaries, decimals), and a list, large list or
// fixed-size list to any of those three whose items follow the rule (two
// fixed-size lists of one size); a dictionary by its values.
bool CastAllowed(const arrow::DataType& from, const arrow::DataType& to, bool to_dictionary) {
  const auto f = from.id();
  const auto t = to.id();
  // Dictionaries by their values; to one only where files materialize
  // them (not legacy files).
  if (t == arrow::Type::DICTIONARY && !to_dictionary) return false;
  if (f == arrow::Type::DICTIONARY) {
    return CastAllowed(*static_cast<const arrow::DictionaryType&>(from).value_type(), to, to_dictionary);
  }
  if (t == arrow::Type::DICTIONARY) {
    return CastAllowed(from, *static_cast<const arrow::DictionaryType&>(to).value_type(), to_dictionary);
  }
  auto string_like = [](arrow::Type::type id) { return id == arrow::Type::STRING || id == arrow::Type::LARGE_STRING; };
  auto binary_like = [](arrow::Type::type id) { return id == arrow::Type::BINARY || id == arrow::Type::LARGE_BINARY; };
  if (arrow::is_integer(f)) return arrow::is_integer(t);
  if (arrow::is_floating(f)) return arrow::is_floating(t);
  if (arrow::is_temporal(f)) return arrow::is_temporal(t) && arrow::compute::CanCast(from, to);
  if (f == arrow::Type::BOOL) return t == arrow::Type::BOOL;
  if (string_like(f)) return string_like(t);
  if (binary_like(f)) return binary_like(t);
  if (arrow::is_decimal(f)) return t == arrow::Type::DECIMAL128 || t == arrow::Type::DECIMAL256;
  if (IsListLike(f) && IsListLike(t)) {
    if (f == arrow::Type::FIXED_SIZE_LIST && t == arrow::Type::FIXED_SIZE_LIST &&
        static_cast<const arrow::FixedSizeListType&>(from).list_size() !=
            static_cast<const arrow::FixedSizeListType&>(to).list_size()) {
      return false;
    }
    return CastAllowed(*from.field(0)->type(), *to.field(0)->type(), to_dictionary);
  }
  return false;
}

bool HasDecimal(const arrow::DataType& type) {
  if (arrow::is_decimal(type.id())) return true;
  return IsListLike(type.id()) && HasDecimal(*type.field(0)->type());
}

arrow::Decimal256 Widen(const arrow::Array& array, int64_t i) {
  if (array.type_id() == arrow::Type::DECIMAL256) {
    return arrow::Decimal256(static_cast<const arrow::Decimal256Array&>(array).GetValue(i));
  }
  const arrow::Decimal128 v(static_cast<const arrow::Decimal128Array&>(array).GetValue(i));
  const uint64_t ext = v.high_bits() < 0 ? ~uint64_t{0} : 0;
  return arrow::Decimal256(std::array<uint64_t, 4>{v.low_bits(), static_cast<uint64_t>(v.high_bits()), ext, ext});
}

// A decimal cast as arrow-rs's (safe: false): a smaller scale rounds half
// away from zero, and a value the target precision cannot hold is an error
// worded as arrow-rs words it.
Result<std::shared_ptr<arrow::Array>> CastDecimal(const std::shared_ptr<arrow::Array>& in,
                                                  const std::shared_ptr<arrow::DataType>& to) {
  const auto& from_type = static_cast<const arrow::DecimalType&>(*in->type());
  const auto& to_type = static_cast<const arrow::DecimalType&>(*to);
  const int32_t shift = to_type.scale() - from_type.scale();
  const int32_t precision = to_type.precision();
  const std::string kind = to->id() == arrow::Type::DECIMAL128 ? "Decimal128" : "Decimal256";
  arrow::Decimal256 max(arrow::Decimal256::GetScaleMultiplier(precision));
  max -= arrow::Decimal256(1);
  const arrow::Decimal256 min(-max);
  std::unique_ptr<arrow::ArrayBuilder> builder;
  LANCE_RETURN_NOT_OK(arrow::MakeBuilder(arrow::default_memory_pool(), to, &builder));
  for (int64_t i = 0; i < in->length(); ++i) {
    if (in->IsNull(i)) {
      LANCE_RETURN_NOT_OK(builder->AppendNull());
      continue;
    }
    const arrow::Decimal256 x = Widen(*in, i);
    arrow::Decimal256 v = x;
    bool overflow = false;
    if (shift > 0) {
      // Beyond 10^76 nothing fits any precision.
      if (shift > 76 || arrow::Decimal256::Abs(x) >= arrow::Decimal256::GetScaleMultiplier(76 - shift)) {
        overflow = true;
      } else {
        v = x * arrow::Decimal256::GetScaleMultiplier(shift);
      }
    } else if (shift < 0) {
      if (-shift > 76) {
        v = arrow::Decimal256(0);
      } else {
        const arrow::Decimal256 divisor = arrow::Decimal256::GetScaleMultiplier(-shift);
        LANCE_ASSIGN_OR_RAISE(auto qr, x.Divide(divisor));
        v = qr.first;
        const arrow::Decimal256 twice = arrow::Decimal256::Abs(qr.second) * arrow::Decimal256(2);
        if (twice >= divisor) v += arrow::Decimal256(x.IsNegative() ? -1 : 1);
      }
    }
    if (overflow || v > max || v < min) {
      const bool large = !x.IsNegative();
      const std::string shown = overflow ? x.ToString(from_type.scale()) : v.ToString(to_type.scale());
      return Status::Invalid(shown, " is too ", large ? "large" : "small", " to store in a ", kind, " of precision ",
                             precision, ". ", large ? "Max is " : "Min is ",
                             (large ? max : min).ToString(to_type.scale()));
    }
    if (to->id() == arrow::Type::DECIMAL128) {
      const auto& w = v.little_endian_array();
      LANCE_RETURN_NOT_OK(static_cast<arrow::Decimal128Builder&>(*builder).Append(
          arrow::Decimal128(static_cast<int64_t>(w[1]), w[0])));
    } else {
      LANCE_RETURN_NOT_OK(static_cast<arrow::Decimal256Builder&>(*builder).Append(v));
    }
  }
  std::shared_ptr<arrow::Array> out;
  LANCE_RETURN_NOT_OK(builder->Finish(&out));
  return out;
}

// A column cast as the reference casts it (arrow-rs, safe: false): Arrow's
// kernels, except decimals (arrow-rs rounds where Arrow truncates or
// refuses), which lists of them reach through their items.
Result<std::shared_ptr<arrow::Array>> CastAsReference(const std::shared_ptr<arrow::Array>& in,
                                                      const std::shared_ptr<arrow::DataType>& to) {
  if (in->type_id() == arrow::Type::STRUCT && to->id() == arrow::Type::STRUCT &&
      in->type()->num_fields() == to->num_fields()) {
    // The struct holding recast children: each child by position.
    const auto& st = static_cast<const arrow::StructArray&>(*in);
    arrow::ArrayVector children;
    for (int i = 0; i < st.num_fields(); ++i) {
      LANCE_ASSIGN_OR_RAISE(auto c, CastAsReference(st.field(i), to->field(i)->type()));
      children.push_back(std::move(c));
    }
    std::shared_ptr<arrow::Buffer> validity;
    if (st.null_count() > 0) {
      LANCE_ASSIGN_OR_RAISE(validity, arrow::internal::CopyBitmap(arrow::default_memory_pool(), st.null_bitmap_data(),
                                                                  st.offset(), st.length()));
    }
    return std::make_shared<arrow::StructArray>(to, st.length(), children, validity, st.null_count());
  }
  if (!HasDecimal(*in->type())) {
    // An overflow is an error, not a null; a finer time unit is truncated.
    arrow::compute::CastOptions options = arrow::compute::CastOptions::Safe(to);
    options.allow_time_truncate = true;
    LANCE_ASSIGN_OR_RAISE(auto out, arrow::compute::Cast(*in, to, options));
    return out;
  }
  if (arrow::is_decimal(in->type_id())) return CastDecimal(in, to);
  // The list's layout first (items unchanged), then its items.
  const auto& to_item = to->field(0);
  std::shared_ptr<arrow::DataType> layout;
  const auto item = arrow::field(to_item->name(), in->type()->field(0)->type(), to_item->nullable());
  switch (to->id()) {
    case arrow::Type::LIST: layout = arrow::list(item); break;
    case arrow::Type::LARGE_LIST: layout = arrow::large_list(item); break;
    default:
      layout = arrow::fixed_size_list(item, static_cast<const arrow::FixedSizeListType&>(*to).list_size());
  }
  std::shared_ptr<arrow::Array> shaped = in;
  if (!in->type()->Equals(*layout)) {
    LANCE_ASSIGN_OR_RAISE(shaped, arrow::compute::Cast(*in, layout, arrow::compute::CastOptions::Safe(layout)));
  }
  auto data = shaped->data()->Copy();
  LANCE_ASSIGN_OR_RAISE(auto items, CastAsReference(arrow::MakeArray(data->child_data[0]), to_item->type()));
  data->child_data[0] = items->data();
  data->type = to;
  return arrow::MakeArray(data);
}

// The reference's Field::project_by_ids with ancestors: the subtree of
// every field in `ids`, under the ancestors leading to it.
std::optional<Field> ProjectByIds(const Field& f, const std::set<int32_t>& ids) {
  if (ids.count(f.id)) return f;
  Field out = f;
  out.children.clear();
  for (const auto& c : f.children) {
    if (auto kept = ProjectByIds(c, ids)) out.children.push_back(std::move(*kept));
  }
  if (out.children.empty()) return std::nullopt;
  return out;
}

// `values` of field `full` (a struct read whole) cut down to `kept`'s
// children, matched by id.
Result<std::shared_ptr<arrow::Array>> PruneTo(const std::shared_ptr<arrow::Array>& values, const Field& full,
                                              const Field& kept) {
  if (kept.children.size() == full.children.size() || values->type_id() != arrow::Type::STRUCT) {
    bool same = kept.children.size() == full.children.size();
    for (size_t i = 0; same && i < kept.children.size(); ++i) same = kept.children[i].id == full.children[i].id &&
                                                                      kept.children[i].children.size() ==
                                                                          full.children[i].children.size();
    if (same || values->type_id() != arrow::Type::STRUCT) return values;
  }
  const auto& st = static_cast<const arrow::StructArray&>(*values);
  arrow::ArrayVector children;
  arrow::FieldVector fields;
  for (const auto& k : kept.children) {
    auto it = std::find_if(full.children.begin(), full.children.end(), [&](const Field& f) { return f.id == k.id; });
    if (it == full.children.end()) return Status::Invalid("field ", k.name, " is not a child of ", full.name);
    const int index = static_cast<int>(it - full.children.begin());
    LANCE_ASSIGN_OR_RAISE(auto c, PruneTo(st.field(index), *it, k));
    fields.push_back(arrow::field(st.type()->field(index)->name(), c->type(), st.type()->field(index)->nullable()));
    children.push_back(std::move(c));
  }
  std::shared_ptr<arrow::Buffer> validity;
  if (st.null_count() > 0) {
    LANCE_ASSIGN_OR_RAISE(validity, arrow::internal::CopyBitmap(arrow::default_memory_pool(), st.null_bitmap_data(),
                                                                st.offset(), st.length()));
  }
  return std::make_shared<arrow::StructArray>(arrow::struct_(fields), st.length(), children, validity,
                                              st.null_count());
}

// The reference's checks of a cast: the rule above, no index on the column.
Status CheckCast(const Dataset& ds, const Field& src, const ColumnAlteration& a, const std::string& what) {
  if (a.path.find('.') != std::string::npos) {
    LANCE_ASSIGN_OR_RAISE(auto version, ds.DataStorageVersion());
    if (version == "0.1" || version == "2.0") {
      // pylance 14 takes it, but cannot read back what it writes (its 2.0
      // reader wants a struct's columns in one file).
      return Status::NotImplemented(what, ": casting the nested column \"", a.path, "\" of a ", version,
                                    " dataset is not done by lance-cpp: pylance 14 writes one it cannot read back");
    }
    Schema original = ds.manifest().schema;
    const std::string parent = a.path.substr(0, a.path.rfind('.'));
    const Field* up = ops::FindFieldByPath(&original, parent, nullptr);
    if (up == nullptr || up->logical_type != "struct") {
      return Status::NotImplemented(what, ": casting \"", a.path, "\", a child of a column that is not a struct, "
                                    "is not implemented in lance-cpp yet");
    }
  }
  LANCE_ASSIGN_OR_RAISE(auto from, ArrowTypeFromField(src));
  const auto& to = a.data_type;
  LANCE_ASSIGN_OR_RAISE(auto storage, ds.DataStorageVersion());
  if (!CastAllowed(*from, *to, storage != "0.1")) {
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
    const Field* src = ops::FindFieldByPath(ds.manifest().schema, a.path);
    if (src == nullptr) return Status::Invalid(what, ": Column \"", a.path, "\" does not exist in the dataset");
    if (a.data_type) LANCE_RETURN_NOT_OK(CheckCast(ds, *src, a, what));
    if (a.nullable && !*a.nullable && src->nullable) {
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
      dest->parent_id = src->parent_id;
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
    bool merge_preserves = true;
    // One new column per top-level column holding a cast, in schema order
    // (the reference's project_by_ids with ancestors): a nested cast writes
    // its struct with only the recast children, under the struct's own id.
    const Schema& original = ds.manifest().schema;
    std::set<int32_t> old_ids, new_ids;
    for (const auto& [old, cast] : casts) {
      old_ids.insert(old.id);
      new_ids.insert(cast.id);
      // A required recast field, or one under a required top-level column,
      // is a nullability change (pylance 14).
      if (!cast.nullable) merge_preserves = false;
    }
    Schema new_fields;
    std::vector<SqlColumn> columns;
    txn::Merge merge;
    for (size_t t = 0; t < original.fields.size(); ++t) {
      const Field& old_top = original.fields[t];
      auto read = ProjectByIds(old_top, old_ids);
      if (!read) continue;
      const Field& new_top = schema.fields[t];  // renames and casts keep the position
      auto written = ProjectByIds(new_top, new_ids);
      if (!written) return Status::Invalid(what, ": the recast fields of ", old_top.name, " are missing");
      if (!new_top.nullable) merge_preserves = false;
      new_fields.fields.push_back(*written);
      LANCE_ASSIGN_OR_RAISE(auto type, ArrowTypeFromField(*written));
      scan::NewColumnValue value;
      value.expr = arrow::compute::field_ref(old_top.name);
      value.type = type;
      value.nullable = written->nullable;
      columns.push_back({written->name, std::move(value), "Cast error: ",
                         [type, full = old_top, kept = *read](const std::shared_ptr<arrow::Array>& in)
                             -> Result<std::shared_ptr<arrow::Array>> {
                           LANCE_ASSIGN_OR_RAISE(auto pruned, PruneTo(in, full, kept));
                           return CastAsReference(pruned, type);
                         }});
    }
    merge.preserves_nullability = merge_preserves;
    LANCE_ASSIGN_OR_RAISE(auto fragments, WriteNewColumns(ds, std::move(columns), new_fields, storage_version, what));
    // Files left with no field of the new schema leave their fragments.
    std::set<int32_t> live;
    for (const auto& f : schema.FieldsPreOrder()) live.insert(f.id);
    for (auto& f : fragments) {
      // An id the new file holds (a struct's, in files that list structs)
      // is the new file's: a tombstone in the older files.
      const auto& fresh = f.files.back().fields;
      for (size_t i = 0; i + 1 < f.files.size(); ++i) {
        for (auto& id : f.files[i].fields) {
          if (std::find(fresh.begin(), fresh.end(), id) != fresh.end()) id = -2;
        }
      }
      std::erase_if(f.files, [&](const DataFile& file) {
        return std::none_of(file.fields.begin(), file.fields.end(), [&](int32_t id) { return live.count(id) > 0; });
      });
    }
    // Each fragment's new file stays, last: it holds the cast fields.
    merge.fragments = std::move(fragments);
    merge.schema = std::move(schema);
    return CommitWithNewFiles(ds, std::move(merge), options_);
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
