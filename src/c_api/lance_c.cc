// The C ABI (include/lance/lance_c.h) over the public C++ API. Only public
// headers and Arrow's C bridge are used here, as any binding would: this
// file is a client of the library, not a part of its internals.
#include "lance/lance_c.h"

#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include <arrow/c/bridge.h>
#include <arrow/record_batch.h>
#include <arrow/table.h>

#include "lance/dataset.h"
#include "lance/dataset_ops.h"
#include "lance/scanner.h"
#include "lance/status.h"
#include "lance/write.h"

struct lance_dataset {
  std::shared_ptr<lance::Dataset> dataset;
  std::string uri;
};

namespace {

thread_local std::string last_error;

lance_status Fail(lance_status code, std::string message) {
  last_error = std::move(message);
  return code;
}

lance_status FromStatus(const lance::Status& status) {
  if (status.ok()) return LANCE_OK;
  switch (lance::GetErrorKind(status)) {
    case lance::ErrorKind::kRetryableCommitConflict:
      return Fail(LANCE_ERR_RETRYABLE_COMMIT_CONFLICT, status.ToString());
    case lance::ErrorKind::kCommitConflict:
      return Fail(LANCE_ERR_COMMIT_CONFLICT, status.ToString());
    case lance::ErrorKind::kTooMuchWriteContention:
      return Fail(LANCE_ERR_TOO_MUCH_WRITE_CONTENTION, status.ToString());
    case lance::ErrorKind::kOther:
      break;
  }
  int code = static_cast<int>(status.code());
  switch (code) {
    case 1: case 2: case 3: case 4: case 5: case 6: case 7: case 8: case 9: case 10: case 11:
    case 40: case 41: case 42: case 45:
      return Fail(static_cast<lance_status>(code), status.ToString());
    default:
      return Fail(LANCE_ERR_UNKNOWN, status.ToString());
  }
}

// Runs `body(fn)` (returning lance::Status; `fn` is the C function's name,
// for messages) with the thread's error cleared first, and turns every
// exception into a status: none crosses the ABI.
template <typename F>
lance_status Guard(const char* fn, F&& body) {
  last_error.clear();
  try {
    return FromStatus(body(fn));
  } catch (const std::bad_alloc&) {
    return Fail(LANCE_ERR_OUT_OF_MEMORY, "OutOfMemory: allocation failed");
  } catch (const std::exception& e) {
    return Fail(LANCE_ERR_UNKNOWN, std::string("UnknownError: internal error: ") + e.what());
  } catch (...) {
    return Fail(LANCE_ERR_UNKNOWN, "UnknownError: internal error (unknown exception)");
  }
}

lance::Status NullArg(const char* function, const char* argument) {
  return lance::Status::Invalid(function, ": ", argument, " is NULL");
}

#define LANCE_C_REQUIRE(arg) \
  if ((arg) == nullptr) return NullArg(fn, #arg)

// The parallel key/value arrays as lance::StorageOptions; the keys
// themselves are checked where the dataset is opened.
lance::Status ToStorageOptions(const char* const* keys, const char* const* values, size_t n,
                               lance::StorageOptions* out) {
  if (n == 0) return lance::Status::OK();
  if (keys == nullptr || values == nullptr) {
    return lance::Status::Invalid(n, " storage options given with a NULL key or value array");
  }
  for (size_t i = 0; i < n; ++i) {
    if (keys[i] == nullptr || values[i] == nullptr) {
      return lance::Status::Invalid("storage option ", i, " has a NULL key or value");
    }
    if (!out->emplace(keys[i], values[i]).second) {
      return lance::Status::Invalid("storage option '", keys[i], "' is given twice");
    }
  }
  return lance::Status::OK();
}

lance::Result<std::vector<std::string>> Strings(const char* const* items, size_t n, const char* what) {
  std::vector<std::string> out;
  if (n == 0) return out;
  if (items == nullptr) return lance::Status::Invalid(what, " is NULL but its count is ", n);
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    if (items[i] == nullptr) return lance::Status::Invalid(what, "[", i, "] is NULL");
    out.emplace_back(items[i]);
  }
  return out;
}

// Takes ownership of a C stream: on return it has been moved into the
// reader (or released when it could not be imported).
lance::Result<std::shared_ptr<arrow::RecordBatchReader>> ImportStream(struct ArrowArrayStream* stream) {
  if (stream->release == nullptr) return lance::Status::Invalid("the input stream is already released");
  return arrow::ImportRecordBatchReader(stream);
}

void ReleaseStream(struct ArrowArrayStream* stream) {
  if (stream != nullptr && stream->release != nullptr) {
    stream->release(stream);
    stream->release = nullptr;
  }
}

lance::Status ExportTable(const std::shared_ptr<arrow::Table>& table, struct ArrowArrayStream* out) {
  auto reader = std::make_shared<arrow::TableBatchReader>(table);
  return arrow::ExportRecordBatchReader(reader, out);
}

}  // namespace

