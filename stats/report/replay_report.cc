#include "stats/report/replay_report.h"

#include <fmt/format.h>

#include <cmath>
#include <iterator>
#include <span>

#include "stats/report/fio_json_extras.h"
#include "stats/util/json.h"

namespace iotail::stats {

namespace {

constexpr uint64_t kBehindNs = 1'000'000;  // lateness that says the replay fell behind

struct ReplayFigures {
  uint64_t ios = 0;
  double achieved_iops = 0;
  double trace_iops = 0;
  std::vector<double> pct;
  bool behind = false;
};

ReplayFigures Figures(const ReplayInfo& r, const RecorderSnapshot& all, double runtime_s,
                      const std::vector<double>& percentiles) {
  ReplayFigures f;
  for (const DirectionSnapshot& d : all.dirs) f.ios += d.ios;
  if (runtime_s > 0) f.achieved_iops = static_cast<double>(f.ios) / runtime_s;
  if (r.span_ns > 0) f.trace_iops = static_cast<double>(r.trace_ios) * 1e9 / r.span_ns;
  const LatencySnapshot& l = all.schedule.lateness;
  f.pct = RecordedPercentiles(l, percentiles);
  const double span_s = static_cast<double>(r.span_ns) / 1e9;
  f.behind = (l.n > 0 && l.max_ns > kBehindNs) || (span_s > 0 && runtime_s > span_s * 1.02);
  return f;
}

bool HasRecorded(const RecorderSnapshot& all) {
  for (const DirectionSnapshot& d : all.dirs) {
    if (d.recorded.n > 0) return true;
  }
  return false;
}

// What the replayed latency to set beside the recorded one is.
std::string LikeForLike(bool explain) {
  return explain ? "the replay's like-for-like measure is --explain's device stage (dispatch to "
                   "completion; PREFIX_explain_device_hist.N.log), not clat"
                 : "the replay's clat is submission to reaping, more than the device's time; "
                   "--explain measures the device stage alone, the like-for-like measure";
}

// ", \"recorded\": {...}, \"read\": {\"recorded_ns\": {...}}, ...": the trace's own latencies.
void JsonRecorded(std::string& out, const ReplayInfo& r, const RecorderSnapshot& all,
                  const std::vector<double>& percentiles, bool bins) {
  if (!HasRecorded(all)) return;
  auto o = std::back_inserter(out);
  fmt::format_to(o, ", \"recorded\": {{\"what\": \"{}\", \"compare_with\": \"{}\", \"ios\": {}}}",
                 kRecordedWhat, JsonEscape(LikeForLike(r.explain)), r.recorded_ios);
  for (int d = 0; d < kDirectionCount; ++d) {
    const LatencySnapshot& l = all.dirs[d].recorded;
    if (l.n == 0) continue;
    fmt::format_to(o, ", \"{}\": {{\"recorded_ns\": ", DirectionName(static_cast<Direction>(d)));
    const std::vector<double> pct = RecordedPercentiles(l, percentiles);
    JsonLatencyObject(o, l, percentiles, &pct, bins);
    fmt::format_to(o, "}}");
  }
}

// The recorded latencies beside the replayed clat, per direction, in the text summary.
void TextRecorded(std::string& out, const ReplayInfo& r, const RecorderSnapshot& all,
                  const std::vector<double>& percentiles) {
  if (!HasRecorded(all)) return;
  auto o = std::back_inserter(out);
  fmt::format_to(o,
                 "  recorded by the trace (dispatch to completion: device time) against replayed "
                 "clat (submission to reaping), usec:\n");
  auto line = [&](const LatencySnapshot& l) {
    std::string text;
    const std::vector<double> pct = RecordedPercentiles(l, percentiles);
    for (size_t i = 0; i < pct.size() && i < percentiles.size(); ++i) {
      const double p = percentiles[i];
      if (p == 50 || p == 90 || p == 99 || p == 99.9) {
        text += fmt::format("{}p{}={:.1f}", text.empty() ? "" : ", ", p, pct[i] / 1e3);
      }
    }
    return fmt::format("{} (N={})", text, l.n);
  };
  for (int d = 0; d < kDirectionCount; ++d) {
    const DirectionSnapshot& dir = all.dirs[d];
    if (dir.recorded.n == 0) continue;
    fmt::format_to(o, "    {:<5}: recorded {}; replayed {}\n",
                   DirectionName(static_cast<Direction>(d)), line(dir.recorded), line(dir.clat));
  }
  fmt::format_to(o, "  note: {} (iotail compare --recorded SUMMARY.json sets them side by side)\n",
                 LikeForLike(r.explain));
}

}  // namespace

void AppendReplayJson(std::string& out, const ReplayInfo& r, const RecorderSnapshot& all,
                      double runtime_s, const std::vector<double>& percentiles, bool bins) {
  if (!r.on) return;
  auto o = std::back_inserter(out);
  const ReplayFigures f = Figures(r, all, runtime_s, percentiles);
  const LatencySnapshot& l = all.schedule.lateness;
  fmt::format_to(o,
                 ",\n\"iotail_replay\": {{\"trace\": \"{}\", \"trace_ios\": {}, "
                 "\"trace_span_ns\": {}, \"trace_iops\": {:.3f}, \"ios\": {}, "
                 "\"achieved_iops\": {:.3f}, \"issued\": {}, \"late_ios\": {}, "
                 "\"late_threshold_ns\": {}, \"max_behind_ns\": {}, \"behind\": {}",
                 JsonEscape(r.trace), r.trace_ios, r.span_ns, f.trace_iops, f.ios, f.achieved_iops,
                 all.schedule.issued, all.schedule.late, Recorder::kLateNoticeNs,
                 l.n > 0 ? l.max_ns : 0, f.behind ? "true" : "false");
  fmt::format_to(o, ", \"lateness_ns\": ");
  JsonLatencyObject(o, l, percentiles, f.pct.empty() ? nullptr : &f.pct, /*bins=*/false);
  JsonRecorded(out, r, all, percentiles, bins);
  fmt::format_to(o, "}}");
}

std::string RankLatenessText(uint64_t n, double p99_ns, uint64_t max_ns) {
  if (n == 0) return "";
  return fmt::format(", lateness p99 {:.1f} us max {:.1f} us", p99_ns / 1e3,
                     static_cast<double>(max_ns) / 1e3);
}

std::string RankLatenessJson(uint64_t n, double p99_ns, uint64_t max_ns) {
  if (n == 0) return "";
  return fmt::format(", \"lateness_p99_ns\": {:.0f}, \"lateness_max_ns\": {}", p99_ns, max_ns);
}

void AppendReplayText(std::string& out, const ReplayInfo& r, const RecorderSnapshot& all,
                      double runtime_s, const std::vector<double>& percentiles) {
  if (!r.on) return;
  auto o = std::back_inserter(out);
  const ReplayFigures f = Figures(r, all, runtime_s, percentiles);
  const LatencySnapshot& l = all.schedule.lateness;
  if (r.span_ns > 0) {
    fmt::format_to(o,
                   "  replay: {} ({} I/Os over {:.3f} s, {:.1f} IOPS); done {} I/Os in {:.3f} s, "
                   "{:.1f} IOPS\n",
                   r.trace, r.trace_ios, static_cast<double>(r.span_ns) / 1e9, f.trace_iops, f.ios,
                   runtime_s, f.achieved_iops);
  } else {
    fmt::format_to(o,
                   "  replay: {} ({} I/Os, untimed: paced by completions); done {} I/Os in "
                   "{:.3f} s, {:.1f} IOPS\n",
                   r.trace, r.trace_ios, f.ios, runtime_s, f.achieved_iops);
  }
  if (l.n > 0) {
    fmt::format_to(o, "  lateness (issue - intended, usec): min={:.1f}, max={:.1f}, avg={:.1f}",
                   static_cast<double>(l.MinOrZero()) / 1e3, static_cast<double>(l.max_ns) / 1e3,
                   l.MeanNs() / 1e3);
    for (size_t i = 0; i < f.pct.size() && i < percentiles.size(); ++i) {
      const double p = percentiles[i];
      if (p == 50 || p == 90 || p == 99 || p == 99.9) {
        fmt::format_to(o, ", p{}={:.1f}", p, f.pct[i] / 1e3);
      }
    }
    fmt::format_to(o, "; {} I/Os issued > {} us late\n", all.schedule.late,
                   Recorder::kLateNoticeNs / 1000);
  }
  if (f.behind) {
    const double span_s = static_cast<double>(r.span_ns) / 1e9;
    fmt::format_to(o,
                   "  replay fell behind the trace: up to {:.3f} ms late{}; no I/O was dropped\n",
                   static_cast<double>(l.max_ns) / 1e6,
                   span_s > 0 ? fmt::format(", runtime {:.3f} s against the trace's {:.3f} s "
                                            "({:+.1f}%)",
                                            runtime_s, span_s, (runtime_s / span_s - 1) * 100)
                              : std::string());
  }
  TextRecorded(out, r, all, percentiles);
}

}  // namespace iotail::stats
