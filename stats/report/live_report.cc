#include "stats/report/live_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "stats/core/histogram_layout.h"
#include "stats/core/latency_figures.h"
#include "stats/core/percentiles.h"
#include "stats/core/slc.h"
#include "stats/util/json.h"

namespace iotail::stats {

namespace {

constexpr double kShown[] = {50.0, 99.0, 99.9};

std::string Latency(double ns) {
  if (ns < 1e3) return fmt::format("{:.0f}ns", ns);
  if (ns < 1e6) return fmt::format("{:.1f}us", ns / 1e3);
  if (ns < 1e9) return fmt::format("{:.2f}ms", ns / 1e6);
  return fmt::format("{:.2f}s", ns / 1e9);
}

struct SpanFigures {
  uint64_t ios = 0, bytes = 0;
  double iops = 0, bw = 0;
  std::vector<double> pct;  // kShown
  double clat_p99 = 0;
  SlcFactors slc;
};

SpanFigures Figures(const DirectionSnapshot& d, bool schedule, double seconds) {
  SpanFigures f;
  f.ios = d.ios;
  f.bytes = d.bytes;
  if (seconds > 0) {
    f.iops = static_cast<double>(d.ios) / seconds;
    f.bw = static_cast<double>(d.bytes) / seconds;
  }
  const std::vector<uint64_t>& hist = schedule && !d.lat.hist.empty() ? d.lat.hist : d.clat.hist;
  uint64_t n = 0;
  for (uint64_t c : hist) n += c;
  if (n == 0) return f;
  const HistogramLayout layout = HistogramLayout::Recorded();
  LatencyFigures figures = ComputeLatencyFigures(std::span<const uint64_t>(hist), layout, kShown,
                                                 SbkSlcPercentiles(), PercentileMethod::kFio);
  f.pct = std::move(figures.percentiles);
  f.slc = figures.slc;
  if (schedule) {
    const double p99[] = {99.0};
    f.clat_p99 = ComputePercentiles(std::span<const uint64_t>(d.clat.hist), layout, p99,
                                    PercentileMethod::kFio)[0];
  }
  return f;
}

}  // namespace

LiveReport::LiveReport(LiveReportOptions options, std::ostream& out, SlaChecker* sla)
    : options_(std::move(options)), out_(out), sla_(sla) {}

void LiveReport::Add(uint64_t start_ns, uint64_t end_ns, bool final, uint64_t planned_bytes,
                     std::span<const RecorderSnapshot> deltas) {
  if (options_.run_start_ns == 0) options_.run_start_ns = start_ns;
  if (!span_open_) {
    span_ = RecorderSnapshot{};
    span_start_ns_ = start_ns;
    span_open_ = true;
  }
  for (const RecorderSnapshot& d : deltas) span_.Add(d);
  const uint64_t period = static_cast<uint64_t>(options_.period_ms) * 1'000'000u;
  if (final || end_ns % period == 0) {
    Emit(end_ns, final, planned_bytes);
    span_open_ = false;
  }
}

void LiveReport::Emit(uint64_t end_ns, bool final, uint64_t planned_bytes) {
  const double seconds = static_cast<double>(end_ns - span_start_ns_) / 1e9;
  const double elapsed = end_ns > options_.run_start_ns
                             ? static_cast<double>(end_ns - options_.run_start_ns) / 1e9
                             : 0;
  const int64_t start_ms =
      span_start_ns_ > options_.run_start_ns
          ? static_cast<int64_t>((span_start_ns_ - options_.run_start_ns + 500'000) / 1'000'000)
          : 0;
  const bool schedule = options_.schedule_latency;
  const HistogramLayout layout = HistogramLayout::Recorded();

  // SLA verdicts of this span: each direction, then all directions combined.
  std::vector<std::string> violated;
  if (sla_ != nullptr && !sla_->empty()) {
    std::vector<double> all(kRecordBuckets, 0.0), counts(kRecordBuckets, 0.0);
    for (Direction dir : options_.directions) {
      const DirectionSnapshot& d = span_.dirs[DirectionIndex(dir)];
      const std::vector<uint64_t>& hist =
          schedule && !d.lat.hist.empty() ? d.lat.hist : d.clat.hist;
      std::fill(counts.begin(), counts.end(), 0.0);
      for (size_t i = 0; i < hist.size() && i < counts.size(); ++i) {
        counts[i] = static_cast<double>(hist[i]);
        all[i] += counts[i];
      }
      std::string v = sla_->Check(start_ms, DirectionName(dir), counts, layout);
      if (!v.empty()) violated.push_back(std::move(v));
    }
    std::string v = sla_->Check(start_ms, "all", all, layout);
    if (!v.empty()) violated.push_back(std::move(v));
    if (!violated.empty()) ++violating_spans_;
  }

  uint64_t bytes = 0;
  for (const auto& d : span_.dirs) bytes += d.bytes;
  bytes_done_ += bytes;
  ++lines_;
  if (options_.format == LiveFormat::kNone) return;

  std::string line;
  auto o = std::back_inserter(line);
  const bool json = options_.format == LiveFormat::kJson;
  if (json) {
    fmt::format_to(o, "{{\"elapsed_s\": {:.3f}, \"interval_s\": {:.3f}, \"final\": {}", elapsed,
                   seconds, final ? "true" : "false");
  } else {
    fmt::format_to(o, "[{:7.1f}s]", elapsed);
  }
  for (Direction dir : options_.directions) {
    const SpanFigures f = Figures(span_.dirs[DirectionIndex(dir)], schedule, seconds);
    if (json) {
      fmt::format_to(o, ", \"{}\": {{\"ios\": {}, \"iops\": {:.1f}, \"bw_bytes\": {:.0f}",
                     DirectionName(dir), f.ios, f.iops, f.bw);
      if (!f.pct.empty()) {
        fmt::format_to(o,
                       ", \"latency\": \"{}\", \"p50_ns\": {:.0f}, \"p99_ns\": {:.0f}, "
                       "\"p99.9_ns\": {:.0f}, \"slc1\": {}, \"slc2\": {}",
                       schedule ? "lat" : "clat", f.pct[0], f.pct[1], f.pct[2], f.slc.slc1,
                       f.slc.slc2);
        if (schedule) fmt::format_to(o, ", \"clat_p99_ns\": {:.0f}", f.clat_p99);
      }
      fmt::format_to(o, "}}");
    } else {
      if (dir != options_.directions.front()) fmt::format_to(o, " |");
      fmt::format_to(o, " {} {:.0f} IOPS {:.1f} MB/s", DirectionName(dir), f.iops, f.bw / 1e6);
      if (!f.pct.empty()) {
        fmt::format_to(o, " {}p50 {} p99 {} p99.9 {} SLC {}/{}", schedule ? "lat " : "",
                       Latency(f.pct[0]), Latency(f.pct[1]), Latency(f.pct[2]), f.slc.slc1,
                       f.slc.slc2);
        if (schedule) fmt::format_to(o, " (clat p99 {})", Latency(f.clat_p99));
      }
    }
  }
  const uint64_t errors = span_.TotalErrors();
  if (json) {
    if (schedule) fmt::format_to(o, ", \"late_ios\": {}", span_.schedule.late);
    if (errors) fmt::format_to(o, ", \"errors\": {}", errors);
  } else {
    if (schedule) fmt::format_to(o, " | late {}", span_.schedule.late);
    if (errors) fmt::format_to(o, " | errors {}", errors);
  }
  // Progress.
  if (options_.runtime_ns != 0) {
    const double left = std::max(0.0, static_cast<double>(options_.runtime_ns) / 1e9 - elapsed);
    if (json) {
      fmt::format_to(o, ", \"remaining_s\": {:.3f}", left);
    } else {
      fmt::format_to(o, " | {:.1f}s left", left);
    }
  } else if (planned_bytes != 0) {
    const uint64_t left = planned_bytes > bytes_done_ ? planned_bytes - bytes_done_ : 0;
    const double pct =
        100.0 * static_cast<double>(bytes_done_) / static_cast<double>(planned_bytes);
    if (json) {
      fmt::format_to(o, ", \"remaining_bytes\": {}, \"done_pct\": {:.1f}", left, pct);
    } else {
      fmt::format_to(o, " | {:.1f}% done, {:.1f} MB left", std::min(pct, 100.0), left / 1e6);
    }
  }
  if (sla_ != nullptr && !sla_->empty()) {
    if (json) {
      fmt::format_to(o, ", \"sla_violations\": [");
      for (size_t i = 0; i < violated.size(); ++i) {
        fmt::format_to(o, "{}{}", i ? ", " : "", JsonString(violated[i]));
      }
      fmt::format_to(o, "]");
    } else if (!violated.empty()) {
      fmt::format_to(o, " | SLA VIOLATED:");
      for (const auto& v : violated) fmt::format_to(o, " {}", v);
    }
  }
  line += json ? "}\n" : "\n";
  out_ << line << std::flush;
}

}  // namespace iotail::stats
