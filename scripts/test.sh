#!/usr/bin/env bash
# Sets up a fresh Debian machine (scripts/setup.sh --mpi: every dependency, Open MPI too), builds
# iotail with warnings as errors and runs the whole test suite. Usage: scripts/test.sh [build-dir]   (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}

bash scripts/setup.sh --mpi
# A new build directory (CI's clean clone) gets Ninja (setup.sh installs it) and the quick build
# of the binary's libraries (one unit each, as the quickstart's: 72 s instead of about 300 s on
# two cores); an existing one keeps its generator and its choice (one unit per file, for quick
# rebuilds after a change).
configure=()
if [ ! -e "$build/CMakeCache.txt" ]; then configure=(-G Ninja -DIOTAIL_QUICK_BUILD=ON); fi
cmake -S . -B "$build" "${configure[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DIOTAIL_WERROR=ON
cmake --build "$build" -j "$(nproc)"
# Two tests at a time, except the suites that time real I/O (rates, runtimes, latencies against
# a known delay, CPU shares: RUN_SERIAL in tests/CMakeLists.txt), which run alone.
ctest --test-dir "$build" --output-on-failure -j2
# Every skipped test with its reason, so that a skip is seen and never mistaken for a pass.
awk '/: Skipped$/ {getline why; skip = why} /\[  SKIPPED \]/ && skip != "" {
       sub(/^.*\[  SKIPPED \] /, ""); print "skipped: " $0 ": " skip; skip = ""}' \
  "$build/Testing/Temporary/LastTest.log" | sort -u
if [ -x scripts/fuzz.sh ]; then
  # A short run of each fuzzer (libFuzzer, clang; the log reader, the pctiles/merge path).
  scripts/fuzz.sh 10
fi
