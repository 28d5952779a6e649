// `iotail plot` of `iotail run --explain`'s stage logs (PREFIX_explain_<stage>_hist.N.log, written
// here by hand in fio's format with known buckets): a stacked chart per direction names the five
// stages, holds each stage's mean per interval, and stacks them (each layer's bottom is the top of
// the one below; the top's height is the sum of the means). The stage logs stay out of the latency
// charts, and alone they make a report of the stage charts only.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cli_test_util.h"
#include "stats/core/histogram_layout.h"

namespace plot_explain_test {

namespace fs = std::filesystem;
using iotail::stats::HistogramLayout;

constexpr std::array<const char*, 5> kStages = {"schedule", "submit", "queue", "device",
                                                "delivery"};

// Python (standard library only) checks a stage chart: argv[2] holds the expected means, one
// interval per ';', five stages per ',' (seconds).
constexpr char kCheckStages[] = R"PY(
import sys, xml.etree.ElementTree as ET
ns = {'s': 'http://www.w3.org/2000/svg'}
root = ET.parse(sys.argv[1]).getroot()
expected = [[float(v) for v in q.split(',')] for q in sys.argv[2].split(';')]
assert 'latency by --explain stage' in root.find('s:title', ns).text
layers = root.findall(".//s:g[@class='layer']", ns)
names = [g.get('data-name') for g in layers]
assert names == ['schedule', 'submit', 'queue', 'device', 'delivery'], names
texts = [t.text for t in root.findall('s:text', ns)]
for n in names:
    assert n in texts, ('legend', n, texts)
values = [[float(v) for v in g.get('data-values').split()] for g in layers]
for q, want in enumerate(expected):
    got = [values[s][q] for s in range(5)]
    for g, w in zip(got, want):
        assert abs(g - w) <= 1e-5 * w + 1e-12, ('mean', q, got, want)
    assert abs(sum(got) - sum(want)) <= 1e-5 * sum(want), ('sum', q, got, want)
# Each layer one polygon over every interval: its top edge forward, its bottom edge back.
def edges(g):
    polys = g.findall('s:polygon', ns)
    assert len(polys) == 1, len(polys)
    pts = [tuple(map(float, p.split(','))) for p in polys[0].get('points').split()]
    n = len(pts) // 2
    return pts[:n], list(reversed(pts[n:]))
tops, bottoms = zip(*[edges(g) for g in layers])
floor = bottoms[0][0][1]
assert all(abs(p[1] - floor) < 0.01 for p in bottoms[0]), 'the bottom layer starts at 0'
for s in range(1, 5):
    assert bottoms[s] == tops[s - 1], ('not stacked', s)
# The stack's height at each interval is proportional to the sum of its means.
heights = [floor - p[1] for p in tops[4]]
sums = [sum(q) for q in expected]
for h, t in zip(heights, sums):
    assert abs(h / heights[0] - t / sums[0]) < 0.01, (heights, sums)
print('ok', names, heights)
)PY";

class PlotExplainTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = iotail::testing::MakeScratchDir("iotail_plot_explain"); }
  void TearDown() override { fs::remove_all(dir_); }
  iotail::testing::CommandResult Shell(const std::string& command) {
    return iotail::testing::RunShell("cd '" + dir_.string() + "' && " + command, dir_);
  }
  // One fio-format log line per interval and direction: `ios` I/Os at each bucket of `at`.
  void WriteLog(const std::string& name, const std::vector<std::vector<std::pair<int, int>>>& at) {
    std::ofstream log(dir_ / name);
    for (size_t i = 0; i < at.size(); ++i) {
      for (int dir : {0, 1}) {
        std::vector<int> counts(layout_.size());
        for (const auto& [bucket, ios] : at[i]) counts[bucket + dir * 8] += ios;
        log << (i + 1) * 1000 << ", " << dir << ", 4096";
        for (int c : counts) log << ", " << c;
        log << "\n";
      }
    }
  }
  HistogramLayout layout_ = HistogramLayout::Fio3();
  fs::path dir_;
};

