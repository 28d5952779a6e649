#include "stats/report/svg_chart.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <iterator>
#include <limits>

namespace iotail::stats {

namespace {

constexpr double kWidth = 960, kHeight = 380;
constexpr double kLeft = 84, kRight = 210, kTop = 44, kBottom = 56;
constexpr double kPlotW = kWidth - kLeft - kRight, kPlotH = kHeight - kTop - kBottom;
constexpr std::array<const char*, 8> kColours = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                                                 "#9467bd", "#8c564b", "#e377c2", "#17becf"};

std::string XmlEscape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out.push_back(c);
    }
  }
  return out;
}

std::string Trim(double v) {
  std::string s = fmt::format("{:.3g}", v);
  return s;
}

// Maps data values to pixels along one axis.
struct Scale {
  AxisKind kind;
  double lo, hi, p0, p1;  // data range and pixel range
  double operator()(double v) const {
    const double t = kind == AxisKind::kLog
                         ? (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo))
                         : (v - lo) / (hi - lo);
    return p0 + t * (p1 - p0);
  }
};

// A data range fitted to nice bounds.
void Fit(AxisKind kind, double& lo, double& hi) {
  if (!(lo <= hi) || !std::isfinite(lo) || !std::isfinite(hi)) {
    lo = kind == AxisKind::kLog ? 1e-6 : 0;
    hi = kind == AxisKind::kLog ? 1e-3 : 1;
  }
  if (kind == AxisKind::kLog) {
    lo = std::pow(10, std::floor(std::log10(lo)));
    hi = std::pow(10, std::ceil(std::log10(hi)));
    if (hi <= lo) hi = lo * 10;
    return;
  }
  if (lo > 0 && lo < hi * 0.5) lo = 0;
  if (hi == lo) hi = lo + (lo == 0 ? 1 : std::abs(lo));
  const double step = std::pow(10, std::floor(std::log10((hi - lo) / 5)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if ((hi - lo) / (step * m) <= 6) {
      lo = std::floor(lo / (step * m)) * step * m;
      hi = std::ceil(hi / (step * m)) * step * m;
      return;
    }
  }
}

std::vector<double> Ticks(AxisKind kind, double lo, double hi) {
  std::vector<double> ticks;
  if (kind == AxisKind::kLog) {
    const int decades = static_cast<int>(std::lround(std::log10(hi / lo)));
    for (double d = lo; d <= hi * 1.0001; d *= 10) {
      ticks.push_back(d);
      if (decades <= 2 && d * 10 <= hi * 1.0001) {
        ticks.push_back(d * 2);
        ticks.push_back(d * 5);
      }
    }
    return ticks;
  }
  double step = std::pow(10, std::floor(std::log10((hi - lo) / 5)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if ((hi - lo) / (step * m) <= 6) {
      step *= m;
      break;
    }
  }
  for (double t = lo; t <= hi + step * 1e-9; t += step)
    ticks.push_back(std::abs(t) < step * 1e-9 ? 0 : t);
  return ticks;
}

using Out = std::back_insert_iterator<std::string>;

void Frame(Out o, const std::string& title, const ChartAxis& x, const ChartAxis& y, const Scale& sx,
           const Scale& sy) {
  fmt::format_to(o,
                 "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" "
                 "viewBox=\"0 0 {0} {1}\" font-family=\"sans-serif\" font-size=\"12\">\n"
                 "<title>{2}</title>\n<rect width=\"{0}\" height=\"{1}\" fill=\"white\"/>\n"
                 "<text x=\"{3}\" y=\"24\" font-size=\"16\" font-weight=\"bold\">{2}</text>\n",
                 kWidth, kHeight, XmlEscape(title), kLeft);
  // Grid and ticks.
  fmt::format_to(o, "<g class=\"axis x\" stroke=\"#ddd\">\n");
  for (double t : Ticks(x.kind, sx.lo, sx.hi)) {
    const double px = sx(t);
    fmt::format_to(o, "<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1}\" y2=\"{2}\"/>\n", px, kTop,
                   kTop + kPlotH);
    fmt::format_to(o,
                   "<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\" stroke=\"none\" "
                   "fill=\"#333\">{}</text>\n",
                   px, kTop + kPlotH + 16, XmlEscape(FormatAxisValue(t, x.unit)));
  }
  fmt::format_to(o, "</g>\n<g class=\"axis y\" stroke=\"#ddd\">\n");
  for (double t : Ticks(y.kind, sy.lo, sy.hi)) {
    const double py = sy(t);
    fmt::format_to(o, "<line x1=\"{0}\" x2=\"{1}\" y1=\"{2:.1f}\" y2=\"{2:.1f}\"/>\n", kLeft,
                   kLeft + kPlotW, py);
    fmt::format_to(o,
                   "<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\" stroke=\"none\" "
                   "fill=\"#333\">{}</text>\n",
                   kLeft - 6, py + 4, XmlEscape(FormatAxisValue(t, y.unit)));
  }
  fmt::format_to(o, "</g>\n");
  fmt::format_to(o,
                 "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" "
                 "stroke=\"#888\"/>\n",
                 kLeft, kTop, kPlotW, kPlotH);
  fmt::format_to(o, "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
                 kLeft + kPlotW / 2, kHeight - 14, XmlEscape(x.label));
  fmt::format_to(o,
                 "<text transform=\"translate(18,{}) rotate(-90)\" text-anchor=\"middle\">{}"
                 "</text>\n",
                 kTop + kPlotH / 2, XmlEscape(y.label));
}

void LegendEntry(Out o, int i, const std::string& colour, const std::string& name, bool dashed) {
  const double y = kTop + 12 + i * 18;
  fmt::format_to(o,
                 "<line x1=\"{0}\" x2=\"{1}\" y1=\"{2}\" y2=\"{2}\" stroke=\"{3}\" "
                 "stroke-width=\"2\"{4}/>\n<text x=\"{5}\" y=\"{6}\">{7}</text>\n",
                 kLeft + kPlotW + 12, kLeft + kPlotW + 36, y, colour,
                 dashed ? " stroke-dasharray=\"6 3\"" : "", kLeft + kPlotW + 42, y + 4,
                 XmlEscape(name));
}

// A filled square and its name, for a layer of a stacked chart.
void LegendSwatch(Out o, int i, const std::string& colour, const std::string& name) {
  const double y = kTop + 12 + i * 18;
  fmt::format_to(o,
                 "<rect x=\"{}\" y=\"{}\" width=\"24\" height=\"10\" fill=\"{}\"/>\n"
                 "<text x=\"{}\" y=\"{}\">{}</text>\n",
                 kLeft + kPlotW + 12, y - 5, colour, kLeft + kPlotW + 42, y + 4, XmlEscape(name));
}

// Viridis, five stops.
std::string Colour(double t) {
  static constexpr double kStops[5][3] = {
      {68, 1, 84}, {59, 82, 139}, {33, 145, 140}, {94, 201, 98}, {253, 231, 37}};
  t = std::clamp(t, 0.0, 1.0) * 4;
  const int i = std::min(3, static_cast<int>(t));
  const double f = t - i;
  int rgb[3];
  for (int k = 0; k < 3; ++k) {
    rgb[k] = static_cast<int>(std::lround(kStops[i][k] + f * (kStops[i + 1][k] - kStops[i][k])));
  }
  return fmt::format("#{:02x}{:02x}{:02x}", rgb[0], rgb[1], rgb[2]);
}

}  // namespace

std::string FormatAxisValue(double v, AxisUnit unit) {
  switch (unit) {
    case AxisUnit::kLatency: {
      const double a = std::abs(v);
      if (a == 0) return "0";
      if (a < 1e-6) return Trim(v * 1e9) + " ns";
      if (a < 1e-3) return Trim(v * 1e6) + " µs";
      if (a < 1) return Trim(v * 1e3) + " ms";
      return Trim(v) + " s";
    }
    case AxisUnit::kSeconds:
      return Trim(v);
    case AxisUnit::kPercent:
      return Trim(v) + "%";
    case AxisUnit::kFraction: {
      if (v >= 0.01) return Trim(v * 100) + "%";
      return fmt::format("{:g}%", v * 100);
    }
    case AxisUnit::kCount: {
      const double a = std::abs(v);
      if (a >= 1e9) return Trim(v / 1e9) + "G";
      if (a >= 1e6) return Trim(v / 1e6) + "M";
      if (a >= 1e3) return Trim(v / 1e3) + "k";
      return Trim(v);
    }
  }
  return Trim(v);
}

std::string RenderSvg(const LineChart& chart) {
  double xlo = std::numeric_limits<double>::infinity(), xhi = -xlo, ylo = xlo, yhi = -xlo;
  auto usable = [](const ChartAxis& a, double v) {
    return std::isfinite(v) && (a.kind == AxisKind::kLinear || v > 0);
  };
  for (const auto& s : chart.series) {
    for (size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
      if (!usable(chart.x, s.x[i]) || !usable(chart.y, s.y[i])) continue;
      xlo = std::min(xlo, s.x[i]);
      xhi = std::max(xhi, s.x[i]);
      ylo = std::min(ylo, s.y[i]);
      yhi = std::max(yhi, s.y[i]);
    }
  }
  for (const auto& r : chart.references) {
    if (!usable(chart.y, r.y)) continue;
    ylo = std::min(ylo, r.y);
    yhi = std::max(yhi, r.y);
  }
  if (chart.y.kind == AxisKind::kLinear && ylo > 0) ylo = 0;
  Fit(chart.x.kind, xlo, xhi);
  Fit(chart.y.kind, ylo, yhi);
  const Scale sx{chart.x.kind, xlo, xhi, kLeft, kLeft + kPlotW};
  const Scale sy{chart.y.kind, ylo, yhi, kTop + kPlotH, kTop};
  std::string svg;
  Out o = std::back_inserter(svg);
  Frame(o, chart.title, chart.x, chart.y, sx, sy);
  int legend = 0;
  for (size_t k = 0; k < chart.series.size(); ++k) {
    const ChartSeries& s = chart.series[k];
    const char* colour = kColours[k % kColours.size()];
    fmt::format_to(o,
                   "<g class=\"series\" data-name=\"{}\" fill=\"none\" stroke=\"{}\" "
                   "stroke-width=\"1.6\"{}>\n",
                   XmlEscape(s.name), colour, s.dashed ? " stroke-dasharray=\"6 3\"" : "");
    std::string points;
    size_t drawn = 0;
    auto flush = [&] {
      if (!points.empty()) fmt::format_to(o, "<polyline points=\"{}\"/>\n", points);
      points.clear();
    };
    double last_py = 0;
    for (size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
      if (!usable(chart.x, s.x[i]) || !usable(chart.y, s.y[i])) {
        flush();
        continue;
      }
      const double px = sx(s.x[i]), py = sy(s.y[i]);
      if (s.steps && !points.empty())
        fmt::format_to(std::back_inserter(points), " {:.1f},{:.1f}", px, last_py);
      fmt::format_to(std::back_inserter(points), "{}{:.1f},{:.1f}", points.empty() ? "" : " ", px,
                     py);
      last_py = py;
      ++drawn;
    }
    flush();
    // A lone point would be invisible as a line.
    if (drawn == 1) {
      for (size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
        if (usable(chart.x, s.x[i]) && usable(chart.y, s.y[i])) {
          fmt::format_to(o, "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"{}\"/>\n",
                         sx(s.x[i]), sy(s.y[i]), colour);
        }
      }
    }
    fmt::format_to(o, "</g>\n");
    LegendEntry(o, legend++, colour, s.name, s.dashed);
  }
  for (const ChartReference& r : chart.references) {
    if (!usable(chart.y, r.y)) continue;
    fmt::format_to(o,
                   "<line class=\"reference\" x1=\"{0}\" x2=\"{1}\" y1=\"{2:.1f}\" y2=\"{2:.1f}\" "
                   "stroke=\"#000\" stroke-width=\"1.2\" stroke-dasharray=\"2 3\"/>\n",
                   kLeft, kLeft + kPlotW, sy(r.y));
    LegendEntry(o, legend++, "#000", r.name, true);
  }
  svg += "</svg>\n";
  return svg;
}

std::string RenderSvg(const HeatMap& map) {
  const size_t cols = map.x_edges.size() > 1 ? map.x_edges.size() - 1 : 0;
  const size_t rows = map.y_edges.size() > 1 ? map.y_edges.size() - 1 : 0;
  double xlo = cols ? map.x_edges.front() : 0, xhi = cols ? map.x_edges.back() : 1;
  double ylo = rows ? map.y_edges.front() : 1e-6, yhi = rows ? map.y_edges.back() : 1e-3;
  // The time axis spans the cells exactly (fitted to nice bounds it ran up to a step past the
  // data); the ticks stay at nice values within it.
  if (!(xlo < xhi)) Fit(AxisKind::kLinear, xlo, xhi);
  Fit(AxisKind::kLog, ylo, yhi);
  const Scale sx{AxisKind::kLinear, xlo, xhi, kLeft, kLeft + kPlotW};
  const Scale sy{AxisKind::kLog, ylo, yhi, kTop + kPlotH, kTop};
  std::string svg;
  Out o = std::back_inserter(svg);
  ChartAxis y = map.y;
  y.kind = AxisKind::kLog;
  Frame(o, map.title, map.x, y, sx, sy);
  double max_count = 0;
  for (double c : map.counts) max_count = std::max(max_count, c);
  fmt::format_to(o, "<g class=\"cells\" data-name=\"{}\">\n", XmlEscape(map.count_label));
  for (size_t r = 0; r < rows; ++r) {
    const double y0 = sy(map.y_edges[r + 1]), y1 = sy(map.y_edges[r]);
    for (size_t c = 0; c < cols; ++c) {
      const double n = map.counts[r * cols + c];
      if (!(n > 0)) continue;
      const double t = max_count > 1 ? std::log(n) / std::log(max_count) : 1;
      const double x0 = sx(map.x_edges[c]), x1 = sx(map.x_edges[c + 1]);
      fmt::format_to(o,
                     "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.2f}\" height=\"{:.2f}\" "
                     "fill=\"{}\"/>\n",
                     x0, y0, std::max(0.5, x1 - x0), std::max(0.5, y1 - y0), Colour(t));
    }
  }
  fmt::format_to(o, "</g>\n");
  // Colour key: log scale from 1 to the largest cell.
  const double kx = kLeft + kPlotW + 20;
  fmt::format_to(o, "<text x=\"{}\" y=\"{}\">{}</text>\n", kx, kTop + 4,
                 XmlEscape(map.count_label));
  for (int i = 0; i < 10; ++i) {
    fmt::format_to(o, "<rect x=\"{}\" y=\"{:.1f}\" width=\"16\" height=\"{:.1f}\" fill=\"{}\"/>\n",
                   kx, kTop + 14 + (9 - i) * 18.0, 18.0, Colour(i / 9.0));
  }
  fmt::format_to(o, "<text x=\"{}\" y=\"{}\">{} (log)</text>\n", kx + 22, kTop + 26,
                 FormatAxisValue(max_count, AxisUnit::kCount));
  fmt::format_to(o, "<text x=\"{}\" y=\"{}\">1</text>\n", kx + 22, kTop + 14 + 9 * 18 + 14);
  svg += "</svg>\n";
  return svg;
}

std::string RenderSvg(const StackedChart& chart) {
  const size_t n = chart.x_values.size();
  // tops[k][i]: the sum of layers 0..k at point i; NaN where any layer has no value (a gap).
  std::vector<std::vector<double>> tops(chart.layers.size(), std::vector<double>(n));
  std::vector<bool> valid(n, true);
  double xlo = std::numeric_limits<double>::infinity(), xhi = -xlo, yhi = 0;
  for (size_t i = 0; i < n; ++i) {
    double sum = 0;
    for (size_t k = 0; k < chart.layers.size(); ++k) {
      const std::vector<double>& y = chart.layers[k].y;
      const double v = i < y.size() ? y[i] : std::numeric_limits<double>::quiet_NaN();
      if (!std::isfinite(v) || v < 0) valid[i] = false;
      sum += valid[i] ? v : 0;
      tops[k][i] = sum;
    }
    if (!valid[i] || !std::isfinite(chart.x_values[i])) {
      valid[i] = false;
      continue;
    }
    xlo = std::min(xlo, chart.x_values[i]);
    xhi = std::max(xhi, chart.x_values[i]);
    yhi = std::max(yhi, sum);
  }
  double ylo = 0;
  if (!(yhi > 0)) yhi = std::numeric_limits<double>::quiet_NaN();  // nothing: Fit's default
  Fit(AxisKind::kLinear, xlo, xhi);
  Fit(AxisKind::kLinear, ylo, yhi);
  const Scale sx{AxisKind::kLinear, xlo, xhi, kLeft, kLeft + kPlotW};
  const Scale sy{AxisKind::kLinear, ylo, yhi, kTop + kPlotH, kTop};
  std::string svg;
  Out o = std::back_inserter(svg);
  ChartAxis y_axis = chart.y;
  y_axis.kind = AxisKind::kLinear;
  Frame(o, chart.title, chart.x, y_axis, sx, sy);
  for (size_t k = 0; k < chart.layers.size(); ++k) {
    const char* colour = kColours[k % kColours.size()];
    std::string values;
    for (size_t i = 0; i < n; ++i) {
      const double v = i < chart.layers[k].y.size() ? chart.layers[k].y[i] : 0;
      fmt::format_to(std::back_inserter(values), "{}{:.6g}", i ? " " : "", v);
    }
    fmt::format_to(o,
                   "<g class=\"layer\" data-name=\"{}\" data-values=\"{}\" fill=\"{}\" "
                   "fill-opacity=\"0.85\" stroke=\"none\">\n",
                   XmlEscape(chart.layers[k].name), values, colour);
    // One polygon per run of points without a gap: along the layer's top, back along its bottom.
    for (size_t i = 0; i < n;) {
      if (!valid[i]) {
        ++i;
        continue;
      }
      size_t end = i;
      while (end < n && valid[end]) ++end;
      auto bottom = [&](size_t j) { return k == 0 ? 0.0 : tops[k - 1][j]; };
      if (end - i == 1) {  // a lone point: a narrow bar
        const double px = sx(chart.x_values[i]);
        fmt::format_to(o, "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"4\" height=\"{:.1f}\"/>\n",
                       px - 2, sy(tops[k][i]), sy(bottom(i)) - sy(tops[k][i]));
      } else {
        std::string points;
        auto add = [&](size_t j, double v) {
          fmt::format_to(std::back_inserter(points), "{}{:.1f},{:.1f}", points.empty() ? "" : " ",
                         sx(chart.x_values[j]), sy(v));
        };
        for (size_t j = i; j < end; ++j) add(j, tops[k][j]);
        for (size_t j = end; j-- > i;) add(j, bottom(j));
        fmt::format_to(o, "<polygon points=\"{}\"/>\n", points);
      }
      i = end;
    }
    fmt::format_to(o, "</g>\n");
  }
  // The legend lists the layers as they are stacked: the top one first.
  for (size_t k = chart.layers.size(); k-- > 0;) {
    LegendSwatch(o, static_cast<int>(chart.layers.size() - 1 - k), kColours[k % kColours.size()],
                 chart.layers[k].name);
  }
  svg += "</svg>\n";
  return svg;
}

}  // namespace iotail::stats
