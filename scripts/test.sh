#!/usr/bin/env bash
# Sets up a fresh Debian machine (scripts/setup.sh --mpi: every dependency, Open MPI too), builds
# iotail with warnings as errors and runs the whole test suite. Usage: scripts/test.sh [build-dir]   (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}

bash scripts/setup.sh --mpi
# Ninja for a new build directory (setup.sh installs it); an existing one keeps its generator.
generator=()
if [ ! -e "$build/CMakeCache.txt" ]; then generator=(-G Ninja); fi
cmake -S . -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DIOTAIL_WERROR=ON
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
  scripts/fuzz.sh 20
fi
