#!/usr/bin/env python3
"""Runs fio job files under fio and under `iotail run` and compares what each did.

usage: scripts/fio-corpus.py [--iotail BIN] [--size 16m] [--runtime 1] [--timeout 60] [--keep]
                             FILE|DIR...

Each job file is copied into a scratch directory per tool with its targets redirected there
(filename= becomes a file named after its last path part, directory= the scratch directory) and
its sizes, runtimes and loops capped (--size, --runtime, 4 loops; fill_device=1 becomes
--size), then run with --output-format=json by fio and
by iotail. For every job (fio's order) the two must agree on the job name, the reporting group, the
directions that did I/O, the bytes of each direction for a job bounded by size (of a mixed job
the total, except with random offsets and a block size per direction: fio's random map counts
each direction's offsets in that direction's smallest size, so fio's amount depends on its own
draws), and the runtime
(within 25% + 150 ms) for a timed one. A file iotail refuses is reported with iotail's reason; one
fio cannot run is skipped with fio's. Prints a line per file and a summary; the exit status is 1
when a file that both ran differs, or that iotail refuses while fio runs it (--allow-refused
lists the files allowed to be refused), else 0; 77 when fio is not installed. A comment line
"; fio-corpus: make NAME SIZE" in a job file makes NAME (SIZE bytes, sparse) in each tool's
directory before the run (fio's zonemode=zbd wants its file to exist).

Point it at fio's own examples/ (a checkout of axboe/fio) to see where iotail stands on them; the
test suite runs it on tests/data/fio-corpus (job files written for iotail, one per fio feature).
"""
import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile

SIZE_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


def parse_size(text):
    m = re.fullmatch(r"\s*(\d+)\s*([kmgt]?)i?b?\s*", text.lower())
    return int(m.group(1)) * SIZE_UNITS[m.group(2)] if m else None


def parse_seconds(text):
    m = re.fullmatch(r"\s*(\d+)\s*(ms|msec|s|sec|m|min|h)?\s*", text.lower())
    if not m:
        return None
    scale = {None: 1, "s": 1, "sec": 1, "ms": 0.001, "msec": 0.001, "m": 60, "min": 60,
             "h": 3600}[m.group(2)]
    return int(m.group(1)) * scale


def rewrite(text, cap_size, cap_runtime):
    """The job file with its targets in the current directory and its sizes and times capped; a
    size where none is given (a device's whole size), and a runtime where a rate or a thinktime
    would make a job run long, in a [global] section put first."""
    keys = {m.group(1).replace("-", "_") for m in re.finditer(r"(?m)^\s*([A-Za-z_][\w-]*)\s*=", text)}
    head = []
    if not keys & {"size", "io_size", "filesize"}:
        head.append(f"size={cap_size}")
    if keys & {"rate", "rate_iops", "ratemin", "rate_min", "rate_iops_min", "thinktime"} and \
            not keys & {"runtime", "timeout"}:
        head.append(f"runtime={cap_runtime}")
    out = ["[global]"] + head if head else []
    for line in text.splitlines():
        m = re.match(r"\s*([A-Za-z_][\w-]*)\s*=\s*(.*?)\s*$", line)
        if not m or line.lstrip().startswith(("#", ";")):
            out.append(line)
            continue
        key, value = m.group(1).replace("-", "_"), m.group(2)
        if key == "filename":
            names = [os.path.basename(p.rstrip("/")) or "target" for p in value.split(":")]
            line = "filename=" + ":".join(names)
        elif key == "directory":
            line = "directory=."
        elif key in ("size", "io_size", "filesize", "io_limit"):
            size = parse_size(value)
            if size is not None and size > cap_size:
                line = f"{key}={cap_size}"
        elif key in ("runtime", "timeout"):
            seconds = parse_seconds(value)
            if seconds is not None and seconds > cap_runtime:
                line = f"{key}={cap_runtime}"
        elif key in ("fill_device", "fill_fs") and value.strip() not in ("0", "false"):
            # Until the file system is full: the size in [global] instead.
            line = f"; {line.strip()} (fio-corpus: capped)"
        elif key == "loops":
            loops = int(value) if value.strip().isdigit() else None
            if loops is not None and loops > 4:
                line = "loops=4"
        elif key in ("ramp_time", "startdelay"):
            seconds = parse_seconds(value)
            if seconds is not None and seconds > cap_runtime:
                line = f"{key}=0"
        out.append(line)
    return "\n".join(out) + "\n"


