#!/usr/bin/env bash
# The generated man pages render without a warning (groff -ww) and through man -l, each with its
# sections; the bash completion completes subcommands, options and the values of enumerated
# options (`iotail run --rw=<TAB>` offers randread), however bash splits "--rw="; the zsh one
# parses. Usage: docs_test.sh BUILD_DIR. Exit 77 (skipped) when groff, man or zsh is missing.
set -euo pipefail
build=$(cd "$1" && pwd)
docs=$build/docs-generated
for tool in groff man zsh; do
  if ! command -v "$tool" >/dev/null; then
    echo "SKIPPED: $tool is not installed (scripts/setup.sh installs it)"
    exit 77
  fi
done
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

pages=(iotail iotail-run iotail-sweep iotail-pctiles iotail-merge iotail-compare iotail-plot)
[ -x "$build/iotail-mpi" ] && pages+=(iotail-mpi)
for page in "${pages[@]}"; do
  file=$docs/man/$page.1
  [ -s "$file" ] || { fail "$file missing"; continue; }
  warnings=$(groff -man -Tutf8 -ww -z "$file" 2>&1)
  [ -z "$warnings" ] || fail "$page: groff warnings: $warnings"
  text=$(MANWIDTH=100 man -l "$file" 2>&1)
  for section in NAME SYNOPSIS DESCRIPTION OPTIONS "EXIT STATUS" "SEE ALSO"; do
    grep -q "^$section" <<<"$text" || fail "$page: no $section section"
  done
  [[ $page == iotail || $page == iotail-run || $page == iotail-mpi ]] || continue
  grep -q "^EXAMPLES" <<<"$text" || fail "$page: no EXAMPLES section"
done
grep -q -- '--rw=read|write|randread' <<<"$(MANWIDTH=200 man -l "$docs/man/iotail-run.1")" ||
  fail "iotail-run(1) does not show --rw's values"

# COMP_WORDS as bash gives them ("--rw=" is split at '=' by the default COMP_WORDBREAKS) and as a
# caller that does not split them gives them.
complete_words() {  # CWORD WORD...: prints COMPREPLY, one per line
  bash -c 'source "$1"; shift; COMP_CWORD=$1; shift; COMP_WORDS=("$@"); _iotail
           printf "%s\n" "${COMPREPLY[@]}"' _ "$docs/completion/iotail" "$@"
}
expect_reply() {  # WANT CWORD WORD...
  local want=$1
  shift
  local got
  got=$(cd "$scratch" && complete_words "$@")
  grep -qxF -- "$want" <<<"$got" || fail "completing '${*:2}' offers no '$want' (got: ${got//$'\n'/ })"
}
scratch=$(mktemp -d "${TMPDIR:-/tmp}/iotail-docs-test.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
touch "$scratch/job.fio"
expect_reply randread 4 iotail run --rw = ''
expect_reply --rw=randread 2 iotail run --rw=
expect_reply randread 4 iotail run --readwrite = rand
expect_reply randread 3 iotail run --rw rand
expect_reply io_uring 4 iotail run --ioengine = io
expect_reply json+ 4 iotail run --output-format = json
expect_reply --iodepth= 2 iotail run --iode
expect_reply plot 1 iotail pl
expect_reply --step_time= 2 iotail sweep --step_t
expect_reply --time-quantum= 2 iotail pctiles --time-q
expect_reply job.fio 2 iotail run jo
expect_reply zsh 2 iotail completion z
got=$(cd "$scratch" && complete_words 4 iotail run --rw = x)
[ -z "$got" ] || fail "completing --rw=x offers '$got'"

zsh -n "$docs/completion/_iotail" || fail "_iotail: zsh syntax error"
head -1 "$docs/completion/_iotail" | grep -qx '#compdef iotail' || fail "_iotail: no #compdef"

if [ "$failures" -ne 0 ]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "ok: ${#pages[@]} man pages, bash and zsh completion"
