#!/usr/bin/env python3
"""The quickstart's build (IOTAIL_QUICK_BUILD) compiles each library of the iotail binary as one
unit, every .cc of the library #included into one file; two files of a library that give the same
file-local name (a function or constant in an anonymous namespace, a `using` alias) to different
things then clash, and the quickstart fails to build while the per-file development build is fine.
This compiles, for each library named, a file including all of its sources, with -fsyntax-only
and the library's own compile command taken from the build's compile_commands.json (a per-file
build's), and fails naming the clash.

Usage: unity_units_test.py BUILD_DIR TARGET...  (libraries whose compile_commands entries are
already unity files, as in a quick build, are left to the build itself.)"""
import json
import os
import shlex
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor


def units(build_dir, targets):
    """(target, command of its first file, its sources in CMake's order) for each target."""
    with open(os.path.join(build_dir, "compile_commands.json")) as f:
        entries = json.load(f)
    found = {}
    for entry in entries:
        args = shlex.split(entry["command"])
        output = args[args.index("-o") + 1]
        for target in targets:
            if f"CMakeFiles/{target}.dir/" in output:
                found.setdefault(target, (entry, []))[1].append(entry["file"])
    return [(t, found[t][0], found[t][1]) for t in targets if t in found]


def check(build_dir, target, entry, sources, tmp):
    if any("/Unity/" in s for s in sources):
        return target, None
    unit = os.path.join(tmp, f"{target}_unity.cc")
    with open(unit, "w") as f:
        f.writelines(f'#include "{s}"\n' for s in sources)
    args = shlex.split(entry["command"])
    i = args.index("-o")
    del args[i:i + 2]
    kept, skip = [], False
    for a in args:  # without -c FILE and the dependency-file options
        if skip:
            skip = False
        elif a in ("-MT", "-MF", "-MQ"):
            skip = True
        elif a not in ("-c", entry["file"], "-MD", "-MMD"):
            kept.append(a)
    args = kept
    result = subprocess.run(args + ["-fsyntax-only", unit], cwd=entry["directory"],
                            capture_output=True, text=True)
    if result.returncode == 0:
        return target, ""
    errors = [l for l in result.stderr.splitlines() if "error:" in l]
    return target, "\n".join(errors[:10]) or result.stderr[-2000:]


def main():
    if len(sys.argv) < 3:
        print(__doc__.strip().splitlines()[-2], file=sys.stderr)
        return 2
    build_dir, targets = sys.argv[1], sys.argv[2:]
    found = units(build_dir, targets)
    missing = sorted(set(targets) - {t for t, _, _ in found})
    if missing:
        print(f"FAIL: no compile commands for {', '.join(missing)} in {build_dir}")
        return 1
    failures = 0
    with tempfile.TemporaryDirectory() as tmp, ThreadPoolExecutor(os.cpu_count() or 1) as pool:
        jobs = [pool.submit(check, build_dir, t, e, s, tmp) for t, e, s in found]
        for job in jobs:
            target, errors = job.result()
            if errors is None:
                print(f"ok: {target} (compiled as one unit by this build)")
            elif errors:
                failures += 1
                print(f"FAIL: {target}'s sources do not compile as one unit, as the quickstart "
                      f"builds them (IOTAIL_QUICK_BUILD): give file-local names their own "
                      f"names\n{errors}")
            else:
                print(f"ok: {target}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
