#!/usr/bin/env bash
# From a fresh Debian machine to results: installs what building and running iotail needs and
# nothing else (scripts/setup.sh --run: no test tools, no Open MPI), builds the iotail binary
# alone (no tests, no iotail-mpi), runs the built-in default benchmark (`iotail run`: a short
# random-read job on a temporary file, removed afterwards) which prints its summary and writes
# fio-format histogram logs, then shows `iotail pctiles` over those logs. Each stage's time is
# printed at the end. The installing and building stages print one line each; what the package
# manager and the build print goes to BUILD-DIR/quickstart.log (its last lines are shown if a stage
# fails).
# Usage: scripts/quickstart.sh [build-dir]   (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
build=${1:-build}
case $build in
  /*) build_path=$build ;;
  *) build_path=$root/$build ;;
esac
mkdir -p "$build_path"
log=$build_path/quickstart.log
: >"$log"
# logged WHAT COMMAND...: says WHAT in one line, runs COMMAND with its output in the log; on
# failure, the log's last lines and COMMAND's exit status.
logged() {
  local what=$1
  shift
  echo "quickstart: $what (output in $log)"
  local status=0
  "$@" >>"$log" 2>&1 || status=$?
  if [ "$status" -ne 0 ]; then
    echo "quickstart: failed (exit status $status): $*" >&2
    echo "quickstart: the last lines of $log:" >&2
    tail -n 30 "$log" >&2
    exit "$status"
  fi
}

# CPU seconds (user + system) of the commands this script has run so far (cutime and cstime of
# /proc/PID/stat): on a machine shared with other work, the wall times below depend on the load
# and these do not.
tick=$(getconf CLK_TCK)
cpu_s() { awk -v tick="$tick" '{ printf "%.0f", ($16 + $17) / tick }' "/proc/$$/stat"; }

SECONDS=0
bash scripts/setup.sh --run --log "$log"
setup_s=$SECONDS setup_cpu=$(cpu_s)
# -O2 as the RelWithDebInfo builds, without debug info; Ninja, no tests, only the iotail target,
# and IOTAIL_QUICK_BUILD (each library compiled as one unit, with precompiled std and fmt
# headers: a third of the CPU time of one unit per file, at the same -O2; see CMakeLists.txt):
# the quickest build. A build directory configured before (by scripts/test.sh, say) keeps its
# own settings.
if [ -f "$build_path/CMakeCache.txt" ]; then
  logged "configuring $build as configured before" cmake -S . -B "$build_path"
else
  logged "configuring $build: Release, -O2, the quick build" \
    cmake -S . -B "$build_path" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    "-DCMAKE_CXX_FLAGS_RELEASE=-O2 -DNDEBUG" -DIOTAIL_TESTS=OFF -DIOTAIL_QUICK_BUILD=ON
fi
logged "building $build/iotail with $(nproc) jobs, about a minute on 2 idle cores" \
  cmake --build "$build_path" -j "$(nproc)" --target iotail
build_s=$((SECONDS - setup_s)) build_cpu=$(($(cpu_s) - setup_cpu))
iotail="$build_path/iotail"

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