def run(tool, job, workdir, iotail, timeout):
    os.makedirs(workdir, exist_ok=True)
    path = os.path.join(workdir, "job.fio")
    with open(path, "w") as f:
        f.write(job)
    # A file the job file asks to exist before the run ("; fio-corpus: make NAME SIZE"): fio's
    # zonemode=zbd emulates zones only on a file that is there when it starts.
    for name, size in re.findall(r"(?m)^[;#]\s*fio-corpus:\s*make\s+(\S+)\s+(\S+)\s*$", job):
        with open(os.path.join(workdir, os.path.basename(name)), "wb") as f:
            f.truncate(parse_size(size))
    # fio's jobs as threads (as iotail's workers are): a forked job process is a session of its
    # own, which a timeout could not end with its parent.
    argv = (["fio", "--thread"] if tool == "fio" else [iotail, "run", "--live_format=none"]) + [
        "--output-format=json", "job.fio"]
    # In a session of its own: on a timeout the whole group goes (fio forks a process per job).
    proc = subprocess.Popen(argv, cwd=workdir, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return None, f"timed out after {timeout} s"
    p = subprocess.CompletedProcess(argv, proc.returncode, stdout, stderr)
    if p.returncode != 0:
        lines = [l for l in p.stderr.splitlines() if l.strip()]
        return None, (lines[-1] if lines else f"exit status {p.returncode}")[:200]
    try:
        return json.loads(p.stdout[p.stdout.index("{"):]), ""
    except ValueError as e:
        return None, f"no JSON summary ({e})"


def jobs_of(summary):
    out = []
    for j in summary["jobs"]:
        opts = dict(summary.get("global options", {}), **j.get("job options", {}))
        # A runtime bounds the job (time_based, or a rate that stops it first): compare times.
        timed = any(k in opts for k in ("runtime", "timeout"))
        random_sizes = any(k in opts for k in ("bssplit", "bsrange", "blocksize_range"))
        # Random I/O with a block size per direction: fio's random map counts every direction's
        # offsets in its own smallest size, so how much a mixed pass does depends on fio's draws.
        per_direction = any("," in opts.get(k, "") for k in (
            "bs", "blocksize", "bssplit", "bsrange", "blocksize_range"))
        random_rw = opts.get("rw", opts.get("readwrite", "")).startswith("rand")
        dirs = {d: j[d]["io_bytes"] for d in ("read", "write", "trim") if d in j}
        out.append({"name": j["jobname"], "group": j["groupid"], "bytes": dirs,
                    "runtime": j.get("job_runtime", 0), "timed": timed,
                    "random_sizes": random_sizes, "draws": per_direction and random_rw})
    return out


def differences(fio, ours):
    if len(fio) != len(ours):
        return [f"{len(fio)} jobs in fio, {len(ours)} in iotail"]
    diffs = []
    for a, b in zip(fio, ours):
        name = a["name"]
        if (a["name"], a["group"]) != (b["name"], b["group"]):
            diffs.append(f"job {name} group {a['group']} vs {b['name']} group {b['group']}")
            continue
        mixed = sum(1 for v in a["bytes"].values() if v > 0) > 1
        for d in ("read", "write", "trim"):
            x, y = a["bytes"].get(d, 0), b["bytes"].get(d, 0)
            if (x > 0) != (y > 0):
                diffs.append(f"{name}: {d} {x} bytes in fio, {y} in iotail")
            elif not a["timed"] and not mixed and x != y:
                diffs.append(f"{name}: {d} {x} bytes in fio, {y} in iotail")
        # A mix of directions is drawn at random: only the total is fixed by the size (and, with
        # random block sizes with replacement, only up to the last I/O's overshoot; with random
        # offsets and a size per direction, not even the total: see jobs_of).
        x, y = sum(a["bytes"].values()), sum(b["bytes"].values())
        if not a["timed"] and mixed and not a["draws"] and abs(x - y) > (0.005 * x if a["random_sizes"] else 0):
            diffs.append(f"{name}: {x} bytes in all in fio, {y} in iotail")
        if a["timed"]:
            ra, rb = a["runtime"], b["runtime"]
            if abs(ra - rb) > 0.25 * ra + 150:
                diffs.append(f"{name}: runtime {ra} ms in fio, {rb} ms in iotail")
    return diffs


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="+")
    ap.add_argument("--iotail", default=os.path.join(os.path.dirname(__file__), "..", "build",
                                                     "iotail"))
    ap.add_argument("--size", default="16m")
    ap.add_argument("--runtime", type=int, default=1)
    ap.add_argument("--allow-refused", default="", help="files iotail may refuse, comma-separated")
    ap.add_argument("--keep", action="store_true", help="keep the scratch directories")
    ap.add_argument("--timeout", type=int, default=60, help="seconds a tool may take on a file")
    args = ap.parse_args()
    args.iotail = os.path.abspath(args.iotail)  # each tool runs in its own directory
    if shutil.which("fio") is None:
        print("fio-corpus: fio is not installed: skipped")
        return 77
    files = []
    for p in args.paths:
        if os.path.isdir(p):
            files += sorted(os.path.join(p, f) for f in os.listdir(p) if f.endswith(".fio"))
        else:
            files.append(p)
    allowed = set(filter(None, args.allow_refused.split(",")))
    cap = parse_size(args.size)
    scratch = tempfile.mkdtemp(prefix="iotail-fio-corpus.")
    counts = {"same": 0, "differs": 0, "refused": 0, "fio fails": 0}
    bad = 0
    try:
        for i, path in enumerate(files):
            with open(path, errors="replace") as f:
                job = rewrite(f.read(), cap, args.runtime)
            base = os.path.basename(path)
            where = os.path.join(scratch, str(i))
            fio, why = run("fio", job, os.path.join(where, "fio"), args.iotail, args.timeout)
            if fio is None:
                counts["fio fails"] += 1
                print(f"skip     {base}: fio: {why}")
                continue
            ours, why = run("iotail", job, os.path.join(where, "iotail"), args.iotail,
                            args.timeout)
            if ours is None:
                counts["refused"] += 1
                bad += base not in allowed
                print(f"refused  {base}: {why}")
                continue
            diffs = differences(jobs_of(fio), jobs_of(ours))
            counts["same" if not diffs else "differs"] += 1
            bad += bool(diffs)
            print(f"{'same' if not diffs else 'differs':8} {base}" +
                  ("" if not diffs else ": " + "; ".join(diffs[:4])))
            if not args.keep:
                shutil.rmtree(where, ignore_errors=True)
    finally:
        if not args.keep:
            shutil.rmtree(scratch, ignore_errors=True)
    print("fio-corpus: " + ", ".join(f"{n} {k}" for k, n in counts.items()) +
          f" ({len(files)} files)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
