#include "stats/report/plot_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "stats/core/latency_figures.h"
#include "stats/core/percentiles.h"
#include "stats/core/slc.h"
#include "stats/report/svg_chart.h"

namespace iotail::stats {

namespace {

constexpr double kFigures[] = {50, 99, 99.9, 100};
constexpr size_t kBins = 4 * 64 + 1;  // four per power of two up to 2^64 ns
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

std::string HtmlEscape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '<') {
      out += "&lt;";
    } else if (c == '>') {
      out += "&gt;";
    } else if (c == '&') {
      out += "&amp;";
    } else {
      out.push_back(c);
    }
  }
  return out;
}

}  // namespace

PlotReport::PlotReport(HistogramLayout layout, PlotOptions options)
    : layout_(layout), options_(std::move(options)) {}

size_t PlotReport::BinOf(uint32_t bucket) const {
  const double v = layout_.ValueNs(bucket);
  if (v < 1) return 0;
  return std::min(kBins - 1, static_cast<size_t>(std::floor(4 * std::log2(v))));
}

double PlotReport::BinLower(size_t bin) const { return std::exp2(static_cast<double>(bin) / 4); }

void PlotReport::Add(int64_t start_ms,
                     const std::array<std::span<const double>, kDirectionCount>& counts,
                     const std::array<double, kDirectionCount>& bytes,
                     const std::array<bool, kDirectionCount>& present) {
  if (!first_ms_) first_ms_ = start_ms;
  last_ms_ = start_ms + options_.quantum_ms;
  const double t = static_cast<double>(start_ms - *first_ms_) / 1000;
  const double quantum_s = static_cast<double>(options_.quantum_ms) / 1000;
  const auto q = static_cast<size_t>((start_ms - *first_ms_) / options_.quantum_ms);
  // Heat-map columns: merge pairs when they would exceed the cap.
  while (q / merge_ >= kMaxHeatColumns) {
    for (auto& d : dirs_) {
      std::vector<std::vector<double>> merged;
      std::vector<double> t0;
      for (size_t c = 0; c < d.heat.size(); c += 2) {
        std::vector<double> col = d.heat[c];
        if (c + 1 < d.heat.size()) {
          for (size_t b = 0; b < col.size(); ++b) col[b] += d.heat[c + 1][b];
        }
        merged.push_back(std::move(col));
        t0.push_back(d.heat_t0[c]);
      }
      d.heat = std::move(merged);
      d.heat_t0 = std::move(t0);
    }
    merge_ *= 2;
  }
  const size_t column = q / merge_;
  for (int k = 0; k < kDirectionCount; ++k) {
    if (!present[k]) continue;
    Direction_& d = dirs_[k];
    d.present = true;
    double n = 0;
    for (double c : counts[k]) n += c;
    d.t_s.push_back(t);
    d.samples.push_back(n / quantum_s);
    d.mib_s.push_back(bytes[k] / quantum_s / 1048576);
    if (n > 0) {
      const LatencyFigures f = ComputeLatencyFigures(counts[k], layout_, kFigures,
                                                     SbkSlcPercentiles(), PercentileMethod::kFio);
      d.p50.push_back(f.percentiles[0] / 1e9);
      d.p99.push_back(f.percentiles[1] / 1e9);
      d.p999.push_back(f.percentiles[2] / 1e9);
      d.max.push_back(f.percentiles[3] / 1e9);
      d.slc1.push_back(f.has_slc ? f.slc.slc1 : kNan);
      d.slc2.push_back(f.has_slc ? f.slc.slc2 : kNan);
    } else {
      for (auto* v : {&d.p50, &d.p99, &d.p999, &d.max, &d.slc1, &d.slc2}) v->push_back(kNan);
    }
    while (d.heat.size() <= column) {
      d.heat.emplace_back(kBins, 0.0);
      d.heat_t0.push_back(static_cast<double>(d.heat.size() - 1) * merge_ * quantum_s);
    }
    for (uint32_t i = 0; i < counts[k].size(); ++i) {
      if (counts[k][i] != 0) d.heat[column][BinOf(i)] += counts[k][i];
    }
  }
}

void PlotReport::AddStage(Stage stage, const HistogramLayout& layout, int64_t start_ms,
                          const std::array<std::span<const double>, kDirectionCount>& counts,
                          const std::array<bool, kDirectionCount>& present) {
  const auto s = static_cast<size_t>(stage);
  for (int k = 0; k < kDirectionCount; ++k) {
    if (!present[k]) continue;
    StageMeans& m = stages_[k];
    m.has[s] = true;
    auto [it, added] = m.by_start_ms.try_emplace(start_ms);
    if (added) it->second.fill(kNan);
    const HistogramStats stats = ComputeStats(counts[k], layout, PercentileMethod::kFio);
    it->second[s] = stats.samples > 0 ? stats.mean_ns / 1e9 : kNan;
  }
}

