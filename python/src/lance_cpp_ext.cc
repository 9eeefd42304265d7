// _lance_cpp: the private extension module under the lance_cpp Python
// package. A thin layer over the public API in include/lance/ only: the
// argument handling that mirrors pylance lives in python/lance_cpp/*.py.
//
// Arrow data crosses as Arrow C stream / schema PyCapsules
// ("arrow_array_stream", "arrow_schema"), never copied. Every call into the
// library runs with the GIL released; a failed Status becomes a Python
// exception (ValueError for invalid input, as pylance's "Invalid user input",
// NotImplementedError, else OSError) carrying the Status message.
#include <Python.h>

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <arrow/c/abi.h>
#include <arrow/c/bridge.h>
#include <arrow/record_batch.h>
#include <arrow/table.h>

#include <nanobind/nanobind.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "lance/compaction.h"
#include "lance/dataset.h"
#include "lance/dataset_ops.h"
#include "lance/full_text.h"
#include "lance/index_ops.h"
#include "lance/operations.h"
#include "lance/row_ops.h"
#include "lance/scanner.h"
#include "lance/status.h"
#include "lance/vector_search.h"
#include "lance/write.h"

namespace nb = nanobind;

namespace {

/// Raises the Python exception for a failed `status`. REQUIRES: the GIL.
[[noreturn]] void Raise(const lance::Status& status) {
  PyObject* type = PyExc_OSError;
  switch (status.code()) {
    case arrow::StatusCode::Invalid:
    case arrow::StatusCode::TypeError:
    case arrow::StatusCode::KeyError:
    case arrow::StatusCode::IndexError:
      type = PyExc_ValueError;
      break;
    case arrow::StatusCode::NotImplemented:
      type = PyExc_NotImplementedError;
      break;
    default:
      break;
  }
  // Commit conflicts are OSError, as pylance raises them.
  if (lance::GetErrorKind(status) != lance::ErrorKind::kOther) type = PyExc_OSError;
  PyErr_SetString(type, status.ToString().c_str());
  throw nb::python_error();
}

void Check(const lance::Status& status) {
  if (!status.ok()) Raise(status);
}

template <typename T>
T Get(lance::Result<T> result) {
  if (!result.ok()) Raise(result.status());
  return std::move(result).ValueUnsafe();
}

/// Takes the stream out of an "arrow_array_stream" capsule (the capsule
/// keeps the emptied struct and frees it).
std::shared_ptr<arrow::RecordBatchReader> ImportStream(nb::handle capsule) {
  auto* stream = static_cast<ArrowArrayStream*>(PyCapsule_GetPointer(capsule.ptr(), "arrow_array_stream"));
  if (stream == nullptr) throw nb::python_error();
  return Get(arrow::ImportRecordBatchReader(stream));
}

void DeleteStreamCapsule(PyObject* capsule) {
  auto* stream = static_cast<ArrowArrayStream*>(PyCapsule_GetPointer(capsule, "arrow_array_stream"));
  if (stream == nullptr) {
    PyErr_Clear();
    return;
  }
  if (stream->release != nullptr) stream->release(stream);
  std::free(stream);
}

nb::object ExportStream(std::shared_ptr<arrow::RecordBatchReader> reader) {
  auto* stream = static_cast<ArrowArrayStream*>(std::malloc(sizeof(ArrowArrayStream)));
  stream->release = nullptr;
  lance::Status st = arrow::ExportRecordBatchReader(std::move(reader), stream);
  if (!st.ok()) {
    std::free(stream);
    Raise(st);
  }
  PyObject* capsule = PyCapsule_New(stream, "arrow_array_stream", DeleteStreamCapsule);
  if (capsule == nullptr) {
    stream->release(stream);
    std::free(stream);
    throw nb::python_error();
  }
  return nb::steal(capsule);
}

nb::object ExportTable(const std::shared_ptr<arrow::Table>& table) {
  return ExportStream(std::make_shared<arrow::TableBatchReader>(table));
}

void DeleteSchemaCapsule(PyObject* capsule) {
  auto* schema = static_cast<ArrowSchema*>(PyCapsule_GetPointer(capsule, "arrow_schema"));
  if (schema == nullptr) {
    PyErr_Clear();
    return;
  }
  if (schema->release != nullptr) schema->release(schema);
  std::free(schema);
}

nb::object ExportSchema(const arrow::Schema& arrow_schema) {
  auto* schema = static_cast<ArrowSchema*>(std::malloc(sizeof(ArrowSchema)));
  schema->release = nullptr;
  lance::Status st = arrow::ExportSchema(arrow_schema, schema);
  if (!st.ok()) {
    std::free(schema);
    Raise(st);
  }
  PyObject* capsule = PyCapsule_New(schema, "arrow_schema", DeleteSchemaCapsule);
  if (capsule == nullptr) {
    schema->release(schema);
    std::free(schema);
    throw nb::python_error();
  }
  return nb::steal(capsule);
}

/// Runs `fn` with the GIL released and returns its value (a Result, checked
/// once the GIL is held again).
template <typename Fn>
auto NoGil(Fn&& fn) {
  using R = decltype(fn());
  std::optional<R> out;
  {
    nb::gil_scoped_release release;
    out.emplace(fn());
  }
  return std::move(*out);
}

/// One opened version of a dataset. Immutable; operations return new ones.
struct PyDataset {
  std::shared_ptr<const lance::Dataset> ds;
};

PyDataset Wrap(std::shared_ptr<lance::Dataset> ds) { return PyDataset{std::move(ds)}; }

lance::WriteParams MakeWriteParams(const std::string& mode, std::optional<std::string> data_storage_version,
                                   bool enable_stable_row_ids, uint64_t max_rows_per_file,
                                   uint64_t max_rows_per_group, std::optional<uint64_t> max_bytes_per_file) {
  lance::WriteParams params;
  if (mode == "create") {
    params.mode = lance::WriteMode::kCreate;
  } else if (mode == "append") {
    params.mode = lance::WriteMode::kAppend;
  } else if (mode == "overwrite") {
    params.mode = lance::WriteMode::kOverwrite;
  } else {
    throw nb::value_error(("mode must be 'create', 'append' or 'overwrite', not '" + mode + "'").c_str());
  }
  params.data_storage_version = std::move(data_storage_version);
  params.enable_stable_row_ids = enable_stable_row_ids;
  params.max_rows_per_file = max_rows_per_file;
  params.max_rows_per_group = max_rows_per_group;
  if (max_bytes_per_file) params.max_bytes_per_file = *max_bytes_per_file;
  return params;
}

lance::ScanOptions MakeScanOptions(std::vector<std::string> columns, std::string filter, int64_t offset,
                                   std::optional<int64_t> limit, bool with_row_id, bool with_row_address,
                                   std::optional<int64_t> batch_size,
                                   std::optional<std::vector<uint64_t>> fragment_ids, bool use_scalar_index) {
  lance::ScanOptions o;
  o.columns = std::move(columns);
  o.filter = std::move(filter);
  o.offset = offset;
  o.limit = limit;
  o.with_row_id = with_row_id;
  o.with_row_address = with_row_address;
  if (batch_size) o.batch_size = *batch_size;
  o.fragment_ids = std::move(fragment_ids);
  o.use_scalar_index = use_scalar_index;
  return o;
}

std::string UuidString(const std::array<uint8_t, 16>& u) {
  static const char* hex = "0123456789abcdef";
  std::string s;
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) s.push_back('-');
    s.push_back(hex[u[i] >> 4]);
    s.push_back(hex[u[i] & 15]);
  }
  return s;
}

}  // namespace

