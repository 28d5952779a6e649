#!/usr/bin/env bash
# Regenerates cli/fio_option_names.inc: every option name and alias that the installed fio knows
# (`fio --cmdhelp=all` and the engine options of `fio --enghelp=ENGINE` for the engines iotail
# shares with fio, then `fio --cmdhelp=NAME` for aliases), plus fio's command-line options
# (`fio --help`), sorted, one string literal per line. iotail uses the list to tell "a fio option
# that iotail does not support" from a typo.
# usage: scripts/gen-fio-option-names.sh > cli/fio_option_names.inc
set -euo pipefail
export LC_ALL=C
names=$(fio --cmdhelp=all 2>&1 | awk 'NF > 2 && $2 == ":" {print $1}')
engine_names=$(for e in io_uring libaio psync nbd null; do
  { fio --enghelp="$e" 2>&1 || true; } | awk 'NF > 2 && $2 == ":" {print $1}'
done)
{
  for n in $names; do
    echo "$n"
    { fio --cmdhelp="$n" 2>&1 || true; } | awk '$1 == "alias:" {print $2}'
  done
  echo "$engine_names"
  { fio --help 2>&1 || true; } | grep -o -- '^ *--[a-z][a-z_-]*' | sed 's/^ *--//'
} | tr '-' '_' | grep -v '^$' | sort -u | sed 's/.*/"&",/'
