// The sections of fio's text summary beyond the latencies, from iotail's own data, in fio's
// layout: per direction the bandwidth and IOPS sample lines (`bw (  KiB/s): min=..`, `iops :`),
// the coarse total-latency distribution (`lat (usec)   : 2=..%, 4=..%`), the queue depth and batch
// lines (`IO depths`, `submit`, `complete`, `latency`), `Run status group N (all jobs):` with each
// group's bandwidth range over its jobs, and `Disk stats (read/write):`. Helpers of
// run_summary.cc; pure functions, thread-safe.
#pragma once

#include <string>

#include "stats/report/run_summary.h"

namespace iotail::stats {

// `   bw (  KiB/s): ...` and `   iops        : ...` for direction d of one reported job;
// group_bw_kib as for JSON's bw_agg ("per=").
void TextRateSampleLines(std::string& out, const RateSamples& samples, int d, double group_bw_kib);

// `  lat (usec)   : ...` lines, `  IO depths    : ...`, `     submit    : ...`,
// `     complete  : ...` and `     latency   : ...` for one job (or the aggregate).
void TextDepthAndLatencyLines(std::string& out, const JobTotals& job);

// `Run status group N (all jobs):` sections, one per reporting group.
void TextRunStatusGroups(std::string& out, const RunSummary& s);

// `Disk stats (read/write):` (nothing without disks).
void TextDiskStats(std::string& out, const std::vector<DiskUtil>& disks);

}  // namespace iotail::stats
