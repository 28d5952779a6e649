#!/usr/bin/env python3
"""Runs fio job files under fio and under `iotail run` and compares what each did.

usage: scripts/fio-corpus.py [--iotail BIN] [--size 16m] [--runtime 1] [--timeout 60] [--keep]
                             [--all] FILE|DIR...

Each job file (any file name in a directory given: the files with a [section] line) is copied into
a scratch directory per tool, its includes inlined (fio's `include FILE`, relative to the file),
its targets redirected there (filename= becomes a file named after its last path part, directory=
the scratch directory) and its sizes, runtimes and loops capped (--size, --runtime, 4 loops;
fill_device=1 becomes --size; a value followed by an inline comment is read without it), then run
with --output-format=normal,json by fio and by iotail. For every job (fio's order) the two must agree on
the job name, the reporting group, the directions that did I/O; for a job its size ended, the
bytes and I/O counts of each direction (of a mixed job the totals, except with random offsets
and a block size per direction: fio's random map counts each direction's offsets in that
direction's smallest size, so fio's amount depends on its own draws); for a job its runtime ended
(time_based, or a runtime fio's job ran to: what ended it, not whether runtime= is there), the
runtime (within 25% + 150 ms); the latencies each measured (slat, clat and lat present in both
or neither, per direction) and, with --lat-tolerance R over at least 200 I/Os, their means
within a factor R of fio's (off by default: they compare only where the target is the same
device under the same load); the files each left (names, and sizes but of logs); and each fio
log (bw, iops, slat, clat, lat, histogram): its line count within one and its last time stamp
within 10% + 100 ms of fio's; and the normal text summary's skeleton, per job and group status
(its header's group and jobs=, its directions, which of slat/clat/lat lines and percentile blocks
each direction has, a latency distribution, the cpu/IO depths/submit/complete/issued/latency
lines, the group status's direction lines: figures and timing-dependent lines left out). A file
iotail refuses is reported with iotail's reason; one
fio cannot run is skipped with fio's. Prints a line per file and a summary; the exit status is 1
when a file that both ran differs (but those --allow-differs lists, each an open finding), or
that iotail refuses while fio runs it (--allow-refused lists the files allowed to be refused),
else 0; 77 when fio is not installed. A comment line
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


def inline_includes(text, base_dir, depth=0):
    """fio's `include FILE` lines replaced by the file's text (relative to base_dir)."""
    out = []
    for line in text.splitlines():
        m = re.match(r"\s*include\s+(\S.*?)\s*$", line)
        if m and depth < 8:
            path = os.path.join(base_dir, m.group(1))
            try:
                with open(path, errors="replace") as f:
                    out.append(inline_includes(f.read(), os.path.dirname(path), depth + 1))
                continue
            except OSError:
                pass  # fio says what is missing
        out.append(line)
    return "\n".join(out)


def is_job_file(path):
    try:
        with open(path, errors="replace") as f:
            return any(re.match(r"\s*\[[^\]]+\]\s*$", line) for line in f)
    except OSError:
        return False


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
        # An inline comment after the value (fio reads the value without it).
        value = re.split(r"\s+[;#]", value, maxsplit=1)[0].strip()
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
        "--output-format=normal,json", "job.fio"]
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
        summary, text = split_outputs(p.stdout)
    except ValueError as e:
        return None, f"no JSON summary ({e})"
    summary["skeleton"] = skeleton(text)
    return summary, ""


def split_outputs(stdout):
    """(the JSON summary, the normal text) of an output of both formats, in either order: the
    JSON from a line "{" to the next line "}", the text around it."""
    lines = stdout.splitlines()
    start = lines.index("{")
    end = lines.index("}", start)
    return json.loads("\n".join(lines[start:end + 1])), "\n".join(lines[:start] + lines[end + 1:])


# The lines of fio's normal output that make its skeleton, by what starts them (the figures,
# units and timing-dependent lines such as bw/iops samples and disk stats left out).
SKELETON_LINES = [
    (re.compile(r"^(\S.*): \(groupid=(\d+), jobs=(\d+)\)"), "job"),
    (re.compile(r"^\s+(read|write|trim)\s*: IOPS="), "direction"),
    (re.compile(r"^\s+(slat|clat|lat) \((?:nsec|usec|msec|sec)\):"), "latency"),
    (re.compile(r"^\s+(slat|clat|lat) percentiles \("), "percentiles"),
    (re.compile(r"^\s+lat \((?:nsec|usec|msec|sec)\)\s+:"), "distribution"),
    (re.compile(r"^\s+(cpu|IO depths|submit|complete|issued rwts|latency)\s*:"), "block"),
    (re.compile(r"^Run status group (\d+)"), "group"),
    (re.compile(r"^\s+(READ|WRITE|TRIM): bw="), "group direction"),
]


def skeleton(text):
    """{job name or "group N": [the skeleton lines of its part of a normal summary, in order]}:
    per job its header, directions, which latency lines and percentile blocks each direction has,
    a latency distribution, and the blocks below; per group status its direction lines."""
    out, current, direction = {}, None, ""
    for line in text.splitlines():
        for pattern, kind in SKELETON_LINES:
            m = pattern.match(line)
            if not m:
                continue
            if kind == "job":
                current, direction = m.group(1), ""
                out.setdefault(current, []).append(f"header groupid={m.group(2)} jobs={m.group(3)}")
            elif kind == "group":
                current = f"group {m.group(1)}"
                out.setdefault(current, [])
            elif current is None:
                break
            elif kind == "direction":
                direction = m.group(1)
                out[current].append(direction)
            elif kind in ("latency", "percentiles"):
                out[current].append(f"{direction} {m.group(1)}" +
                                    (" percentiles" if kind == "percentiles" else ""))
            elif kind == "distribution":
                if "latency distribution" not in out[current]:
                    out[current].append("latency distribution")
            else:
                out[current].append(m.group(1))
            break
    return out


def skeleton_differences(fio, ours, null_jobs=(), unmeasured_jobs=()):
    """Per job and group status, the skeleton lines one tool's normal summary has and the other's
    has not (or in another order). Left out as their figures are (docs/fio-compatibility.md): the
    slat and lat lines of null engine jobs (iotail's null engine measures neither), and every
    latency line of a job whose fio measured none (gtod_reduce, disable_lat...)."""
    diffs = []
    a, b = fio.get("skeleton", {}), ours.get("skeleton", {})
    for part in list(a) + [p for p in b if p not in a]:
        x, y = a.get(part), b.get(part)
        if part in null_jobs and x is not None and y is not None:
            x, y = ([l for l in v if not re.fullmatch(r"\w+ (slat|lat)", l)] for v in (x, y))
        if part in unmeasured_jobs and x is not None and y is not None:
            x, y = ([l for l in v if not re.fullmatch(r"\w+ (slat|clat|lat)( percentiles)?", l)
                     and l != "latency distribution"] for v in (x, y))
        if x is None or y is None:
            diffs.append(f"text: {part} only in {'iotail' if x is None else 'fio'}'s summary")
        elif x != y:
            only_fio = [l for l in x if l not in y]
            only_ours = [l for l in y if l not in x]
            what = "; ".join(filter(None, [
                f"fio's only: {', '.join(only_fio)}" if only_fio else "",
                f"iotail's only: {', '.join(only_ours)}" if only_ours else ""])) or "another order"
            diffs.append(f"text: {part}: {what}")
    return diffs


def section_keys(job_text):
    """{section: the option names it has, its [global]s' included}, bare flags too (fio's JSON
    leaves out options given without a value, such as time_based)."""
    out, common, current = {}, set(), None
    for line in job_text.splitlines():
        line = line.strip()
        if not line or line.startswith(("#", ";")):
            continue
        m = re.fullmatch(r"\[([^\]]+)\]", line)
        if m:
            current = m.group(1).strip()
            if current != "global":
                out.setdefault(current, set(common))
            continue
        key = re.split(r"[=\s]", line, maxsplit=1)[0].replace("-", "_")
        value = line.split("=", 1)[1].strip() if "=" in line else ""
        if value in ("0", "false"):
            continue
        if current == "global" or current is None:
            common.add(key)
            for keys in out.values():
                keys.add(key)
        else:
            out[current].add(key)
    return out


# A job one of these may end (another job's exitall, the latency target's search) has no amount
# to compare.
UNBOUNDED = {"exitall", "exitall_on_error", "exit_what", "latency_target"}
# fio's switches that turn its latency measuring off: fio reports none, iotail measures anyway and
# says so (docs/fio-compatibility.md, deliberate differences): their latencies are not compared.
UNMEASURED = {"gtod_reduce", "disable_lat", "disable_clat", "disable_slat"}


def jobs_of(summary, ended_by=None, sections=None):
    """The jobs of a summary; ended_by[i]: whether job i was ended by its runtime (fio's)."""
    out = []
    sections = sections or {}
    for i, j in enumerate(summary["jobs"]):
        opts = dict(summary.get("global options", {}), **j.get("job options", {}))
        keys = sections.get(j["jobname"], set()) | set(opts)
        # What ended the job: its runtime (time_based, or a runtime it ran to before its size).
        timed = ended_by[i] if ended_by is not None and i < len(ended_by) else (
            "time_based" in keys or ended_by_time(j, opts) or bool(keys & UNBOUNDED))
        random_sizes = any(k in opts for k in ("bssplit", "bsrange", "blocksize_range"))
        # Random I/O with a block size per direction: fio's random map counts every direction's
        # offsets in its own smallest size, so how much a mixed pass does depends on fio's draws.
        per_direction = any("," in opts.get(k, "") for k in (
            "bs", "blocksize", "bssplit", "bsrange", "blocksize_range"))
        random_rw = opts.get("rw", opts.get("readwrite", "")).startswith("rand")
        dirs = {d: j[d]["io_bytes"] for d in ("read", "write", "trim") if d in j}
        ios = {d: j[d].get("total_ios", 0) for d in ("read", "write", "trim") if d in j}
        lats = {d: {k: (j[d].get(k, {}).get("N", 0), j[d].get(k, {}).get("mean", 0.0))
                    for k in ("slat_ns", "clat_ns", "lat_ns")}
                for d in ("read", "write", "trim") if d in j}
        limit = parse_seconds(opts.get("runtime", opts.get("timeout", "")) or "") or 0
        # fio's switches that turn its measuring off: iotail measures anyway (documented).
        unmeasured = bool(keys & UNMEASURED)
        out.append({"name": j["jobname"], "group": j["groupid"], "bytes": dirs, "ios": ios,
                    "unmeasured": unmeasured,
                    "limit_ms": limit * 1000,
                    "lats": lats, "null": opts.get("ioengine", "") == "null",
                    "runtime": j.get("job_runtime", 0), "timed": timed,
                    "random_sizes": random_sizes, "draws": per_direction and random_rw})
    return out


def ended_by_time(job, opts):
    """Whether a job of fio's summary was ended by its runtime rather than its size."""
    if "time_based" in opts and opts["time_based"] not in ("0", "false"):
        return True
    runtime = parse_seconds(opts.get("runtime", opts.get("timeout", "")) or "")
    if not runtime:
        return False
    return job.get("job_runtime", 0) >= 0.9 * runtime * 1000


def differences(fio, ours, lat_tolerance=0.0):
    if len(fio) != len(ours):
        return [f"{len(fio)} jobs in fio, {len(ours)} in iotail"]
    diffs = []
    for a, b in zip(fio, ours):
        name = a["name"]
        if (a["name"], a["group"]) != (b["name"], b["group"]):
            diffs.append(f"job {name} group {a['group']} vs {b['name']} group {b['group']}")
            continue
        mixed = sum(1 for v in a["bytes"].values() if v > 0) > 1
        # A job fio's size ended that iotail's runtime ended (a slower moment): not comparable.
        if not a["timed"] and b["limit_ms"] and b["runtime"] >= 0.9 * b["limit_ms"]:
            a = dict(a, timed=True)
        for d in ("read", "write", "trim"):
            x, y = a["bytes"].get(d, 0), b["bytes"].get(d, 0)
            if (x > 0) != (y > 0):
                diffs.append(f"{name}: {d} {x} bytes in fio, {y} in iotail")
            elif not a["timed"] and not mixed and x != y:
                diffs.append(f"{name}: {d} {x} bytes in fio, {y} in iotail")
            elif not a["timed"] and not mixed and not a["random_sizes"] and \
                    a["ios"].get(d, 0) != b["ios"].get(d, 0):
                diffs.append(f"{name}: {d} {a['ios'].get(d, 0)} I/Os in fio, "
                             f"{b['ios'].get(d, 0)} in iotail")
            diffs += latency_differences(name, d, a, b, lat_tolerance)
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


def latency_differences(name, d, a, b, tolerance):
    """slat, clat and lat of direction d: measured by both or neither; with a tolerance, their
    means within that factor of fio's over at least 200 I/Os."""
    out = []
    la, lb = a["lats"].get(d, {}), b["lats"].get(d, {})
    for k in ("slat_ns", "clat_ns", "lat_ns"):
        (na, ma), (nb, mb) = la.get(k, (0, 0.0)), lb.get(k, (0, 0.0))
        if a["null"] or a["unmeasured"]:
            continue  # iotail's null engine measures no slat or lat; fio measured nothing
        if (na > 0) != (nb > 0):
            out.append(f"{name}: {d} {k} N {na} in fio, {nb} in iotail")
        elif tolerance > 0 and not a["null"] and min(na, nb) >= 200 and ma > 0 and mb > 0 and \
                not 1 / tolerance <= mb / ma <= tolerance:
            out.append(f"{name}: {d} {k} mean {ma:.0f} ns in fio, {mb:.0f} in iotail")
    return out


LOG_RE = re.compile(r"_(bw|iops|slat|clat|lat|clat_hist|lat_hist)(\.\d+)?\.log$")


def files_left(workdir):
    """{name: size} of what a tool left in its directory (job.fio aside)."""
    out = {}
    for root, _, names in os.walk(workdir):
        for n in names:
            path = os.path.join(root, n)
            rel = os.path.relpath(path, workdir)
            if rel != "job.fio" and os.path.isfile(path):
                out[rel] = os.path.getsize(path)
    return out


def log_lines(path):
    """(line count, last time stamp) of a fio log."""
    count, last = 0, 0
    with open(path, errors="replace") as f:
        for line in f:
            head = line.split(",", 1)[0].strip()
            if head.isdigit():
                count += 1
                last = int(head)
    return count, last


def file_differences(fio_dir, our_dir, windowed, sizes=True):
    """The files each tool left: the same names, the same sizes but of logs; with log_avg_msec
    (windowed: fio logs each I/O without it, iotail always by window), each log's line count
    within one and last stamp within 10% + 100 ms of fio's. fio's verify state files (written by
    default; iotail saves no verify state) are left out; without `sizes` (random truncates: the
size a file is left at is the last draw's) only the names are compared."""
    a, b = files_left(fio_dir), files_left(our_dir)
    diffs = []
    for n in sorted(set(a) | set(b)):
        if n.endswith("-verify.state"):
            continue
        if n not in b:
            diffs.append(f"{n} left by fio only")
        elif n not in a:
            diffs.append(f"{n} left by iotail only")
        elif sizes and not LOG_RE.search(n) and a[n] != b[n]:
            diffs.append(f"{n}: {a[n]} bytes from fio, {b[n]} from iotail")
        elif LOG_RE.search(n) and windowed:
            (ca, ta), (cb, tb) = log_lines(os.path.join(fio_dir, n)), log_lines(
                os.path.join(our_dir, n))
            if abs(ca - cb) > 1:
                diffs.append(f"{n}: {ca} lines from fio, {cb} from iotail")
            elif abs(ta - tb) > 0.1 * ta + 100:
                diffs.append(f"{n}: last stamp {ta} ms from fio, {tb} from iotail")
    return diffs


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="+")
    ap.add_argument("--iotail", default=os.path.join(os.path.dirname(__file__), "..", "build",
                                                     "iotail"))
    ap.add_argument("--size", default="16m")
    ap.add_argument("--runtime", type=int, default=1)
    ap.add_argument("--allow-refused", default="", help="files iotail may refuse, comma-separated")
    ap.add_argument("--allow-differs", default="",
                    help="files known to differ (reported, not failed), comma-separated")
    ap.add_argument("--keep", action="store_true", help="keep the scratch directories")
    ap.add_argument("--all", action="store_true", help="every difference of a file, not 4")
    ap.add_argument("--timeout", type=int, default=60, help="seconds a tool may take on a file")
    ap.add_argument("--lat-tolerance", type=float, default=0.0,
                    help="compare slat/clat/lat means within this factor of fio's (0: off)")
    args = ap.parse_args()
    args.iotail = os.path.abspath(args.iotail)  # each tool runs in its own directory
    if shutil.which("fio") is None:
        print("fio-corpus: fio is not installed: skipped")
        return 77
    files = []
    for p in args.paths:
        if os.path.isdir(p):
            files += sorted(os.path.join(p, f) for f in os.listdir(p)
                            if os.path.isfile(os.path.join(p, f)) and
                            is_job_file(os.path.join(p, f)))
        else:
            files.append(p)
    allowed = set(filter(None, args.allow_refused.split(",")))
    known = set(filter(None, args.allow_differs.split(",")))
    cap = parse_size(args.size)
    scratch = tempfile.mkdtemp(prefix="iotail-fio-corpus.")
    counts = {"same": 0, "differs": 0, "refused": 0, "fio fails": 0}
    bad = 0
    try:
        for i, path in enumerate(files):
            with open(path, errors="replace") as f:
                job = rewrite(inline_includes(f.read(), os.path.dirname(path)), cap, args.runtime)
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
            sections = section_keys(job)
            theirs = jobs_of(fio, None, sections)
            diffs = differences(theirs, jobs_of(ours, [j["timed"] for j in theirs]),
                                args.lat_tolerance)
            random_truncates = bool(re.search(r"ioengine\s*=\s*ftruncate", job) and
                                    re.search(r"(?m)^\s*(rw|readwrite)\s*=\s*rand", job))
            diffs += file_differences(os.path.join(where, "fio"), os.path.join(where, "iotail"),
                                      "log_avg_msec" in job, not random_truncates)
            diffs += skeleton_differences(fio, ours, {j["name"] for j in theirs if j["null"]},
                                          {j["name"] for j in theirs if j["unmeasured"]})
            counts["same" if not diffs else "differs"] += 1
            bad += bool(diffs) and base not in known
            verdict = "same" if not diffs else "differs" if base not in known else "known"
            print(f"{verdict:8} {base}" + ("" if not diffs else ": " + "; ".join(diffs[:4])) +
                  (f" (and {len(diffs) - 4} more)" if len(diffs) > 4 and not args.all else ""))
            if args.all:
                for d in diffs[4:]:
                    print(f"         {d}")
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
