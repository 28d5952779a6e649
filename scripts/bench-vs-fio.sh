#!/usr/bin/env bash
# iotail vs fio on the same targets, alternating runs, one table of ratios.
#  (1) 4 KiB random O_DIRECT reads, one job, QD32 and QD128, on a loop device backed by /dev/shm,
#      io_uring and libaio: both tools with their defaults, then both batching submit/complete at
#      QD/4 ("b"; fio tuned also registers files and buffers, which iotail always does).
#  (2) null engine, QD1 and QD32, every latency recorded by iotail, against fio's null engine with
#      defaults and with gtod_reduce=1 (which records no latency).
#  (3) nbd engine, 4 KiB random reads at QD16 against one `nbdkit memory` server on a private Unix
#      socket (started here, -t 32), iotail's nbd engine (its default path: direct) against fio's
#      and against iotail's libnbd path; the server's CPU is not counted for either.
# BENCH_CASES=loop,null,nbd (default all) picks the cases.
# CPU per I/O is the child's user and system time from getrusage(RUSAGE_CHILDREN) divided by the
# I/Os completed (total_ios of the JSON summary), so it includes setup.
# Needs root (losetup). Leaves no loop device, file or server behind.
# Each case runs REPETITIONS times, the tools alternating, and the table shows each tool's median.
# Usage: scripts/bench-vs-fio.sh [IOTAIL_BINARY] [SECONDS_PER_RUN] [REPETITIONS]
set -euo pipefail
cd "$(dirname "$0")/.."
IOTAIL=$(realpath "${1:-build/iotail}")
SECS=${2:-3}
REPS=${3:-2}
command -v fio >/dev/null || { echo "fio not installed (scripts/setup.sh)"; exit 1; }
[ -x "$IOTAIL" ] || { echo "no iotail binary at $IOTAIL"; exit 1; }

CASES=${BENCH_CASES:-loop,null,nbd}
backing=/dev/shm/iotail-bench.$$
nullfile=/dev/shm/iotail-bench-null.$$
nbddir=$(mktemp -d /tmp/iotail-bench-nbd.XXXXXX)
dev=""
cleanup() {
  if [ -n "$dev" ]; then losetup -d "$dev" || true; fi
  if [ -f "$nbddir/pid" ]; then kill "$(cat "$nbddir/pid")" 2>/dev/null || true; fi
  rm -rf "$backing" "$nullfile" "$nbddir"
}
trap cleanup EXIT INT TERM
if [[ $CASES == *loop* ]]; then
  truncate -s 1G "$backing"
  dd if=/dev/urandom of="$backing" bs=1M count=1024 conv=notrunc status=none
  dev=$(losetup --find --show --direct-io=on "$backing")
fi
truncate -s 64M "$nullfile"
uri=""
if [[ $CASES == *nbd* ]]; then
  command -v nbdkit >/dev/null || { echo "nbdkit not installed (scripts/setup.sh)"; exit 1; }
  # A session of its own for the server: with autogroup scheduling (sched_autogroup_enabled=1)
  # a server in the script's session shares one CPU group with iotail's worker, while fio's job
  # processes call setsid() and get a group of their own; that alone moved the IOPS ratio by 25%.
  setsid nbdkit -U "$nbddir/sock" -P "$nbddir/pid" -t 32 memory 256M
  for _ in $(seq 50); do [ -S "$nbddir/sock" ] && break; sleep 0.1; done
  uri="nbd+unix:///?socket=$nbddir/sock"
  # Fill the export so that reads return data, not holes.
  "$IOTAIL" run --uri="$uri" --rw=write --bs=1m --iodepth=4 --live_format=none >/dev/null
fi

IOTAIL="$IOTAIL" DEV="$dev" NULLFILE="$nullfile" URI="$uri" CASES="$CASES" SECS="$SECS" \
  REPS="$REPS" python3 - <<'PY'
import json, os, resource, subprocess, statistics

iotail, dev, nullfile = os.environ["IOTAIL"], os.environ["DEV"], os.environ["NULLFILE"]
uri, selected = os.environ["URI"], os.environ["CASES"].split(",")
secs, reps = int(os.environ["SECS"]), int(os.environ["REPS"])

