#include "stats/report/explain_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <iterator>

#include "stats/report/fio_json_extras.h"
#include "stats/util/json.h"

namespace iotail::stats {

namespace {

using Out = std::back_insert_iterator<std::string>;

void JsonStage(Out o, const LatencySnapshot& l, std::span<const double> percentiles, bool bins) {
  const std::vector<double> pct = RecordedPercentiles(l, percentiles);
  JsonLatencyObject(o, l, percentiles, pct.empty() ? nullptr : &pct, bins);
}

// "12.3 us" in the unit that suits the value.
std::string Duration(double ns) {
  if (ns < 1e3) return fmt::format("{:.0f} ns", ns);
  if (ns < 1e6) return fmt::format("{:.1f} us", ns / 1e3);
  if (ns < 1e9) return fmt::format("{:.2f} ms", ns / 1e6);
  return fmt::format("{:.2f} s", ns / 1e9);
}

// The mean of each stage over `intervals` of direction d (or of all directions: d < 0).
std::array<double, kStageCount> MeansOver(std::span<const ExplainIntervalSums* const> intervals,
                                          int d) {
  std::array<double, kStageCount> sum{};
  uint64_t n = 0;
  for (const ExplainIntervalSums* i : intervals) {
    for (int k = 0; k < kDirectionCount; ++k) {
      if (d >= 0 && k != d) continue;
      for (size_t s = 0; s < kStageCount; ++s) sum[s] += static_cast<double>(i->sum_ns[k][s]);
      n += i->joined[k];
    }
  }
  for (double& v : sum) v = n != 0 ? v / static_cast<double>(n) : 0;
  return sum;
}

}  // namespace

std::vector<SlaStageNote> SlaStageGrowth(std::span<const ExplainIntervalSums> history,
                                         const SlaChecker& sla) {
  std::vector<SlaStageNote> notes;
  if (history.size() < 2) return notes;
  const size_t first_n = std::max<size_t>(1, std::min<size_t>(3, history.size() / 4));
  std::vector<const ExplainIntervalSums*> first;
  for (size_t i = 0; i < first_n; ++i) first.push_back(&history[i]);
  const uint64_t origin = history.front().start_ns;
  for (size_t t = 0; t < sla.targets().size(); ++t) {
    const SlaTarget& target = sla.targets()[t];
    const SlaChecker::Result& result = sla.results()[t];
    if (result.violated == 0) continue;
    std::vector<const ExplainIntervalSums*> violating;
    for (const ExplainIntervalSums& i : history) {
      for (int64_t ms : result.times) {
        const uint64_t at = origin + static_cast<uint64_t>(ms) * 1'000'000u;
        if (at >= i.start_ns && at < i.end_ns) {
          violating.push_back(&i);
          break;
        }
      }
    }
    const int d = target.direction && !target.combined ? DirectionIndex(*target.direction) : -1;
    const std::array<double, kStageCount> before = MeansOver(first, d);
    const std::array<double, kStageCount> during = MeansOver(violating, d);
    if (violating.empty()) continue;
    size_t most = 0;
    for (size_t s = 1; s < kStageCount; ++s) {
      if (during[s] - before[s] > during[most] - before[most]) most = s;
    }
    notes.push_back(SlaStageNote{target.text, static_cast<Stage>(most), before[most], during[most],
                                 first.size(), violating.size()});
  }
  return notes;
}

void AppendExplainJson(std::string& out, const ExplainTotals& totals,
                       std::span<const double> percentiles, bool bins) {
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
      JsonStage(o, dir.stages[s], percentiles, bins);
    }
    fmt::format_to(o, "}}}}");
  }
  fmt::format_to(o, "}}");
}

void AppendExplainNoteJson(std::string& out, const ExplainNote& note) {
  Out o(out);
  fmt::format_to(o,
                 "\"explain\": {{\"kernel_view\": \"{}\", \"why_not\": \"{}\", "
                 "\"requests_unmatched\": {}, \"records_dropped\": {}, \"sla\": [",
                 JsonEscape(note.attachment), JsonEscape(note.why_not), note.requests_unmatched,
                 note.records_dropped);
  for (size_t i = 0; i < note.sla.size(); ++i) {
    const SlaStageNote& n = note.sla[i];
    fmt::format_to(o,
                   "{}{{\"target\": \"{}\", \"stage_grew_most\": \"{}\", "
                   "\"first_intervals_mean_ns\": {:.1f}, \"violating_intervals_mean_ns\": {:.1f}, "
                   "\"first_intervals\": {}, \"violating_intervals\": {}}}",
                   i ? ", " : "", JsonEscape(n.target), StageName(n.stage), n.first_mean_ns,
                   n.violating_mean_ns, n.first_intervals, n.violating_intervals);
  }
  fmt::format_to(o, "]}}");
}

void AppendSlaStageText(std::string& out, const ExplainNote& note) {
  for (const SlaStageNote& n : note.sla) {
    fmt::format_to(Out(out),
                   "SLA {}: the stage that grew most is {}, {} mean in the first {} interval(s), "
                   "{} in the {} violating\n",
                   n.target, StageName(n.stage), Duration(n.first_mean_ns), n.first_intervals,
                   Duration(n.violating_mean_ns), n.violating_intervals);
  }
}

void AppendExplainText(std::string& out, const ExplainTotals& totals) {
  Out o(out);
  static constexpr double kMedianAndTail[] = {50.0, 99.0};
  for (int d = 0; d < kDirectionCount; ++d) {
    const ExplainDirection& dir = totals.dirs[d];
    if (dir.joined == 0 && dir.not_joined == 0) continue;
    const uint64_t all = dir.joined + dir.not_joined;
    if (totals.own_stages) {
      fmt::format_to(o,
                     "  where the {} time went: {} I/Os, the nbd engine's own stages (submit: the "
                     "send; device: the server's answer, network included)",
                     DirectionName(static_cast<Direction>(d)), all);
    } else {
      fmt::format_to(o, "  where the {} time went: {} of {} I/Os joined to their block request",
                     DirectionName(static_cast<Direction>(d)), dir.joined, all);
    }
    if (dir.split != 0) fmt::format_to(o, " ({} split or merged by the block layer)", dir.split);
    fmt::format_to(o, "\n");
    if (dir.joined == 0) continue;
    const double mean_latency =
        static_cast<double>(dir.latency_sum_ns) / static_cast<double>(dir.joined);
    fmt::format_to(o, "    {:<10}{:>12}{:>12}{:>12}{:>8}\n", "stage", "mean", "p50", "p99",
                   "share");
    for (size_t s = 0; s < kStageCount; ++s) {
      const LatencySnapshot& l = dir.stages[s];
      const std::vector<double> pct = RecordedPercentiles(l, kMedianAndTail);
      const double share = mean_latency > 0 ? 100.0 * l.MeanNs() / mean_latency : 0;
      fmt::format_to(o, "    {:<10}{:>12}{:>12}{:>12}{:>7.1f}%\n", kStageNames[s],
                     Duration(l.MeanNs()), pct.empty() ? "-" : Duration(pct[0]),
                     pct.empty() ? "-" : Duration(pct[1]), share);
    }
    fmt::format_to(o, "    {:<10}{:>12}\n", "latency", Duration(mean_latency));
  }
}

}  // namespace iotail::stats
