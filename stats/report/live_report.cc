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

// Whole numbers up to 9999, then 12.3k, 1.23M: the widths stay steady from line to line.
std::string Count(double v) {
  if (v < 1e4) return fmt::format("{:.0f}", v);
  if (v < 1e6) return fmt::format("{:.1f}k", v / 1e3);
  return fmt::format("{:.2f}M", v / 1e6);
}

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

// A replay's lateness over the interval: its p99 and max (fio's rule), empty when none.
std::vector<double> IntervalLateness(const RecorderSnapshot& span) {
  const LatencySnapshot& l = span.schedule.lateness;
  if (l.n == 0 || l.hist.empty()) return {};
  constexpr double kWanted[] = {99.0, 100.0};
  return ComputePercentiles(std::span<const uint64_t>(l.hist), HistogramLayout::Recorded(), kWanted,
                            PercentileMethod::kFio);
}

SpanFigures Figures(const DirectionSnapshot& d, bool schedule, double seconds) {
  SpanFigures f;
  f.ios = d.ios;
  f.bytes = d.bytes;
  if (seconds > 0) {
    f.iops = static_cast<double>(d.ios) / seconds;
    f.bw = static_cast<double>(d.bytes) / seconds;
  }
  const std::vector<uint64_t>& hist = schedule && !d.olat.hist.empty() ? d.olat.hist : d.clat.hist;
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
  if (final || (end_ns - std::min(end_ns, origin_ns_)) % period == 0) {
    // A run that ends on a boundary (a runtime of whole periods from its start) leaves a final
    // span of a few ms holding at most the I/Os that drained: checked and counted, but the text
    // prints no line for a span under a quarter period after others (the JSON keeps its final).
    const bool tail = final && lines_ > 0 && (end_ns - span_start_ns_) * 4 < period;
    Emit(end_ns, final, planned_bytes, !(tail && options_.format == LiveFormat::kText));
    span_open_ = false;
  }
  const bool status = options_.status_line && options_.format == LiveFormat::kText;
  if (status && !final) {
    DrawStatus(end_ns, planned_bytes, deltas, static_cast<double>(end_ns - start_ns) / 1e9);
  } else if (status_shown_) {
    out_ << "\r\033[K" << std::flush;
    status_shown_ = false;
  }
}

void LiveReport::Emit(uint64_t end_ns, bool final, uint64_t planned_bytes, bool print) {
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
          schedule && !d.olat.hist.empty() ? d.olat.hist : d.clat.hist;
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
  if (options_.format == LiveFormat::kNone || !print) return;

  if (options_.format == LiveFormat::kJson) {
    EmitJson(elapsed, seconds, final, planned_bytes, violated);
  } else {
    EmitText(elapsed, seconds, planned_bytes, violated);
  }
}

