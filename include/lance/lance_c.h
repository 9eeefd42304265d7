/* lance-cpp's C ABI: Lance datasets for engines written in C or anything with
 * a C FFI. Data crosses as the Arrow C data interface (ArrowSchema,
 * ArrowArrayStream), so no C++ type appears here. C99 and C++ compatible.
 *
 *   lance_dataset* ds = NULL;
 *   if (lance_dataset_open("/data/t.lance", NULL, &ds) != LANCE_OK) {
 *     fprintf(stderr, "%s\n", lance_last_error());
 *     return 1;
 *   }
 *   lance_scan_options so;
 *   lance_scan_options_init(&so);
 *   so.filter = "id > 10";
 *   struct ArrowArrayStream stream;
 *   if (lance_dataset_scan(ds, &so, &stream) == LANCE_OK) {
 *     ... stream.get_next(&stream, &array) ... stream.release(&stream);
 *   }
 *   lance_dataset_close(ds);
 *
 * Errors: every function that can fail returns a lance_status; LANCE_OK (0)
 * is success. On failure the message (with the context lance-cpp built up)
 * is kept per thread and returned by lance_last_error() until the next call
 * returning a lance_status on the same thread. Out-parameters are written only on
 * success. A NULL where a value is required is an error (LANCE_ERR_INVALID),
 * never a crash; no C++ exception leaves these functions.
 *
 * Options structs carry pylance's names; fill them with their *_init
 * function (the defaults are pylance's, written next to each field) and
 * then change what you need. A NULL options pointer means the defaults.
 *
 * Thread-safety: a lance_dataset may be read (schema, scan, take, count,
 * versions) from several threads at once. The calls that commit (delete,
 * update, merge_insert) move the handle to the version they commit, as
 * pylance's dataset object does, and must not run concurrently with any
 * other call on the same handle. Streams returned are independent of the
 * handle: they may outlive it.
 */
#ifndef LANCE_LANCE_C_H_
#define LANCE_LANCE_C_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- The Arrow C data interface, as the Arrow specification asks it to be
 * copied (same guards as arrow/c/abi.h, so either may come first). */
#ifndef ARROW_C_DATA_INTERFACE
#define ARROW_C_DATA_INTERFACE

#define ARROW_FLAG_DICTIONARY_ORDERED 1
#define ARROW_FLAG_NULLABLE 2
#define ARROW_FLAG_MAP_KEYS_SORTED 4

struct ArrowSchema {
  const char* format;
  const char* name;
  const char* metadata;
  int64_t flags;
  int64_t n_children;
  struct ArrowSchema** children;
  struct ArrowSchema* dictionary;
  void (*release)(struct ArrowSchema*);
  void* private_data;
};

struct ArrowArray {
  int64_t length;
  int64_t null_count;
  int64_t offset;
  int64_t n_buffers;
  int64_t n_children;
  const void** buffers;
  struct ArrowArray** children;
  struct ArrowArray* dictionary;
  void (*release)(struct ArrowArray*);
  void* private_data;
};

#endif /* ARROW_C_DATA_INTERFACE */

#ifndef ARROW_C_STREAM_INTERFACE
#define ARROW_C_STREAM_INTERFACE

struct ArrowArrayStream {
  int (*get_schema)(struct ArrowArrayStream*, struct ArrowSchema* out);
  int (*get_next)(struct ArrowArrayStream*, struct ArrowArray* out);
  const char* (*get_last_error)(struct ArrowArrayStream*);
  void (*release)(struct ArrowArrayStream*);
  void* private_data;
};

#endif /* ARROW_C_STREAM_INTERFACE */

/* ---- Errors */

/** Status codes. The values 1..45 are those of the C++ API's status codes
 *  (arrow::StatusCode), with their meanings; the 100s are the kinds of a
 *  failed commit (lance::ErrorKind), reported instead of LANCE_ERR_INVALID. */
typedef enum lance_status {
  LANCE_OK = 0,
  LANCE_ERR_OUT_OF_MEMORY = 1,
  LANCE_ERR_KEY_ERROR = 2,          /* a name or key not found */
  LANCE_ERR_TYPE_ERROR = 3,         /* a value of the wrong type */
  LANCE_ERR_INVALID = 4,            /* an invalid argument or request, a NULL argument */
  LANCE_ERR_IO_ERROR = 5,           /* reading or writing failed; a dataset not found */
  LANCE_ERR_CAPACITY_ERROR = 6,
  LANCE_ERR_INDEX_ERROR = 7,        /* an index (row offset) out of range */
  LANCE_ERR_CANCELLED = 8,
  LANCE_ERR_UNKNOWN = 9,            /* also: an unexpected internal error */
  LANCE_ERR_NOT_IMPLEMENTED = 10,   /* a feature this build does not support */
  LANCE_ERR_SERIALIZATION = 11,     /* corrupt or unreadable data */
  LANCE_ERR_CODE_GEN = 40,
  LANCE_ERR_EXPRESSION_VALIDATION = 41,
  LANCE_ERR_EXECUTION = 42,
  LANCE_ERR_ALREADY_EXISTS = 45,
  /** Another writer committed a change this one must be re-run on top of;
   *  retrying may succeed. Nothing was committed. */
  LANCE_ERR_RETRYABLE_COMMIT_CONFLICT = 100,
  /** Another writer committed a change this one cannot be combined with. */
  LANCE_ERR_COMMIT_CONFLICT = 101,
  /** Re-run as often as allowed and still conflicted. */
  LANCE_ERR_TOO_MUCH_WRITE_CONTENTION = 102
} lance_status;

