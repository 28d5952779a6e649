// Figures derived from a RunSummary that its JSON, text and terse forms all print, computed in
// one place so the three agree: a job's recorded time, its reporting group's bandwidth (fio's
// "per"/bw_agg base), the aggregate of all jobs, and fio's coarse latency distribution (the
// latency_ns/us/ms buckets: each histogram bucket counted at the value fio prints for it, so a
// bucket straddling a boundary counts on one side). Pure functions; thread-safe.
#pragma once

#include <array>
#include <cstdint>

#include "stats/report/run_summary.h"

namespace iotail::stats {

// The job's own recorded time, or the run's when the job has none of its own.
double JobRuntime(const JobTotals& job, const RunSummary& s);
// The time direction d was done in (fio's runtime[ddir]): its own, else the job's.
double DirRuntime(const JobTotals& job, const RunSummary& s, int d);
// A direction's runtime in whole milliseconds as fio counts it (whole microseconds rounded up to
// the millisecond, so any time at all is at least 1 ms): JSON "runtime", terse, text.
uint64_t FioRuntimeMs(double runtime_s);

// The bandwidth of reporting group `groupid` in direction d: the sum of its jobs' bytes over
// their own times in that direction, in KiB/s.
double GroupBandwidthKib(const RunSummary& s, int groupid, int d);

// A job's mean sampled bandwidth as a share of its group's (fio's bw_agg and "per="), in %:
// with fio's rule (the whole KiB/s of the mean; at most 100; 100 for a group of at most 1 KiB/s;
// 0 without samples).
double ShareOfGroupPct(const SampleStats& bw_kib, double group_bw_kib);

// All jobs summed ("All jobs"): totals, CPU (percentages then the mean per job), queue depths,
// the largest iodepth, and the run's settings as its options.
JobTotals AggregateJob(const RunSummary& s);

// fio's coarse buckets of total latency over every direction: ns, us and ms tables, each bucket
// named by its upper edge 2, 4, 10, 20, 50, 100, 250, 500, 750, 1000 (ms adds 2000 and >=2000).
struct CoarseLatency {
  std::array<uint64_t, 10> ns{}, us{};
  std::array<uint64_t, 12> ms{};
  uint64_t total = 0;
  double Pct(uint64_t count) const {
    return total ? 100.0 * static_cast<double>(count) / static_cast<double>(total) : 0;
  }
};
CoarseLatency CoarseLatencyOf(const RecorderSnapshot& totals);

}  // namespace iotail::stats
