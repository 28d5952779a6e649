#!/usr/bin/env bash
# Regenerates tests/data/fio-json/: fio's plain JSON summaries (--output-format=json: printed
# percentiles, no histogram bins), the file fio users have most, for `iotail compare`'s tests.
# Two runs of each of two workloads that differ by far at every percentile:
#   null.N.json   fio's null engine (no I/O: tens of nanoseconds)
#   psync.N.json  4 KiB random reads with psync from a 16 MiB file in /dev/shm (microseconds)
# The data differs from run to run; the tests read whatever is checked in. Needs fio (3.33 for the
# checked-in set). Usage: scripts/gen-fio-plain-json.sh
set -euo pipefail
FIO=${FIO:-fio}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out="$root/tests/data/fio-json"
scratch_parent=/dev/shm
[ -d "$scratch_parent" ] && [ -w "$scratch_parent" ] || scratch_parent=${TMPDIR:-/tmp}
work=$(mktemp -d "$scratch_parent/iotail-fio-json.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$out"
for n in 1 2; do
  "$FIO" --name=null --ioengine=null --size=64m --rw=randread --bs=4k --number_ios=20000 \
    --output-format=json --output="$out/null.$n.json"
  "$FIO" --name=psync --ioengine=psync --filename="$work/target" --size=16m --rw=randread \
    --bs=4k --number_ios=20000 --output-format=json --output="$out/psync.$n.json"
done
echo "made with $("$FIO" --version) by scripts/gen-fio-plain-json.sh" >"$out/VERSION"
