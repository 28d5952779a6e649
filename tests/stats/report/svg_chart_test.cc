#include "stats/report/svg_chart.h"

#include <gtest/gtest.h>

#include <cmath>
#include <regex>
#include <string>
#include <vector>

#include "stats/report/plot_report.h"

namespace iotail::stats {
namespace svg_chart_test {

TEST(SvgChartTest, AxisValuesReadAsAPersonWritesThem) {
  EXPECT_EQ(FormatAxisValue(250e-6, AxisUnit::kLatency), "250 µs");
  EXPECT_EQ(FormatAxisValue(1.5e-3, AxisUnit::kLatency), "1.5 ms");
  EXPECT_EQ(FormatAxisValue(18, AxisUnit::kLatency), "18 s");
  EXPECT_EQ(FormatAxisValue(100e-9, AxisUnit::kLatency), "100 ns");
  EXPECT_EQ(FormatAxisValue(12000, AxisUnit::kCount), "12k");
  EXPECT_EQ(FormatAxisValue(1.2e6, AxisUnit::kCount), "1.2M");
  EXPECT_EQ(FormatAxisValue(0.01, AxisUnit::kFraction), "1%");
  EXPECT_EQ(FormatAxisValue(0.0001, AxisUnit::kFraction), "0.01%");
}

// On a log latency axis fitted to 100 µs .. 10 ms, 1 ms lies half way up the plot; a NaN breaks the
// line into two polylines; a reference line sits at its value.
TEST(SvgChartTest, LogAxisPlacesPointsAndNanBreaksTheLine) {
  LineChart c{"t",
              {"time", AxisKind::kLinear, AxisUnit::kSeconds},
              {"latency", AxisKind::kLog, AxisUnit::kLatency},
              {{"p99", {0, 1, 2, 3, 4}, {1e-3, 1e-3, NAN, 1e-3, 1e-3}}},
              {{"SLA", 1e-3}}};
  c.series[0].y[0] = 1.5e-4;  // fits the axis down to 100 µs
  c.series[0].y[4] = 9e-3;    // and up to 10 ms
  const std::string svg = RenderSvg(c);
  const std::regex polyline("<polyline points=\"([^\"]*)\"");
  size_t lines = 0;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), polyline);
       it != std::sregex_iterator(); ++it) {
    ++lines;
  }
  EXPECT_EQ(lines, 2u);
  // The plot spans y = 44 .. 324 (top .. bottom); half way is 184.
  EXPECT_NE(svg.find(",184.0"), std::string::npos) << svg;
  EXPECT_NE(svg.find("class=\"reference\""), std::string::npos);
  EXPECT_NE(svg.find(">1 ms<"), std::string::npos);  // a tick label
}

TEST(PlotReportTest, ChartsPerDirectionAndExceedanceFromTheTotals) {
  const HistogramLayout layout = HistogramLayout::Fio3();
  PlotOptions options;
  options.quantum_ms = 1000;
  std::vector<double> read(layout.size(), 0.0), none(layout.size(), 0.0);
  read[layout.IndexOfNs(100'000)] = 99;
  read[layout.IndexOfNs(5'000'000)] = 1;
  Histogram total(layout.size());
  total.Add(layout.IndexOfNs(100'000), 297);
  total.Add(layout.IndexOfNs(5'000'000), 3);
  // With the bytes known, a bandwidth chart; without, none, and the page says why.
  for (const bool known : {true, false}) {
    SCOPED_TRACE(known);
    PlotReport report(layout, options);
    for (int64_t t = 0; t < 3000; t += 1000) {
      report.Add(t,
                 {std::span<const double>(read), std::span<const double>(none),
                  std::span<const double>(none)},
                 {100.0 * 65536, 0, 0}, {true, false, false});
    }
    // The data ends with the last quantum (3 s): no partial interval.
    report.Finish({&total, nullptr, nullptr}, known, 3000);
    std::vector<std::string> names;
    for (const auto& c : report.Charts()) names.push_back(c.name);
    std::vector<std::string> expected = {"read-percentiles", "read-heatmap", "iops",
                                         "bandwidth",        "slc",          "exceedance"};
    if (!known) expected.erase(expected.begin() + 3);
    EXPECT_EQ(names, expected);
    const std::string html = report.Html();
    EXPECT_NE(html.find(known ? "Bandwidth is each record's I/Os times its bs column"
                              : "No bandwidth chart: some records have no block size"),
              std::string::npos);
    EXPECT_NE(html.find("SLC1 and SLC2 are SBK"), std::string::npos);
    EXPECT_EQ(html.find("The last interval is partial"), std::string::npos);
    if (known) {
      // 100 I/Os of 64 KiB a second: 6.25 MiB/s, so the bandwidth axis ends at its 8 tick (the
      // IOPS axis, 100 a second, goes further).
      const auto charts = report.Charts();
      EXPECT_NE(charts[3].svg.find(">8<"), std::string::npos) << charts[3].svg;
      EXPECT_EQ(charts[3].svg.find(">100<"), std::string::npos) << charts[3].svg;
    }
  }
}

// A last quantum the data covers only in part (a run's final 500 ms, at the same rate) is rated
// over those 500 ms: the IOPS line stays flat, and the page says so.
TEST(PlotReportTest, APartialLastQuantumIsRatedOverTheTimeItCovers) {
  const HistogramLayout layout = HistogramLayout::Fio3();
  PlotOptions options;
  options.quantum_ms = 1000;
  std::vector<double> full(layout.size(), 0.0), half(layout.size(), 0.0), none(layout.size(), 0.0);
  full[layout.IndexOfNs(100'000)] = 100;
  half[layout.IndexOfNs(100'000)] = 50;
  Histogram total(layout.size());
  total.Add(layout.IndexOfNs(100'000), 250);
  PlotReport report(layout, options);
  for (int64_t t = 0; t < 3000; t += 1000) {
    const std::vector<double>& counts = t < 2000 ? full : half;
    report.Add(t,
               {std::span<const double>(counts), std::span<const double>(none),
                std::span<const double>(none)},
               {0, 0, 0}, {true, false, false});
  }
  report.Finish({&total, nullptr, nullptr}, false, 2500);
  std::string iops;
  for (const auto& c : report.Charts()) {
    if (c.name == "iops") iops = c.svg;
  }
  std::smatch m;
  ASSERT_TRUE(std::regex_search(iops, m, std::regex("<polyline points=\"([^\"]*)\"")));
  std::vector<double> ys;
  const std::string points = m[1];
  const std::regex point("[0-9.]+,([0-9.]+)");
  for (auto it = std::sregex_iterator(points.begin(), points.end(), point);
       it != std::sregex_iterator(); ++it) {
    ys.push_back(std::stod((*it)[1]));
  }
  ASSERT_EQ(ys.size(), 3u) << points;
  EXPECT_DOUBLE_EQ(ys[2], ys[0]) << points;
  EXPECT_NE(report.Html().find("the data ends 500 ms into it"), std::string::npos);
}

}  // namespace svg_chart_test
}  // namespace iotail::stats
