#!/usr/bin/env bash
# The replay's timing error, measured: a fio v3 iolog of 20,000 4 KiB reads at 5,000/s with
# bursts at 25,000/s (cycles of 400 reads 200 us apart, then 100 reads 40 us apart) onto a
# 64 MiB file in tmpfs, replayed by iotail (open loop) and by fio 3.33 (read_iolog) side by side.
# Prints the trace's span, each tool's runtime and its excess over the span, and iotail's issue
# lateness percentiles (iotail_replay.lateness_ns). fio measures no lateness; its runtime against
# the span is its drift.
#
# Usage: [ENGINE=psync] [RT=1] scripts/bench-replay.sh [IOTAIL_BINARY] [IODEPTH]   (default
# build/iotail, 1). psync by default: a read from tmpfs is a copy done inline, while io_uring's
# buffered reads there go through the kernel's io-wq threads, whose delays on a busy machine fill
# the queue (ENGINE=io_uring with a deeper IODEPTH measures that path). RT=1 runs both tools under `chrt -f 10` (root): the scheduler's own timing
# error, without the other processes' share of a busy machine.
set -euo pipefail
iotail=${1:-build/iotail}
depth=${2:-1}
engine=${ENGINE:-psync}  # the engine both tools replay with
rt=()
if [ "${RT:-0}" = 1 ]; then rt=(chrt -f 10); fi
dir=$(mktemp -d /dev/shm/iotail-bench-replay.XXXXXX)
trap 'rm -rf "$dir"' EXIT
target=$dir/target
truncate -s 64M "$target"
trace=$dir/trace.iolog
python3 - "$trace" "$target" <<'PY'
import random, sys
trace, target = sys.argv[1], sys.argv[2]
random.seed(1)
with open(trace, "w") as f:
    f.write("fio version 3 iolog\n0 %s add\n0 %s open\n" % (target, target))
    t = 0.0
    n = 0
    while n < 20000:
        for i in range(500):
            if n == 20000:
                break
            off = random.randrange(64 * 256) * 4096
            f.write("%d %s read %d 4096\n" % (round(t), target, off))
            n += 1
            t += 200.0 if i < 400 else 40.0
    f.write("%d %s close\n" % (round(t), target))
PY
echo "machine: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) (lateness grows with the load: a busy CPU wakes the worker late)"
span_us=$(awk 'END{print $1}' "$trace")
echo "trace: 20000 reads, span $(awk -v u="$span_us" 'BEGIN{printf "%.3f", u/1e6}') s, $(awk -v u="$span_us" 'BEGIN{printf "%.0f", 20000/(u/1e6)}') IOPS on average"

"${rt[@]}" "$iotail" run --name=replay --read_iolog="$trace" --ioengine="$engine" --iodepth="$depth" \
  --live_format=none --output-format=json --output="$dir/iotail.json" >/dev/null
python3 - "$dir/iotail.json" "$span_us" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
span = float(sys.argv[2]) / 1e6
r = j["iotail_replay"]
rt = j["jobs"][0]["read"]["runtime"] / 1e3
l = r["lateness_ns"]
p = l.get("percentile", {})
def us(k):
    return "%.1f" % (p[k] / 1e3) if k in p else "-"
print("iotail: %d I/Os, runtime %.3f s (%+.2f%% of the span), achieved %.0f IOPS (trace %.0f)"
      % (j["jobs"][0]["read"]["total_ios"], rt, (rt / span - 1) * 100, r["achieved_iops"],
         r["trace_iops"]))
print("iotail lateness (us): p50 %s  p90 %s  p99 %s  p99.9 %s  max %.1f  (%d issued > 100 us late)"
      % (us("50.000000"), us("90.000000"), us("99.000000"), us("99.900000"), l["max"] / 1e3,
         r["late_ios"]))
print("iotail olat p99 %.1f us, clat p99 %.1f us" % (
    j["jobs"][0]["read"]["iotail_olat_ns"]["percentile"]["99.000000"] / 1e3,
    j["jobs"][0]["read"]["clat_ns"]["percentile"]["99.000000"] / 1e3))
PY

if command -v fio >/dev/null; then
  "${rt[@]}" fio --name=replay --read_iolog="$trace" --ioengine="$engine" --iodepth="$depth" \
    --output-format=json --output="$dir/fio.json" >/dev/null
  python3 - "$dir/fio.json" "$span_us" "$(fio --version)" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
span = float(sys.argv[2]) / 1e6
rd = j["jobs"][0]["read"]
rt = rd["runtime"] / 1e3
print("%s: %d I/Os, runtime %.3f s (%+.2f%% of the span), clat p99 %.1f us (no lateness measured)"
      % (sys.argv[3], rd["total_ios"], rt, (rt / span - 1) * 100,
         rd["clat_ns"]["percentile"]["99.000000"] / 1e3))
PY
else
  echo "fio: not installed, not measured"
fi
