#!/usr/bin/env bash
# From a fresh Debian machine to results: installs the dependencies (scripts/setup.sh), builds
# iotail, runs the built-in default benchmark (`iotail run`: a short random-read job on a
# temporary file, removed afterwards) which prints its summary and writes fio-format histogram
# logs, then shows `iotail pctiles` over those logs.
# Usage: scripts/quickstart.sh [build-dir]   (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
build=${1:-build}

bash scripts/setup.sh
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j "$(nproc)" --target iotail
iotail="$root/$build/iotail"

work=$(mktemp -d "${TMPDIR:-/tmp}/iotail-quickstart.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"
echo
echo "== iotail run (default benchmark on a temporary file in $work)"
"$iotail" run --write_hist_log=quickstart --log_hist_msec=500
echo
echo "== iotail pctiles quickstart_clat_hist.*.log --percentiles 50 99 99.9 --time-quantum 1s"
"$iotail" pctiles quickstart_clat_hist.*.log --percentiles 50 99 99.9 --time-quantum 1s
