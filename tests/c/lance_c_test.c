/* The C ABI (lance/lance_c.h) exercised from C, compiled as C11: Arrow data
 * is built and read by hand through the C data interface, as an engine
 * without Arrow's libraries would.
 *
 *   lance_c_test [DIR]          every check, on datasets under DIR (default: a
 *                               new temporary directory); exit 1 on a failure
 *   lance_c_test write URI      creates URI: ROWS rows id 0..ROWS-1,
 *                               name "n<id>", score id * 0.5 (for pytest)
 *   lance_c_test dump URI [FILTER]  prints "id name score" per row
 *   lance_c_test delete URI PREDICATE   prints the rows deleted
 *   lance_c_test update URI COLUMN EXPR PREDICATE   prints the rows updated
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lance/lance_c.h"

static int failures = 0;

#define CHECK(cond)                                                        \
  do {                                                                     \
    if (!(cond)) {                                                         \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                          \
    }                                                                      \
  } while (0)

#define CHECK_OK(expr)                                                     \
  do {                                                                     \
    lance_status rc_ = (expr);                                             \
    if (rc_ != LANCE_OK) {                                                 \
      fprintf(stderr, "%s:%d: %s returned %s: %s\n", __FILE__, __LINE__, #expr, \
              lance_status_name(rc_), lance_last_error());                 \
      ++failures;                                                          \
    }                                                                      \
  } while (0)

/* expr fails with `code` and a message containing `needle`. */
#define CHECK_ERR(expr, code, needle)                                      \
  do {                                                                     \
    lance_status rc_ = (expr);                                             \
    if (rc_ != (code)) {                                                   \
      fprintf(stderr, "%s:%d: %s returned %s, expected %s (%s)\n", __FILE__, __LINE__, #expr, \
              lance_status_name(rc_), lance_status_name(code), lance_last_error()); \
      ++failures;                                                          \
    } else if (strstr(lance_last_error(), (needle)) == NULL) {             \
      fprintf(stderr, "%s:%d: %s: message \"%s\" lacks \"%s\"\n", __FILE__, __LINE__, #expr, \
              lance_last_error(), (needle));                               \
      ++failures;                                                          \
    }                                                                      \
  } while (0)