void LiveReport::EmitJson(double elapsed, double seconds, bool final, uint64_t planned_bytes,
                          const std::vector<std::string>& violated) {
  const bool schedule = options_.schedule_latency;
  std::string line;
  auto o = std::back_inserter(line);
  fmt::format_to(o, "{{\"elapsed_s\": {:.3f}, \"interval_s\": {:.3f}, \"final\": {}", elapsed,
                 seconds, final ? "true" : "false");
  for (Direction dir : options_.directions) {
    const SpanFigures f = Figures(span_.dirs[DirectionIndex(dir)], schedule, seconds);
    fmt::format_to(o, ", \"{}\": {{\"ios\": {}, \"iops\": {:.1f}, \"bw_bytes\": {:.0f}",
                   DirectionName(dir), f.ios, f.iops, f.bw);
    if (!f.pct.empty()) {
      fmt::format_to(o,
                     ", \"latency\": \"{}\", \"p50_ns\": {:.0f}, \"p99_ns\": {:.0f}, "
                     "\"p99.9_ns\": {:.0f}, \"slc1\": {}, \"slc2\": {}",
                     schedule ? "olat" : "clat", f.pct[0], f.pct[1], f.pct[2], f.slc.slc1,
                     f.slc.slc2);
      if (schedule) fmt::format_to(o, ", \"clat_p99_ns\": {:.0f}", f.clat_p99);
    }
    fmt::format_to(o, "}}");
  }
  if (schedule) fmt::format_to(o, ", \"late_ios\": {}", span_.schedule.late);
  if (const std::vector<double> late = IntervalLateness(span_); !late.empty()) {
    fmt::format_to(o, ", \"lateness_p99_ns\": {:.0f}, \"lateness_max_ns\": {:.0f}", late[0],
                   late[1]);
  }
  if (const uint64_t errors = span_.TotalErrors()) fmt::format_to(o, ", \"errors\": {}", errors);
  if (options_.runtime_ns != 0) {
    fmt::format_to(o, ", \"remaining_s\": {:.3f}",
                   std::max(0.0, static_cast<double>(options_.runtime_ns) / 1e9 - elapsed));
  } else if (planned_bytes != 0) {
    const uint64_t left = planned_bytes > bytes_done_ ? planned_bytes - bytes_done_ : 0;
    fmt::format_to(o, ", \"remaining_bytes\": {}, \"done_pct\": {:.1f}", left,
                   100.0 * static_cast<double>(bytes_done_) / static_cast<double>(planned_bytes));
  }
  if (sla_ != nullptr && !sla_->empty()) {
    fmt::format_to(o, ", \"sla_violations\": [");
    for (size_t i = 0; i < violated.size(); ++i) {
      fmt::format_to(o, "{}{}", i ? ", " : "", JsonString(violated[i]));
    }
    fmt::format_to(o, "]");
  }
  line += "}\n";
  out_ << line << std::flush;
}

std::string LiveReport::Progress(double elapsed, uint64_t planned_bytes) const {
  if (options_.runtime_ns != 0) {
    return fmt::format("{:.1f}s left",
                       std::max(0.0, static_cast<double>(options_.runtime_ns) / 1e9 - elapsed));
  }
  if (planned_bytes != 0) {
    const uint64_t left = planned_bytes > bytes_done_ ? planned_bytes - bytes_done_ : 0;
    const double pct =
        100.0 * static_cast<double>(bytes_done_) / static_cast<double>(planned_bytes);
    return fmt::format("{:.1f}% done, {:.1f} MB left", std::min(pct, 100.0), left / 1e6);
  }
  return {};
}

