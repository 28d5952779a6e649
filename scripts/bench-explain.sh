#!/usr/bin/env bash
# What --explain costs: the same run with and without it, alternating, median of REPETITIONS.
# 4 KiB random O_DIRECT reads, io_uring, QD32, one job, on a loop device over /dev/shm (issue 34's
# cost check: at least 97% of the IOPS, at most 1.05x the CPU per I/O).
# CPU per I/O is counted two ways: iotail's own (user + system time of the child, getrusage
# RUSAGE_CHILDREN: its workers, the explain thread) and the machine's (busy time of all CPUs from
# /proc/stat, which includes the BPF programs, run in the loop driver's kernel threads and in
# interrupts, and the loop driver itself), each divided by the I/Os completed.
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
  run explain --explain >> "$out/runs"
done
python3 - "$out/runs" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
def med(name, k): return statistics.median(float(r[k]) for r in rows if r[0] == name)
print(f"{'':10}{'IOPS':>12}{'CPU ns/IO':>12}{'machine ns/IO':>15}")
for n in ('plain', 'explain'):
    print(f"{n:10}{med(n,1):>12.0f}{med(n,2):>12.0f}{med(n,3):>15.0f}")
print(f"{'ratio':10}{med('explain',1)/med('plain',1):>12.3f}{med('explain',2)/med('plain',2):>12.3f}"
      f"{med('explain',3)/med('plain',3):>15.3f}")
joined = [r[4] for r in rows if r[0] == 'explain']
print("I/Os joined per explain run:", " ".join(joined))
PY
