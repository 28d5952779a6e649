#!/usr/bin/env bash
# Regenerates the golden fio data under tests/data/fio/<case>/ from real fio runs.
#
# Each case directory holds the fio job file (job.fio, the case's input, kept), the histogram logs
# fio wrote (hist_clat_hist*.log), fio's --output-format=json+ output (fio.json) and, under
# pctiles/, the runs of fio's own fio-histo-log-pctiles.py on those logs: NAME.args (the arguments,
# one per line, file names relative to the case directory), NAME.stdout, NAME.rc (exit status)
# and NAME.stderr (the last line of stderr: the exception, if the script crashed).
# tests/data/fio/README.md lists the fio and Python versions and which inputs make the script fail.
#
# The data differs from run to run (real I/O timings); the tests read whatever is checked in.
# Runs take about 25 s. Targets and scratch files live in a temporary directory (in /dev/shm when
# available), removed at exit. Needs fio (3.33 for the checked-in set), Debian's /usr/bin/python3
# and the fio package's /usr/share/doc/fio/fio-histo-log-pctiles.py.gz.
#
# Usage: scripts/gen-golden.sh [CASE...]   (default: all cases)
set -euo pipefail

FIO=${FIO:-fio}
PYTHON=${PYTHON:-/usr/bin/python3}
PCTILES_GZ=${PCTILES_GZ:-/usr/share/doc/fio/fio-histo-log-pctiles.py.gz}

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out="$root/tests/data/fio"
scratch_parent=/dev/shm
[ -d "$scratch_parent" ] && [ -w "$scratch_parent" ] || scratch_parent=${TMPDIR:-/tmp}
work=$(mktemp -d "$scratch_parent/iotail-golden.XXXXXX")
trap 'rm -rf "$work"' EXIT

fio_version=$("$FIO" --version)
if [ "$fio_version" != "fio-3.33" ]; then
  echo "gen-golden: warning: $fio_version, the checked-in set was made with fio-3.33" >&2
fi
zcat "$PCTILES_GZ" >"$work/fio-histo-log-pctiles.py"
mkdir -p "$out"

