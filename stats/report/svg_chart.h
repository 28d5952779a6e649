// SvgChart: self-contained SVG charts for `iotail plot` (no script, no font or file fetched):
// line charts on linear or logarithmic axes with a legend and horizontal reference lines (SLA
// targets), heat maps (time x latency bins, counts as colour on a log scale), and stacked area
// charts (layers filled one on top of the next on a linear axis from 0, so that the top is their
// sum; each layer's values also in its group's data-values attribute, for tools and tests). Every
// chart has a title, axis labels with units and tick labels a reader understands without the manual
// (latencies as "250 µs", "1.5 ms"; counts as "12k"). Line charts fit their axes to nice bounds; a
// heat map's time axis spans its cells exactly, so it ends where the data ends.
//
// NaN y values (an interval without samples) break a line, or every layer of a stack, instead of
// drawing it to zero; values that a log axis cannot show (<= 0) are skipped. Pure functions of
// their input; thread-safe.
#pragma once

#include <string>
#include <vector>

namespace iotail::stats {

enum class AxisKind { kLinear, kLog };
enum class AxisUnit { kSeconds, kLatency, kCount, kPercent, kFraction };

struct ChartAxis {
  std::string label;  // e.g. "time since start (s)"
  AxisKind kind = AxisKind::kLinear;
  AxisUnit unit = AxisUnit::kCount;
};

struct ChartSeries {
  std::string name;  // legend text
  std::vector<double> x, y;
  bool dashed = false;
  bool steps = false;  // draw as a step line (exceedance curves)
};

struct ChartReference {
  std::string name;  // legend text, e.g. "SLA p99 <= 2 ms"
  double y = 0;
};

struct LineChart {
  std::string title;
  ChartAxis x, y;
  std::vector<ChartSeries> series;
  std::vector<ChartReference> references;
};

struct HeatMap {
  std::string title;
  ChartAxis x, y;               // y is a latency axis (log)
  std::vector<double> x_edges;  // columns + 1 edges, ascending
  std::vector<double> y_edges;  // rows + 1 edges, ascending (> 0)
  std::vector<double> counts;   // rows x columns, row-major from the lowest latency
  std::string count_label = "I/Os per cell";
};

struct StackedLayer {
  std::string name;       // legend text
  std::vector<double> y;  // one per StackedChart::x_values (>= 0; NaN: no value there)
};

struct StackedChart {
  std::string title;
  ChartAxis x, y;                    // y is linear from 0
  std::vector<double> x_values;      // ascending, shared by every layer
  std::vector<StackedLayer> layers;  // the first at the bottom
};

std::string RenderSvg(const LineChart& chart);
std::string RenderSvg(const HeatMap& map);
std::string RenderSvg(const StackedChart& chart);

// "250 µs", "1.5 ms", "18 s" for a latency in seconds; "12k", "1.2M" for a count.
std::string FormatAxisValue(double v, AxisUnit unit);

}  // namespace iotail::stats
