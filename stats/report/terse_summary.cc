#include "stats/report/terse_summary.h"

#include <fmt/format.h>

#include <cmath>
#include <iterator>

#include "stats/core/histogram_layout.h"
#include "stats/core/percentiles.h"
#include "stats/report/summary_figures.h"

namespace iotail::stats {

namespace {

constexpr size_t kTersePercentiles = 20;

void Latency(std::string& out, const LatencySnapshot& l) {
  fmt::format_to(std::back_inserter(out), ";{};{};{:.6f};{:.6f}", l.MinOrZero() / 1000,
                 l.max_ns / 1000, l.MeanNs() / 1000, l.StddevNs() / 1000);
}

void DirectionFields(std::string& out, const JobTotals& job, int d, const RunSummary& s,
                     double group_bw_kib) {
  auto o = std::back_inserter(out);
  const DirectionSnapshot& dir = job.totals.dirs[static_cast<size_t>(d)];
  const double runtime_s = DirRuntime(job, s, d);
  const double bw_kib = runtime_s > 0 ? static_cast<double>(dir.bytes) / 1024 / runtime_s : 0;
  const double iops = runtime_s > 0 ? static_cast<double>(dir.ios) / runtime_s : 0;
  fmt::format_to(o, ";{};{:.0f};{:.0f};{}", dir.bytes / 1024, std::floor(bw_kib), std::floor(iops),
                 dir.ios ? FioRuntimeMs(runtime_s) : 0);
  Latency(out, dir.slat);
  Latency(out, dir.clat);
  std::vector<double> pct;
  if (dir.ios > 0 && !dir.clat.hist.empty()) {
    pct = ComputePercentiles(std::span<const uint64_t>(dir.clat.hist), HistogramLayout::Recorded(),
                             s.percentiles, PercentileMethod::kFio);
  }
  for (size_t i = 0; i < kTersePercentiles; ++i) {
    if (i < pct.size()) {
      fmt::format_to(o, ";{:.6f}%={}", s.percentiles[i], static_cast<uint64_t>(pct[i]) / 1000);
    } else {
      fmt::format_to(o, ";0%=0");
    }
  }
  Latency(out, dir.TotalLatency());
  const SampleStats& bw = job.samples.bw_kib[static_cast<size_t>(d)];
  fmt::format_to(o, ";{};{};{:.6f}%;{:.6f};{:.6f}", std::llround(bw.min), std::llround(bw.max),
                 ShareOfGroupPct(bw, group_bw_kib), bw.Mean(), bw.Stddev());
}

}  // namespace

std::string FormatTerseSummary(const RunSummary& s) {
  std::string out;
  auto o = std::back_inserter(out);
  for (const JobTotals& job : s.jobs) {
    int first_errno = 0;
    for (size_t e = 1; e < job.totals.errors.size() && first_errno == 0; ++e) {
      if (job.totals.errors[e] != 0) first_errno = static_cast<int>(e);
    }
    fmt::format_to(o, "3;{};{};{};{}", s.version, job.name, job.groupid, first_errno);
    for (int d = 0; d < 2; ++d)
      DirectionFields(out, job, d, s, GroupBandwidthKib(s, job.groupid, d));
    fmt::format_to(o, ";{:.6f}%;{:.6f}%;{};{};{}", job.cpu.UsrPct(), job.cpu.SysPct(), job.cpu.ctx,
                   job.cpu.majf, job.cpu.minf);
    uint64_t depth_total = 0;
    for (uint64_t c : job.depths.level) depth_total += c;
    for (uint64_t c : job.depths.level) {
      fmt::format_to(
          o, ";{:.1f}%",
          depth_total ? 100.0 * static_cast<double>(c) / static_cast<double>(depth_total) : 0.0);
    }
    // Total latency in fio's us (10) and ms (12) buckets; nanosecond ones are not in terse.
    const CoarseLatency c = job.no_total_latency ? CoarseLatency{} : CoarseLatencyOf(job.totals);
    for (uint64_t n : c.us) fmt::format_to(o, ";{:.2f}%", c.Pct(n));
    for (uint64_t n : c.ms) fmt::format_to(o, ";{:.2f}%", c.Pct(n));
    for (const DiskUtil& d : s.disk_util) {
      fmt::format_to(o, ";{};{};{};{};{};{};{};{};{:.2f}%", d.name, d.read_ios, d.write_ios,
                     d.read_merges, d.write_merges, d.read_ticks, d.write_ticks, d.in_queue,
                     d.util);
    }
    if (!job.description.empty()) fmt::format_to(o, ";{}", job.description);
    fmt::format_to(o, "\n");
  }
  return out;
}

}  // namespace iotail::stats