# run_case NAME [LOGS...]: runs the case's checked-in job file, tests/data/fio/NAME/job.fio (a
# short time-based run on a small scratch file, writing histogram logs "hist" every 250 ms), in a
# scratch directory, copies the results into tests/data/fio/NAME (replacing all but the job file)
# and runs the script there with the two option sets every case is run with, on LOGS (default:
# every histogram log of the case).
run_case() {
  local name=$1 dir="$work/$1"
  shift
  mkdir -p "$dir"
  cp "$out/$name/job.fio" "$dir/job.fio"
  echo "gen-golden: fio case $name" >&2
  (cd "$dir" && "$FIO" job.fio --output-format=json+ --output=fio.json >/dev/null)
  rm -rf "${out:?}/$name"
  mkdir -p "$out/$name/pctiles"
  cp "$dir/job.fio" "$dir/fio.json" "$dir"/hist_clat_hist*.log "$out/$name/"
  # shellcheck disable=SC2046  # one word per log name (they hold no blanks)
  [ $# -gt 0 ] || set -- $(logs_of "$name")
  run_pctiles "$name" default -- "$@"
  run_pctiles "$name" p4-tq2-usec --percentiles 50 90 99 99.9 --time-quantum 2 \
    --output-unit usec -- "$@"
}

# record_script_run NAME LABEL RUN_DIR ARGS...: runs fio-histo-log-pctiles.py with ARGS in
# RUN_DIR and records its stdout, exit status and last stderr line under NAME's pctiles/LABEL.*;
# prints the exit status.
record_script_run() {
  local dir="$out/$1/pctiles" label=$2 run_dir=$3 rc=0
  shift 3
  (cd "$run_dir" && TZ=UTC "$PYTHON" "$work/fio-histo-log-pctiles.py" "$@") \
    >"$dir/$label.stdout" 2>"$work/stderr" || rc=$?
  echo "$rc" >"$dir/$label.rc"
  tail -n 1 "$work/stderr" >"$dir/$label.stderr"
  echo "$rc"
}

# run_pctiles NAME LABEL ARGS...: runs fio-histo-log-pctiles.py in the case directory and records
# its arguments, stdout, exit status and last stderr line under pctiles/LABEL.*.
run_pctiles() {
  local name=$1 label=$2
  shift 2
  local dir="$out/$name/pctiles"
  printf '%s\n' "$@" >"$dir/$label.args"
  local rc
  rc=$(record_script_run "$name" "$label" "$out/$name" "$@")
  echo "gen-golden:   pctiles $label: rc=$rc $(cat "$dir/$label.stderr")" >&2
}

# run_equivalent NAME LABEL DERIVED_DIR "ORIGINAL_FILES" "DERIVED_FILES" [OPTIONS...]: for an
# input the script rejects, runs the script on an equivalent input it accepts (made in DERIVED_DIR,
# not checked in) and records its result under pctiles/LABEL.*, with the arguments OPTIONS --
# ORIGINAL_FILES: what iotail must print when given the original files.
run_equivalent() {
  local name=$1 label=$2 derived=$3 originals=$4 deriveds=$5
  shift 5
  local dir="$out/$name/pctiles" rc
  # shellcheck disable=SC2086  # the file lists are space-separated on purpose
  printf '%s\n' "$@" -- $originals >"$dir/$label.args"
  # shellcheck disable=SC2086
  rc=$(record_script_run "$name" "$label" "$derived" "$@" -- $deriveds)
  echo "gen-golden:   pctiles $label (equivalent input): rc=$rc" >&2
}

logs_of() { (cd "$out/$1" && ls hist_clat_hist*.log | sort -V); }

cases=("$@")
[ ${#cases[@]} -gt 0 ] || cases=(basic randrw coarse trim perjob0 epoch burst)

for c in "${cases[@]}"; do
  case "$c" in
    basic)  # One job, random reads: the script's home ground.
      run_case basic
      run_pctiles basic msec --output-unit msec --percentiles 0 25 50 75 99.99 100 \
        -- hist_clat_hist.1.log
      run_pctiles basic unsorted --percentiles 99 50 0 -- hist_clat_hist.1.log
      run_pctiles basic nsec --output-unit nsec -- hist_clat_hist.1.log
      run_pctiles basic tq0 --time-quantum 0 -- hist_clat_hist.1.log
      run_pctiles basic fio2 --fio-version 2 -- hist_clat_hist.1.log
      ;;
    randrw)  # Three jobs of mixed reads and writes through io_uring, one log per job.
      run_case randrw
      run_pctiles randrw one-file -- hist_clat_hist.2.log
      run_pctiles randrw msec5 --output-unit msec --time-quantum 5 -- $(logs_of randrw)
      ;;
    coarse)  # log_hist_coarseness 2 (464 columns) and 6 (29 columns); group_reporting, so fio.json
      # holds the two jobs' summed histogram and its percentiles.
      run_case coarse hist_clat_hist.1.log
      run_pctiles coarse coarse6 -- hist_clat_hist.2.log
      ;;
    trim)  # Trims through the falloc engine (ddir 2): a pure randtrim job and a trimwrite job.
      run_case trim
      run_pctiles trim trimwrite -- hist_clat_hist.2.log
      # The pure-trim log with ddir 2 rewritten as 0 is what iotail must match on the original.
      mkdir -p "$work/trim-derived"
      sed -E 's/^([0-9]+), 2,/\1, 0,/' "$out/trim/hist_clat_hist.1.log" \
        >"$work/trim-derived/hist_clat_hist.1.log"
      run_equivalent trim equiv-randtrim "$work/trim-derived" hist_clat_hist.1.log \
        hist_clat_hist.1.log
      ;;
    perjob0)  # per_job_logs=0: two jobs appended to one file, the time jumps back between them.
      run_case perjob0
      # The same file split into one file per job (where a direction's time goes back) is what
      # iotail must match on the original.
      mkdir -p "$work/perjob0-derived"
      awk -v dir="$work/perjob0-derived" -F', ' '
        { if ($1 + 0 < last[$2]) { job++; delete last } last[$2] = $1 + 0
          print > (dir "/job" (job + 0) ".log") }' "$out/perjob0/hist_clat_hist.log"
      run_equivalent perjob0 equiv-split "$work/perjob0-derived" hist_clat_hist.log \
        "job0.log job1.log"
      run_equivalent perjob0 equiv-split-p4 "$work/perjob0-derived" hist_clat_hist.log \
        "job0.log job1.log" --percentiles 50 90 99 99.9 --time-quantum 2 --output-unit usec
      ;;
    epoch)  # log_unix_epoch=1: Unix-epoch ms time stamps, two jobs of mixed I/O.
      run_case epoch
      run_pctiles epoch log-hist-msec --log-hist-msec 250 -- $(logs_of epoch)
      run_pctiles epoch log-hist-msec-one --log-hist-msec 250 -- hist_clat_hist.1.log
      run_pctiles epoch one-file -- hist_clat_hist.2.log
      ;;
    burst)  # Bursts of 40 I/Os then 700 ms idle, 100 ms log period: duplicate-timestamp bursts.
      run_case burst
      run_pctiles burst reads-only -- hist_clat_hist.2.log
      ;;
    *)
      echo "gen-golden: unknown case $c" >&2
      exit 2
      ;;
  esac
done

# The summary: versions and the outcome of every script run.
{
  echo "# Golden fio data"
  echo
  echo "Generated by \`scripts/gen-golden.sh\` with $fio_version ($(uname -sr)) and"
  echo "fio-histo-log-pctiles.py from Debian's fio package, run with $("$PYTHON" --version)."
  echo "Each case: \`job.fio\`, the histogram logs, \`fio.json\` (json+), and \`pctiles/\` with the"
  echo "script's runs (NAME.args, NAME.stdout, NAME.rc, NAME.stderr = last stderr line)."
  echo
  echo "| case | run | exit | how it ended |"
  echo "| --- | --- | --- | --- |"
  for d in "$out"/*/pctiles; do
    c=$(basename "$(dirname "$d")")
    for a in "$d"/*.args; do
      l=$(basename "$a" .args)
      rc=$(cat "$d/$l.rc")
      how=$(cat "$d/$l.stderr")
      if [ -z "$how" ]; then how=$(grep -m1 '^ERROR' "$d/$l.stdout" || true); fi
      [ -n "$how" ] || how=ok
      echo "| $c | $l \`$(tr '\n' ' ' <"$a")\` | $rc | ${how//|/\\|} |"
    done
  done
} >"$out/README.md"
echo "gen-golden: wrote $out ($(du -sh "$out" | cut -f1))" >&2
