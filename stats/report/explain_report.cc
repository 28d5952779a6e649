#include "stats/report/explain_report.h"

#include <fmt/format.h>

#include <iterator>

#include "stats/core/histogram_layout.h"
#include "stats/core/percentiles.h"
#include "stats/util/json.h"

namespace iotail::stats {

namespace {

using Out = std::back_insert_iterator<std::string>;

std::vector<double> Percentiles(const LatencySnapshot& l, std::span<const double> which) {
  if (l.n == 0 || l.hist.empty()) return {};
  return ComputePercentiles(std::span<const uint64_t>(l.hist), HistogramLayout::Recorded(), which,
                            PercentileMethod::kFio);
}

void JsonStage(Out o, const LatencySnapshot& l, std::span<const double> percentiles) {
  fmt::format_to(o, "{{\"min\": {}, \"max\": {}, \"mean\": {:.6f}, \"stddev\": {:.6f}, \"N\": {}",
                 l.MinOrZero(), l.max_ns, l.MeanNs(), l.StddevNs(), l.n);
  const std::vector<double> pct = Percentiles(l, percentiles);
  if (!pct.empty()) {
    fmt::format_to(o, ", \"percentile\": {{");
    for (size_t i = 0; i < percentiles.size(); ++i) {
      fmt::format_to(o, "{}\"{:.6f}\": {}", i ? ", " : "", percentiles[i],
                     static_cast<uint64_t>(pct[i]));
    }
    fmt::format_to(o, "}}");
  }
  fmt::format_to(o, "}}");
}

// "12.3 us" in the unit that suits the value.
std::string Duration(double ns) {
  if (ns < 1e3) return fmt::format("{:.0f} ns", ns);
  if (ns < 1e6) return fmt::format("{:.1f} us", ns / 1e3);
  if (ns < 1e9) return fmt::format("{:.2f} ms", ns / 1e6);
  return fmt::format("{:.2f} s", ns / 1e9);
}

}  // namespace

void AppendExplainJson(std::string& out, const ExplainTotals& totals,
                       std::span<const double> percentiles) {
  Out o(out);
  fmt::format_to(o, "\"iotail_explain\": {{");
  bool first = true;
  for (int d = 0; d < kDirectionCount; ++d) {
    const ExplainDirection& dir = totals.dirs[d];
    if (dir.joined == 0 && dir.not_joined == 0) continue;
    fmt::format_to(o,
                   "{}\"{}\": {{\"ios_joined\": {}, \"ios_not_joined\": {}, \"ios_split\": {}, "
                   "\"stages\": {{",
                   first ? "" : ", ", DirectionName(static_cast<Direction>(d)), dir.joined,
                   dir.not_joined, dir.split);
    first = false;
    for (size_t s = 0; s < kStageCount; ++s) {
      fmt::format_to(o, "{}\"{}\": ", s ? ", " : "", kStageNames[s]);
      JsonStage(o, dir.stages[s], percentiles);
    }
    fmt::format_to(o, "}}}}");
  }
  fmt::format_to(o, "}}");
}

void AppendExplainNoteJson(std::string& out, const ExplainNote& note) {
  fmt::format_to(Out(out),
                 "\"explain\": {{\"kernel_view\": \"{}\", \"why_not\": \"{}\", "
                 "\"requests_unmatched\": {}, \"records_dropped\": {}}}",
                 JsonEscape(note.attachment), JsonEscape(note.why_not), note.requests_unmatched,
                 note.records_dropped);
}

void AppendExplainText(std::string& out, const ExplainTotals& totals) {
  Out o(out);
  static constexpr double kMedianAndTail[] = {50.0, 99.0};
  for (int d = 0; d < kDirectionCount; ++d) {
    const ExplainDirection& dir = totals.dirs[d];
    if (dir.joined == 0 && dir.not_joined == 0) continue;
    const uint64_t all = dir.joined + dir.not_joined;
    fmt::format_to(o, "  where the {} time went: {} of {} I/Os joined to their block request",
                   DirectionName(static_cast<Direction>(d)), dir.joined, all);
    if (dir.split != 0) fmt::format_to(o, " ({} split or merged by the block layer)", dir.split);
    fmt::format_to(o, "\n");
    if (dir.joined == 0) continue;
    const double mean_latency =
        static_cast<double>(dir.latency_sum_ns) / static_cast<double>(dir.joined);
    fmt::format_to(o, "    {:<10}{:>12}{:>12}{:>12}{:>8}\n", "stage", "mean", "p50", "p99",
                   "share");
    for (size_t s = 0; s < kStageCount; ++s) {
      const LatencySnapshot& l = dir.stages[s];
      const std::vector<double> pct = Percentiles(l, kMedianAndTail);
      const double share = mean_latency > 0 ? 100.0 * l.MeanNs() / mean_latency : 0;
      fmt::format_to(o, "    {:<10}{:>12}{:>12}{:>12}{:>7.1f}%\n", kStageNames[s],
                     Duration(l.MeanNs()), pct.empty() ? "-" : Duration(pct[0]),
                     pct.empty() ? "-" : Duration(pct[1]), share);
    }
    fmt::format_to(o, "    {:<10}{:>12}\n", "latency", Duration(mean_latency));
  }
}

}  // namespace iotail::stats
