#include "stats/report/fio_json_extras.h"

#include <cmath>

#include "stats/core/histogram_layout.h"
#include "stats/core/percentile_ci.h"
#include "stats/core/percentiles.h"
#include "stats/report/summary_figures.h"
#include "stats/util/json.h"

namespace iotail::stats {

namespace {

// `, "key": {"name": pct, ...}` for counts[i] as shares of `total` (0: of their own sum).
void Percents(JsonOut o, const char* key, const std::vector<const char*>& names,
              const uint64_t* counts, uint64_t total = 0) {
  if (total == 0) {
    for (size_t i = 0; i < names.size(); ++i) total += counts[i];
  }
  fmt::format_to(o, ", \"{}\": {{", key);
  for (size_t i = 0; i < names.size(); ++i) {
    const double pct =
        total ? 100.0 * static_cast<double>(counts[i]) / static_cast<double>(total) : 0;
    fmt::format_to(o, "{}\"{}\": {:.6f}", i ? ", " : "", names[i], pct);
  }
  fmt::format_to(o, "}}");
}

}  // namespace

void JsonRateSampleFields(JsonOut o, const RateSamples& samples, int d, double group_bw_kib) {
  const SampleStats& bw = samples.bw_kib[static_cast<size_t>(d)];
  const SampleStats& iops = samples.iops[static_cast<size_t>(d)];
  const double agg = ShareOfGroupPct(bw, group_bw_kib);
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
  // Total latency of every direction together, in fio's coarse buckets.
  const CoarseLatency c = job.no_total_latency ? CoarseLatency{} : CoarseLatencyOf(job.totals);
  const std::vector<const char*> ten = {"2",   "4",   "10",  "20",  "50",
                                        "100", "250", "500", "750", "1000"};
  std::vector<const char*> ms = ten;
  ms.push_back("2000");
  ms.push_back(">=2000");
  Percents(o, "latency_ns", ten, c.ns.data(), c.total);
  Percents(o, "latency_us", ten, c.us.data(), c.total);
  Percents(o, "latency_ms", ms, c.ms.data(), c.total);
  fmt::format_to(o,
                 ", \"latency_depth\": {}, \"latency_target\": {}, \"latency_percentile\": "
                 "{:.6f}, \"latency_window\": {}",
                 job.iodepth, job.latency_target_ns, job.latency_percentile, job.latency_window_us);
}

void JsonSyncField(JsonOut o, const SampleStats& syncs, bool datasyncs) {
  fmt::format_to(o,
                 "\"sync\": {{\"total_ios\": {}, \"lat_ns\": {{\"min\": {}, \"max\": {}, "
                 "\"mean\": {:.6f}, \"stddev\": {:.6f}, \"N\": {}}}}}",
                 datasyncs ? 0 : syncs.n, std::llround(syncs.min), std::llround(syncs.max),
                 syncs.Mean(), syncs.Stddev(), syncs.n);
}

void JsonSteadyState(JsonOut o, const SteadyStateResult& ss) {
  const auto array = [](const std::vector<uint64_t>& v) {
    return fmt::format("{}", fmt::join(v, ", "));
  };
  fmt::format_to(o,
                 "\"steadystate\": {{\"ss\": \"{}\", \"duration\": {}, \"attained\": {}, "
                 "\"criterion\": \"{:f}{}\", \"max_deviation\": {:.6f}, \"slope\": {:.6f}, "
                 "\"data\": {{\"bw_mean\": {}, \"iops_mean\": {}, ",
                 ss.criterion.Describe(), ss.duration_s, ss.attained ? 1 : 0,
                 static_cast<float>(ss.figure), ss.criterion.percent ? "%" : "", ss.max_deviation,
                 ss.slope, ss.BwMean(), ss.IopsMean());
  if (ss.criterion.metric == SteadyMetric::kLat) {
    fmt::format_to(o, "\"lat_mean\": {}, \"lat\": [{}], ", ss.LatMean(), array(ss.lat));
  }
  fmt::format_to(o, "\"iops\": [{}], \"bw\": [{}]}}}}", array(ss.iops), array(ss.bw));
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

void JsonPercentileIntervals(JsonOut o, const std::vector<uint64_t>& clat_hist,
                             const std::vector<uint64_t>& olat_hist,
                             const std::vector<double>& percentiles) {
  constexpr double kConfidence = 0.95;
  const HistogramLayout layout = HistogramLayout::Recorded();
  auto one = [&](const char* key, const std::vector<uint64_t>& hist) {
    const auto intervals =
        PercentileIntervals(std::span<const uint64_t>(hist), layout, percentiles, kConfidence);
    fmt::format_to(o, ", \"{}\": {{", key);
    for (size_t i = 0; i < percentiles.size(); ++i) {
      const PercentileInterval& ci = intervals[i];
      if (std::isnan(ci.lower_ns)) {
        fmt::format_to(o, "{}\"{:.6f}\": null", i ? ", " : "", percentiles[i]);
        continue;
      }
      const std::string upper =
          std::isinf(ci.upper_ns) ? "null" : fmt::format("{}", static_cast<uint64_t>(ci.upper_ns));
      fmt::format_to(o, "{}\"{:.6f}\": [{}, {}]", i ? ", " : "", percentiles[i],
                     static_cast<uint64_t>(ci.lower_ns), upper);
    }
    fmt::format_to(o, "}}");
  };
  if (clat_hist.empty()) return;
  fmt::format_to(o, ", \"iotail_ci\": {{\"confidence\": 95");
  one("clat_ns", clat_hist);
  if (!olat_hist.empty()) one("olat_ns", olat_hist);
  fmt::format_to(o, "}}");
}

void JsonBins(JsonOut o, const std::vector<uint64_t>& hist) {
  fmt::format_to(o, ", \"bins\": {{");
  bool first = true;
  for (uint32_t i = 0; i < hist.size(); ++i) {
    if (hist[i] == 0) continue;
    fmt::format_to(o, "{}\"{}\": {}", first ? "" : ", ", FineBucketValue(i), hist[i]);
    first = false;
  }
  fmt::format_to(o, "}}");
}

std::vector<double> RecordedPercentiles(const LatencySnapshot& l, std::span<const double> which) {
  if (l.n == 0 || l.hist.empty()) return {};
  return ComputePercentiles(std::span<const uint64_t>(l.hist), HistogramLayout::Recorded(), which,
                            PercentileMethod::kFio);
}

void JsonLatencyObject(JsonOut o, const LatencySnapshot& l, std::span<const double> percentiles,
                       const std::vector<double>* values, bool bins) {
  fmt::format_to(o, "{{\"min\": {}, \"max\": {}, \"mean\": {:.6f}, \"stddev\": {:.6f}, \"N\": {}",
                 l.MinOrZero(), l.max_ns, l.MeanNs(), l.StddevNs(), l.n);
  if (values != nullptr && l.n > 0 && values->size() == percentiles.size()) {
    fmt::format_to(o, ", \"percentile\": {{");
    for (size_t i = 0; i < percentiles.size(); ++i) {
      fmt::format_to(o, "{}\"{:.6f}\": {}", i ? ", " : "", percentiles[i],
                     static_cast<uint64_t>((*values)[i]));
    }
    fmt::format_to(o, "}}");
    if (bins) JsonBins(o, l.hist);
  }
  fmt::format_to(o, "}}");
}

}  // namespace iotail::stats
