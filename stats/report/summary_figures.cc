#include "stats/report/summary_figures.h"

#include <algorithm>

#include "stats/core/histogram_layout.h"

namespace iotail::stats {

double JobRuntime(const JobTotals& job, const RunSummary& s) {
  return job.runtime_s >= 0 ? job.runtime_s : s.runtime_s;
}

double DirRuntime(const JobTotals& job, const RunSummary& s, int d) {
  const double own = job.dir_runtime_s[static_cast<size_t>(d)];
  return own >= 0 ? own : JobRuntime(job, s);
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
  return group_bw_kib > 0 ? 100.0 * bw_kib.Mean() / group_bw_kib : 0;
}

JobTotals AggregateJob(const RunSummary& s) {
  JobTotals all;
  all.name = "All jobs";
  all.options = s.options;
  for (const JobTotals& j : s.jobs) {
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