/** The message of the last call returning a lance_status on this thread
 *  ("" if it succeeded). Valid until the next such call on this thread. */
const char* lance_last_error(void);

/** A constant name for a status code ("OK", "Invalid", "IOError", ...). */
const char* lance_status_name(lance_status status);

/** lance-cpp's version, e.g. "0.1.0". */
const char* lance_version(void);

/* ---- Opening a dataset */

typedef struct lance_dataset lance_dataset;

/** Storage options: parallel arrays of `num_storage_options` keys and values
 *  (pylance's storage_options dict, lance/storage_options.h): for s3:// URIs
 *  aws_endpoint, allow_http, aws_region, aws_access_key_id, ...; AWS_*
 *  environment variables fill in unset keys. A key pylance knows but this
 *  build does not implement is refused with LANCE_ERR_NOT_IMPLEMENTED naming
 *  it; a key pylance ignores is ignored. */
typedef struct lance_open_options {
  /** A version number ("3") or a tag name; NULL or "" = the latest. */
  const char* version;
  /** The branch to open; NULL, "" or "main" = the default branch. */
  const char* branch;
  const char* const* storage_option_keys;
  const char* const* storage_option_values;
  size_t num_storage_options;
} lance_open_options;

/** Defaults: latest version of the main branch, no storage options (also
 *  what an all-zero struct means). */
void lance_open_options_init(lance_open_options* options);

/** Opens the dataset at `uri` (a local path or file:// URI). `options` may
 *  be NULL. On success *out is a handle to free with lance_dataset_close. */
lance_status lance_dataset_open(const char* uri, const lance_open_options* options, lance_dataset** out);

/** Frees a handle; NULL is ignored. Streams made from it stay valid. */
void lance_dataset_close(lance_dataset* dataset);

/** The URI the dataset was opened with; owned by the handle. NULL if
 *  `dataset` is NULL. */
const char* lance_dataset_uri(const lance_dataset* dataset);

/** The dataset's schema (as pylance's `schema`); the caller releases it. */
lance_status lance_dataset_schema(const lance_dataset* dataset, struct ArrowSchema* out);

/** The version the handle reads. */
lance_status lance_dataset_version(const lance_dataset* dataset, uint64_t* out);

/** The newest version committed now (pylance's latest_version): the
 *  dataset's directory is listed again. */
lance_status lance_dataset_latest_version(const lance_dataset* dataset, uint64_t* out);

/** One committed version (pylance's versions() entry). */
typedef struct lance_version_info {
  uint64_t version;
  /** Nanoseconds since the Unix epoch, UTC; valid when has_timestamp. */
  int64_t timestamp_nanos;
  int has_timestamp;
  /** The operation that made it ("Append", "Delete", ...), "" if none was
   *  recorded. Owned by the list. */
  const char* operation;
} lance_version_info;

/** Every committed version, ascending. Free *out with
 *  lance_version_info_free(*out, *count). */
lance_status lance_dataset_versions(const lance_dataset* dataset, lance_version_info** out, size_t* count);
void lance_version_info_free(lance_version_info* versions, size_t count);

/* ---- Reading */

typedef struct lance_scan_options {
  /** Columns to return, in order (top-level names or nested paths "a.b");
   *  NULL / 0 = every column. */
  const char* const* columns;
  size_t num_columns;
  /** A SQL predicate; NULL or "" = every row. */
  const char* filter;
  /** Rows to return at most, after filtering; negative = no limit
   *  (default -1, pylance's None). */
  int64_t limit;
  /** Rows to skip after filtering (default 0). */
  int64_t offset;
  /** Append `_rowid` (uint64), as pylance's with_row_id (default 0). */
  int with_row_id;
  /** Append `_rowaddr` (uint64), as pylance's with_row_address (default 0). */
  int with_row_address;
  /** Rows per batch at most; 0 = the default, 8192. */
  int64_t batch_size;
  /** Answer the filter through scalar indices where possible (default 1). */
  int use_scalar_index;
} lance_scan_options;

/** Defaults: every column and row, no limit, batch_size 8192, use_scalar_index 1.
 *  NOTE an all-zero struct would mean limit 0 and no scalar indices: use this. */
void lance_scan_options_init(lance_scan_options* options);

/** Scans the handle's version (pylance's scanner(...).to_reader()). `options`
 *  may be NULL. On success *out is a stream the caller releases; a bad
 *  filter or column is reported here, before any row is read. */
