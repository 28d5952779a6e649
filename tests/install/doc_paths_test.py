#!/usr/bin/env python3
"""Every repository path that README.md and docs/*.md name exists.

A path is a word, in `inline code`, a fenced code block or a markdown link's target, that begins
with one of the repository's folders (cli/, engine/, stats/, mpi/, scripts/, tests/, docs/,
cmake/, .ci/) or is one of its top-level files; globs (cli/run_options*.cc) must match at least
one file, and a source named without its extension (engine/job_targets) must have a .h or .cc.
Placeholders (tests/<layer>/) are skipped. Build outputs (build/...) and absolute paths are not the repository's and are skipped.
A document that names a file that was moved or renamed fails here, with the file and line.
Usage: doc_paths_test.py SOURCE_DIR
"""
import glob
import os
import re
import sys

FOLDERS = ("cli/", "engine/", "stats/", "mpi/", "scripts/", "tests/", "docs/", "cmake/", ".ci/")
TOP_FILES = {"README.md", "LICENSE", "CMakeLists.txt", ".clang-format"}


def candidates(line, in_fence):
    spans = re.findall(r"`([^`]+)`", line)
    spans += re.findall(r"\]\(([^)#\s]+)", line)
    if in_fence:
        spans.append(line)
    for span in spans:
        for word in re.split(r"[\s=,;()'\"]+", span):
            word = word.rstrip(".:")
            word = re.sub(r":\d+$", "", word)  # FILE:LINE
            if word.startswith("./"):
                word = word[2:]
            if "<" in word:
                continue
            if word.startswith(FOLDERS) or word in TOP_FILES:
                yield word


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")
    docs = ["README.md"] + sorted(
        os.path.relpath(p, root) for p in glob.glob(os.path.join(root, "docs", "*.md")))
    missing = []
    checked = 0
    for doc in docs:
        base = os.path.dirname(doc)
        in_fence = False
        with open(os.path.join(root, doc), encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                if line.lstrip().startswith("```"):
                    in_fence = not in_fence
                    continue
                for word in candidates(line, in_fence):
                    checked += 1
                    # A link in docs/ may be relative to docs/ (../README.md) or name a docs file.
                    tries = [os.path.join(root, word), os.path.join(root, base, word)]
                    tries += [os.path.join(root, word + ext) for ext in (".h", ".cc")]
                    if any(glob.glob(t) for t in tries):
                        continue
                    missing.append(f"{doc}:{number}: `{word}` does not exist")
    for m in missing:
        print("FAIL:", m)
    print(f"{checked} path(s) named in {len(docs)} document(s), {len(missing)} missing")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
