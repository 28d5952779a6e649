#!/usr/bin/env bash
# Fails when a source file or a function has grown too long to read as one piece:
#   - any .cc/.h under cli/ engine/ mpi/ stats/ tests/ over 500 lines;
#   - any function body in cli/ engine/ mpi/ over 120 lines (from the line of its opening brace to
#     the line of its closing one; lambdas and local classes count as part of their function).
# Each offender is printed as `FILE:LINE name (N lines)` (name `file` for a whole file).
#
# Functions are found by a heuristic, not a compiler: comments, string and character literals
# (raw strings too) and preprocessor lines are blanked, braces are matched, and a brace at
# namespace or class level that follows `name(...)` (and no `=`) opens a function body.
#
# Known offenders may be listed, exactly, in scripts/check-sizes.allow:
#   file PATH                a file over the line limit
#   function PATH NAME       a function over the limit (NAME as printed, e.g. Class::Method)
# An allowed offender is printed but does not fail; an entry that no longer matches an offender
# fails, so that the list only shrinks.
#
# Usage: scripts/check-sizes.sh [SOURCE_DIR]   (default: the checkout this script is in)
# Registered with CTest as `check_sizes` (tests/CMakeLists.txt).
set -euo pipefail
root=${1:-"$(dirname "$0")/.."}
exec python3 - "$root" <<'PYTHON'
import os
import re
import sys

MAX_FILE_LINES = 500
MAX_FUNCTION_LINES = 120
FILE_DIRS = ("cli", "engine", "mpi", "stats", "tests")
FUNCTION_DIRS = ("cli", "engine", "mpi")
ALLOW_LIST = "scripts/check-sizes.allow"

root = sys.argv[1]


def literal_end(text, i):
    """Where the string or character literal opening at text[i] ends (after its closing quote;
    at the end of the line if it has none), escapes skipped."""
    j = i + 1
    while j < len(text) and text[j] != text[i] and text[j] != "\n":
        j += 2 if text[j] == "\\" else 1
    return j + 1 if j < len(text) and text[j] == text[i] else j


def blank_code(text):
    """The text with comments, literals and preprocessor lines replaced by spaces (newlines
    kept, so line numbers stay), string literals left as "" and character literals as ''."""
    out = []
    i, n = 0, len(text)
    line_start = True  # only blanks since the last newline
    while i < n:
        c = text[i]
        if c == "\n":
            out.append(c)
            line_start = True
            i += 1
            continue
        if line_start and c == "#":
            # A preprocessor line, with its backslash continuations.
            while i < n and text[i] != "\n":
                if text[i] == "\\" and i + 1 < n and text[i + 1] == "\n":
                    out.append(" \n")
                    i += 2
                    continue
                out.append(" ")
                i += 1
            continue
        if not c.isspace():
            line_start = False
        if text.startswith("//", i):
            while i < n and text[i] != "\n":
                out.append(" ")
                i += 1
            continue
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append(re.sub(r"[^\n]", " ", text[i:end]))
            i = end
            continue
        if c == '"':
            # A raw string: R"delim( ... )delim", the R ending the token before the quote.
            token = re.search(r"[A-Za-z0-9_]*$", "".join(out[-8:])).group(0)
            if token in ("R", "u8R", "uR", "UR", "LR"):
                m = re.match(r'"([^()\\\s]{0,16})\(', text[i:])
                if m:
                    close = ")" + m.group(1) + '"'
                    end = text.find(close, i + len(m.group(0)))
                    end = n if end < 0 else end + len(close)
                    out.append('""' + re.sub(r"[^\n]", " ", text[i + 2 : end]))
                    i = end
                    continue
            out.append('""')
            i = literal_end(text, i)
            continue
        if c == "'":
            # A digit separator (1'000) or a character literal ('x', u8'x', L'\n').
            token = re.search(r"[A-Za-z0-9_.']*$", "".join(out[-32:])).group(0)
            if token[:1].isdigit():
                out.append(c)
                i += 1
                continue
            out.append("''")
            i = literal_end(text, i)
            continue
        out.append(c)
        i += 1
    return "".join(out)


def strip_templates(head):
    """The head without its `template <...>` clauses."""
    while True:
        m = re.search(r"\btemplate\s*<", head)
        if not m:
            return head
        depth, j = 1, m.end()
        while j < len(head) and depth > 0:
            depth += {"<": 1, ">": -1}.get(head[j], 0)
            j += 1
        head = head[: m.start()] + " " + head[j:]