std::optional<NamedChart> PlotReport::StageChart(int direction, int64_t origin_ms) const {
  const StageMeans& m = stages_[direction];
  if (m.by_start_ms.empty()) return std::nullopt;
  const std::string dir(DirectionName(static_cast<Direction>(direction)));
  StackedChart chart{fmt::format("{} latency by --explain stage: mean per {} ms interval, stacked",
                                 dir, options_.quantum_ms),
                     {"time since the first interval (s)", AxisKind::kLinear, AxisUnit::kSeconds},
                     {"mean latency", AxisKind::kLinear, AxisUnit::kLatency},
                     {},
                     {}};
  for (const auto& [start_ms, means] : m.by_start_ms) {
    chart.x_values.push_back(static_cast<double>(start_ms - origin_ms) / 1000);
  }
  for (size_t s = 0; s < kStageCount; ++s) {
    if (!m.has[s]) continue;
    StackedLayer layer{std::string(kStageNames[s]), {}};
    for (const auto& [start_ms, means] : m.by_start_ms) layer.y.push_back(means[s]);
    chart.layers.push_back(std::move(layer));
  }
  return NamedChart{dir + "-stages", RenderSvg(chart)};
}

void PlotReport::Finish(const std::array<const Histogram*, kDirectionCount>& totals,
                        bool bytes_known, int64_t data_end_ms) {
  bytes_known_ = bytes_known;
  for (int k = 0; k < kDirectionCount; ++k) dirs_[k].total = totals[k];
  if (!first_ms_) return;
  const int64_t last_start = last_ms_ - options_.quantum_ms;
  data_end_ms_ = std::clamp(data_end_ms, last_start, last_ms_);
  if (data_end_ms_ <= last_start || data_end_ms_ == last_ms_) {
    data_end_ms_ = last_ms_;
    return;
  }
  // The last quantum holds a final, partial interval: its rates over the time it covers.
  const double scale =
      static_cast<double>(options_.quantum_ms) / static_cast<double>(data_end_ms_ - last_start);
  const double last_t = static_cast<double>(last_start - *first_ms_) / 1000;
  for (Direction_& d : dirs_) {
    if (!d.present || d.t_s.empty() || d.t_s.back() != last_t) continue;
    d.samples.back() *= scale;
    d.mib_s.back() *= scale;
  }
}

std::vector<NamedChart> PlotReport::Charts() const {
  std::vector<NamedChart> charts;
  const ChartAxis time{"time since the first interval (s)", AxisKind::kLinear, AxisUnit::kSeconds};
  const ChartAxis latency{"latency", AxisKind::kLog, AxisUnit::kLatency};
  const std::string per = fmt::format("per {} ms interval", options_.quantum_ms);
  // The stage charts' time 0 is the latency logs' first quantum, else the stage logs' first.
  int64_t origin_ms = first_ms_.value_or(std::numeric_limits<int64_t>::max());
  for (const StageMeans& m : stages_) {
    if (!first_ms_ && !m.by_start_ms.empty())
      origin_ms = std::min(origin_ms, m.by_start_ms.begin()->first);
  }
  bool any_present = false;
  for (int k = 0; k < kDirectionCount; ++k) {
    const Direction_& d = dirs_[k];
    if (!d.present) {
      if (auto stage_chart = StageChart(k, origin_ms)) charts.push_back(*std::move(stage_chart));
      continue;
    }
    any_present = true;
    const std::string dir(DirectionName(static_cast<Direction>(k)));
    LineChart p{dir + " latency percentiles " + per + " (fio's rule)", time, latency, {}, {}};
    p.series = {{"p50", d.t_s, d.p50},
                {"p99", d.t_s, d.p99},
                {"p99.9", d.t_s, d.p999},
                {"max", d.t_s, d.max, true}};
    for (const SlaTarget& target : options_.sla) {
      if (target.combined || (target.direction && *target.direction != static_cast<Direction>(k)))
        continue;
      if (target.metric == SlaTarget::Metric::kMean) continue;
      p.references.push_back({"SLA " + target.text, target.limit_ns / 1e9});
    }
    charts.push_back({dir + "-percentiles", RenderSvg(p)});

    HeatMap h{dir + " latency heat map (I/Os per time and latency cell)",
              time,
              latency,
              {},
              {},
              {},
              "I/Os per cell"};
    size_t lo = kBins, hi = 0;
    for (const auto& col : d.heat) {
      for (size_t b = 0; b < col.size(); ++b) {
        if (col[b] > 0) {
          lo = std::min(lo, b);
          hi = std::max(hi, b);
        }
      }
    }
    if (lo <= hi) {
      const double quantum_s = static_cast<double>(options_.quantum_ms) / 1000;
      for (size_t c = 0; c < d.heat.size(); ++c) h.x_edges.push_back(d.heat_t0[c]);
      h.x_edges.push_back(std::min(d.heat_t0.back() + merge_ * quantum_s,
                                   static_cast<double>(data_end_ms_ - *first_ms_) / 1000));
      for (size_t b = lo; b <= hi + 1; ++b) h.y_edges.push_back(BinLower(b) / 1e9);
      for (size_t b = lo; b <= hi; ++b) {
        for (const auto& col : d.heat) h.counts.push_back(col[b]);
      }
    }
    charts.push_back({dir + "-heatmap", RenderSvg(h)});
    if (auto stage_chart = StageChart(k, origin_ms)) charts.push_back(*std::move(stage_chart));
  }
  if (!any_present) return charts;  // stage logs alone

  LineChart iops{
      "I/Os per second " + per, time, {"IOPS", AxisKind::kLinear, AxisUnit::kCount}, {}, {}};
  LineChart bw{"bandwidth " + per, time, {"MiB/s", AxisKind::kLinear, AxisUnit::kCount}, {}, {}};
  LineChart slc{"SLC factors " + per +
                    " (SBK: how far the tail stretches beyond the median; 0 is "
                    "flat)",
                time,
                {"SLC", AxisKind::kLinear, AxisUnit::kCount},
                {},
                {}};
  LineChart exceed{"exceedance over the whole run: share of I/Os slower than a latency",
                   {"latency", AxisKind::kLog, AxisUnit::kLatency},
                   {"share of I/Os slower", AxisKind::kLog, AxisUnit::kFraction},
                   {},
                   {}};
  for (int k = 0; k < kDirectionCount; ++k) {
    const Direction_& d = dirs_[k];
    if (!d.present) continue;
    const std::string dir(DirectionName(static_cast<Direction>(k)));
    iops.series.push_back({dir, d.t_s, d.samples});
    if (bytes_known_) bw.series.push_back({dir, d.t_s, d.mib_s});
    slc.series.push_back({dir + " SLC1", d.t_s, d.slc1});
    slc.series.push_back({dir + " SLC2", d.t_s, d.slc2, true});
    if (d.total != nullptr) {
      const auto counts = d.total->counts();
      uint64_t n = 0;
      for (uint64_t c : counts) n += c;
      ChartSeries s{dir, {}, {}, false, true};
      uint64_t cum = 0;
      for (uint32_t i = 0; i < counts.size(); ++i) {
        if (counts[i] == 0) continue;
        if (s.x.empty()) {
          s.x.push_back(layout_.LowerNs(i) / 1e9);
          s.y.push_back(1.0);
        }
        cum += counts[i];
        s.x.push_back(layout_.UpperNs(i) / 1e9);
        s.y.push_back(n ? static_cast<double>(n - cum) / static_cast<double>(n) : 0);
      }
      exceed.series.push_back(std::move(s));
    }
  }
  charts.push_back({"iops", RenderSvg(iops)});
  if (bytes_known_) charts.push_back({"bandwidth", RenderSvg(bw)});
  charts.push_back({"slc", RenderSvg(slc)});
  charts.push_back({"exceedance", RenderSvg(exceed)});
  return charts;
}

