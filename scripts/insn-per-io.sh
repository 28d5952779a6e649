#!/usr/bin/env bash
# Instructions per I/O of iotail's hot path, counted exactly under callgrind: the default null job
# of issue 35 (fio's defaults: 4 KiB random reads, QD1, the random map on), run for SHORT and for
# LONG I/Os; the difference of the two counts over the difference of the I/Os cancels start-up,
# option parsing and the summary, leaving the per-I/O loop (worker, pattern, engine, recorder).
# Counts do not depend on the machine's load (callgrind counts instructions, not time), only on
# the binary and the job.
# Usage: scripts/insn-per-io.sh [IOTAIL_BINARY] [--check BUDGET_FILE]
#   --check: exit 1 when the count exceeds the budget's number by more than 3%; the budget file
#   holds the figure on its first line that starts with a digit (lower it with each speed-up).
# Environment: SHORT (100000) and LONG (300000) I/O counts; INSN_EXTRA_ARGS, more run options.
set -euo pipefail
cd "$(dirname "$0")/.."
iotail=$(realpath "${1:-build/iotail}")
budget_file=""
if [ "${2:-}" = "--check" ]; then budget_file=${3:?--check needs a budget file}; fi
# Exit 77 (CTest's skip) without valgrind: the count cannot be taken here.
command -v valgrind >/dev/null || { echo "insn-per-io: skipped: valgrind is not installed" >&2; exit 77; }
[ -x "$iotail" ] || { echo "insn-per-io: no iotail binary at $iotail" >&2; exit 1; }
short=${SHORT:-100000}
long=${LONG:-300000}
work=$(mktemp -d /tmp/iotail-insn.XXXXXX)
trap 'rm -rf "$work"' EXIT

count() {  # instructions of one run of $1 I/Os, all threads
  local ios=$1
  # shellcheck disable=SC2086
  valgrind --tool=callgrind --callgrind-out-file="$work/cg.%p" --cache-sim=no \
    "$iotail" run --name=insn --ioengine=null --rw=randread --bs=4k --iodepth=1 --size=4g \
    --number_ios="$ios" --live_format=none --output="$work/out.$ios.txt" ${INSN_EXTRA_ARGS:-} \
    >"$work/stdout" 2>"$work/stderr" || {
    echo "insn-per-io: the run failed:" >&2
    cat "$work/stderr" >&2
    exit 1
  }
  grep -q "total=$ios," "$work/out.$ios.txt" || {
    echo "insn-per-io: the run did not complete $ios I/Os:" >&2
    cat "$work/out.$ios.txt" >&2
    exit 1
  }
  local total
  total=$(awk '/^summary:/ {s += $2} END {print s}' "$work"/cg.*)
  rm -f "$work"/cg.*
  echo "$total"
}

a=$(count "$short")
b=$(count "$long")
per_io=$(( (b - a) / (long - short) ))
echo "instructions per I/O: $per_io (runs of $short and $long I/Os: $a and $b instructions)"
if [ -n "$budget_file" ]; then
  budget=$(grep -m1 -E '^[0-9]+' "$budget_file" | grep -oE '^[0-9]+')
  limit=$(( budget * 103 / 100 ))
  if (( per_io > limit )); then
    echo "insn-per-io: $per_io instructions per I/O exceed the budget of $budget (+3%: $limit)" \
      "in $budget_file" >&2
    exit 1
  fi
  echo "within the budget of $budget (+3%: $limit) in $budget_file"
fi
