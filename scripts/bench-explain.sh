#!/usr/bin/env bash
# What --explain costs: the same run with and without it, alternating, median of REPETITIONS.
# 4 KiB random O_DIRECT reads, io_uring, QD32, one job, on a loop device over /dev/shm (issue 34's
# cost check: at least 97% of the IOPS, at most 1.05x the CPU per I/O).
# CPU per I/O is counted two ways: iotail's own (user + system time of the child, getrusage
# RUSAGE_CHILDREN: its workers, the explain thread) and the machine's (busy time of all CPUs from
# /proc/stat, which includes the BPF programs, run in the loop driver's kernel threads and in
# interrupts, and the loop driver itself), each divided by the I/Os completed.
# With clang, libbpf's headers and the build's vmlinux.h (build/generated/explain), a third run,
# "floor", runs the plain job while BPF programs that do nothing are attached to the same block
# tracepoints (scripts/bench/bpf_floor.bpf.c): what tracing every request costs on this kernel
# before any work is done.
# Needs root (losetup, BPF). Leaves no loop device or file behind.
# Usage: scripts/bench-explain.sh [IOTAIL_BINARY] [SECONDS_PER_RUN] [REPETITIONS]
set -euo pipefail
cd "$(dirname "$0")/.."
IOTAIL=$(realpath "${1:-build/iotail}")
SECS=${2:-5}
REPS=${3:-5}
[ -x "$IOTAIL" ] || { echo "no iotail binary at $IOTAIL"; exit 1; }
backing=/dev/shm/iotail-bench-explain.$$
dev=""
out=$(mktemp -d /tmp/iotail-bench-explain.XXXXXX)
cleanup() {
  if [ -n "$dev" ]; then losetup -d "$dev" || true; fi
  rm -rf "$backing" "$out"
}
trap cleanup EXIT INT TERM
truncate -s 1G "$backing"
vmlinux=$(dirname "$IOTAIL")/generated/explain/vmlinux.h
floor=""
if [ -f "$vmlinux" ] && command -v clang > /dev/null && command -v cc > /dev/null &&
  clang -O2 -g -target bpf -I"$(dirname "$vmlinux")" -c scripts/bench/bpf_floor.bpf.c \
    -o "$out/floor.bpf.o" 2> "$out/floor.err" &&
  cc -O2 scripts/bench/bpf_floor_loader.c -o "$out/floor-loader" -lbpf 2>> "$out/floor.err"; then
  floor=$out/floor.bpf.o
else
  echo "(no floor runs: $(head -c 300 "$out/floor.err" 2> /dev/null || echo 'no vmlinux.h, clang or cc'))"
fi
dev=$(losetup --find --show --direct-io=on "$backing")

run() {  # run NAME EXTRA_ARGS...: one line "NAME iops cpu_ns_per_io machine_ns_per_io joined"
  local name=$1
  shift
  python3 - "$IOTAIL" "$dev" "$SECS" "$name" "$@" <<'PY'
import json, os, resource, subprocess, sys
iotail, dev, secs, name, extra = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:]
def busy():
    f = [int(x) for x in open('/proc/stat').readline().split()[1:]]
    return (sum(f) - f[3] - f[4]) * 1e9 / os.sysconf('SC_CLK_TCK')  # all but idle and iowait, ns
before = resource.getrusage(resource.RUSAGE_CHILDREN)
b0 = busy()
p = subprocess.run([iotail, 'run', '--name=bench', f'--filename={dev}', '--rw=randread', '--bs=4k',
                    '--ioengine=io_uring', '--iodepth=32', '--direct=1', f'--runtime={secs}',
                    '--time_based', '--output-format=json', *extra],
                   capture_output=True, text=True, check=True)
b1 = busy()
after = resource.getrusage(resource.RUSAGE_CHILDREN)
j = json.loads(p.stdout[p.stdout.index('{'):])
job = j['jobs'][0]
ios = job['read']['total_ios']
cpu = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1e9
joined = job.get('iotail_explain', {}).get('read', {}).get('ios_joined', '-')
print(name, job['read']['iops'], cpu / ios, (b1 - b0) / ios, joined)
PY
}

echo "iotail --explain cost: loop device on /dev/shm, io_uring QD32 4k randread, ${SECS}s x ${REPS}"
for i in $(seq "$REPS"); do
  run plain >> "$out/runs"
  if [ -n "$floor" ]; then
    # The loader holds the programs attached while its stdin (a fifo) stays open.
    rm -f "$out/hold" && mkfifo "$out/hold"
    "$out/floor-loader" "$floor" < "$out/hold" > "$out/loader.out" &
    loader=$!
    exec 9> "$out/hold"
    for _ in $(seq 50); do grep -q attached "$out/loader.out" && break; sleep 0.1; done
    grep -q attached "$out/loader.out" || { echo "the floor programs did not attach"; exit 1; }
    run floor >> "$out/runs"
    exec 9>&-
    wait "$loader"
  fi
  run explain --explain >> "$out/runs"
done
python3 - "$out/runs" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
def med(name, k): return statistics.median(float(r[k]) for r in rows if r[0] == name)
print(f"{'':10}{'IOPS':>12}{'CPU ns/IO':>12}{'machine ns/IO':>15}")
names = [n for n in ('plain', 'floor', 'explain') if any(r[0] == n for r in rows)]
for n in names:
    print(f"{n:10}{med(n,1):>12.0f}{med(n,2):>12.0f}{med(n,3):>15.0f}")
for n in names[1:]:
    print(f"{n + '/plain':14}{med(n,1)/med('plain',1):>8.3f}{med(n,2)/med('plain',2):>12.3f}"
          f"{med(n,3)/med('plain',3):>15.3f}")
joined = [r[4] for r in rows if r[0] == 'explain']
print("I/Os joined per explain run:", " ".join(joined))
PY
