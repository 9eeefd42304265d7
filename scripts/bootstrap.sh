#!/usr/bin/env bash
# Installs what the build and the tests need on a fresh Debian machine:
# the Debian packages below (only those missing) and the pinned .venv.
# Safe to run again: it does nothing when everything is already there.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(cmake ninja-build g++ pkg-config protobuf-compiler libprotobuf-dev
          libroaring-dev libzstd-dev liblz4-dev libxxhash-dev
          libgtest-dev libgmock-dev libbenchmark-dev nlohmann-json3-dev python3-venv
          libcurl4-openssl-dev libssl-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "bootstrap: installing ${missing[*]}" >&2
  SUDO=""; [[ $(id -u) -eq 0 ]] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# The pinned Python environment; rebuilt when requirements.txt changes.
stamp=.venv/.requirements.sha256
want=$(sha256sum requirements.txt | cut -d' ' -f1)
if [[ ! -x .venv/bin/python || ! -f $stamp || $(cat "$stamp") != "$want" ]]; then
  echo "bootstrap: creating .venv from requirements.txt" >&2
  PY=${PYTHON:-python3}
  "$PY" -m venv .venv
  .venv/bin/pip install -q --disable-pip-version-check -r requirements.txt
  echo "$want" > "$stamp"
fi
