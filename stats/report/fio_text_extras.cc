#include "stats/report/fio_text_extras.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>
#include <span>
#include <utility>
#include <vector>

#include "stats/core/fio_numbers.h"
#include "stats/core/histogram_layout.h"
#include "stats/core/percentiles.h"
#include "stats/report/summary_figures.h"

namespace iotail::stats {

namespace {

// The names of fio's coarse latency buckets (ms adds "2000" and ">=2000").
constexpr const char* kBucketNames[] = {"2",   "4",   "10",  "20",   "50",   "100",
                                        "250", "500", "750", "1000", "2000", ">=2000"};

}  // namespace

void TextLatencyLine(std::string& out, const char* name, uint64_t min_ns, uint64_t max_ns,
                     double mean_ns, double stddev_ns, const char* note) {
  const char* unit = "nsec";
  uint64_t div = 1;
  if (min_ns > 2'000'000 && max_ns > 99'999'999 && stddev_ns > 1e6) {
    unit = "msec";
    div = 1'000'000;
  } else if (min_ns > 2000 && max_ns > 99'999 && stddev_ns > 1000) {
    unit = "usec";
    div = 1000;
  }
  const double d = static_cast<double>(div);
  fmt::format_to(std::back_inserter(out),
                 "    {} ({}): min={}, max={}, avg={:5.2f}, stdev={:5.2f}{}\n", name, unit,
                 FioWholeNumber(min_ns / div), FioWholeNumber(max_ns / div), mean_ns / d,
                 stddev_ns / d, note);
}

namespace {

// The decimals a percentile needs (99.95: 2, 50: 0), at most 6.
int Decimals(double p) {
  double scale = 1;
  for (int k = 0; k < 6; ++k, scale *= 10) {
    if (std::fabs(std::round(p * scale) - p * scale) < 1e-6 * scale) return k;
  }
  return 6;
}

}  // namespace

void TextPercentiles(std::string& out, const char* what, std::span<const double> percentiles,
                     std::span<const double> values_ns) {
  const size_t n = std::min(percentiles.size(), values_ns.size());
  if (n == 0) return;
  std::vector<std::pair<double, uint64_t>> list;
  int precision = 0;
  for (size_t i = 0; i < n; ++i) {
    list.emplace_back(percentiles[i], static_cast<uint64_t>(values_ns[i]));
    precision = std::max(precision, Decimals(percentiles[i]));
  }
  std::sort(list.begin(), list.end());
  uint64_t lo = UINT64_MAX, hi = 0;
  for (const auto& [p, v] : list) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  int scale = 0;
  const char* unit = "nsec";
  uint64_t div = 1;
  if (lo > 2'000'000 && hi > 99'999'999) {
    scale = 2;
    unit = "msec";
    div = 1'000'000;
  } else if (lo > 2000 && hi > 99'999) {
    scale = 1;
    unit = "usec";
    div = 1000;
  }
  const uint64_t top = hi / div;
  const int width = std::max(5, top == 0 ? 0 : static_cast<int>(std::log10(top) + 1));
  const size_t per_line = static_cast<size_t>((80 - 7) / (precision + 10 + width));
  auto o = std::back_inserter(out);
  fmt::format_to(o, "    {} percentiles ({}):\n     |", what, unit);
  for (size_t j = 0; j < list.size(); ++j) {
    if (j != 0 && j % per_line == 0) fmt::format_to(o, "     |");
    uint64_t v = list[j].second;
    for (int k = 0; k < scale; ++k) v = (v + 999) / 1000;  // rounded up at each step, as fio
    const bool last = j + 1 == list.size();
    fmt::format_to(o, " {:{}.{}f}th=[{:{}}]{}", list[j].first, precision + 3, precision, v, width,
                   last ? '\n' : ',');
    if (!last && j % per_line == per_line - 1) fmt::format_to(o, "\n");
  }
}

void TextRateSampleLines(std::string& out, const RateSamples& samples, int d, double group_bw_kib) {
  const SampleStats& bw = samples.bw_kib[static_cast<size_t>(d)];
  const SampleStats& iops = samples.iops[static_cast<size_t>(d)];
  auto o = std::back_inserter(out);
  if (bw.n > 0) {
    // fio switches to MiB/s when the mean is above 1 GiB/s (its bounds truncated).
    const bool mib = bw.Mean() > 1024.0 * 1024.0;
    const double div = mib ? 1024 : 1;
    fmt::format_to(o,
                   "   bw ({:>5}/s): min={:5}, max={:5}, per={:3.2f}%, avg={:5.2f}, "
                   "stdev={:5.2f}, samples={}\n",
                   mib ? "MiB" : "KiB", static_cast<uint64_t>(std::llround(bw.min) / div),
                   static_cast<uint64_t>(std::llround(bw.max) / div),
                   ShareOfGroupPct(bw, group_bw_kib), bw.Mean() / div, bw.Stddev() / div, bw.n);
  }
  if (iops.n > 0) {
    fmt::format_to(
        o, "   iops        : min={:5}, max={:5}, avg={:5.2f}, stdev={:5.2f}, samples={}\n",
        std::llround(iops.min), std::llround(iops.max), iops.Mean(), iops.Stddev(), iops.n);
  }
}

void TextLatencyBuckets(std::string& out, const JobTotals& job) {
  auto o = std::back_inserter(out);
  const CoarseLatency c = job.no_total_latency ? CoarseLatency{} : CoarseLatencyOf(job.totals);
  const char* units[] = {"nsec", "usec", "msec"};
  const std::span<const uint64_t> tables[] = {c.ns, c.us, c.ms};
  for (int u = 0; u < 3 && c.total > 0; ++u) {
    std::vector<std::string> parts;
    for (size_t k = 0; k < tables[u].size(); ++k) {
      if (tables[u][k] == 0) continue;
      const double pct = c.Pct(tables[u][k]);
      parts.push_back(pct < 0.01 ? fmt::format("{}=0.01%", kBucketNames[k])
                                 : fmt::format("{}={:.2f}%", kBucketNames[k], pct));
    }
    for (size_t at = 0; at < parts.size(); at += 5) {
      std::string line;
      for (size_t i = at; i < std::min(parts.size(), at + 5); ++i) {
        line += (i > at ? ", " : "") + parts[i];
      }
      fmt::format_to(o, "  lat ({})   : {}\n", units[u], line);
    }
  }
}

void TextSyncLines(std::string& out, const SampleStats& syncs) {
  if (syncs.n == 0) return;
  out += "  fsync/fdatasync/sync_file_range:\n";
  TextLatencyLine(out, "sync", static_cast<uint64_t>(std::llround(syncs.min)),
                  static_cast<uint64_t>(std::llround(syncs.max)), syncs.Mean(), syncs.Stddev());
}

void TextDepthLines(std::string& out, const JobTotals& job) {
  auto o = std::back_inserter(out);
  // fio's stat_calc_dist: a share of the total, at least 0.1% when anything was counted.
  auto percents = [&](const char* label, const std::array<uint64_t, 7>& counts,
                      std::initializer_list<const char*> names) {
    uint64_t sum = 0;
    for (uint64_t v : counts) sum += v;
    std::string line;
    size_t i = 0;
    for (const char* name : names) {
      double pct = sum ? 100.0 * static_cast<double>(counts[i]) / static_cast<double>(sum) : 0;
      if (counts[i] != 0 && pct < 0.1) pct = 0.1;
      line += fmt::format("{}{}={:.1f}%", i ? ", " : "", name, pct);
      ++i;
    }
    fmt::format_to(o, "{}: {}\n", label, line);
  };
  percents("  IO depths    ", job.depths.level, {"1", "2", "4", "8", "16", "32", ">=64"});
  percents("     submit    ", job.depths.submit, {"0", "4", "8", "16", "32", "64", ">=64"});
  percents("     complete  ", job.depths.complete, {"0", "4", "8", "16", "32", "64", ">=64"});
  const auto& d = job.totals.dirs;
  // fio 3.33 counts fdatasync=N's syncs in the short= slot, fsync's in the total.
  fmt::format_to(o, "     issued rwts: total={},{},{},{} short={},0,0,0 dropped=0,0,0,0\n",
                 d[0].ios, d[1].ios, d[2].ios, job.datasyncs ? 0 : job.syncs.n,
                 job.datasyncs ? job.syncs.n : 0);
  fmt::format_to(o, "     latency   : target={}, window={}, percentile={:.2f}%, depth={}\n",
                 job.latency_target_ns, job.latency_window_us, job.latency_percentile, job.iodepth);
}

void TextSteadyStateLine(std::string& out, const SteadyStateResult& ss) {
  const double kib = static_cast<double>(ss.BwMean() / 1024);
  const char* what = ss.criterion.metric == SteadyMetric::kIops ? "iops"
                     : ss.criterion.metric == SteadyMetric::kBw ? "bw"
                                                                : "lat";
  fmt::format_to(std::back_inserter(out),
                 "  steadystate  : attained={}, bw={}/s ({}/s), iops={}, {}{}={:.3f}{}\n",
                 ss.attained ? "yes" : "no", FioNumber(kib * 1024, FioUnits::kBinaryBytes),
                 FioNumber(kib * 1000, FioUnits::kDecimalBytes),
                 FioNumber(static_cast<double>(ss.IopsMean()), FioUnits::kCount), what,
                 ss.criterion.slope ? " slope" : " mean dev", ss.figure,
                 ss.criterion.percent ? "%" : "");
}

void TextRunStatusGroups(std::string& out, const RunSummary& s) {
  auto o = std::back_inserter(out);
  std::map<int, std::vector<const JobTotals*>> groups;
  for (const JobTotals& j : s.jobs) groups[j.groupid].push_back(&j);
  for (const auto& [gid, jobs] : groups) {
    fmt::format_to(o, "\nRun status group {} (all jobs):\n", gid);
    for (int d = 0; d < kDirectionCount; ++d) {
      uint64_t bytes = 0;
      double lo = 0, hi = 0, run_lo = 0, run_hi = 0, run_max = 0;
      bool first = true;
      for (const JobTotals* j : jobs) {
        const double rt = DirRuntime(*j, s, d);
        const uint64_t b = j->totals.dirs[d].bytes;
        if (b == 0) continue;
        const double bw = rt > 0 ? static_cast<double>(b) / rt : 0;
        lo = first ? bw : std::min(lo, bw);
        hi = first ? bw : std::max(hi, bw);
        run_lo = first ? rt : std::min(run_lo, rt);
        run_hi = first ? rt : std::max(run_hi, rt);
        run_max = std::max(run_max, rt);
        bytes += b;
        first = false;
      }
      if (first) continue;
      const double all = run_max > 0 ? static_cast<double>(bytes) / run_max : 0;
      const auto bin = [](double v) { return FioNumber(v, FioUnits::kBinaryBytes); };
      const auto dec = [](double v) { return FioNumber(v, FioUnits::kDecimalBytes); };
      const double io = static_cast<double>(bytes);
      fmt::format_to(o,
                     "{:>7}: bw={}/s ({}/s), {}/s-{}/s ({}/s-{}/s), io={} ({}), "
                     "run={}-{}msec\n",
                     d == 0   ? "READ"
                     : d == 1 ? "WRITE"
                              : "TRIM",
                     bin(all), dec(all), bin(lo), bin(hi), dec(lo), dec(hi), bin(io), dec(io),
                     FioRuntimeMs(run_lo), FioRuntimeMs(run_hi));
    }
  }
}

void TextDiskStats(std::string& out, const std::vector<DiskUtil>& disks) {
  if (disks.empty()) return;
  auto o = std::back_inserter(out);
  fmt::format_to(o, "\nDisk stats (read/write):\n");
  for (const DiskUtil& d : disks) {
    fmt::format_to(o, "  {}: ios={}/{}, merge={}/{}, ticks={}/{}, in_queue={}, util={:.2f}%\n",
                   d.name, d.read_ios, d.write_ios, d.read_merges, d.write_merges, d.read_ticks,
                   d.write_ticks, d.in_queue, d.util);
  }
}

size_t PriosWithSamples(const DirectionSnapshot& d) {
  return static_cast<size_t>(std::count_if(d.prios.begin(), d.prios.end(),
                                           [](const PrioLatency& p) { return p.lat.n > 0; }));
}

std::vector<double> PrioPercentiles(const PrioLatency& p, std::span<const double> percentiles) {
  if (p.lat.hist.empty()) return {};
  return ComputePercentiles(std::span<const uint64_t>(p.lat.hist), HistogramLayout::Recorded(),
                            percentiles, PercentileMethod::kFio);
}

void TextPrioLatencyLines(std::string& out, const DirectionSnapshot& d) {
  if (PriosWithSamples(d) < 2) return;
  for (const PrioLatency& p : d.prios) {
    if (p.lat.n == 0) continue;
    const std::string name = fmt::format("clat prio {}/{}", p.ioprio >> 13, p.ioprio & 7);
    TextLatencyLine(out, name.c_str(), p.lat.min_ns, p.lat.max_ns, p.lat.MeanNs(),
                    p.lat.StddevNs());
  }
}

void TextPrioPercentiles(std::string& out, const DirectionSnapshot& d,
                         std::span<const double> percentiles) {
  if (PriosWithSamples(d) < 2) return;
  for (const PrioLatency& p : d.prios) {
    if (p.lat.n == 0) continue;
    // fio's share: of the direction's clat samples.
    const std::string what =
        fmt::format("clat prio {}/{} ({:.2f}% of IOs)", p.ioprio >> 13, p.ioprio & 7,
                    100.0 * static_cast<double>(p.lat.n) / static_cast<double>(d.clat.n));
    TextPercentiles(out, what.c_str(), percentiles, PrioPercentiles(p, percentiles));
  }
}

}  // namespace iotail::stats
