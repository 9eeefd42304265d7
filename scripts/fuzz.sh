#!/usr/bin/env bash
# Runs libFuzzer targets one after another: scripts/fuzz.sh BUILD_DIR SECONDS TARGET...
# Each target starts from its checked-in seeds (tests/fuzz/seeds/, the
# repository's pylance-made fixtures, and ../shared/fixtures when present)
# and keeps what it finds in BUILD_DIR/fuzz-corpus/TARGET; a crash leaves
# its input in BUILD_DIR/fuzz-artifacts/ and fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
build=$1 seconds=$2
shift 2
shared=../shared/fixtures/lance-test-data
seeds_of() {
  case $1 in
    manifest_fuzz) echo "tests/fixtures"; [[ -d $shared ]] && echo "$shared" ;;
    file_reader_fuzz) echo "tests/fixtures/v2_0 tests/fixtures/v2_1 tests/fixtures/legacy" ;;
    deletion_fuzz) echo "tests/fuzz/seeds/deletion" ;;
    filter_fuzz) echo "tests/fuzz/seeds/filter" ;;
    index_fuzz) echo "tests/fuzz/seeds/index" ;;
  esac
}
export ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
mkdir -p "$build/fuzz-artifacts"
status=0
for t in "$@"; do
  corpus=$build/fuzz-corpus/$t
  mkdir -p "$corpus"
  # Seeds larger than 1 MiB are skipped by libFuzzer's -max_len anyway.
  log=$build/fuzz-$t.log
  if "$build/bin/$t" "$corpus" $(seeds_of "$t") -max_total_time="$seconds" -max_len=1048576 \
       -rss_limit_mb=4096 -timeout=30 -print_final_stats=1 -artifact_prefix="$build/fuzz-artifacts/$t-" \
       >"$log" 2>&1; then
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
    echo "fuzz: $t: $runs executions in ${seconds}s, no crash"
  else
    status=1
    echo "fuzz: $t FAILED (see $log; inputs in $build/fuzz-artifacts/)"
    grep -m5 -E "ERROR|SUMMARY|runtime error" "$log" || true
  fi
done
exit $status
