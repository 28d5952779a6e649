#include "stats/report/fio_json_extras.h"

#include <cmath>

#include "stats/core/histogram_layout.h"
#include "stats/util/json.h"

namespace iotail::stats {

namespace {

void Percents(JsonOut o, const char* key, const std::vector<const char*>& names,
              const uint64_t* counts) {
  uint64_t total = 0;
  for (size_t i = 0; i < names.size(); ++i) total += counts[i];
  fmt::format_to(o, ", \"{}\": {{", key);
  for (size_t i = 0; i < names.size(); ++i) {
    const double pct =
        total ? 100.0 * static_cast<double>(counts[i]) / static_cast<double>(total) : 0;
    fmt::format_to(o, "{}\"{}\": {:.6f}", i ? ", " : "", names[i], pct);
  }
  fmt::format_to(o, "}}");
}

// fio's coarse latency buckets: index in the ns (0..9), us (10..19) or ms (20..31) table, each
// table's bucket named by its upper edge: 2, 4, 10, 20, 50, 100, 250, 500, 750, 1000 (and for ms
// 2000 and >=2000).
int CoarseIndex(uint64_t ns) {
  static constexpr uint64_t kEdges[] = {2, 4, 10, 20, 50, 100, 250, 500, 750, 1000};
  auto in_table = [](uint64_t v) {
    int i = 0;
    while (i < 9 && v >= kEdges[i]) ++i;
    return i;
  };
  if (ns < 1000) return in_table(ns);
  if (ns < 1'000'000) return 10 + in_table(ns / 1000);
  const uint64_t ms = ns / 1'000'000;
  if (ms >= 2000) return 31;
  if (ms >= 1000) return 30;
  return 20 + in_table(ms);
}

}  // namespace

void JsonRateSampleFields(JsonOut o, const RateSamples& samples, int d, double group_bw_kib) {
  const SampleStats& bw = samples.bw_kib[static_cast<size_t>(d)];
  const SampleStats& iops = samples.iops[static_cast<size_t>(d)];
  const double agg = group_bw_kib > 0 ? 100.0 * bw.Mean() / group_bw_kib : 0;
  fmt::format_to(o,
                 ", \"bw_min\": {}, \"bw_max\": {}, \"bw_agg\": {:.6f}, \"bw_mean\": {:.6f}, "
                 "\"bw_dev\": {:.6f}, \"bw_samples\": {}, \"iops_min\": {}, \"iops_max\": {}, "
                 "\"iops_mean\": {:.6f}, \"iops_stddev\": {:.6f}, \"iops_samples\": {}",
                 std::llround(bw.min), std::llround(bw.max), agg, bw.Mean(), bw.Stddev(), bw.n,
                 std::llround(iops.min), std::llround(iops.max), iops.Mean(), iops.Stddev(),
                 iops.n);
}

void JsonDepthAndLatencyFields(JsonOut o, const JobTotals& job) {
  Percents(o, "iodepth_level", {"1", "2", "4", "8", "16", "32", ">=64"}, job.depths.level.data());
  Percents(o, "iodepth_submit", {"0", "4", "8", "16", "32", "64", ">=64"},
           job.depths.submit.data());
  Percents(o, "iodepth_complete", {"0", "4", "8", "16", "32", "64", ">=64"},
           job.depths.complete.data());
  // Total latency (lat; a synchronous engine's is its clat) of every direction together.
  uint64_t coarse[32] = {};
  for (const DirectionSnapshot& d : job.totals.dirs) {
    const LatencySnapshot& lat = d.lat.n > 0 ? d.lat : d.clat;
    for (size_t i = 0; i < lat.hist.size(); ++i) {
      if (lat.hist[i] != 0)
        coarse[CoarseIndex(FineBucketValue(static_cast<uint32_t>(i)))] += lat.hist[i];
    }
  }
  uint64_t total = 0;
  for (uint64_t c : coarse) total += c;
  auto table = [&](const char* key, int from, const std::vector<const char*>& names) {
    fmt::format_to(o, ", \"{}\": {{", key);
    for (size_t i = 0; i < names.size(); ++i) {
      const uint64_t c = coarse[static_cast<size_t>(from) + i];
      const double pct = total ? 100.0 * static_cast<double>(c) / static_cast<double>(total) : 0;
      fmt::format_to(o, "{}\"{}\": {:.6f}", i ? ", " : "", names[i], pct);
    }
    fmt::format_to(o, "}}");
  };
  const std::vector<const char*> ten = {"2",   "4",   "10",  "20",  "50",
                                        "100", "250", "500", "750", "1000"};
  table("latency_ns", 0, ten);
  table("latency_us", 10, ten);
  std::vector<const char*> ms = ten;
  ms.push_back("2000");
  ms.push_back(">=2000");
  table("latency_ms", 20, ms);
  fmt::format_to(o,
                 ", \"latency_depth\": {}, \"latency_target\": 0, \"latency_percentile\": "
                 "100.000000, \"latency_window\": 0",
                 job.iodepth);
}

void JsonSyncField(JsonOut o, const SampleStats& syncs) {
  fmt::format_to(o,
                 "\"sync\": {{\"total_ios\": {}, \"lat_ns\": {{\"min\": {}, \"max\": {}, "
                 "\"mean\": {:.6f}, \"stddev\": {:.6f}, \"N\": {}}}}}",
                 syncs.n, std::llround(syncs.min), std::llround(syncs.max), syncs.Mean(),
                 syncs.Stddev(), syncs.n);
}

void JsonDiskUtil(JsonOut o, const std::vector<DiskUtil>& disks) {
  fmt::format_to(o, "\"disk_util\": [");
  for (size_t i = 0; i < disks.size(); ++i) {
    const DiskUtil& d = disks[i];
    fmt::format_to(o,
                   "{}{{\"name\": \"{}\", \"read_ios\": {}, \"write_ios\": {}, \"read_merges\": "
                   "{}, \"write_merges\": {}, \"read_ticks\": {}, \"write_ticks\": {}, "
                   "\"in_queue\": {}, \"util\": {:.6f}}}",
                   i ? ", " : "", JsonEscape(d.name), d.read_ios, d.write_ios, d.read_merges,
                   d.write_merges, d.read_ticks, d.write_ticks, d.in_queue, d.util);
  }
  fmt::format_to(o, "]");
}

}  // namespace iotail::stats
