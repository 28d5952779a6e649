#!/bin/sh
# Builds the libFuzzer target for the histogram-log reader with clang, ASan and UBSan, and runs it.
# usage: scripts/fuzz.sh [SECONDS]   (default 60; the build goes to build-fuzz/, new corpus
# entries to build-fuzz/corpus/, crashes to build-fuzz/crashes/)
set -eu
seconds=${1:-60}
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build-fuzz
CXX=clang++ cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DIOTAIL_FUZZ=ON \
  -DIOTAIL_TESTS=OFF -DIOTAIL_SANITIZE=address,undefined >/dev/null
cmake --build "$build" --target log_reader_fuzz -j"$(nproc)"
mkdir -p "$build/corpus" "$build/crashes"
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
"$build/tests/fuzz/log_reader_fuzz" -max_total_time="$seconds" -max_len=16384 -timeout=10 \
  -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$build/crashes/" \
  "$build/corpus" "$root/tests/fuzz/corpus"
