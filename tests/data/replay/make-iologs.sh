#!/bin/sh
# Writes the golden iologs of tests/engine/replay/ with fio (3.33 made the checked-in ones):
#   fio-3.33-randrw.iolog: fio's write_iolog (version 3) of 8 random 4k I/Os, reads and writes,
#   on a 1 MiB file named /tmp/iotail-replay-golden (the name is in the log).
set -eu
out=$(cd "$(dirname "$0")" && pwd)
f=/tmp/iotail-replay-golden
rm -f "$out/fio-3.33-randrw.iolog"
fio --name=golden --filename=$f --size=1M --rw=randrw --bs=4k --number_ios=8 --randseed=7 \
  --ioengine=psync --write_iolog="$out/fio-3.33-randrw.iolog" >/dev/null
rm -f $f
fio --version
