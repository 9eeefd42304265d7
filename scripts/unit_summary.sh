#!/usr/bin/env bash
# After ctest: names the unit tests skipped because the historical pylance
# datasets (../shared/fixtures, beside the clone) are not there. The text is
# the one tests/unit/shared_fixtures.h skips with.
set -euo pipefail
log=${1:?usage: unit_summary.sh BUILD_DIR}/Testing/Temporary/LastTest.log
[[ -f $log ]] || exit 0
reason="../shared/fixtures/lance-test-data not found beside the clone (historical pylance datasets)"
n=$(grep -cF "$reason" "$log" || true)
if ((n > 0)); then
  echo "$n test$( ((n == 1)) || echo s) skipped: $reason"
fi
