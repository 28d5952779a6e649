#!/usr/bin/env bash
# Builds the engine tests with ThreadSanitizer (own build dir) and runs the tests that exercise
# concurrent recording: the recorder under a concurrent writer and the interval clock.
# Usage: scripts/tsan-engine-tests.sh [build-dir]   (default build-tsan)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-tsan}
cmake -S . -B "$build" -DIOTAIL_SANITIZE=thread -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j"$(nproc)" --target engine_tests stats_tests
TSAN_OPTIONS="halt_on_error=1 ${TSAN_OPTIONS:-}" \
  "$build/tests/stats_tests" --gtest_filter='RecorderTest.*'
TSAN_OPTIONS="halt_on_error=1 ${TSAN_OPTIONS:-}" \
  "$build/tests/engine_tests" --gtest_filter='IntervalClockTest.*'
