#!/usr/bin/env bash
# `make demo`: bash scripts/demo.sh <path-to-lance-cpp> <path-to-venv-python> [URI]
#
# Without URI: writes a small sample dataset with the pinned pylance into a
# fresh temporary directory (a few versions: create 1000 rows with
# id/name/vector columns, append, delete some rows, tag "v1"), then shows
# `lance-cpp versions` and `lance-cpp inspect` on it.
# With URI: shows the same two commands for that dataset.
set -euo pipefail

usage() {
  echo "usage: bash scripts/demo.sh <path-to-lance-cpp> <path-to-venv-python> [URI]" >&2
  exit 2
}

[[ $# -ge 2 && $# -le 3 ]] || usage
LANCE_CPP=$1
PY=$2
URI=${3:-}

if [[ ! -x $LANCE_CPP ]]; then
  echo "demo: lance-cpp not found or not executable: $LANCE_CPP (run 'make' first)" >&2
  exit 1
fi

header() {
  printf '\n==== %s ====\n' "$*"
}

if [[ -z $URI ]]; then
  if [[ ! -x $PY ]]; then
    echo "demo: python not found: $PY (run 'make deps' to create .venv)" >&2
    exit 1
  fi
  workdir=$(mktemp -d "${TMPDIR:-/tmp}/lance-cpp-demo-XXXXXX")
  URI=$workdir/sample.lance
  header "creating a sample dataset with pylance"
  LANCE_LOG=${LANCE_LOG:-error} "$PY" - "$URI" <<'EOF'
import sys

import numpy as np
import pyarrow as pa
import lance

uri = sys.argv[1]
rng = np.random.default_rng(42)
DIM = 8


def rows(start, stop):
    n = stop - start
    vectors = pa.FixedSizeListArray.from_arrays(
        pa.array(rng.random(n * DIM, dtype=np.float32)), DIM)
    return pa.table({
        "id": pa.array(range(start, stop), pa.int64()),
        "name": pa.array([f"item-{i}" for i in range(start, stop)]),
        "vector": vectors,
    })


lance.write_dataset(rows(0, 1000), uri)                      # version 1: create
ds = lance.write_dataset(rows(1000, 1500), uri, mode="append")  # version 2: append
ds.delete("id % 10 = 3")                                     # version 3: delete
ds = lance.dataset(uri)
ds.tags.create("v1", 1)
print(f"wrote {uri}: version {ds.version}, {ds.count_rows()} live rows, tag v1 -> version 1")
EOF
  echo "sample dataset: $URI"
fi

header "lance-cpp versions $URI"
"$LANCE_CPP" versions "$URI"

header "lance-cpp inspect $URI"
"$LANCE_CPP" inspect "$URI"

if [[ -n ${workdir:-} ]]; then
  printf '\nThe sample dataset lives in %s (remove it when done).\n' "$URI"
fi
