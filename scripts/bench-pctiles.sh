#!/usr/bin/env bash
# Benchmarks `iotail pctiles` against fio's fio-histo-log-pctiles.py on the same large log set.
#
# Builds iotail (Release, in its own build dir) if needed, generates a realistic log set by
# replaying real fio 3.33 histogram logs (tests/data/fio/randrw) with shifted times (deterministic,
# in a temp dir removed at exit), warms the page cache, then times both tools on the same files in
# the same run, alternating their order from round to round, with the same 1 s time quantum.
# Prints input MB, wall and CPU time, MB/s (by wall time, and per core: by CPU time) and peak RSS
# of each, the speed ratio, and checks that both count the same samples over the whole run (the
# script reads every interval one interval late and truncates each row's weighted count, so rows
# are not compared one by one).
#
# usage: scripts/bench-pctiles.sh [--files N] [--records N] [--quick] [--rounds N]
#                                 [--iotail-runs N] [--python-files N] [--python-records N]
#                                 [--no-python] [--threads N] [--build-dir DIR] [--source DIR]
#                                 [--many N [--nofile N]]
#   --files N, --records N   log set size: N logs of N records each (default 32 x 1200, ~214 MB)
#   --quick                  8 logs x 300 records, 1 round (a smoke test, ~13 MB)
#   --rounds N               rounds of (script once, iotail --iotail-runs times) (default 1)
#   --iotail-runs N          iotail runs per round (default 5); medians are reported
#   --python-files/-records  a smaller set for the script only (the ratio is then per MB)
#   --no-python              time iotail only
#   --threads N              iotail --threads (default 0: one per core)
#   --many N                 instead: time `iotail merge -o` and `iotail pctiles` on N small logs
#                            (--records each, default 3) under an open-file limit (--nofile,
#                            default 1024); prints wall and CPU time and peak RSS of each, or
#                            the error of a run that fails
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
files=32 records=1200 rounds=1 iotail_runs=5 threads=0
py_files="" py_records="" no_python=0 many=0 nofile=1024 records_given=
build_dir="$repo/build-bench"
source_dir="$repo/tests/data/fio/randrw"

die() { echo "bench-pctiles: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --files) files=$2; shift ;;
    --records) records=$2 records_given=1; shift ;;
    --quick) files=8 records=300 rounds=1 iotail_runs=3 ;;
    --rounds) rounds=$2; shift ;;
    --iotail-runs) iotail_runs=$2; shift ;;
    --python-files) py_files=$2; shift ;;
    --python-records) py_records=$2; shift ;;
    --no-python) no_python=1 ;;
    --threads) threads=$2; shift ;;
    --many) many=$2; shift ;;
    --nofile) nofile=$2; shift ;;
    --build-dir) build_dir=$2; shift ;;
    --source) source_dir=$2; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
  shift
done
for n in "$files" "$records" "$rounds" "$iotail_runs" "$threads" "$many" "$nofile" \
         ${py_files:+"$py_files"} ${py_records:+"$py_records"}; do
  [[ "$n" =~ ^[0-9]+$ ]] || die "expected a whole number, got '$n'"
done
[ "$files" -ge 1 ] && [ "$records" -ge 1 ] && [ "$rounds" -ge 1 ] && [ "$iotail_runs" -ge 1 ] ||
  die "--files, --records, --rounds and --iotail-runs must be at least 1"
py_files=${py_files:-$files}
py_records=${py_records:-$records}
python=/usr/bin/python3
[ -x "$python" ] || python=$(command -v python3) || die "python3 not found (run scripts/setup.sh)"
script_gz=/usr/share/doc/fio/fio-histo-log-pctiles.py.gz
if [ "$many" -gt 0 ]; then
  no_python=1
  [ -n "$records_given" ] || records=3
fi
if [ "$no_python" -eq 0 ] && [ ! -f "$script_gz" ]; then
  die "$script_gz not found (install fio: scripts/setup.sh), or use --no-python"
fi

# Build (a no-op when up to date).
if [ ! -f "$build_dir/CMakeCache.txt" ]; then
  cmake -S "$repo" -B "$build_dir" -DCMAKE_BUILD_TYPE=Release -DIOTAIL_TESTS=OFF >/dev/null
fi
cmake --build "$build_dir" -j"$(nproc)" --target iotail >/dev/null
iotail="$build_dir/iotail"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-pctiles.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# Runs a command, stdout to a file (and, with MEASURE_NOFILE set, stderr to FILE.err and the
# open-file limit lowered to it); prints "wall_s cpu_s maxrss_kb exit_status". The command is
# started with posix_spawn: a fork() of this Python process cost about 7 ms more on a VM (its page
# tables copied, then its pages faulted in again), which is not the measured tool's time.
cat >"$tmp/measure.py" <<'EOF'
import os, resource, sys, time
out = sys.argv[1]
nofile = os.environ.get("MEASURE_NOFILE")
flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
actions = [(os.POSIX_SPAWN_OPEN, 1, out, flags, 0o644)]
limit = resource.getrlimit(resource.RLIMIT_NOFILE)
if nofile:
    actions.append((os.POSIX_SPAWN_OPEN, 2, out + ".err", flags, 0o644))
    resource.setrlimit(resource.RLIMIT_NOFILE, (int(nofile), limit[1]))  # the child inherits it
