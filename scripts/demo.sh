#!/usr/bin/env bash
# `make demo`: bash scripts/demo.sh <path-to-lance-cpp> [URI]
#
# Without URI: walks a dataset's whole life with lance-cpp alone, on a small
# sample embedded below (CSV): create, append, delete, update, merge-insert,
# time travel, restore, tag — printing what each step changed.
# With URI: shows `versions` and `inspect` for that dataset.
set -euo pipefail

[[ $# -ge 1 && $# -le 2 ]] || { echo "usage: bash scripts/demo.sh <path-to-lance-cpp> [URI]" >&2; exit 2; }
LANCE_CPP=$1
URI=${2:-}
if [[ ! -x $LANCE_CPP ]]; then
  echo "demo: lance-cpp not found or not executable: $LANCE_CPP (run 'make' first)" >&2
  exit 1
fi

step() { printf '\n==== %s ====\n' "$*"; }
run() { printf '$ lance-cpp'; printf ' %q' "$@"; printf '\n'; "$LANCE_CPP" "$@"; }
show() { run scan "$URI"; printf 'live rows: %s\n' "$("$LANCE_CPP" count "$URI")"; }

if [[ -n $URI ]]; then
  run versions "$URI"
  run inspect "$URI"
  exit 0
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/lance-cpp-demo-XXXXXX")
URI=$work/fruit.lance

cat > "$work/create.csv" <<'CSV'
id,name,price,category
1,apple,1.20,fruit
2,banana,0.50,fruit
3,carrot,0.80,vegetable
4,dates,6.00,fruit
5,eggplant,2.40,vegetable
CSV
cat > "$work/append.csv" <<'CSV'
id,name,price,category
6,fig,3.10,fruit
7,garlic,0.90,vegetable
8,honeydew,4.50,fruit
CSV
cat > "$work/upsert.csv" <<'CSV'
id,name,price,category
2,banana,0.55,fruit
8,honeydew,4.25,fruit
9,kale,2.20,vegetable
CSV

step "1. create a dataset from CSV"
run write "$URI" --input "$work/create.csv" --mode create
show

step "2. append three rows"
run write "$URI" --input "$work/append.csv" --mode append
show

step "3. delete the cheap vegetables (a deletion vector, no rewrite)"
run delete "$URI" "category = 'vegetable' AND price < 1"
show

step "4. update: fruit costs one more"
run update "$URI" --set "price = price + 1" --where "category = 'fruit'"
show

step "5. merge-insert on id: two rows updated, one inserted"
run merge-insert "$URI" --on id --input "$work/upsert.csv" --when-matched-update-all --when-not-matched-insert-all
show

step "6. time travel: version 1 is still there"
run scan "$URI" --version 1

step "7. tag version 2, then restore it as the latest version"
run tag "$URI" create before-changes 2
run restore "$URI" 2
show

step "8. the history"
run versions "$URI"
run tag "$URI" list

printf '\nThe demo dataset lives in %s (remove it when done).\n' "$URI"
