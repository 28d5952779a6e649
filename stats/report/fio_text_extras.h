// The lines of fio's normal (text) output, in fio 3.33's formats, from iotail's figures: a
// latency's `    clat (nsec): min=.., max=.., avg=.., stdev=..` line and its percentiles block
// (fio's units, widths and line breaks), per direction the bandwidth and IOPS sample lines
// (`   bw (  KiB/s): min=..`, `   iops        :`), the coarse total-latency distribution
// (`  lat (usec)   : 2=..%, 4=..%`), the fsync/fdatasync lines, the queue depth and batch lines
// (`IO depths`, `submit`, `complete`, `issued rwts`, `latency`), `Run status group N (all jobs):`
// with each group's bandwidth range over its jobs, and `Disk stats (read/write):`. Helpers of
// run_summary.cc; pure functions, thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "stats/report/run_summary.h"

namespace iotail::stats {

// `    NAME (UNIT): min=.., max=.., avg=.., stdev=..` (fio's display_lat: nsec, or usec/msec when
// min, max and stdev are all large enough; min and max as FioWholeNumber), then `note`.
// `name` is fio's: "slat", "clat", " lat", "sync".
void TextLatencyLine(std::string& out, const char* name, uint64_t min_ns, uint64_t max_ns,
                     double mean_ns, double stddev_ns, const char* note = "");

// `    WHAT percentiles (UNIT):` and its `     | 50.00th=[  1234], ...` lines for the
// percentiles (sorted) and their values in ns, as fio 3.33 lays them out: the unit from the
// smallest and largest value, the precision from the list (the most decimals any percentile
// needs; 2 for fio's default list), as many per line as fit in 80 columns.
void TextPercentiles(std::string& out, const char* what, std::span<const double> percentiles,
                     std::span<const double> values_ns);

// fio's per-priority latencies (cmdprio) are shown when two or more priorities have I/Os: how
// many have, and one priority's percentiles (fio's rule; empty without a histogram).
size_t PriosWithSamples(const DirectionSnapshot& d);
std::vector<double> PrioPercentiles(const PrioLatency& p, std::span<const double> percentiles);
// `    clat prio C/L (UNIT): min=..` per priority after the lat line, and after the percentiles
// `    clat prio C/L (P% of IOs) percentiles (UNIT):` blocks, as fio 3.33 prints them.
void TextPrioLatencyLines(std::string& out, const DirectionSnapshot& d);
void TextPrioPercentiles(std::string& out, const DirectionSnapshot& d,
                         std::span<const double> percentiles);

// `   bw (  KiB/s): ...` and `   iops        : ...` for direction d of one reported job;
// group_bw_kib as for JSON's bw_agg ("per=").
void TextRateSampleLines(std::string& out, const RateSamples& samples, int d, double group_bw_kib);

// `  lat (usec)   : ...` lines: the total latency of every direction in fio's coarse buckets.
void TextLatencyBuckets(std::string& out, const JobTotals& job);

// `  fsync/fdatasync/sync_file_range:` and its `    sync (usec): ...` line (nothing without
// syncs; iotail keeps no histogram of them, so no percentiles).
void TextSyncLines(std::string& out, const SampleStats& syncs);

// `  IO depths    : ...`, `     submit    : ...`, `     complete  : ...`,
// `     issued rwts: ...` and `     latency   : ...` for one job.
void TextDepthLines(std::string& out, const JobTotals& job);

// fio's "  steadystate  : attained=yes, bw=4001KiB/s (4001kB/s), iops=1000, iops mean dev=0.400%"
// (its bandwidth in KiB twice, the second with decimal unit names, as fio 3.33 prints it).
void TextSteadyStateLine(std::string& out, const SteadyStateResult& ss);

// `Run status group N (all jobs):` sections, one per reporting group.
void TextRunStatusGroups(std::string& out, const RunSummary& s);

// `Disk stats (read/write):` (nothing without disks).
void TextDiskStats(std::string& out, const std::vector<DiskUtil>& disks);

}  // namespace iotail::stats