def measure(cmd):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    job = json.loads(out[out.index("{"):])["jobs"][0]["read"]
    ios = job["total_ios"]
    return dict(iops=job["iops"], usr=(after.ru_utime - before.ru_utime) / ios * 1e9,
                sys=(after.ru_stime - before.ru_stime) / ios * 1e9)

def iotail_cmd(engine, qd, target, extra=()):
    where = "--uri=" + target if engine == "nbd" else "--filename=" + target
    return [iotail, "run", where, "--rw=randread", "--bs=4k", "--live_format=none",
            f"--iodepth={qd}", f"--ioengine={engine}", f"--runtime={secs}s", "--time_based",
            "--output-format=json", *extra]

def fio_cmd(engine, qd, target, extra=()):
    # Engine options (nbd's --uri) are known to fio only after --ioengine.
    where = "--uri=" + target if engine == "nbd" else "--filename=" + target
    return ["fio", "--name=bench", f"--ioengine={engine}", where, "--rw=randread", "--bs=4k",
            f"--iodepth={qd}", f"--runtime={secs}", "--time_based", "--output-format=json",
            *extra]

cases = []
for engine in ("io_uring", "libaio") if "loop" in selected else ():
    for qd in (32, 128):
        batch = [f"--iodepth_batch_submit={qd // 4}", f"--iodepth_batch_complete_min={qd // 4}",
                 f"--iodepth_batch_complete_max={qd}"]
        tuned = (["--registerfiles", "--fixedbufs"] if engine == "io_uring" else []) + batch
        # Defaults against defaults (iotail reaps from one completion on, as fio does by
        # default), then both batching at QD/4, which trades accuracy for fewer system calls.
        cases.append((f"loop {engine} QD{qd}",
                      iotail_cmd(engine, qd, dev, ["--direct=1"]),
                      [("fio default", fio_cmd(engine, qd, dev, ["--direct=1"]))]))
        cases.append((f"loop {engine} QD{qd} b",
                      iotail_cmd(engine, qd, dev, ["--direct=1", *batch]),
                      [("fio tuned", fio_cmd(engine, qd, dev, ["--direct=1", *tuned]))]))
for qd in (1, 32) if "null" in selected else ():
    cases.append((f"null QD{qd}", iotail_cmd("null", qd, nullfile, ["--size=64m"]),
                  [("fio default", fio_cmd("null", qd, nullfile, ["--size=64m"])),
                   ("fio gtod_reduce=1", fio_cmd("null", qd, nullfile, ["--size=64m", "--gtod_reduce=1"]))]))

if "nbd" in selected:
    # iotail's default path (direct on this plain Unix socket), against fio's nbd engine and
    # against iotail's own libnbd path (--nbd_path=libnbd, what iotail did before).
    cases.append(("nbd QD16 unix", iotail_cmd("nbd", 16, uri),
                  [("fio nbd", fio_cmd("nbd", 16, uri)),
                   ("iotail libnbd", iotail_cmd("nbd", 16, uri, ["--nbd_path=libnbd"]))]))

print(f"# {secs}s per run, {reps} alternating repetitions, median shown; CPU in ns per I/O")
print(f"{'case':<20} {'tool':<18} {'IOPS':>12} {'usr ns/IO':>10} {'sys ns/IO':>10} "
      f"{'IOPS ratio':>10} {'usr ratio':>10} {'cpu ratio':>10}")
for name, ours, theirs in cases:
    results = {"iotail": []}
    for label, _ in theirs:
        results[label] = []
    for _ in range(reps):
        results["iotail"].append(measure(ours))
        for label, cmd in theirs:
            results[label].append(measure(cmd))
    med = {k: {f: statistics.median(r[f] for r in v) for f in ("iops", "usr", "sys")}
           for k, v in results.items()}
    me = med["iotail"]
    print(f"{name:<20} {'iotail':<18} {me['iops']:>12.0f} {me['usr']:>10.0f} {me['sys']:>10.0f}")
    for label, _ in theirs:
        o = med[label]
        print(f"{'':<20} {label:<18} {o['iops']:>12.0f} {o['usr']:>10.0f} {o['sys']:>10.0f} "
              f"{me['iops'] / o['iops']:>10.2f} {me['usr'] / max(o['usr'], 1e-9):>10.2f} "
              f"{(me['usr'] + me['sys']) / max(o['usr'] + o['sys'], 1e-9):>10.2f}")
print("ratios are iotail / fio (IOPS: higher is better for iotail; CPU: lower is better)")
PY
