#!/usr/bin/env bash
# scripts/setup.sh --log FILE (what the quickstart runs) keeps the package manager's chatter out of
# the terminal: with stand-ins for dpkg-query (every package missing), apt-get (400 lines of dpkg
# progress) and sudo on PATH, it prints one line per stage naming the log, the log holds the
# chatter; when apt-get fails, it exits with apt-get's status and shows the log's last lines.
# Without --log the chatter is shown as before. Needs nothing installed; runs anywhere.
# Usage: setup_log_test.sh SOURCE_DIR
set -euo pipefail
src=$(cd "$1" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/iotail-setup-log.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir "$work/bin"
cat >"$work/bin/dpkg-query" <<'SH'
#!/bin/sh
exit 1
SH
cat >"$work/bin/apt-get" <<'SH'
#!/bin/sh
if [ "$1" = install ]; then
  i=0
  while [ $i -lt 400 ]; do echo "Unpacking package-$i ..."; i=$((i + 1)); done
  if [ -n "${FAKE_APT_FAIL:-}" ]; then echo "E: Sub-process /usr/bin/dpkg returned an error code (1)" >&2; exit 100; fi
fi
exit 0
SH
cat >"$work/bin/sudo" <<'SH'
#!/bin/sh
exec "$@"
SH
chmod +x "$work/bin/"*
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

out=$(PATH="$work/bin:$PATH" bash "$src/scripts/setup.sh" --run --log "$work/ok.log" 2>&1) ||
  fail "setup.sh --run --log failed: $out"
lines=$(printf '%s\n' "$out" | wc -l)
[ "$lines" -le 3 ] || fail "expected at most 3 lines on the terminal, got $lines: $out"
grep -q "installing .* packages .*g++" <<<"$out" || fail "no line naming what is installed: $out"
grep -q "output in $work/ok.log" <<<"$out" || fail "the log's path is not printed: $out"
[ "$(grep -c Unpacking "$work/ok.log" 2>/dev/null)" = 400 ] || fail "the log lacks apt-get's output"

status=0
out=$(FAKE_APT_FAIL=1 PATH="$work/bin:$PATH" bash "$src/scripts/setup.sh" --run \
  --log "$work/bad.log" 2>&1) || status=$?
[ "$status" -eq 100 ] || fail "expected apt-get's exit status 100, got $status"
grep -q "returned an error code" <<<"$out" || fail "the log's tail is not shown: $out"
grep -q "last lines of $work/bad.log" <<<"$out" || fail "the failure does not name the log: $out"
[ "$(printf '%s\n' "$out" | wc -l)" -le 32 ] || fail "more than the log's tail was shown"

out=$(PATH="$work/bin:$PATH" bash "$src/scripts/setup.sh" --run 2>&1) || fail "setup.sh --run failed"
[ "$(grep -c Unpacking <<<"$out")" -eq 400 ] || fail "without --log the output is not shown"

[ "$failures" -eq 0 ] || exit 1
echo "setup.sh --log: ok"