std::string PlotReport::Html() const {
  const int64_t partial_ms = data_end_ms_ - (last_ms_ - options_.quantum_ms);
  const std::string partial =
      first_ms_ && data_end_ms_ < last_ms_
          ? fmt::format(
                " The last interval is partial: the data ends {0} ms into it, and its IOPS "
                "and bandwidth are rated over those {0} ms.",
                partial_ms)
          : std::string();
  std::string bandwidth_note;  // none without latency logs (stage charts alone)
  if (std::ranges::any_of(dirs_, [](const Direction_& d) { return d.present; })) {
    bandwidth_note = bytes_known_
                         ? " Bandwidth is each record's I/Os times its bs column: iotail writes an "
                           "interval's mean bytes per I/O there, fio the size of one I/O (exact "
                           "with one block size only)."
                         : " No bandwidth chart: some records have no block size (bs 0).";
  }
  std::string html = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{0}</title>\n"
      "<style>body{{font-family:sans-serif;margin:24px;color:#222}}figure{{margin:0 0 28px 0}}"
      "figcaption{{color:#555;font-size:13px}}</style>\n</head>\n<body>\n<h1>{0}</h1>\n"
      "<p>{1}; time quantum {2} ms. Percentiles use fio's rule (the value fio prints for the "
      "bucket); SLC1 and SLC2 are SBK's latency-spread factors (0: every percentile at the "
      "median; larger: a longer tail).{3}{4}{5}</p>\n",
      HtmlEscape(options_.title), HtmlEscape(options_.source), options_.quantum_ms, bandwidth_note,
      partial,
      std::ranges::any_of(stages_, [](const StageMeans& m) { return !m.by_start_ms.empty(); })
          ? std::string(
                " The stage charts stack the mean of each --explain stage per interval (schedule, "
                "submit, queue, device, delivery from the bottom up), from the stage logs' "
                "buckets: the top is the mean latency of the I/Os --explain joined to their block "
                "requests.")
          : std::string());
  for (const NamedChart& c : Charts()) {
    html += fmt::format("<figure id=\"{}\">\n{}<figcaption>{}</figcaption>\n</figure>\n", c.name,
                        c.svg, c.name);
  }
  html += "</body>\n</html>\n";
  return html;
}

}  // namespace iotail::stats