def classify(head):
    """What a brace opens, from the text since the previous `;`, `{` or `}` at this level:
    ('namespace'|'class'|'function'|'other', name)."""
    head = re.sub(r"\b(public|private|protected)\s*:", " ", head)
    head = strip_templates(head).strip()
    if re.match(r"(inline\s+)?namespace\b", head) or re.match(r'extern\s*""\s*$', head):
        return "namespace", None
    before_paren = head.split("(", 1)[0]
    if re.search(r"\benum\b", before_paren):
        return "other", None
    if re.search(r"\b(class|struct|union)\b", before_paren):
        return "class", None
    # `=` at paren depth 0 (but not in an operator's name) makes this an initializer.
    unnamed = re.sub(r"\boperator\s*(\(\)|[^\w\s(]+)", "operator", head)
    depth = 0
    for ch in unnamed:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "=" and depth == 0:
            return "other", None
    if "(" not in unnamed:
        return "other", None
    m = re.search(r"([\w:~]+)\s*$", unnamed.split("(", 1)[0])
    if not m:
        return "other", None
    name = m.group(1)
    if name.endswith("operator"):
        op = re.search(r"([\w:~]*operator\s*(?:\(\)|[^\w\s(]+))", head)
        name = re.sub(r"\s+", "", op.group(1)) if op else name
    return "function", name


def functions(code):
    """(line, name, body lines) of every function defined at namespace or class level."""
    found = []
    scopes = []  # kind of each open brace
    head_start = 0  # where the text before the next brace at this level starts
    parens = 0  # open parentheses in that text (a brace inside them is an argument's)
    i, n = 0, len(code)
    while i < n:
        c = code[i]
        if not all(k in ("namespace", "class") for k in scopes):
            i += 1  # unbalanced input; nothing more to find
            continue
        if c == "(":
            parens += 1
        elif c == ")":
            parens = max(0, parens - 1)
        elif c in ";}":
            if c == "}" and scopes:
                scopes.pop()
            head_start, parens = i + 1, 0
        elif c == "{":
            head = code[head_start:i]
            kind, name = ("init", None) if parens > 0 else classify(head)
            if kind == "function" and re.search(r"\)\s*(noexcept\s*)?:(?!:)", head):
                # A constructor's initializer list: `a_{x}` is an initializer, not the body.
                before = head.rstrip()
                if before and (before[-1].isalnum() or before[-1] in "_>"):
                    kind = "init"
            if kind in ("namespace", "class"):
                scopes.append(kind)
                head_start = i + 1
                i += 1
                continue
            # Skip to the matching brace.
            depth, j = 1, i + 1
            while j < n and depth > 0:
                depth += {"{": 1, "}": -1}.get(code[j], 0)
                j += 1
            if kind == "function":
                name_at = head_start + max(0, head.find(name.split("::")[-1]))
                open_line = code.count("\n", 0, i) + 1
                close_line = code.count("\n", 0, j - 1) + 1
                found.append((code.count("\n", 0, name_at) + 1, name, close_line - open_line + 1))
            if kind != "init":  # an initializer's braces leave the head going on
                head_start, parens = j, 0
            i = j
            continue
        i += 1
    return found


def sources(dirs):
    for top in dirs:
        for folder, subdirs, files in os.walk(os.path.join(root, top)):
            subdirs.sort()
            for f in sorted(files):
                if f.endswith((".cc", ".h")):
                    path = os.path.join(folder, f)
                    yield os.path.relpath(path, root), path


def read_allow_list():
    entries = set()
    path = os.path.join(root, ALLOW_LIST)
    if not os.path.exists(path):
        return entries
    with open(path) as f:
        for number, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            words = line.split()
            if not ((words[0] == "file" and len(words) == 2) or
                    (words[0] == "function" and len(words) == 3)):
                sys.exit(f"{ALLOW_LIST}:{number}: expected 'file PATH' or 'function PATH NAME'")
            entries.add(tuple(words))
    return entries


allowed = read_allow_list()
offenders = []  # (key, message)
for rel, path in sources(FILE_DIRS):
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
    if lines > MAX_FILE_LINES:
        offenders.append((("file", rel), f"{rel}:1 file ({lines} lines)"))
    if rel.split(os.sep)[0] in FUNCTION_DIRS:
        for line, name, body in functions(blank_code(text)):
            if body > MAX_FUNCTION_LINES:
                offenders.append((("function", rel, name), f"{rel}:{line} {name} ({body} lines)"))

failed = False
for key, message in offenders:
    if key in allowed:
        print(f"allowed ({ALLOW_LIST}): {message}")
    else:
        print(message)
        failed = True
for entry in sorted(allowed - {key for key, _ in offenders}):
    print(f"{ALLOW_LIST}: '{' '.join(entry)}' is no longer an offender: remove it")
    failed = True
if failed:
    print(f"check-sizes: files may have at most {MAX_FILE_LINES} lines, functions in "
          f"{', '.join(FUNCTION_DIRS)} at most {MAX_FUNCTION_LINES}: split them by concept")
    sys.exit(1)
print(f"check-sizes: ok ({len(offenders)} allowed)")
PYTHON