extern "C" {

const char* lance_last_error(void) { return last_error.c_str(); }

const char* lance_status_name(lance_status status) {
  switch (status) {
    case LANCE_OK: return "OK";
    case LANCE_ERR_OUT_OF_MEMORY: return "OutOfMemory";
    case LANCE_ERR_KEY_ERROR: return "KeyError";
    case LANCE_ERR_TYPE_ERROR: return "TypeError";
    case LANCE_ERR_INVALID: return "Invalid";
    case LANCE_ERR_IO_ERROR: return "IOError";
    case LANCE_ERR_CAPACITY_ERROR: return "CapacityError";
    case LANCE_ERR_INDEX_ERROR: return "IndexError";
    case LANCE_ERR_CANCELLED: return "Cancelled";
    case LANCE_ERR_UNKNOWN: return "UnknownError";
    case LANCE_ERR_NOT_IMPLEMENTED: return "NotImplemented";
    case LANCE_ERR_SERIALIZATION: return "SerializationError";
    case LANCE_ERR_CODE_GEN: return "CodeGenError";
    case LANCE_ERR_EXPRESSION_VALIDATION: return "ExpressionValidationError";
    case LANCE_ERR_EXECUTION: return "ExecutionError";
    case LANCE_ERR_ALREADY_EXISTS: return "AlreadyExists";
    case LANCE_ERR_RETRYABLE_COMMIT_CONFLICT: return "RetryableCommitConflict";
    case LANCE_ERR_COMMIT_CONFLICT: return "CommitConflict";
    case LANCE_ERR_TOO_MUCH_WRITE_CONTENTION: return "TooMuchWriteContention";
  }
  return "UnknownStatus";
}

const char* lance_version(void) { return LANCE_CPP_VERSION; }

void lance_open_options_init(lance_open_options* options) {
  if (options != nullptr) std::memset(options, 0, sizeof(*options));
}

lance_status lance_dataset_open(const char* uri, const lance_open_options* options, lance_dataset** out) {
  return Guard(__func__, [&](const char* fn) -> lance::Status {
    LANCE_C_REQUIRE(uri);
    LANCE_C_REQUIRE(out);
    lance::OpenOptions open;
    if (options != nullptr) {
      LANCE_RETURN_NOT_OK(ToStorageOptions(options->storage_option_keys, options->storage_option_values,
                                           options->num_storage_options, &open.storage_options));
      if (options->version != nullptr) open.version = options->version;
      if (options->branch != nullptr) open.branch = options->branch;
    }
    LANCE_ASSIGN_OR_RAISE(auto dataset, lance::Dataset::Open(uri, open));
    *out = new lance_dataset{std::move(dataset), uri};
    return lance::Status::OK();
  });
}

void lance_dataset_close(lance_dataset* dataset) { delete dataset; }

const char* lance_dataset_uri(const lance_dataset* dataset) {
  return dataset == nullptr ? nullptr : dataset->uri.c_str();
}

lance_status lance_dataset_schema(const lance_dataset* dataset, struct ArrowSchema* out) {
  return Guard(__func__, [&](const char* fn) -> lance::Status {
    LANCE_C_REQUIRE(dataset);
    LANCE_C_REQUIRE(out);
    LANCE_ASSIGN_OR_RAISE(auto schema, dataset->dataset->ArrowSchema());
    return arrow::ExportSchema(*schema, out);
  });
}

lance_status lance_dataset_version(const lance_dataset* dataset, uint64_t* out) {
  return Guard(__func__, [&](const char* fn) -> lance::Status {
    LANCE_C_REQUIRE(dataset);
    LANCE_C_REQUIRE(out);
    *out = dataset->dataset->version();
    return lance::Status::OK();
  });
}

lance_status lance_dataset_latest_version(const lance_dataset* dataset, uint64_t* out) {
  return Guard(__func__, [&](const char* fn) -> lance::Status {
    LANCE_C_REQUIRE(dataset);
    LANCE_C_REQUIRE(out);
    LANCE_ASSIGN_OR_RAISE(auto latest, dataset->dataset->CheckoutLatest());
    *out = latest->version();
    return lance::Status::OK();
  });
}

lance_status lance_dataset_versions(const lance_dataset* dataset, lance_version_info** out, size_t* count) {
  return Guard(__func__, [&](const char* fn) -> lance::Status {
    LANCE_C_REQUIRE(dataset);
    LANCE_C_REQUIRE(out);
    LANCE_C_REQUIRE(count);
    LANCE_ASSIGN_OR_RAISE(auto versions, dataset->dataset->Versions());
    // One block for the entries, one string each: freed by lance_version_info_free.
    auto* list = static_cast<lance_version_info*>(std::calloc(versions.size() + 1, sizeof(lance_version_info)));
    if (list == nullptr) throw std::bad_alloc();
    for (size_t i = 0; i < versions.size(); ++i) {
      list[i].version = versions[i].version;
      list[i].has_timestamp = versions[i].timestamp_nanos.has_value() ? 1 : 0;
      list[i].timestamp_nanos = versions[i].timestamp_nanos.value_or(0);
      char* op = static_cast<char*>(std::malloc(versions[i].operation.size() + 1));
      if (op == nullptr) {
        lance_version_info_free(list, i);
        throw std::bad_alloc();
      }
      std::memcpy(op, versions[i].operation.c_str(), versions[i].operation.size() + 1);
      list[i].operation = op;
    }
    *out = list;
    *count = versions.size();
    return lance::Status::OK();
  });
}

void lance_version_info_free(lance_version_info* versions, size_t count) {
  if (versions == nullptr) return;
  for (size_t i = 0; i < count; ++i) std::free(const_cast<char*>(versions[i].operation));
  std::free(versions);
}

void lance_scan_options_init(lance_scan_options* options) {
  if (options == nullptr) return;
  std::memset(options, 0, sizeof(*options));
  options->limit = -1;
  options->batch_size = 8192;
  options->use_scalar_index = 1;
}

lance_status lance_dataset_scan(const lance_dataset* dataset, const lance_scan_options* options,
                                struct ArrowArrayStream* out) {
  return Guard(__func__, [&](const char* fn) -> lance::Status {
    LANCE_C_REQUIRE(dataset);
    LANCE_C_REQUIRE(out);
    lance_scan_options defaults;
    lance_scan_options_init(&defaults);
    const lance_scan_options& o = options != nullptr ? *options : defaults;
    lance::ScanOptions scan;
    LANCE_ASSIGN_OR_RAISE(scan.columns, Strings(o.columns, o.num_columns, "columns"));
    if (o.filter != nullptr) scan.filter = o.filter;
    if (o.offset < 0) return lance::Status::Invalid("offset must not be negative, got ", o.offset);
    scan.offset = o.offset;
    if (o.limit >= 0) scan.limit = o.limit;
    scan.with_row_id = o.with_row_id != 0;
    scan.with_row_address = o.with_row_address != 0;
    if (o.batch_size < 0) return lance::Status::Invalid("batch_size must not be negative, got ", o.batch_size);
    if (o.batch_size > 0) scan.batch_size = o.batch_size;
    scan.use_scalar_index = o.use_scalar_index != 0;
    LANCE_ASSIGN_OR_RAISE(auto reader, lance::ScanBuilder(dataset->dataset).Options(std::move(scan)).ToReader());
    return arrow::ExportRecordBatchReader(reader, out);
  });
}

lance_status lance_dataset_count_rows(const lance_dataset* dataset, const char* filter, uint64_t* out) {
  return Guard(__func__, [&](const char* fn) -> lance::Status {
    LANCE_C_REQUIRE(dataset);
    LANCE_C_REQUIRE(out);
    lance::ScanBuilder scan(dataset->dataset);
    if (filter != nullptr) scan.Filter(filter);
    LANCE_ASSIGN_OR_RAISE(int64_t n, scan.CountRows());
    *out = static_cast<uint64_t>(n);
    return lance::Status::OK();
  });
}

lance_status lance_dataset_take(const lance_dataset* dataset, const uint64_t* indices, size_t num_indices,
                                const char* const* columns, size_t num_columns, struct ArrowArrayStream* out) {
  return Guard(__func__, [&](const char* fn) -> lance::Status {
    LANCE_C_REQUIRE(dataset);
    LANCE_C_REQUIRE(out);
    if (num_indices > 0) LANCE_C_REQUIRE(indices);
    LANCE_ASSIGN_OR_RAISE(auto cols, Strings(columns, num_columns, "columns"));
    std::vector<uint64_t> wanted(indices, indices + num_indices);
    LANCE_ASSIGN_OR_RAISE(auto table, lance::Take(dataset->dataset, wanted, cols));
    return ExportTable(table, out);
  });
}

lance_status lance_dataset_take_rows(const lance_dataset* dataset, const uint64_t* row_ids, size_t num_row_ids,
                                     const char* const* columns, size_t num_columns,
                                     struct ArrowArrayStream* out) {
  return Guard(__func__, [&](const char* fn) -> lance::Status {
    LANCE_C_REQUIRE(dataset);
    LANCE_C_REQUIRE(out);
    if (num_row_ids > 0) LANCE_C_REQUIRE(row_ids);
    LANCE_ASSIGN_OR_RAISE(auto cols, Strings(columns, num_columns, "columns"));
    std::vector<uint64_t> wanted(row_ids, row_ids + num_row_ids);
    LANCE_ASSIGN_OR_RAISE(auto table, lance::TakeRows(dataset->dataset, wanted, cols));
    return ExportTable(table, out);
  });
}

void lance_write_params_init(lance_write_params* params) {
  if (params == nullptr) return;
  std::memset(params, 0, sizeof(*params));
  lance::WriteParams defaults;
  params->mode = LANCE_WRITE_CREATE;
  params->max_rows_per_file = defaults.max_rows_per_file;
  params->max_rows_per_group = defaults.max_rows_per_group;
  params->max_bytes_per_file = defaults.max_bytes_per_file;
  params->enable_stable_row_ids = defaults.enable_stable_row_ids ? 1 : 0;
  params->enable_v2_manifest_paths = defaults.enable_v2_manifest_paths ? 1 : 0;
}

lance_status lance_write_dataset(struct ArrowArrayStream* data, const char* uri, const lance_write_params* params,
                                 lance_dataset** out) {
  lance_status rc = Guard(__func__, [&](const char* fn) -> lance::Status {
    LANCE_C_REQUIRE(data);
    LANCE_C_REQUIRE(uri);
    lance_write_params defaults;
    lance_write_params_init(&defaults);
    const lance_write_params& p = params != nullptr ? *params : defaults;
    lance::WriteParams write;
    LANCE_RETURN_NOT_OK(ToStorageOptions(p.storage_option_keys, p.storage_option_values, p.num_storage_options,
                                         &write.storage_options));
    switch (p.mode) {
      case LANCE_WRITE_CREATE: write.mode = lance::WriteMode::kCreate; break;
      case LANCE_WRITE_APPEND: write.mode = lance::WriteMode::kAppend; break;
      case LANCE_WRITE_OVERWRITE: write.mode = lance::WriteMode::kOverwrite; break;
      default: return lance::Status::Invalid("unknown write mode ", static_cast<int>(p.mode));
    }
    if (p.max_rows_per_file == 0 || p.max_rows_per_group == 0 || p.max_bytes_per_file == 0) {
      return lance::Status::Invalid(
          "max_rows_per_file, max_rows_per_group and max_bytes_per_file must be positive "
          "(lance_write_params_init sets pylance's defaults)");
    }
    write.max_rows_per_file = p.max_rows_per_file;
    write.max_rows_per_group = p.max_rows_per_group;
    write.max_bytes_per_file = p.max_bytes_per_file;
    if (p.data_storage_version != nullptr) write.data_storage_version = p.data_storage_version;
    write.enable_stable_row_ids = p.enable_stable_row_ids != 0;
    write.enable_v2_manifest_paths = p.enable_v2_manifest_paths != 0;
    LANCE_ASSIGN_OR_RAISE(auto reader, ImportStream(data));
    LANCE_ASSIGN_OR_RAISE(auto dataset, lance::WriteDataset(reader, uri, write));
    if (out != nullptr) *out = new lance_dataset{std::move(dataset), uri};
    return lance::Status::OK();
  });
  ReleaseStream(data);  // consumed in every case (a no-op once imported)
  return rc;
}

lance_status lance_dataset_delete(lance_dataset* dataset, const char* predicate, uint64_t* num_deleted_rows) {
  return Guard(__func__, [&](const char* fn) -> lance::Status {
    LANCE_C_REQUIRE(dataset);
    LANCE_C_REQUIRE(predicate);
    auto del = dataset->dataset->NewDelete(predicate);
    LANCE_ASSIGN_OR_RAISE(auto next, del.Commit());
    dataset->dataset = std::move(next);
    if (num_deleted_rows != nullptr) *num_deleted_rows = del.result().num_deleted_rows;
    return lance::Status::OK();
  });
}

lance_status lance_dataset_update(lance_dataset* dataset, const char* const* columns, const char* const* expressions,
                                  size_t num_columns, const char* predicate, uint64_t* num_updated_rows) {
  return Guard(__func__, [&](const char* fn) -> lance::Status {
    LANCE_C_REQUIRE(dataset);
    if (num_columns == 0) return lance::Status::Invalid(fn, ": no column to update");
    LANCE_ASSIGN_OR_RAISE(auto cols, Strings(columns, num_columns, "columns"));
    LANCE_ASSIGN_OR_RAISE(auto exprs, Strings(expressions, num_columns, "expressions"));
    auto update = dataset->dataset->NewUpdate();
    for (size_t i = 0; i < cols.size(); ++i) update.Set(cols[i], exprs[i]);
    if (predicate != nullptr && predicate[0] != '\0') update.Where(predicate);
    LANCE_ASSIGN_OR_RAISE(auto next, update.Commit());
    dataset->dataset = std::move(next);
    if (num_updated_rows != nullptr) *num_updated_rows = update.result().num_rows_updated;
    return lance::Status::OK();
  });
}

void lance_merge_insert_params_init(lance_merge_insert_params* params) {
  if (params != nullptr) std::memset(params, 0, sizeof(*params));
}

lance_status lance_dataset_merge_insert(lance_dataset* dataset, const lance_merge_insert_params* params,
                                        struct ArrowArrayStream* source, lance_merge_insert_result* result) {
  lance_status rc = Guard(__func__, [&](const char* fn) -> lance::Status {
    LANCE_C_REQUIRE(dataset);
    LANCE_C_REQUIRE(params);
    LANCE_C_REQUIRE(source);
    if (params->num_on == 0) return lance::Status::Invalid(fn, ": no key column (on)");
    LANCE_ASSIGN_OR_RAISE(auto on, Strings(params->on, params->num_on, "on"));
    auto merge = dataset->dataset->NewMergeInsert(std::move(on));
    if (params->when_matched_update_all) merge.WhenMatchedUpdateAll();
    if (params->when_not_matched_insert_all) merge.WhenNotMatchedInsertAll();
    if (params->when_not_matched_by_source_delete) {
      const char* pred = params->when_not_matched_by_source_predicate;
      merge.WhenNotMatchedBySourceDelete(pred != nullptr ? pred : "");
    }
    LANCE_ASSIGN_OR_RAISE(auto reader, ImportStream(source));
    LANCE_ASSIGN_OR_RAISE(auto next, merge.Commit(reader));
    dataset->dataset = std::move(next);
    if (result != nullptr) {
      const auto& r = merge.result();
      result->num_inserted_rows = r.num_inserted_rows;
      result->num_updated_rows = r.num_updated_rows;
      result->num_deleted_rows = r.num_deleted_rows;
      result->version = r.version;
    }
    return lance::Status::OK();
  });
  ReleaseStream(source);
  return rc;
}

}  // extern "C"