/* expr fails (any code) with a message containing `needle`. */
#define CHECK_FAILS(expr, needle)                                          \
  do {                                                                     \
    lance_status rc_ = (expr);                                             \
    if (rc_ == LANCE_OK) {                                                 \
      fprintf(stderr, "%s:%d: %s succeeded, expected a failure\n", __FILE__, __LINE__, #expr); \
      ++failures;                                                          \
    } else if (strstr(lance_last_error(), (needle)) == NULL) {             \
      fprintf(stderr, "%s:%d: %s: message \"%s\" lacks \"%s\"\n", __FILE__, __LINE__, #expr, \
              lance_last_error(), (needle));                               \
      ++failures;                                                          \
    }                                                                      \
  } while (0)

/* ---------------------------------------------------------------------------
 * An input stream: batches of (id int64 not null, name utf8, score float64). */

typedef struct {
  int64_t next_id;
  int64_t end_id;
  int64_t batch_rows;
} gen_state;

static void release_leaf_schema(struct ArrowSchema* s) { s->release = NULL; }

static void release_struct_schema(struct ArrowSchema* s) {
  for (int64_t i = 0; i < s->n_children; ++i) {
    if (s->children[i]->release) s->children[i]->release(s->children[i]);
    free(s->children[i]);
  }
  free(s->children);
  s->release = NULL;
}

static void leaf_schema(struct ArrowSchema* s, const char* format, const char* name, int64_t flags) {
  memset(s, 0, sizeof(*s));
  s->format = format;
  s->name = name;
  s->flags = flags;
  s->release = release_leaf_schema;
}

static void make_schema(struct ArrowSchema* s) {
  memset(s, 0, sizeof(*s));
  s->format = "+s";
  s->name = "";
  s->n_children = 3;
  s->children = calloc(3, sizeof(struct ArrowSchema*));
  for (int i = 0; i < 3; ++i) s->children[i] = malloc(sizeof(struct ArrowSchema));
  leaf_schema(s->children[0], "l", "id", 0);
  leaf_schema(s->children[1], "u", "name", ARROW_FLAG_NULLABLE);
  leaf_schema(s->children[2], "g", "score", ARROW_FLAG_NULLABLE);
  s->release = release_struct_schema;
}

static void release_leaf_array(struct ArrowArray* a) {
  for (int64_t i = 0; i < a->n_buffers; ++i) free((void*)a->buffers[i]);
  free(a->buffers);
  a->release = NULL;
}

static void release_struct_array(struct ArrowArray* a) {
  for (int64_t i = 0; i < a->n_children; ++i) {
    if (a->children[i]->release) a->children[i]->release(a->children[i]);
    free(a->children[i]);
  }
  free(a->children);
  free(a->buffers);
  a->release = NULL;
}

static struct ArrowArray* leaf_array(int64_t length, int64_t n_buffers) {
  struct ArrowArray* a = calloc(1, sizeof(struct ArrowArray));
  a->length = length;
  a->n_buffers = n_buffers;
  a->buffers = calloc((size_t)n_buffers, sizeof(void*));
  a->release = release_leaf_array;
  return a;
}

static int gen_get_schema(struct ArrowArrayStream* stream, struct ArrowSchema* out) {
  (void)stream;
  make_schema(out);
  return 0;
}

static int gen_get_next(struct ArrowArrayStream* stream, struct ArrowArray* out) {
  gen_state* st = stream->private_data;
  memset(out, 0, sizeof(*out));
  if (st->next_id >= st->end_id) return 0; /* end: out->release == NULL */
  int64_t n = st->end_id - st->next_id;
  if (n > st->batch_rows) n = st->batch_rows;

  struct ArrowArray* ids = leaf_array(n, 2);
  int64_t* id_values = malloc((size_t)n * sizeof(int64_t));
  struct ArrowArray* names = leaf_array(n, 3);
  int32_t* offsets = malloc((size_t)(n + 1) * sizeof(int32_t));
  char* chars = malloc((size_t)n * 24 + 1);
  struct ArrowArray* scores = leaf_array(n, 2);
  double* score_values = malloc((size_t)n * sizeof(double));
  offsets[0] = 0;
  for (int64_t i = 0; i < n; ++i) {
    int64_t id = st->next_id + i;
    id_values[i] = id;
    score_values[i] = (double)id * 0.5;
    offsets[i + 1] = offsets[i] + sprintf(chars + offsets[i], "n%" PRId64, id);
  }
  ids->buffers[1] = id_values;
  names->buffers[1] = offsets;
  names->buffers[2] = chars;
  scores->buffers[1] = score_values;

  out->length = n;
  out->n_buffers = 1;
  out->buffers = calloc(1, sizeof(void*));
  out->n_children = 3;
  out->children = calloc(3, sizeof(struct ArrowArray*));
  out->children[0] = ids;
  out->children[1] = names;
  out->children[2] = scores;
  out->release = release_struct_array;
  st->next_id += n;
  return 0;
}

static const char* gen_last_error(struct ArrowArrayStream* stream) {
  (void)stream;
  return NULL;
}

static void gen_release(struct ArrowArrayStream* stream) {
  free(stream->private_data);
  stream->release = NULL;
}

/* Rows [first, end) in batches of `batch_rows`. */
static void make_stream(struct ArrowArrayStream* s, int64_t first, int64_t end, int64_t batch_rows) {
  gen_state* st = malloc(sizeof(gen_state));
  st->next_id = first;
  st->end_id = end;
  st->batch_rows = batch_rows;
  s->get_schema = gen_get_schema;
  s->get_next = gen_get_next;
  s->get_last_error = gen_last_error;
  s->release = gen_release;
  s->private_data = st;
}

/* ---------------------------------------------------------------------------
 * Reading a result stream into rows. */

typedef struct {
  size_t n;
  int64_t* id;      /* NULL if the column was not returned */
  char** name;
  double* score;
  uint64_t* rowid;
  int64_t num_columns;
} rows;

static void free_rows(rows* r) {
  if (r->name) {
    for (size_t i = 0; i < r->n; ++i) free(r->name[i]);
  }
  free(r->id);
  free(r->name);
  free(r->score);
  free(r->rowid);
  memset(r, 0, sizeof(*r));
}

/* Consumes and releases `stream`; 0 on success. */
static int read_rows(struct ArrowArrayStream* stream, rows* out) {
  memset(out, 0, sizeof(*out));
  struct ArrowSchema schema;
  int rc = stream->get_schema(stream, &schema);
  if (rc != 0) {
    fprintf(stderr, "get_schema: %d %s\n", rc, stream->get_last_error(stream));
    stream->release(stream);
    return rc;
  }
  int col_id = -1, col_name = -1, col_score = -1, col_rowid = -1;
  out->num_columns = schema.n_children;
  for (int64_t i = 0; i < schema.n_children; ++i) {
    const char* nm = schema.children[i]->name;
    const char* fmt = schema.children[i]->format;
    if (strcmp(nm, "id") == 0 && strcmp(fmt, "l") == 0) col_id = (int)i;
    if (strcmp(nm, "name") == 0 && strcmp(fmt, "u") == 0) col_name = (int)i;
    if (strcmp(nm, "score") == 0 && strcmp(fmt, "g") == 0) col_score = (int)i;
    if (strcmp(nm, "_rowid") == 0 && strcmp(fmt, "L") == 0) col_rowid = (int)i;
  }
  schema.release(&schema);
  size_t cap = 0;
  for (;;) {
    struct ArrowArray batch;
    rc = stream->get_next(stream, &batch);
    if (rc != 0) {
      fprintf(stderr, "get_next: %d %s\n", rc, stream->get_last_error(stream));
      break;
    }
    if (batch.release == NULL) break;
    size_t need = out->n + (size_t)batch.length;
    if (need > cap) {
      cap = need * 2;
      if (col_id >= 0) out->id = realloc(out->id, cap * sizeof(int64_t));
      if (col_name >= 0) out->name = realloc(out->name, cap * sizeof(char*));
      if (col_score >= 0) out->score = realloc(out->score, cap * sizeof(double));
      if (col_rowid >= 0) out->rowid = realloc(out->rowid, cap * sizeof(uint64_t));
    }
    for (int64_t r = 0; r < batch.length; ++r) {
      size_t k = out->n + (size_t)r;
      if (col_id >= 0) {
        struct ArrowArray* c = batch.children[col_id];
        out->id[k] = ((const int64_t*)c->buffers[1])[c->offset + batch.offset + r];
      }
      if (col_score >= 0) {
        struct ArrowArray* c = batch.children[col_score];
        out->score[k] = ((const double*)c->buffers[1])[c->offset + batch.offset + r];
      }
      if (col_rowid >= 0) {
        struct ArrowArray* c = batch.children[col_rowid];
        out->rowid[k] = ((const uint64_t*)c->buffers[1])[c->offset + batch.offset + r];
      }
      if (col_name >= 0) {
        struct ArrowArray* c = batch.children[col_name];
        int64_t at = c->offset + batch.offset + r;
        const int32_t* offs = c->buffers[1];
        const char* data = c->buffers[2];
        const uint8_t* valid = c->buffers[0];
        if (valid != NULL && !(valid[at / 8] & (1u << (at % 8)))) {
          out->name[k] = NULL;
        } else {
          size_t len = (size_t)(offs[at + 1] - offs[at]);
          out->name[k] = malloc(len + 1);
          memcpy(out->name[k], data + offs[at], len);
          out->name[k][len] = '\0';
        }
      }
    }
    out->n = need;
    batch.release(&batch);
  }
  stream->release(stream);
  return rc;
}

/* ---------------------------------------------------------------------------
 * The modes pytest drives (tests/interop/test_c_abi.py). */

static int fail_with(const char* what) {
  fprintf(stderr, "error: %s: %s\n", what, lance_last_error());
  return 1;
}

static int mode_write(const char* uri, int64_t rows_wanted) {
  struct ArrowArrayStream in;
  make_stream(&in, 0, rows_wanted, 64);
  lance_write_params params;
  lance_write_params_init(&params);
  params.max_rows_per_file = 100;
  if (lance_write_dataset(&in, uri, &params, NULL) != LANCE_OK) return fail_with("write");
  return 0;
}

static int mode_dump(const char* uri, const char* filter) {
  lance_dataset* ds = NULL;
  if (lance_dataset_open(uri, NULL, &ds) != LANCE_OK) return fail_with("open");
  lance_scan_options so;
  lance_scan_options_init(&so);
  so.filter = filter;
  struct ArrowArrayStream out;
  if (lance_dataset_scan(ds, &so, &out) != LANCE_OK) {
    lance_dataset_close(ds);
    return fail_with("scan");
  }
  rows r;
  int rc = read_rows(&out, &r);
  lance_dataset_close(ds);
  if (rc != 0 || !r.id || !r.name || !r.score) {
    fprintf(stderr, "error: unexpected columns\n");
    free_rows(&r);
    return 1;
  }
  for (size_t i = 0; i < r.n; ++i) {
    printf("%" PRId64 " %s %.17g\n", r.id[i], r.name[i] ? r.name[i] : "<null>", r.score[i]);
  }
  free_rows(&r);
  return 0;
}

static int mode_delete(const char* uri, const char* predicate) {
  lance_dataset* ds = NULL;
  if (lance_dataset_open(uri, NULL, &ds) != LANCE_OK) return fail_with("open");
  uint64_t n = 0;
  lance_status rc = lance_dataset_delete(ds, predicate, &n);
  lance_dataset_close(ds);
  if (rc != LANCE_OK) return fail_with("delete");
  printf("%" PRIu64 "\n", n);
  return 0;
}

static int mode_update(const char* uri, const char* column, const char* expr, const char* predicate) {
  lance_dataset* ds = NULL;
  if (lance_dataset_open(uri, NULL, &ds) != LANCE_OK) return fail_with("open");
  uint64_t n = 0;
  lance_status rc = lance_dataset_update(ds, &column, &expr, 1, predicate, &n);
  lance_dataset_close(ds);
  if (rc != LANCE_OK) return fail_with("update");
  printf("%" PRIu64 "\n", n);
  return 0;
}

/* ---------------------------------------------------------------------------
 * The self-test. */

static uint64_t count(const lance_dataset* ds, const char* filter) {
  uint64_t n = UINT64_MAX;
  CHECK_OK(lance_dataset_count_rows(ds, filter, &n));
  return n;
}

static uint64_t version_of(const lance_dataset* ds) {
  uint64_t v = 0;
  CHECK_OK(lance_dataset_version(ds, &v));
  return v;
}

static void test_write_and_read(const char* dir) {
  char uri[4096];
  snprintf(uri, sizeof uri, "%s/t.lance", dir);

  /* create: 100 rows in batches of 60, files of at most 50 rows */
  struct ArrowArrayStream in;
  make_stream(&in, 0, 100, 60);
  lance_write_params wp;
  lance_write_params_init(&wp);
  CHECK(wp.mode == LANCE_WRITE_CREATE && wp.max_rows_per_file == 1024 * 1024 && wp.enable_v2_manifest_paths == 1);
  wp.max_rows_per_file = 50;
  wp.data_storage_version = "2.1";
  wp.enable_stable_row_ids = 1;
  lance_dataset* ds = NULL;
  CHECK_OK(lance_write_dataset(&in, uri, &wp, &ds));
  CHECK(in.release == NULL); /* consumed */
  if (ds == NULL) return;
  CHECK(version_of(ds) == 1);
  CHECK(strcmp(lance_dataset_uri(ds), uri) == 0);
  CHECK(strcmp(lance_last_error(), "") == 0);
  lance_dataset_close(ds);

  /* creating it again is refused */
  make_stream(&in, 0, 10, 10);
  CHECK_FAILS(lance_write_dataset(&in, uri, NULL, NULL), "");
  CHECK(in.release == NULL);

  /* open and read back */
  ds = NULL;
  CHECK_OK(lance_dataset_open(uri, NULL, &ds));
  if (ds == NULL) return;
  struct ArrowSchema schema;
  CHECK_OK(lance_dataset_schema(ds, &schema));
  CHECK(schema.n_children == 3);
  if (schema.n_children == 3) {
    CHECK(strcmp(schema.children[0]->name, "id") == 0 && strcmp(schema.children[0]->format, "l") == 0);
    CHECK((schema.children[0]->flags & ARROW_FLAG_NULLABLE) == 0);
    CHECK(strcmp(schema.children[1]->name, "name") == 0 && strcmp(schema.children[1]->format, "u") == 0);
    CHECK(strcmp(schema.children[2]->name, "score") == 0 && strcmp(schema.children[2]->format, "g") == 0);
  }
  schema.release(&schema);

  CHECK(count(ds, NULL) == 100);
  CHECK(count(ds, "") == 100);
  CHECK(count(ds, "id < 30") == 30);
  CHECK(count(ds, "name LIKE 'n9%'") == 11);

  /* scan: projection, filter, offset, limit */
  lance_scan_options so;
  lance_scan_options_init(&so);
  CHECK(so.limit == -1 && so.offset == 0 && so.batch_size == 8192 && so.use_scalar_index == 1);
  const char* cols[] = {"score", "id"};
  so.columns = cols;
  so.num_columns = 2;
  so.filter = "id >= 10 AND id < 20";
  so.offset = 2;
  so.limit = 5;
  struct ArrowArrayStream out;
  rows r;
  CHECK_OK(lance_dataset_scan(ds, &so, &out));
  CHECK(read_rows(&out, &r) == 0);
  CHECK(r.num_columns == 2 && r.name == NULL && r.id != NULL && r.score != NULL);
  CHECK(r.n == 5);
  for (size_t i = 0; r.id && r.score && i < r.n && i < 5; ++i) {
    CHECK(r.id[i] == 12 + (int64_t)i);
    CHECK(r.score[i] == (double)(12 + (int64_t)i) * 0.5);
  }
  free_rows(&r);

  /* every row, small batches, with row ids */
  lance_scan_options_init(&so);
  so.with_row_id = 1;
  so.batch_size = 7;
  CHECK_OK(lance_dataset_scan(ds, &so, &out));
  CHECK(read_rows(&out, &r) == 0);
  CHECK(r.n == 100 && r.num_columns == 4 && r.rowid != NULL && r.name != NULL);
  uint64_t rowid_of_42 = UINT64_MAX;
  for (size_t i = 0; r.id && r.name && i < r.n; ++i) {
    char want[32];
    snprintf(want, sizeof want, "n%zu", i);
    CHECK(r.id[i] == (int64_t)i);
    CHECK(r.name[i] != NULL && strcmp(r.name[i], want) == 0);
    if (r.rowid && r.id[i] == 42) rowid_of_42 = r.rowid[i];
  }
  free_rows(&r);

  /* a NULL options pointer: the defaults */
  CHECK_OK(lance_dataset_scan(ds, NULL, &out));
  CHECK(read_rows(&out, &r) == 0);
  CHECK(r.n == 100 && r.num_columns == 3);
  free_rows(&r);

  /* take by offset, in the order asked, with repeats */
  uint64_t idx[] = {5, 99, 0, 5};
  const char* take_cols[] = {"id", "name"};
  CHECK_OK(lance_dataset_take(ds, idx, 4, take_cols, 2, &out));
  CHECK(read_rows(&out, &r) == 0);
  CHECK(r.n == 4 && r.num_columns == 2);
  if (r.n == 4 && r.id && r.name) {
    CHECK(r.id[0] == 5 && r.id[1] == 99 && r.id[2] == 0 && r.id[3] == 5);
    CHECK(strcmp(r.name[1], "n99") == 0);
  }
  free_rows(&r);

  /* take by row id */
  CHECK(rowid_of_42 != UINT64_MAX);
  CHECK_OK(lance_dataset_take_rows(ds, &rowid_of_42, 1, NULL, 0, &out));
  CHECK(read_rows(&out, &r) == 0);
  CHECK(r.n == 1 && r.id && r.id[0] == 42);
  free_rows(&r);

  /* append 50 rows */
  make_stream(&in, 100, 150, 50);
  lance_write_params_init(&wp);
  wp.mode = LANCE_WRITE_APPEND;
  lance_dataset* ds2 = NULL;
  CHECK_OK(lance_write_dataset(&in, uri, &wp, &ds2));
  if (ds2) {
    CHECK(version_of(ds2) == 2);
    CHECK(count(ds2, NULL) == 150);
    lance_dataset_close(ds2);
  }
  /* the old handle still reads version 1; the latest is 2 */
  CHECK(version_of(ds) == 1);
  CHECK(count(ds, NULL) == 100);
  uint64_t latest = 0;
  CHECK_OK(lance_dataset_latest_version(ds, &latest));
  CHECK(latest == 2);
  lance_dataset_close(ds);

  /* delete and update move the handle to the new version */
  ds = NULL;
  CHECK_OK(lance_dataset_open(uri, NULL, &ds));
  if (ds == NULL) return;
  uint64_t n = 0;
  CHECK_OK(lance_dataset_delete(ds, "id >= 140 OR id = 7", &n));
  CHECK(n == 11);
  CHECK(version_of(ds) == 3);
  CHECK(count(ds, NULL) == 139);
  CHECK(count(ds, "id = 7") == 0);

  const char* set_cols[] = {"score", "name"};
  const char* set_exprs[] = {"score + 1000", "'changed'"};
  CHECK_OK(lance_dataset_update(ds, set_cols, set_exprs, 2, "id < 3", &n));
  CHECK(n == 3);
  CHECK(version_of(ds) == 4);
  CHECK(count(ds, "name = 'changed'") == 3);
  CHECK(count(ds, "score >= 1000") == 3);
  /* an update without predicate touches every row */
  const char* one_col[] = {"score"};
  const char* one_expr[] = {"score"};
  CHECK_OK(lance_dataset_update(ds, one_col, one_expr, 1, NULL, &n));
  CHECK(n == 139);
  CHECK(version_of(ds) == 5);

  /* merge-insert on id: ids 0 (updated) and 500, 501 (inserted) */
  lance_merge_insert_params mp;
  lance_merge_insert_params_init(&mp);
  const char* on[] = {"id"};
  mp.on = on;
  mp.num_on = 1;
  mp.when_matched_update_all = 1;
  mp.when_not_matched_insert_all = 1;
  struct ArrowArrayStream src;
  make_stream(&src, 500, 502, 10);
  lance_merge_insert_result mr;
  memset(&mr, 0, sizeof mr);
  CHECK_OK(lance_dataset_merge_insert(ds, &mp, &src, &mr));
  CHECK(src.release == NULL);
  CHECK(mr.num_inserted_rows == 2 && mr.num_updated_rows == 0 && mr.version == 6);
  make_stream(&src, 0, 1, 10);
  CHECK_OK(lance_dataset_merge_insert(ds, &mp, &src, &mr));
  CHECK(mr.num_inserted_rows == 0 && mr.num_updated_rows == 1 && mr.version == 7);
  CHECK(version_of(ds) == 7);
  CHECK(count(ds, NULL) == 141);
  CHECK(count(ds, "id = 0 AND name = 'n0'") == 1);
  /* ... and deleting the target rows no source row matches, where id >= 500 */
  lance_merge_insert_params_init(&mp);
  mp.on = on;
  mp.num_on = 1;
  mp.when_not_matched_by_source_delete = 1;
  mp.when_not_matched_by_source_predicate = "id >= 500";
  make_stream(&src, 0, 1, 10);
  CHECK_OK(lance_dataset_merge_insert(ds, &mp, &src, NULL));
  CHECK(version_of(ds) == 8);
  CHECK(count(ds, NULL) == 139);
  CHECK(count(ds, "id >= 500") == 0);

  /* versions */
  lance_version_info* versions = NULL;
  size_t nv = 0;
  CHECK_OK(lance_dataset_versions(ds, &versions, &nv));
  CHECK(nv == 8);
  for (size_t i = 0; versions && i < nv; ++i) {
    CHECK(versions[i].version == i + 1);
    CHECK(versions[i].has_timestamp && versions[i].timestamp_nanos > 0);
    CHECK(versions[i].operation != NULL);
  }
  if (versions && nv == 8) {
    CHECK(strcmp(versions[0].operation, "Overwrite") == 0);
    CHECK(strcmp(versions[1].operation, "Append") == 0);
    CHECK(strcmp(versions[2].operation, "Delete") == 0);
    CHECK(strcmp(versions[3].operation, "Update") == 0);
  }
  lance_version_info_free(versions, nv);
  lance_dataset_close(ds);

  /* time travel */
  lance_open_options oo;
  lance_open_options_init(&oo);
  oo.version = "2";
  ds = NULL;
  CHECK_OK(lance_dataset_open(uri, &oo, &ds));
  if (ds) {
    CHECK(version_of(ds) == 2);
    CHECK(count(ds, NULL) == 150);
    CHECK_OK(lance_dataset_latest_version(ds, &latest));
    CHECK(latest == 8);
    lance_dataset_close(ds);
  }

  /* overwrite */
  make_stream(&in, 0, 10, 10);
  lance_write_params_init(&wp);
  wp.mode = LANCE_WRITE_OVERWRITE;
  ds = NULL;
  CHECK_OK(lance_write_dataset(&in, uri, &wp, &ds));
  if (ds) {
    CHECK(version_of(ds) == 9);
    CHECK(count(ds, NULL) == 10);
    lance_dataset_close(ds);
  }
}

static void test_errors(const char* dir) {
  char uri[4096], missing[4096];
  snprintf(uri, sizeof uri, "%s/e.lance", dir);
  snprintf(missing, sizeof missing, "%s/no-such.lance", dir);
  struct ArrowArrayStream in, out;
  make_stream(&in, 0, 20, 20);
  lance_dataset* ds = NULL;
  CHECK_OK(lance_write_dataset(&in, uri, NULL, &ds));
  if (ds == NULL) return;

  lance_dataset* none = NULL;
  CHECK(lance_dataset_open(missing, NULL, &none) != LANCE_OK);
  CHECK(strlen(lance_last_error()) > 0 && none == NULL);
  CHECK(lance_dataset_open("bogus-scheme://x/y", NULL, &none) != LANCE_OK);
  CHECK(strlen(lance_last_error()) > 0 && none == NULL);
  lance_open_options oo;
  lance_open_options_init(&oo);
  oo.version = "99";
  CHECK(lance_dataset_open(uri, &oo, &none) != LANCE_OK && none == NULL);

  /* storage options: a key pylance ignores on a local path is accepted, a
   * key this build does not implement is refused by name */
  const char* keys[] = {"aws_region"};
  const char* values[] = {"us-east-1"};
  lance_open_options_init(&oo);
  oo.storage_option_keys = keys;
  oo.storage_option_values = values;
  oo.num_storage_options = 1;
  lance_dataset* with_options = NULL;
  CHECK_OK(lance_dataset_open(uri, &oo, &with_options));
  if (with_options != NULL) lance_dataset_close(with_options);
  const char* refused[] = {"aws_profile"};
  oo.storage_option_keys = refused;
  CHECK_ERR(lance_dataset_open(uri, &oo, &none), LANCE_ERR_NOT_IMPLEMENTED, "aws_profile");
  oo.storage_option_values = NULL;
  CHECK_ERR(lance_dataset_open(uri, &oo, &none), LANCE_ERR_INVALID, "NULL");
  lance_write_params wp;
  lance_write_params_init(&wp);
  wp.mode = LANCE_WRITE_APPEND;
  wp.storage_option_keys = refused;
  wp.storage_option_values = values;
  wp.num_storage_options = 1;
  make_stream(&in, 0, 5, 5);
  CHECK_ERR(lance_write_dataset(&in, uri, &wp, NULL), LANCE_ERR_NOT_IMPLEMENTED, "aws_profile");
  CHECK(in.release == NULL);

  /* a success clears the message */
  uint64_t n = 0;
  CHECK_OK(lance_dataset_count_rows(ds, NULL, &n));
  CHECK(strcmp(lance_last_error(), "") == 0);

  /* bad filters and columns fail at the call, with a message */
  lance_scan_options so;
  lance_scan_options_init(&so);
  so.filter = "id >>> 3 AND";
  CHECK(lance_dataset_scan(ds, &so, &out) != LANCE_OK);
  CHECK(strlen(lance_last_error()) > 0);
  so.filter = "no_such_column = 1";
  CHECK_FAILS(lance_dataset_scan(ds, &so, &out), "no_such_column");
  CHECK(lance_dataset_count_rows(ds, "id = ", &n) != LANCE_OK);
  lance_scan_options_init(&so);
  const char* bad_cols[] = {"nope"};
  so.columns = bad_cols;
  so.num_columns = 1;
  CHECK_FAILS(lance_dataset_scan(ds, &so, &out), "nope");
  so.columns = NULL; /* with num_columns 1 */
  CHECK_ERR(lance_dataset_scan(ds, &so, &out), LANCE_ERR_INVALID, "columns");
  lance_scan_options_init(&so);
  so.offset = -1;
  CHECK_ERR(lance_dataset_scan(ds, &so, &out), LANCE_ERR_INVALID, "offset");
  CHECK(lance_dataset_delete(ds, "id >", &n) != LANCE_OK);
  const char* col[] = {"score"};
  const char* bad_expr[] = {"score +"};
  CHECK(lance_dataset_update(ds, col, bad_expr, 1, NULL, &n) != LANCE_OK);
  CHECK_ERR(lance_dataset_update(ds, col, bad_expr, 0, NULL, &n), LANCE_ERR_INVALID, "no column");
  uint64_t far = 1000;
  CHECK(lance_dataset_take(ds, &far, 1, NULL, 0, &out) != LANCE_OK);
  CHECK(strlen(lance_last_error()) > 0);
  uint64_t v = 0;
  CHECK_OK(lance_dataset_version(ds, &v));
  CHECK(v == 1); /* nothing above committed */

  /* NULL arguments: errors naming the argument, never a crash */
  CHECK_ERR(lance_dataset_open(NULL, NULL, &none), LANCE_ERR_INVALID, "lance_dataset_open: uri is NULL");
  CHECK_ERR(lance_dataset_open(uri, NULL, NULL), LANCE_ERR_INVALID, "out is NULL");
  CHECK_ERR(lance_dataset_schema(NULL, NULL), LANCE_ERR_INVALID, "dataset is NULL");
  CHECK_ERR(lance_dataset_scan(NULL, NULL, &out), LANCE_ERR_INVALID, "dataset is NULL");
  CHECK_ERR(lance_dataset_scan(ds, NULL, NULL), LANCE_ERR_INVALID, "lance_dataset_scan: out is NULL");
  CHECK_ERR(lance_dataset_count_rows(ds, NULL, NULL), LANCE_ERR_INVALID, "out is NULL");
  CHECK_ERR(lance_dataset_version(NULL, &v), LANCE_ERR_INVALID, "NULL");
  CHECK_ERR(lance_dataset_latest_version(NULL, &v), LANCE_ERR_INVALID, "NULL");
  CHECK_ERR(lance_dataset_versions(ds, NULL, NULL), LANCE_ERR_INVALID, "NULL");
  CHECK_ERR(lance_dataset_take(ds, NULL, 3, NULL, 0, &out), LANCE_ERR_INVALID, "indices is NULL");
  CHECK_ERR(lance_dataset_take_rows(NULL, NULL, 0, NULL, 0, &out), LANCE_ERR_INVALID, "NULL");
  CHECK_ERR(lance_dataset_delete(ds, NULL, &n), LANCE_ERR_INVALID, "predicate is NULL");
  CHECK_ERR(lance_dataset_delete(NULL, "id = 1", &n), LANCE_ERR_INVALID, "dataset is NULL");
  CHECK_ERR(lance_dataset_update(ds, NULL, NULL, 1, NULL, &n), LANCE_ERR_INVALID, "columns is NULL");
  CHECK_ERR(lance_write_dataset(NULL, uri, NULL, NULL), LANCE_ERR_INVALID, "data is NULL");
  make_stream(&in, 0, 5, 5);
  CHECK_ERR(lance_write_dataset(&in, NULL, NULL, NULL), LANCE_ERR_INVALID, "uri is NULL");
  CHECK(in.release == NULL); /* still consumed */
  CHECK_ERR(lance_dataset_merge_insert(ds, NULL, NULL, NULL), LANCE_ERR_INVALID, "NULL");
  lance_merge_insert_params mp;
  lance_merge_insert_params_init(&mp);
  make_stream(&in, 0, 5, 5);
  CHECK_ERR(lance_dataset_merge_insert(ds, &mp, &in, NULL), LANCE_ERR_INVALID, "no key column");
  CHECK(in.release == NULL);
  CHECK(lance_dataset_uri(NULL) == NULL);
  lance_dataset_close(NULL);
  lance_version_info_free(NULL, 0);
  lance_open_options_init(NULL);
  lance_scan_options_init(NULL);
  lance_write_params_init(NULL);

  CHECK(strcmp(lance_status_name(LANCE_ERR_IO_ERROR), "IOError") == 0);
  CHECK(strlen(lance_version()) > 0);
  lance_dataset_close(ds);
}

static int self_test(const char* dir_arg) {
  char tmpl[] = "/tmp/lance_c_test.XXXXXX";
  const char* dir = dir_arg;
  if (dir == NULL) {
    dir = mkdtemp(tmpl);
    if (dir == NULL) {
      perror("mkdtemp");
      return 1;
    }
  }
  test_write_and_read(dir);
  test_errors(dir);
  if (dir_arg == NULL) {
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
  }
  if (failures) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf("lance_c_test: all checks passed\n");
  return 0;
}

int main(int argc, char** argv) {
  if (argc >= 3 && strcmp(argv[1], "write") == 0) {
    return mode_write(argv[2], argc >= 4 ? strtoll(argv[3], NULL, 10) : 300);
  }
  if (argc >= 3 && strcmp(argv[1], "dump") == 0) return mode_dump(argv[2], argc >= 4 ? argv[3] : NULL);
  if (argc == 4 && strcmp(argv[1], "delete") == 0) return mode_delete(argv[2], argv[3]);
  if (argc == 6 && strcmp(argv[1], "update") == 0) return mode_update(argv[2], argv[3], argv[4], argv[5]);
  if (argc <= 2) return self_test(argc == 2 ? argv[1] : NULL);
  fprintf(stderr, "usage: lance_c_test [DIR] | write URI [ROWS] | dump URI [FILTER] | delete URI PRED | "
                  "update URI COLUMN EXPR PRED\n");
  return 2;
}
