#!/usr/bin/env python3
"""Builds a large, realistic set of fio histogram logs for benchmarks, deterministically.

Each output log replays the lines of one real fio log (chosen round robin from the sources) over
and over with shifted times: cycle c adds c * P ms to every time field, P being the source's last
time, so every direction's times keep increasing (one job segment) with the source's own cadence
and read/write pattern. Bucket counts, ddir and bs are copied byte for byte.

usage: gen-bench-logs.py OUTDIR FILES RECORDS SOURCE.log...
Writes OUTDIR/bench_clat_hist.N.log (N = 1..FILES), each with RECORDS lines.
"""
import os
import sys


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    outdir, files, records = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    sources = []
    for path in sys.argv[4:]:
        lines = []
        with open(path, "rb") as f:
            for raw in f:
                raw = raw.rstrip(b"\r\n")
                if not raw.strip():
                    continue
                time, rest = raw.split(b",", 1)
                lines.append((int(time), b"," + rest + b"\n"))
        if not lines:
            sys.exit(f"{path}: no lines")
        period = max(t for t, _ in lines)
        sources.append((lines, period))
    os.makedirs(outdir, exist_ok=True)
    for n in range(files):
        lines, period = sources[n % len(sources)]
        out = []
        for i in range(records):
            cycle, k = divmod(i, len(lines))
            time, rest = lines[k]
            out.append(b"%d" % (time + cycle * period) + rest)
        with open(os.path.join(outdir, f"bench_clat_hist.{n + 1}.log"), "wb") as f:
            f.write(b"".join(out))


if __name__ == "__main__":
    main()
