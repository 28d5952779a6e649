#!/usr/bin/env bash
# Two iotail binaries side by side (A, then B, alternating, REPS times each), for a change that
# must not make iotail slower: the same three workloads for both, medians and the ratio B/A.
#  null  the null engine, 4 KiB random reads at QD32 (iotail's own cost per I/O)
#  loop  io_uring, 4 KiB random O_DIRECT reads at QD32 on a loop device backed by /dev/shm
#        (needs root; skipped otherwise)
#  pctiles  `iotail pctiles` over 8 generated fio logs (the bench set of bench-pctiles.sh), wall s
# Leaves no loop device or file behind.
# Usage: scripts/bench-ab.sh BINARY_A BINARY_B [SECONDS_PER_RUN] [REPS]
# Environment:
#  BENCH_CASES=null,loop,pctiles  the cases to run (comma-separated; default all three)
#  BENCH_RECORDS=N  records per pctiles log (default 20000: 8 logs of about 116 MB; 1200 is the
#                   56 MB set of `bench-pctiles.sh --files 8`)
#  BENCH_IDLE=S     seconds of idleness before each pctiles run (default 0): on the project's VMs
#                   the host takes back idle memory, and a run after a few idle seconds pays for
#                   backing its huge pages again (30 ms runs took 40 to 50 ms)
set -euo pipefail
cd "$(dirname "$0")/.."
A=$(realpath "$1")
B=$(realpath "$2")
SECS=${3:-3}
REPS=${4:-5}
tmp=$(mktemp -d /tmp/iotail-bench-ab.XXXXXX)
backing=/dev/shm/iotail-bench-ab.$$
dev=""
cleanup() {
  if [ -n "$dev" ]; then losetup -d "$dev" || true; fi
  rm -rf "$tmp" "$backing"
}
trap cleanup EXIT INT TERM

iops() { python3 -c 'import json,sys; j=json.load(sys.stdin)["jobs"][0]; print(j["read"]["iops"])'; }
median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

run_case() {  # name, then the iotail run arguments
  local name=$1
  shift
  : >"$tmp/$name.A"
  : >"$tmp/$name.B"
  for _ in $(seq "$REPS"); do
    for side in A B; do
      local bin=$A
      [ "$side" = B ] && bin=$B
      "$bin" run "$@" --runtime="$SECS" --time_based --output-format=json --live_format=none \
        2>/dev/null | iops >>"$tmp/$name.$side"
    done
  done
  local a b
  a=$(median <"$tmp/$name.A")
  b=$(median <"$tmp/$name.B")
  printf '%-8s A %12.0f IOPS   B %12.0f IOPS   B/A %.3f\n' "$name" "$a" "$b" \
    "$(python3 -c "print($b / $a)")"
}

cases=${BENCH_CASES:-null,loop,pctiles}
records=${BENCH_RECORDS:-20000}
idle=${BENCH_IDLE:-0}
wants() { case ",$cases," in *",$1,"*) return 0 ;; *) return 1 ;; esac; }
for c in ${cases//,/ }; do
  case "$c" in null | loop | pctiles) ;; *) echo "bench-ab: unknown case '$c'" >&2; exit 2 ;; esac
done
[[ "$records" =~ ^[1-9][0-9]*$ ]] || { echo "bench-ab: BENCH_RECORDS: a whole number" >&2; exit 2; }
[[ "$idle" =~ ^[0-9]+(\.[0-9]+)?$ ]] || { echo "bench-ab: BENCH_IDLE: seconds" >&2; exit 2; }

wants null && run_case null --name=null --filename="$tmp/null" --ioengine=null --size=64m --rw=randread --bs=4k --iodepth=32
if ! wants loop; then
  :
elif [ "$(id -u)" -eq 0 ] && command -v losetup >/dev/null; then
  truncate -s 1G "$backing"
  dev=$(losetup --find --show --direct-io=on "$backing")
  run_case loop --name=loop --filename="$dev" --ioengine=io_uring --direct=1 --rw=randread \
    --bs=4k --iodepth=32
else
  echo "loop     skipped: needs root and losetup"
fi

wants pctiles || exit 0
logs=(tests/data/fio/randrw/*.log)
python3 scripts/gen-bench-logs.py "$tmp/logs" 8 "$records" "${logs[@]}"
cat "$tmp"/logs/*.log >/dev/null  # in the page cache for both
: >"$tmp/pctiles.A"
: >"$tmp/pctiles.B"
for _ in $(seq "$REPS"); do
  for side in A B; do
    bin=$A
    [ "$side" = B ] && bin=$B
    sleep "$idle"
    start=$(date +%s.%N)
    "$bin" pctiles "$tmp"/logs/*.log >/dev/null
    python3 -c "import sys; print($(date +%s.%N) - $start)" >>"$tmp/pctiles.$side"
  done
done
a=$(median <"$tmp/pctiles.A")
b=$(median <"$tmp/pctiles.B")
printf '%-8s A %12.3f s      B %12.3f s      B/A %.3f\n' pctiles "$a" "$b" \
  "$(python3 -c "print($b / $a)")"