void LiveReport::EmitText(double elapsed, double seconds, uint64_t planned_bytes,
                          const std::vector<std::string>& violated) {
  const bool schedule = options_.schedule_latency;
  std::string text;
  if (status_shown_) {
    text = "\r\033[K";  // the status line gives way; it is drawn again below the new lines
    status_shown_ = false;
  }
  if (lines_ == 1) {
    text += fmt::format("live{}: a line per {} ms interval{}; latency: {}\n",
                        options_.scope.empty() ? "" : " over " + options_.scope, options_.period_ms,
                        options_.directions.size() > 1 ? " and direction" : "",
                        schedule ? "olat, from each I/O's intended start (clat from its submission)"
                                 : "clat, from each I/O's submission");
    text +=
        "      SLC1/SLC2: SBK's latency-spread factors (0: a flat tail; larger: a longer one)\n";
  }
  const std::string prefix = fmt::format("[{:7.1f}s]", elapsed);
  std::vector<std::string> lines;
  for (Direction dir : options_.directions) {
    const SpanFigures f = Figures(span_.dirs[DirectionIndex(dir)], schedule, seconds);
    std::string l = lines.empty() ? prefix : std::string(prefix.size(), ' ');
    fmt::format_to(std::back_inserter(l), " {:<5} {} IOPS {:.1f} MB/s", DirectionName(dir),
                   Count(f.iops), f.bw / 1e6);
    if (!f.pct.empty()) {
      fmt::format_to(std::back_inserter(l), " {}p50 {} p99 {} p99.9 {} SLC {}/{}",
                     schedule ? "olat " : "", Latency(f.pct[0]), Latency(f.pct[1]),
                     Latency(f.pct[2]), f.slc.slc1, f.slc.slc2);
      if (schedule) fmt::format_to(std::back_inserter(l), " clat p99 {}", Latency(f.clat_p99));
    }
    lines.push_back(std::move(l));
  }
  // The rest of the span's news, on the last line while it fits, else on lines of its own.
  std::vector<std::string> parts;
  const uint64_t period = static_cast<uint64_t>(options_.period_ms) * 1'000'000u;
  if (seconds * 1e9 + 1e6 < static_cast<double>(period)) {
    parts.push_back(fmt::format("partial {:.3g}s", seconds));
  }
  if (schedule) parts.push_back(fmt::format("late {}", span_.schedule.late));
  if (const std::vector<double> late = IntervalLateness(span_); !late.empty()) {
    parts.push_back(fmt::format("lateness p99 {} max {}", Latency(late[0]), Latency(late[1])));
  }
  if (const uint64_t errors = span_.TotalErrors())
    parts.push_back(fmt::format("errors {}", errors));
  if (std::string p = Progress(elapsed, planned_bytes); !p.empty()) parts.push_back(std::move(p));
  if (!violated.empty()) {
    std::string v = "SLA VIOLATED:";
    for (const auto& x : violated) v += " " + x;
    parts.push_back(std::move(v));
  }
  for (const std::string& part : parts) {
    if (lines.back().size() + 3 + part.size() > kMaxColumns) {
      lines.push_back(std::string(prefix.size(), ' '));
      lines.back() += " " + part;
    } else {
      lines.back() += " | " + part;
    }
  }
  for (const std::string& l : lines) text += l + "\n";
  out_ << text << std::flush;
}

void LiveReport::DrawStatus(uint64_t end_ns, uint64_t planned_bytes,
                            std::span<const RecorderSnapshot> deltas, double seconds) {
  const double elapsed = end_ns > options_.run_start_ns
                             ? static_cast<double>(end_ns - options_.run_start_ns) / 1e9
                             : 0;
  double done = 0;
  if (options_.runtime_ns != 0) {
    done = elapsed / (static_cast<double>(options_.runtime_ns) / 1e9);
  } else if (planned_bytes != 0) {
    uint64_t bytes = bytes_done_;
    if (span_open_) {
      for (const auto& d : span_.dirs) bytes += d.bytes;
    }
    done = static_cast<double>(bytes) / static_cast<double>(planned_bytes);
  }
  done = std::clamp(done, 0.0, 1.0);
  constexpr int kBar = 20;
  const int filled = static_cast<int>(done * kBar);
  std::string status = fmt::format("[{}{}] {:3.0f}%", std::string(filled, '#'),
                                   std::string(kBar - filled, '-'), done * 100);
  if (std::string p = Progress(elapsed, planned_bytes); !p.empty()) status += " " + p;
  RecorderSnapshot now;
  for (const RecorderSnapshot& d : deltas) now.Add(d);
  for (Direction dir : options_.directions) {
    const SpanFigures f =
        Figures(now.dirs[DirectionIndex(dir)], options_.schedule_latency, seconds);
    status += fmt::format(" | {} {} IOPS", DirectionName(dir), Count(f.iops));
    if (!f.pct.empty()) {
      status += fmt::format(" p99 {} SLC {}/{}", Latency(f.pct[1]), f.slc.slc1, f.slc.slc2);
    }
  }
  const size_t width = std::min<size_t>(kMaxColumns, options_.status_columns) - 1;
  if (status.size() > width) status.resize(width);
  out_ << "\r\033[K" << status << std::flush;
  status_shown_ = true;
}

}  // namespace iotail::stats
