#include "stats/report/summary_figures.h"

#include <algorithm>
#include <cmath>

#include "stats/core/histogram_layout.h"

namespace iotail::stats {

double JobRuntime(const JobTotals& job, const RunSummary& s) {
  return job.runtime_s >= 0 ? job.runtime_s : s.runtime_s;
}

double DirRuntime(const JobTotals& job, const RunSummary& s, int d) {
  const double own = job.dir_runtime_s[static_cast<size_t>(d)];
  return own >= 0 ? own : JobRuntime(job, s);
}

uint64_t FioRuntimeMs(double runtime_s) {
  if (!(runtime_s > 0)) return 0;
  const uint64_t us = static_cast<uint64_t>(runtime_s * 1e6);
  return (us + 999) / 1000;
}

double GroupBandwidthKib(const RunSummary& s, int groupid, int d) {
  double kib = 0;
  for (const JobTotals& g : s.jobs) {
    const double rt = DirRuntime(g, s, d);
    if (g.groupid == groupid && rt > 0) {
      kib += static_cast<double>(g.totals.dirs[static_cast<size_t>(d)].bytes) / 1024 / rt;
    }
  }
  return kib;
}

double ShareOfGroupPct(const SampleStats& bw_kib, double group_bw_kib) {
  if (bw_kib.n == 0) return 0;
  if (group_bw_kib <= 1) return 100;  // fio: a group of at most 1 KiB/s is all the job's
  // fio takes the mean as a whole number and caps the share at 100%.
  const double mean = std::trunc(bw_kib.Mean());
  return std::min(100.0, 100.0 * mean / group_bw_kib);
}

JobTotals AggregateJob(const RunSummary& s) {
  JobTotals all;
  all.name = "All jobs";
  all.options = s.options;
  all.no_total_latency = !s.jobs.empty();
  for (const JobTotals& j : s.jobs) {
    all.no_total_latency = all.no_total_latency && j.no_total_latency;
    all.totals.Add(j.totals);
    all.cpu.Add(j.cpu);
    all.depths.Add(j.depths);
    all.iodepth = std::max(all.iodepth, j.iodepth);
  }
  return all;
}

CoarseLatency CoarseLatencyOf(const RecorderSnapshot& totals) {
  static constexpr uint64_t kEdges[] = {2, 4, 10, 20, 50, 100, 250, 500, 750, 1000, 2000};
  CoarseLatency c;
  for (const DirectionSnapshot& d : totals.dirs) {
    const LatencySnapshot& lat = d.TotalLatency();
    for (size_t i = 0; i < lat.hist.size(); ++i) {
      if (lat.hist[i] == 0) continue;
      const uint64_t ns = FineBucketValue(static_cast<uint32_t>(i));
      const uint64_t v = ns < 1000 ? ns : ns < 1'000'000 ? ns / 1000 : ns / 1'000'000;
      const size_t last = ns < 1'000'000 ? 9 : 11;
      size_t k = 0;
      while (k < last && v >= kEdges[k]) ++k;
      (ns < 1000 ? c.ns[k] : ns < 1'000'000 ? c.us[k] : c.ms[k]) += lat.hist[i];
      c.total += lat.hist[i];
    }
  }
  return c;
}

}  // namespace iotail::stats
