#include "stats/report/fio_text_extras.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>
#include <span>

#include "stats/report/fio_numbers.h"
#include "stats/report/summary_figures.h"

namespace iotail::stats {

namespace {

// The names of fio's coarse latency buckets (ms adds "2000" and ">=2000").
constexpr const char* kBucketNames[] = {"2",   "4",   "10",  "20",   "50",   "100",
                                        "250", "500", "750", "1000", "2000", ">=2000"};

}  // namespace

void TextRateSampleLines(std::string& out, const RateSamples& samples, int d, double group_bw_kib) {
  const SampleStats& bw = samples.bw_kib[static_cast<size_t>(d)];
  const SampleStats& iops = samples.iops[static_cast<size_t>(d)];
  if (bw.n == 0) return;
  auto o = std::back_inserter(out);
  fmt::format_to(o,
                 "   bw (  KiB/s): min={:.0f}, max={:.0f}, per={:.2f}%, avg={:.2f}, stdev={:.2f}, "
                 "samples={}\n",
                 bw.min, bw.max, ShareOfGroupPct(bw, group_bw_kib), bw.Mean(), bw.Stddev(), bw.n);
  fmt::format_to(o,
                 "   iops        : min={:.0f}, max={:.0f}, avg={:.2f}, stdev={:.2f}, samples={}\n",
                 iops.min, iops.max, iops.Mean(), iops.Stddev(), iops.n);
}

void TextDepthAndLatencyLines(std::string& out, const JobTotals& job) {
  auto o = std::back_inserter(out);
  const CoarseLatency c = CoarseLatencyOf(job.totals);
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
  auto percents = [&](const char* label, const std::array<uint64_t, 7>& counts,
                      std::initializer_list<const char*> names) {
    uint64_t sum = 0;
    for (uint64_t v : counts) sum += v;
    std::string line;
    size_t i = 0;
    for (const char* name : names) {
      const double pct =
          sum ? 100.0 * static_cast<double>(counts[i]) / static_cast<double>(sum) : 0;
      line += fmt::format("{}{}={:.1f}%", i ? ", " : "", name, pct);
      ++i;
    }
    fmt::format_to(o, "{}: {}\n", label, line);
  };
  percents("  IO depths    ", job.depths.level, {"1", "2", "4", "8", "16", "32", ">=64"});
  percents("     submit    ", job.depths.submit, {"0", "4", "8", "16", "32", "64", ">=64"});
  percents("     complete  ", job.depths.complete, {"0", "4", "8", "16", "32", "64", ">=64"});
  fmt::format_to(o, "     latency   : target=0, window=0, percentile=100.00%, depth={}\n",
                 job.iodepth);
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
                     "run={:.0f}-{:.0f}msec\n",
                     d == 0   ? "READ"
                     : d == 1 ? "WRITE"
                              : "TRIM",
                     bin(all), dec(all), bin(lo), bin(hi), dec(lo), dec(hi), bin(io), dec(io),
                     run_lo * 1000, run_hi * 1000);
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

}  // namespace iotail::stats
