// FormatTerseSummary: fio's terse output, version 3 (`--output-format=terse`, `--minimal`): one
// line per reported job, fields separated by ';', in fio 3.33's order and formats: the version,
// "iotail-VERSION", jobname, groupid, error; for reads then writes: KiB, bandwidth (KiB/s), IOPS,
// runtime (ms), slat, clat and total latency min/max (integer us), mean/stdev (us), 20 clat
// percentile fields `P%=us` (unused ones `0%=0`), bandwidth min, max, share of the group, mean,
// stdev (KiB/s); then CPU user%, system%, context switches, major and minor faults; I/O depths
// (7), latency distribution in us (10) and ms (12); per disk its name and counters; and last the
// job's description when it has one. Built from the same RunSummary as the text and JSON forms;
// pure, thread-safe.
#pragma once

#include <string>

#include "stats/report/run_summary.h"

namespace iotail::stats {

std::string FormatTerseSummary(const RunSummary& summary);

}  // namespace iotail::stats