TEST_F(PlotExplainTest, StageLogsMakeAStackedChartOfTheStagesMeans) {
  // Three intervals; stage s in interval q: 30 I/Os at one bucket and 70 at another (writes eight
  // buckets higher), so that each mean weighs two bucket values.
  std::string read_means;
  std::vector<int> clat_buckets;
  for (size_t s = 0; s < kStages.size(); ++s) {
    std::vector<std::vector<std::pair<int, int>>> at;
    for (int q = 0; q < 3; ++q) {
      const int a = static_cast<int>(layout_.IndexOfNs(uint64_t{1000} << (s + q)));
      const int b = a + 5 + 3 * q;
      at.push_back({{a, 30}, {b, 70}});
    }
    WriteLog("ex_explain_" + std::string(kStages[s]) + "_hist.1.log", at);
  }
  for (int q = 0; q < 3; ++q) {
    read_means += q ? ";" : "";
    for (size_t s = 0; s < kStages.size(); ++s) {
      const int a = static_cast<int>(layout_.IndexOfNs(uint64_t{1000} << (s + q)));
      const int b = a + 5 + 3 * q;
      const double mean = (30 * layout_.ValueNs(a) + 70 * layout_.ValueNs(b)) / 100 / 1e9;
      char text[32];
      std::snprintf(text, sizeof text, "%s%.12g", s ? "," : "", mean);
      read_means += text;
    }
  }
  // The latency log: every I/O at 1 ms.
  const int ms = static_cast<int>(layout_.IndexOfNs(1'000'000));
  WriteLog("ex_clat_hist.1.log", {{{ms, 100}}, {{ms, 100}}, {{ms, 100}}});

  const std::string plot = std::string(IOTAIL_BINARY) + " plot --time-quantum 1s --format svg ";
  const auto both = Shell(plot + "ex_clat_hist.*.log ex_explain_*_hist.*.log -o both");
  ASSERT_EQ(both.status, 0) << both.err;
  // Each direction's stage chart next to its latency charts.
  const auto lines = iotail::testing::Lines(both.out);
  ASSERT_GE(lines.size(), 6u) << both.out;
  EXPECT_EQ(lines[2], "both-read-stages.svg") << both.out;
  EXPECT_EQ(lines[5], "both-write-stages.svg") << both.out;
  { std::ofstream(dir_ / "check.py") << kCheckStages; }
  const auto check = Shell("/usr/bin/python3 check.py both-read-stages.svg '" + read_means + "'");
  EXPECT_EQ(check.status, 0) << check.out << check.err;

  // The stage logs stay out of the latency charts: they are those of the latency log alone.
  const auto clat = Shell(plot + "ex_clat_hist.1.log -o clat");
  ASSERT_EQ(clat.status, 0) << clat.err;
  EXPECT_EQ(clat.out.find("stages"), std::string::npos) << clat.out;
  for (const char* chart : {"read-percentiles", "read-heatmap", "iops", "exceedance"}) {
    EXPECT_EQ(iotail::testing::ReadFile(dir_ / ("both-" + std::string(chart) + ".svg")),
              iotail::testing::ReadFile(dir_ / ("clat-" + std::string(chart) + ".svg")))
        << chart;
  }

  // The stage logs alone: the stage charts only.
  const auto alone = Shell(plot + "ex_explain_*_hist.*.log -o alone");
  ASSERT_EQ(alone.status, 0) << alone.err;
  EXPECT_EQ(alone.out, "alone-read-stages.svg\nalone-write-stages.svg\n");
  const auto html = Shell(std::string(IOTAIL_BINARY) + " plot ex_*_hist.1.log -o report.html");
  ASSERT_EQ(html.status, 0) << html.err;
  const std::string page = iotail::testing::ReadFile(dir_ / "report.html");
  EXPECT_NE(page.find("6 log file(s) (5 of them --explain stage logs)"), std::string::npos);
  EXPECT_NE(page.find("<figure id=\"write-stages\">"), std::string::npos);
}

// A glob like P_*_hist.*.log takes the clat, the lat and the stage logs of one run: the same I/Os
// measured several ways. plot charts the stages apart but refuses clat with lat; pctiles and merge
// refuse any two kinds; one kind alone is read.
TEST_F(PlotExplainTest, DifferentMeasuresOfTheSameIosAreNotMergedTogether) {
  const int ms = static_cast<int>(layout_.IndexOfNs(1'000'000));
  for (const char* name : {"k_clat_hist.1.log", "k_lat_hist.1.log", "k_explain_device_hist.1.log"})
    WriteLog(name, {{{ms, 100}}, {{ms, 100}}});
  const std::string iotail = IOTAIL_BINARY;
  const auto plot = Shell(iotail + " plot --format svg k_*_hist.*.log -o k");
  EXPECT_EQ(plot.status, 2) << plot.out;
  EXPECT_NE(plot.err.find("'k_clat_hist.1.log' (clat) and 'k_lat_hist.1.log' (lat) hold "
                          "different measures of the same I/Os"),
            std::string::npos)
      << plot.err;
  const auto stages = Shell(iotail + " plot --format svg k_clat_hist.*.log k_explain_*.log -o k");
  EXPECT_EQ(stages.status, 0) << stages.err;
  for (const std::string command : {"pctiles", "merge -o m.log"}) {
    const auto mixed =
        Shell(iotail + " " + command + " k_clat_hist.1.log k_explain_device_hist.1.log");
    EXPECT_EQ(mixed.status, 2) << command << mixed.out;
    EXPECT_NE(mixed.err.find("(clat) and 'k_explain_device_hist.1.log' (explain_device)"),
              std::string::npos)
        << mixed.err;
    EXPECT_EQ(Shell(iotail + " " + command + " k_lat_hist.1.log").status, 0) << command;
  }
}

}  // namespace plot_explain_test
