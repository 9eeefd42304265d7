/* Reads the dataset consumer_cpp wrote, through the C ABI. */
#include <inttypes.h>
#include <stdio.h>

#include <lance/lance_c.h>

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  lance_dataset* ds = NULL;
  if (lance_dataset_open(argv[1], NULL, &ds) != LANCE_OK) {
    fprintf(stderr, "open: %s\n", lance_last_error());
    return 1;
  }
  uint64_t all = 0, some = 0, version = 0;
  if (lance_dataset_count_rows(ds, NULL, &all) != LANCE_OK ||
      lance_dataset_count_rows(ds, "id >= 5", &some) != LANCE_OK ||
      lance_dataset_version(ds, &version) != LANCE_OK) {
    fprintf(stderr, "count: %s\n", lance_last_error());
    lance_dataset_close(ds);
    return 1;
  }
  lance_dataset_close(ds);
  lance_dataset* none = NULL;
  lance_status rc = lance_dataset_open(NULL, NULL, &none);
  printf("c: %" PRIu64 " of %" PRIu64 " rows at version %" PRIu64 "; open(NULL): %s\n", some, all, version,
         lance_status_name(rc));
  return 0;
}