NB_MODULE(_lance_cpp, m) {
  m.doc() = "lance-cpp's native core; use the lance_cpp package.";

  nb::class_<PyDataset>(m, "Dataset")
      .def_static(
          "open",
          [](const std::string& uri, const std::string& version, const lance::StorageOptions& storage_options) {
            lance::OpenOptions options;
            options.version = version;
            options.storage_options = storage_options;
            return Wrap(Get(NoGil([&] { return lance::Dataset::Open(uri, options); })));
          },
          nb::arg("uri"), nb::arg("version") = "", nb::arg("storage_options") = lance::StorageOptions{})
      .def("checkout",
           [](const PyDataset& self, const std::string& version) {
             return Wrap(Get(NoGil([&] { return self.ds->Checkout(version); })));
           })
      .def_prop_ro("uri", [](const PyDataset& self) { return self.ds->uri(); })
      .def_prop_ro("version", [](const PyDataset& self) { return self.ds->version(); })
      .def_prop_ro("latest_version", [](const PyDataset& self) { return self.ds->latest_version(); })
      .def("data_storage_version", [](const PyDataset& self) { return Get(self.ds->DataStorageVersion()); })
      .def("schema_capsule",
           [](const PyDataset& self) { return ExportSchema(*Get(self.ds->ArrowSchema())); })
      .def("versions",
           [](const PyDataset& self) {
             auto versions = Get(NoGil([&] { return self.ds->Versions(); }));
             std::vector<std::tuple<uint64_t, std::optional<int64_t>, std::string>> out;
             for (const auto& v : versions) out.emplace_back(v.version, v.timestamp_nanos, v.operation);
             return out;
           })
      .def(
          "scan",
          [](const PyDataset& self, std::vector<std::string> columns, std::string filter, int64_t offset,
             std::optional<int64_t> limit, bool with_row_id, bool with_row_address,
             std::optional<int64_t> batch_size, std::optional<std::vector<uint64_t>> fragment_ids,
             bool use_scalar_index) {
            lance::ScanBuilder scan(self.ds);
            scan.Options(MakeScanOptions(std::move(columns), std::move(filter), offset, limit, with_row_id,
                                         with_row_address, batch_size, std::move(fragment_ids),
                                         use_scalar_index));
            return ExportStream(Get(NoGil([&] { return scan.ToReader(); })));
          },
          nb::arg("columns"), nb::arg("filter"), nb::arg("offset"), nb::arg("limit").none(),
          nb::arg("with_row_id"), nb::arg("with_row_address"), nb::arg("batch_size").none(),
          nb::arg("fragment_ids").none(), nb::arg("use_scalar_index"))
      .def(
          "count_rows",
          [](const PyDataset& self, std::vector<std::string> columns, std::string filter, int64_t offset,
             std::optional<int64_t> limit, std::optional<std::vector<uint64_t>> fragment_ids,
             bool use_scalar_index) {
            lance::ScanBuilder scan(self.ds);
            scan.Options(MakeScanOptions(std::move(columns), std::move(filter), offset, limit, false, false,
                                         std::nullopt, std::move(fragment_ids), use_scalar_index));
            return Get(NoGil([&] { return scan.CountRows(); }));
          },
          nb::arg("columns"), nb::arg("filter"), nb::arg("offset"), nb::arg("limit").none(),
          nb::arg("fragment_ids").none(), nb::arg("use_scalar_index"))
      .def("explain_plan",
           [](const PyDataset& self, std::vector<std::string> columns, std::string filter) {
             lance::ScanBuilder scan(self.ds);
             scan.Project(std::move(columns)).Filter(std::move(filter));
             return Get(NoGil([&] { return scan.ExplainPlan(); }));
           })
      .def("take",
           [](const PyDataset& self, std::vector<uint64_t> indices, std::vector<std::string> columns) {
             return ExportTable(Get(NoGil([&] { return lance::Take(self.ds, indices, columns); })));
           })
      .def("take_rows",
           [](const PyDataset& self, std::vector<uint64_t> row_ids, std::vector<std::string> columns) {
             return ExportTable(Get(NoGil([&] { return lance::TakeRows(self.ds, row_ids, columns); })));
           })
      .def(
          "vector_search",
          [](const PyDataset& self, std::string column, std::vector<float> query, int64_t k,
             std::optional<uint32_t> nprobes, std::optional<uint32_t> refine_factor, std::string metric,
             bool use_index, std::string filter, bool prefilter, std::vector<std::string> columns,
             bool with_row_id) {
            lance::VectorSearchOptions o;
            o.column = std::move(column);
            o.query = std::move(query);
            o.k = k;
            o.nprobes = nprobes;
            o.refine_factor = refine_factor;
            o.metric = std::move(metric);
            o.use_index = use_index;
            o.filter = std::move(filter);
            o.prefilter = prefilter;
            o.columns = std::move(columns);
            o.with_row_id = with_row_id;
            return ExportTable(Get(NoGil([&] { return lance::VectorSearch(self.ds, o); })));
          },
          nb::arg("column"), nb::arg("query"), nb::arg("k"), nb::arg("nprobes").none(),
          nb::arg("refine_factor").none(), nb::arg("metric"), nb::arg("use_index"), nb::arg("filter"),
          nb::arg("prefilter"), nb::arg("columns"), nb::arg("with_row_id"))
      .def(
          "full_text_search",
          [](const PyDataset& self, std::string query, std::vector<std::string> search_columns,
             std::optional<int64_t> limit, std::string filter, bool prefilter, std::vector<std::string> columns,
             bool with_row_id) {
            lance::FullTextSearchOptions o;
            o.columns = std::move(search_columns);
            o.limit = limit;
            o.filter = std::move(filter);
            o.prefilter = prefilter;
            o.projection = std::move(columns);
            o.with_row_id = with_row_id;
            auto q = lance::FullTextQuery::FromString(query);
            return ExportTable(Get(NoGil([&] { return lance::FullTextSearch(self.ds, q, o); })));
          },
          nb::arg("query"), nb::arg("search_columns"), nb::arg("limit").none(), nb::arg("filter"),
          nb::arg("prefilter"), nb::arg("columns"), nb::arg("with_row_id"))
      .def(
          "write",
          [](const PyDataset& self, nb::handle stream, const std::string& mode,
             std::optional<std::string> data_storage_version, uint64_t max_rows_per_file,
             uint64_t max_rows_per_group, std::optional<uint64_t> max_bytes_per_file) {
            auto reader = ImportStream(stream);
            auto params = MakeWriteParams(mode, std::move(data_storage_version), false, max_rows_per_file,
                                          max_rows_per_group, max_bytes_per_file);
            return Wrap(Get(NoGil([&]() -> lance::Result<std::shared_ptr<lance::Dataset>> {
              if (params.mode == lance::WriteMode::kOverwrite) return self.ds->NewOverwrite().Options(params).Commit(reader);
              return self.ds->NewAppend().Options(params).Commit(reader);
            })));
          },
          nb::arg("stream"), nb::arg("mode"), nb::arg("data_storage_version").none(),
          nb::arg("max_rows_per_file"), nb::arg("max_rows_per_group"), nb::arg("max_bytes_per_file").none())
      .def("delete",
           [](const PyDataset& self, std::string predicate) {
             auto del = self.ds->NewDelete(std::move(predicate));
             auto ds = Get(NoGil([&] { return del.Commit(); }));
             return std::make_pair(Wrap(std::move(ds)), del.result().num_deleted_rows);
           })
      .def("update",
           [](const PyDataset& self, std::vector<std::pair<std::string, std::string>> set, std::string where) {
             auto update = self.ds->NewUpdate();
             for (auto& [column, expression] : set) update.Set(column, expression);
             if (!where.empty()) update.Where(std::move(where));
             auto ds = Get(NoGil([&] { return update.Commit(); }));
             return std::make_pair(Wrap(std::move(ds)), update.result().num_rows_updated);
           })
      .def("merge_insert",
           [](const PyDataset& self, std::vector<std::string> on, bool update_all, bool insert_all,
              bool delete_by_source, std::string delete_predicate, nb::handle stream) {
             auto reader = ImportStream(stream);
             auto merge = self.ds->NewMergeInsert(std::move(on));
             if (update_all) merge.WhenMatchedUpdateAll();
             if (insert_all) merge.WhenNotMatchedInsertAll();
             if (delete_by_source) merge.WhenNotMatchedBySourceDelete(std::move(delete_predicate));
             auto ds = Get(NoGil([&] { return merge.Commit(reader); }));
             const auto& r = merge.result();
             return std::make_tuple(Wrap(std::move(ds)), r.num_inserted_rows, r.num_updated_rows,
                                    r.num_deleted_rows);
           })
      .def("restore",
           [](const PyDataset& self, uint64_t version) {
             return Wrap(Get(NoGil([&] { return self.ds->NewRestore(version).Commit(); })));
           })
      .def("tags",
           [](const PyDataset& self) {
             auto tags = Get(NoGil([&] { return self.ds->Tags(); }));
             std::map<std::string, std::pair<uint64_t, std::optional<std::string>>> out;
             for (const auto& [name, info] : tags) out[name] = {info.version, info.branch};
             return out;
           })
      .def("create_tag",
           [](const PyDataset& self, const std::string& name, uint64_t version) {
             Check(NoGil([&] { return self.ds->CreateTag(name, version); }));
           })
      .def("delete_tag",
           [](const PyDataset& self, const std::string& name) {
             Check(NoGil([&] { return self.ds->DeleteTag(name); }));
           })
      .def("cleanup_old_versions",
           [](const PyDataset& self, int64_t older_than_seconds, bool delete_unverified,
              bool error_if_tagged_old_versions) {
             lance::CleanupOptions options;
             options.error_if_tagged_old_versions = error_if_tagged_old_versions;
             auto r = Get(NoGil([&] {
               return self.ds->CleanupOldVersions(older_than_seconds, delete_unverified, options);
             }));
             return std::map<std::string, uint64_t>{{"bytes_removed", r.bytes_removed},
                                                    {"old_versions", r.old_versions},
                                                    {"data_files_removed", r.data_files},
                                                    {"transaction_files_removed", r.transaction_files},
                                                    {"index_files_removed", r.index_files},
                                                    {"deletion_files_removed", r.deletion_files}};
           })
      .def(
          "compact_files",
          [](const PyDataset& self, uint64_t target_rows_per_fragment, uint64_t max_rows_per_group,
             std::optional<uint64_t> max_bytes_per_file, bool materialize_deletions,
             float materialize_deletions_threshold, std::optional<uint32_t> num_threads,
             std::optional<uint64_t> batch_size, bool defer_index_remap) {
            lance::CompactionOptions o;
            o.target_rows_per_fragment = target_rows_per_fragment;
            o.max_rows_per_group = max_rows_per_group;
            o.max_bytes_per_file = max_bytes_per_file;
            o.materialize_deletions = materialize_deletions;
            o.materialize_deletions_threshold = materialize_deletions_threshold;
            o.num_threads = num_threads;
            o.batch_size = batch_size;
            o.defer_index_remap = defer_index_remap;
            auto compaction = self.ds->NewCompaction();
            compaction.Options(o);
            auto ds = Get(NoGil([&] { return compaction.Commit(); }));
            const auto& metrics = compaction.result().metrics;
            return std::make_pair(Wrap(std::move(ds)),
                                  std::map<std::string, uint64_t>{{"fragments_removed", metrics.fragments_removed},
                                                                  {"fragments_added", metrics.fragments_added},
                                                                  {"files_removed", metrics.files_removed},
                                                                  {"files_added", metrics.files_added}});
          },
          nb::arg("target_rows_per_fragment"), nb::arg("max_rows_per_group"),
          nb::arg("max_bytes_per_file").none(), nb::arg("materialize_deletions"),
          nb::arg("materialize_deletions_threshold"), nb::arg("num_threads").none(),
          nb::arg("batch_size").none(), nb::arg("defer_index_remap"))
      .def(
          "create_index",
          [](const PyDataset& self, std::string column, std::string index_type, std::optional<std::string> name,
             bool replace, std::optional<std::string> metric, std::optional<uint32_t> num_partitions,
             std::optional<uint32_t> sample_rate, std::optional<uint32_t> max_iterations,
             std::optional<bool> with_position, std::optional<std::string> base_tokenizer,
             std::optional<uint64_t> rows_per_zone) {
            lance::CreateIndexBuilder build(self.ds, std::move(column), std::move(index_type));
            if (name) build.Name(*name);
            build.Replace(replace);
            if (rows_per_zone) build.RowsPerZone(*rows_per_zone);
            if (metric || num_partitions || sample_rate || max_iterations) {
              lance::VectorIndexParams p;
              if (metric) p.metric = *metric;
              p.num_partitions = num_partitions;
              if (sample_rate) p.sample_rate = *sample_rate;
              if (max_iterations) p.max_iterations = *max_iterations;
              build.VectorParams(std::move(p));
            }
            if (with_position || base_tokenizer) {
              lance::InvertedIndexParams p;
              if (with_position) p.with_position = *with_position;
              if (base_tokenizer) p.base_tokenizer = *base_tokenizer;
              build.InvertedParams(std::move(p));
            }
            return Wrap(Get(NoGil([&] { return build.Commit(); })));
          },
          nb::arg("column"), nb::arg("index_type"), nb::arg("name").none(), nb::arg("replace"),
          nb::arg("metric").none(), nb::arg("num_partitions").none(), nb::arg("sample_rate").none(),
          nb::arg("max_iterations").none(), nb::arg("with_position").none(), nb::arg("base_tokenizer").none(),
          nb::arg("rows_per_zone").none())
      .def("describe_indices",
           [](const PyDataset& self) {
             auto described = Get(NoGil([&] { return lance::DescribeIndices(*self.ds); }));
             nb::list out;
             for (const auto& d : described) {
               nb::dict entry;
               entry["name"] = d.name;
               entry["type"] = d.type;
               entry["type_url"] = d.type_url;
               entry["uuids"] = d.uuids;
               entry["field_names"] = d.field_names;
               entry["fragment_ids"] = d.fragment_ids;
               entry["num_indexed_rows"] = d.num_indexed_rows;
               entry["num_unindexed_rows"] = d.num_unindexed_rows;
               out.append(entry);
             }
             return out;
           })
      .def("index_segments",
           [](const PyDataset& self) {
             nb::list out;
             for (const auto& index : self.ds->indices()) {
               nb::dict entry;
               entry["uuid"] = UuidString(index.uuid);
               entry["name"] = index.name;
               entry["fields"] = index.fields;
               entry["version"] = index.dataset_version;
               entry["fragment_ids"] = index.fragment_ids;
               out.append(entry);
             }
             return out;
           })
      .def("summary",
           [](const PyDataset& self) {
             // pylance's ManifestSummary (the `metadata` of versions()).
             uint64_t data_files = 0, deletion_files = 0, files_size = 0, data_rows = 0, deleted_rows = 0;
             const auto& fragments = self.ds->manifest().fragments;
             for (const auto& fragment : fragments) {
               data_files += fragment.files.size();
               for (const auto& file : fragment.files) files_size += file.file_size_bytes;
               if (fragment.deletion_file) ++deletion_files;
               data_rows += Get(self.ds->PhysicalRows(fragment));
               deleted_rows += Get(self.ds->NumDeletedRows(fragment));
             }
             return std::map<std::string, uint64_t>{{"total_fragments", fragments.size()},
                                                    {"total_data_files", data_files},
                                                    {"total_files_size", files_size},
                                                    {"total_deletion_files", deletion_files},
                                                    {"total_data_file_rows", data_rows},
                                                    {"total_deletion_file_rows", deleted_rows},
                                                    {"total_rows", data_rows - deleted_rows}};
           })
      .def("fragments",
           [](const PyDataset& self) {
             nb::list out;
             for (const auto& fragment : self.ds->manifest().fragments) {
               nb::dict entry;
               entry["id"] = fragment.id;
               entry["physical_rows"] = Get(self.ds->PhysicalRows(fragment));
               entry["num_deletions"] = Get(self.ds->NumDeletedRows(fragment));
               std::vector<std::string> files;
               for (const auto& file : fragment.files) files.push_back(file.path);
               entry["files"] = files;
               out.append(entry);
             }
             return out;
           });

  m.def(
      "write_dataset",
      [](nb::handle stream, const std::string& uri, const std::string& mode,
         std::optional<std::string> data_storage_version, bool enable_stable_row_ids, uint64_t max_rows_per_file,
         uint64_t max_rows_per_group, std::optional<uint64_t> max_bytes_per_file,
         const lance::StorageOptions& storage_options) {
        auto reader = ImportStream(stream);
        auto params = MakeWriteParams(mode, std::move(data_storage_version), enable_stable_row_ids,
                                      max_rows_per_file, max_rows_per_group, max_bytes_per_file);
        params.storage_options = storage_options;
        return Wrap(Get(NoGil([&] { return lance::WriteDataset(reader, uri, params); })));
      },
      nb::arg("stream"), nb::arg("uri"), nb::arg("mode"), nb::arg("data_storage_version").none(),
      nb::arg("enable_stable_row_ids"), nb::arg("max_rows_per_file"), nb::arg("max_rows_per_group"),
      nb::arg("max_bytes_per_file").none(), nb::arg("storage_options") = lance::StorageOptions{});
}
