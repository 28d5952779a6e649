#!/usr/bin/env bash
# From a fresh Debian machine to results: installs what building and running iotail needs and
# nothing else (scripts/setup.sh --run: no test tools, no Open MPI), builds the iotail binary
# alone (no tests, no iotail-mpi), runs the built-in default benchmark (`iotail run`: a short
# random-read job on a temporary file, removed afterwards) which prints its summary and writes
# fio-format histogram logs, then shows `iotail pctiles` over those logs. Each stage's time is
# printed at the end.
# Usage: scripts/quickstart.sh [build-dir]   (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
build=${1:-build}

# CPU seconds (user + system) of the commands this script has run so far (cutime and cstime of
# /proc/PID/stat): on a machine shared with other work, the wall times below depend on the load
# and these do not.
tick=$(getconf CLK_TCK)
cpu_s() { awk -v tick="$tick" '{ printf "%.0f", ($16 + $17) / tick }' "/proc/$$/stat"; }

SECONDS=0
bash scripts/setup.sh --run
setup_s=$SECONDS setup_cpu=$(cpu_s)
# -O2 as the RelWithDebInfo builds, without debug info; Ninja, no tests, only the iotail target,
# and IOTAIL_QUICK_BUILD (each library compiled as one unit, with precompiled std and fmt
# headers: a third of the CPU time of one unit per file, at the same -O2; see CMakeLists.txt):
# the quickest build. A build directory configured before (by scripts/test.sh, say) keeps its
# own settings.
if [ -f "$build/CMakeCache.txt" ]; then
  cmake -S . -B "$build" >/dev/null
else
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CXX_FLAGS_RELEASE=-O2 -DNDEBUG" \
    -DIOTAIL_TESTS=OFF -DIOTAIL_QUICK_BUILD=ON >/dev/null
fi
cmake --build "$build" -j "$(nproc)" --target iotail
build_s=$((SECONDS - setup_s)) build_cpu=$(($(cpu_s) - setup_cpu))
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
echo
echo "quickstart: installing ${setup_s} s, building ${build_s} s (CPU ${build_cpu} s)," \
  "running $((SECONDS - setup_s - build_s)) s"
