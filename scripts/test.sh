#!/usr/bin/env bash
# Sets up a fresh Debian machine (scripts/setup.sh), builds iotail with warnings as errors and
# runs the whole test suite. Usage: scripts/test.sh [build-dir]   (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}

bash scripts/setup.sh
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DIOTAIL_WERROR=ON
cmake --build "$build" -j "$(nproc)"
# Serially: the end-to-end tests time real I/O (rates, intervals, signals) and must not compete
# with each other for the two cores of a CI machine; the whole suite takes about 20 s.
ctest --test-dir "$build" --output-on-failure
if [ -x scripts/fuzz.sh ]; then
  # A short run of the log-reader fuzzer (libFuzzer, clang): finds crashes, not just builds.
  scripts/fuzz.sh 20
fi