lance_status lance_dataset_scan(const lance_dataset* dataset, const lance_scan_options* options,
                                struct ArrowArrayStream* out);

/** Rows where `filter` holds (NULL or "" = every row), as pylance's
 *  count_rows(filter). */
lance_status lance_dataset_count_rows(const lance_dataset* dataset, const char* filter, uint64_t* out);

/** Rows at positions `indices` among the live rows (pylance's take), in the
 *  order given, repeats allowed; `columns` as in lance_scan_options (NULL /
 *  0 = every column). `indices` may be NULL when `num_indices` is 0. */
lance_status lance_dataset_take(const lance_dataset* dataset, const uint64_t* indices, size_t num_indices,
                                const char* const* columns, size_t num_columns, struct ArrowArrayStream* out);

/** Rows by row id (stable ids, or row addresses when the dataset has none),
 *  as pylance's _take_rows. */
lance_status lance_dataset_take_rows(const lance_dataset* dataset, const uint64_t* row_ids, size_t num_row_ids,
                                     const char* const* columns, size_t num_columns,
                                     struct ArrowArrayStream* out);

/* ---- Writing */

typedef enum lance_write_mode {
  LANCE_WRITE_CREATE = 0,    /* pylance's mode="create" (the default): fails if it exists */
  LANCE_WRITE_APPEND = 1,    /* "append": creates the dataset if absent */
  LANCE_WRITE_OVERWRITE = 2  /* "overwrite": creates it if absent */
} lance_write_mode;

typedef struct lance_write_params {
  lance_write_mode mode;         /* default LANCE_WRITE_CREATE */
  uint64_t max_rows_per_file;    /* default 1048576 */
  uint64_t max_rows_per_group;   /* default 1024 */
  uint64_t max_bytes_per_file;   /* default 90 GiB */
  /** "legacy"/"0.1", "2.0", "2.1", "2.2"/"stable"; NULL = the existing
   *  dataset's, else "2.2". */
  const char* data_storage_version;
  /** Only when creating or overwriting (default 0). */
  int enable_stable_row_ids;
  /** Only when creating (default 1, as pylance 14). */
  int enable_v2_manifest_paths;
  /** As lance_open_options. */
  const char* const* storage_option_keys;
  const char* const* storage_option_values;
  size_t num_storage_options;
} lance_write_params;

/** pylance's defaults (listed above). */
void lance_write_params_init(lance_write_params* params);

/** pylance's write_dataset(data, uri, ...): writes every batch of `data`
 *  and commits one version. The stream is consumed: it is released (and its
 *  release pointer set to NULL) whether the call succeeds or not, as long
 *  as `data` itself is not NULL. `params` may be NULL (the defaults). On
 *  success, when `out` is not NULL, *out is a handle on the new version. */
lance_status lance_write_dataset(struct ArrowArrayStream* data, const char* uri, const lance_write_params* params,
                                 lance_dataset** out);

/** Deletes the rows where `predicate` (SQL) holds, as pylance's delete; the
 *  handle moves to the new version. `num_deleted_rows` may be NULL. */
lance_status lance_dataset_delete(lance_dataset* dataset, const char* predicate, uint64_t* num_deleted_rows);

/** UPDATE: for each i, column `columns[i]` becomes the SQL expression
 *  `expressions[i]` in the rows where `predicate` holds (NULL or "" = every
 *  row), as pylance's update(dict(zip(columns, expressions)), where). At
 *  least one column. The handle moves to the new version.
 *  `num_updated_rows` may be NULL. */
lance_status lance_dataset_update(lance_dataset* dataset, const char* const* columns, const char* const* expressions,
                                  size_t num_columns, const char* predicate, uint64_t* num_updated_rows);

typedef struct lance_merge_insert_params {
  /** Key columns the source is joined on (at least one). */
  const char* const* on;
  size_t num_on;
  int when_matched_update_all;           /* default 0 */
  int when_not_matched_insert_all;       /* default 0 */
  int when_not_matched_by_source_delete; /* default 0 */
  /** With the above: only target rows where this holds are deleted; NULL
   *  or "" = all unmatched ones. */
  const char* when_not_matched_by_source_predicate;
} lance_merge_insert_params;

void lance_merge_insert_params_init(lance_merge_insert_params* params);

typedef struct lance_merge_insert_result {
  uint64_t num_inserted_rows;
  uint64_t num_updated_rows;
  uint64_t num_deleted_rows;
  uint64_t version;
} lance_merge_insert_result;

/** pylance's merge_insert(on).when_...().execute(source). `source` is
 *  consumed as in lance_write_dataset. The handle moves to the new version.
 *  `result` may be NULL. */
lance_status lance_dataset_merge_insert(lance_dataset* dataset, const lance_merge_insert_params* params,
                                        struct ArrowArrayStream* source, lance_merge_insert_result* result);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* LANCE_LANCE_C_H_ */