start = time.monotonic()
pid = os.posix_spawn(sys.argv[2], sys.argv[2:], os.environ, file_actions=actions)
if nofile:
    resource.setrlimit(resource.RLIMIT_NOFILE, limit)
_, status, ru = os.wait4(pid, 0)
wall = time.monotonic() - start
print(f"{wall:.4f} {ru.ru_utime + ru.ru_stime:.4f} {ru.ru_maxrss} {os.waitstatus_to_exitcode(status)}")
EOF
measure() { "$python" "$tmp/measure.py" "$@"; }

sources=("$source_dir"/*.log)
[ -f "${sources[0]}" ] || die "no *.log in $source_dir"

# Median of column $1 of a times file.
median() { sort -g -k"$1,$1" "$2" | awk -v c="$1" '{v[NR] = $c} END {
  if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

if [ "$many" -gt 0 ]; then
  # Many small inputs: what it costs in time, memory and open files to merge them.
  echo "bench-pctiles: generating $many logs x $records records from $source_dir" >&2
  "$python" "$repo/scripts/gen-bench-logs.py" "$tmp/many" "$many" "$records" "${sources[@]}"
  many_logs=("$tmp"/many/*.log)
  many_mb=$(du -cb "${many_logs[@]}" | tail -1 | awk '{printf "%.1f", $1 / 1e6}')
  cat "${many_logs[@]}" >/dev/null
  echo
  echo "iotail merge and pctiles on $many logs x $records records ($many_mb MB), open-file" \
    "limit $nofile, $(nproc) cores (median of $iotail_runs runs)"
  printf '%-10s %10s %9s %12s  %s\n' command "wall s" "cpu s" "peak RSS MB" status
  for command in merge pctiles; do
    if [ "$command" = merge ]; then
      cmd=("$iotail" merge --threads "$threads" -o "$tmp/many.merged" "${many_logs[@]}")
    else
      cmd=("$iotail" pctiles --time-quantum 1 --threads "$threads" "${many_logs[@]}")
    fi
    : >"$tmp/many.times"
    status=ok
    for ((i = 0; i < iotail_runs; i++)); do
      r=$(MEASURE_NOFILE=$nofile measure "$tmp/many.out" "${cmd[@]}")
      echo "$r" >>"$tmp/many.times"
      if [ "${r##* }" != 0 ]; then
        status="FAILED (exit ${r##* }): $(grep -v '^$' "$tmp/many.out.err" | tail -1)"
        break
      fi
    done
    printf '%-10s %10.3f %9.3f %12.1f  %s\n' "$command" "$(median 1 "$tmp/many.times")" \
      "$(median 2 "$tmp/many.times")" \
      "$(sort -g -k3,3 "$tmp/many.times" | tail -1 | awk '{print $3 / 1024}')" "$status"
  done
  exit 0
fi

echo "bench-pctiles: generating $files logs x $records records from $source_dir" >&2
"$python" "$repo/scripts/gen-bench-logs.py" "$tmp/logs" "$files" "$records" "${sources[@]}"
logs=("$tmp"/logs/*.log)
py_logs=("${logs[@]}")
same_set=1
if [ "$py_files" != "$files" ] || [ "$py_records" != "$records" ]; then
  same_set=0
  "$python" "$repo/scripts/gen-bench-logs.py" "$tmp/pylogs" "$py_files" "$py_records" "${sources[@]}"
  py_logs=("$tmp"/pylogs/*.log)
fi
mb() { du -cb "$@" | tail -1 | awk '{printf "%.1f", $1 / 1e6}'; }
io_mb=$(mb "${logs[@]}")
py_mb=$(mb "${py_logs[@]}")
cat "${logs[@]}" "${py_logs[@]}" >/dev/null  # warm the page cache for both

if [ "$no_python" -eq 0 ]; then
  zcat "$script_gz" >"$tmp/fio-histo-log-pctiles.py"
fi

# The same quantum for both: 1 s (the script's default, in seconds; iotail's default, 1000 ms).
io_cmd=("$iotail" pctiles --time-quantum 1 --threads "$threads" "${logs[@]}")
py_cmd=("$python" "$tmp/fio-histo-log-pctiles.py" --time-quantum 1 -- "${py_logs[@]}")

: >"$tmp/io.times"
: >"$tmp/py.times"
run_iotail() {
  local i r
  for ((i = 0; i < iotail_runs; i++)); do
    r=$(measure "$tmp/io.out" "${io_cmd[@]}")
    [ "${r##* }" = 0 ] || die "iotail pctiles failed (exit ${r##* })"
    echo "$r" >>"$tmp/io.times"
  done
}
run_python() {
  [ "$no_python" -eq 0 ] || return 0
  echo "bench-pctiles: running fio-histo-log-pctiles.py on $py_mb MB (minutes)..." >&2
  r=$(measure "$tmp/py.out" "${py_cmd[@]}")
  [ "${r##* }" = 0 ] || die "fio-histo-log-pctiles.py failed (exit ${r##* })"
  echo "$r" >>"$tmp/py.times"
}
for ((round = 1; round <= rounds; round++)); do
  if ((round % 2)); then run_iotail; run_python; else run_python; run_iotail; fi
done

io_wall=$(median 1 "$tmp/io.times")
io_cpu=$(median 2 "$tmp/io.times")
io_rss=$(sort -g -k3,3 "$tmp/io.times" | tail -1 | awk '{print $3}')
io_min=$(sort -g -k1,1 "$tmp/io.times" | head -1 | awk '{print $1}')
io_n=$(wc -l <"$tmp/io.times")

echo
echo "iotail pctiles vs fio-histo-log-pctiles.py, time quantum 1 s, $(nproc) cores"
echo "logs: $files x $records records (iotail), $py_files x $py_records (script); source $source_dir"
printf '%-24s %9s %10s %9s %9s %10s %12s\n' tool "input MB" "wall s" "cpu s" "MB/s" \
  "MB/s/core" "peak RSS MB"
printf '%-24s %9s %10.3f %9.3f %9.0f %10.0f %12.1f\n' "iotail pctiles" "$io_mb" "$io_wall" \
  "$io_cpu" "$(awk -v m="$io_mb" -v t="$io_wall" 'BEGIN {print m / t}')" \
  "$(awk -v m="$io_mb" -v t="$io_cpu" 'BEGIN {print m / t}')" \
  "$(awk -v k="$io_rss" 'BEGIN {print k / 1024}')"
echo "  (median of $io_n runs; fastest $(printf '%.3f' "$io_min") s = $(awk -v m="$io_mb" -v t="$io_min" 'BEGIN {printf "%.0f", m / t}') MB/s; cpu s = user + sys)"

if [ "$no_python" -eq 0 ]; then
  py_wall=$(median 1 "$tmp/py.times")
  py_cpu=$(median 2 "$tmp/py.times")
  py_rss=$(sort -g -k3,3 "$tmp/py.times" | tail -1 | awk '{print $3}')
  printf '%-24s %9s %10.3f %9.3f %9.1f %10.1f %12.1f\n' "fio-histo-log-pctiles" "$py_mb" \
    "$py_wall" "$py_cpu" "$(awk -v m="$py_mb" -v t="$py_wall" 'BEGIN {print m / t}')" \
    "$(awk -v m="$py_mb" -v t="$py_cpu" 'BEGIN {print m / t}')" \
    "$(awk -v k="$py_rss" 'BEGIN {print k / 1024}')"
  ratio=$(awk -v pw="$py_wall" -v pm="$py_mb" -v iw="$io_wall" -v im="$io_mb" \
    'BEGIN {printf "%.0f", (pw / pm) / (iw / im)}')
  cpu_ratio=$(awk -v pc="$py_cpu" -v pm="$py_mb" -v ic="$io_cpu" -v im="$io_mb" \
    'BEGIN {printf "%.0f", (pc / pm) / (ic / im)}')
  if [ "$same_set" -eq 1 ]; then
    echo "speed ratio (script wall / iotail wall, same files): ${ratio}x; by CPU time: ${cpu_ratio}x"
  else
    echo "speed ratio per MB (script s/MB / iotail s/MB, different set sizes): ${ratio}x;" \
      "by CPU time: ${cpu_ratio}x"
  fi

  # Whole-run sample counts must agree (up to the script's per-row truncation).
  if [ "$same_set" -eq 0 ]; then
    "$iotail" pctiles --time-quantum 1 "${py_logs[@]}" >"$tmp/io.out"
  fi
  io_samples=$(awk '$1 == "total" {s += $3} END {printf "%.0f", s}' "$tmp/io.out")
  py_samples=$(awk -F, '/^ *[0-9]+, / {s += $2; n++} END {printf "%.0f", s}' "$tmp/py.out")
  py_rows=$(grep -cE '^ *[0-9]+, ' "$tmp/py.out" || true)
  awk -v a="$io_samples" -v b="$py_samples" -v rows="$py_rows" 'BEGIN {
    d = a - b; if (d < 0) d = -d
    ok = d <= rows + 1e-6 * a
    printf "samples over the whole run: iotail %d, script %d (difference %d, %.1e relative; the script truncates each of its %d rows): %s\n",
      a, b, d, (a > 0 ? d / a : 0), rows, (ok ? "agree" : "DISAGREE")
    exit !ok }' || die "sample counts disagree"
fi
