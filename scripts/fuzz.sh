#!/bin/sh
# Builds the libFuzzer targets with clang, ASan and UBSan, and runs each for SECONDS: the
# histogram-log reader (log_reader_fuzz), the pctiles/merge path (merge_fuzz: scan, merger,
# percentiles and SLC, merged-log writer) and the fio job-file reader (job_file_fuzz: sections,
# includes among files held in memory, ${VAR}, arithmetic, --showcmd) and the values of a job's
# options as --parse-only settles them (job_options_fuzz).
# usage: scripts/fuzz.sh [SECONDS]   (default 60 each; the build goes to build-fuzz/, new corpus
# entries to build-fuzz/corpus*/, crashes to build-fuzz/crashes/)
set -eu
seconds=${1:-60}
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build-fuzz
# A new build directory (CI's) gets Ninja and the quick build (each library one unit: 201 s
# instead of 495 s on two cores, measured without ccache); an existing one keeps its choice.
configure=""
if [ ! -e "$build/CMakeCache.txt" ]; then configure="-G Ninja -DIOTAIL_QUICK_BUILD=ON"; fi
# shellcheck disable=SC2086 # $configure is two words or none
CXX=clang++ cmake -S "$root" -B "$build" $configure -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DIOTAIL_FUZZ=ON -DIOTAIL_TESTS=OFF -DIOTAIL_SANITIZE=address,undefined >/dev/null
cmake --build "$build" --target log_reader_fuzz merge_fuzz job_file_fuzz job_options_fuzz \
  -j"$(nproc)"
mkdir -p "$build/corpus" "$build/corpus-merge" "$build/corpus-job-file" "$build/corpus-job-options" \
  "$build/crashes"
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
"$build/tests/fuzz/log_reader_fuzz" -max_total_time="$seconds" -max_len=16384 -timeout=10 \
  -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$build/crashes/" \
  "$build/corpus" "$root/tests/fuzz/corpus"
"$build/tests/fuzz/merge_fuzz" -max_total_time="$seconds" -max_len=65536 -timeout=10 \
  -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$build/crashes/merge-" \
  "$build/corpus-merge" "$root/tests/fuzz/corpus"
"$build/tests/fuzz/job_file_fuzz" -max_total_time="$seconds" -max_len=16384 -timeout=10 \
  -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$build/crashes/job-file-" \
  -dict="$root/tests/fuzz/job_file.dict" "$build/corpus-job-file" "$root/tests/fuzz/corpus-job-file"
"$build/tests/fuzz/job_options_fuzz" -max_total_time="$seconds" -max_len=4096 -timeout=10 \
  -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$build/crashes/job-options-" \
  "$build/corpus-job-options" "$root/tests/fuzz/corpus-job-options"
