// `iotail plot` on real fio logs (tests/data/fio, written by fio 3.33): the HTML report holds the
// charts, each SVG parses as XML with its axes and drawn data, and a real headless browser
// (Debian's chromium) renders it to a screenshot that is not blank. The browser part skips, naming
// the reason, where chromium is missing.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "cli_test_util.h"
#include "nbd_fixture.h"
#include "stats/core/histogram_layout.h"

namespace plot_test {

namespace fs = std::filesystem;
using iotail::testing::FindInPath;

std::string Data(const std::string& c, const std::string& f) {
  return std::string(IOTAIL_TEST_DATA_DIR) + "/fio/" + c + "/" + f;
}

class PlotTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = iotail::testing::MakeScratchDir("iotail_plot"); }
  void TearDown() override { fs::remove_all(dir_); }
  iotail::testing::CommandResult Shell(const std::string& command) {
    return iotail::testing::RunShell("cd '" + dir_.string() + "' && " + command, dir_);
  }
  fs::path dir_;
};

// Python (Debian's, with the standard library only) checks the SVG: it parses, has both axes with
// tick labels, and draws data (a polyline of 2+ points or heat-map cells).
constexpr char kCheckSvg[] = R"PY(
import sys, xml.etree.ElementTree as ET
ns = {'s': 'http://www.w3.org/2000/svg'}
for path in sys.argv[1:]:
    root = ET.parse(path).getroot()
    title = root.find('s:title', ns).text
    axes = root.findall(".//s:g[@class='axis x']", ns) + root.findall(".//s:g[@class='axis y']", ns)
    assert len(axes) == 2, (path, 'axes')
    for a in axes:
        assert len(a.findall('s:text', ns)) >= 2, (path, 'tick labels')
    lines = [p for p in root.findall(".//s:polyline", ns) if len(p.get('points').split()) >= 2]
    cells = root.findall(".//s:g[@class='cells']/s:rect", ns)
    assert lines or cells, (path, 'no data drawn')
    print(path, title, len(lines), len(cells))
)PY";

TEST_F(PlotTest, HtmlReportHoldsChartsThatParseWithAxesAndData) {
  const auto r =
      iotail::testing::RunIotail("plot " + Data("randrw", "*_clat_hist.*.log") + " -o '" +
                                     (dir_ / "report.html").string() + "' --sla 'read:p99<=2ms'",
                                 dir_);
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string html = iotail::testing::ReadFile(dir_ / "report.html");
  size_t svgs = 0;
  for (size_t p = html.find("<svg"); p != std::string::npos; p = html.find("<svg", p + 1)) ++svgs;
  EXPECT_GE(svgs, 4u);
  // Self-contained: nothing to run, nothing to fetch.
  for (const char* fetch : {"<script", "src=", "<link", "href=", "@import", "url("}) {
    EXPECT_EQ(html.find(fetch), std::string::npos) << fetch;
  }
  EXPECT_NE(html.find("read latency percentiles"), std::string::npos);
  EXPECT_NE(html.find("write latency heat map"), std::string::npos);
  EXPECT_NE(html.find("SLA read:p99&lt;=2ms"), std::string::npos);

  // The same charts as SVG files, each checked.
  const auto svg = Shell(std::string(IOTAIL_BINARY) + " plot " +
                         Data("randrw", "*_clat_hist.*.log") + " --format svg -o charts");
  ASSERT_EQ(svg.status, 0) << svg.err;
  EXPECT_GE(iotail::testing::Lines(svg.out).size(), 4u) << svg.out;
  { std::ofstream(dir_ / "check.py") << kCheckSvg; }
  const auto check = Shell("/usr/bin/python3 check.py charts-*.svg");
  EXPECT_EQ(check.status, 0) << check.out << check.err;
  EXPECT_NE(check.out.find("charts-read-percentiles.svg"), std::string::npos) << check.out;
  EXPECT_NE(check.out.find("charts-exceedance.svg"), std::string::npos) << check.out;
}

// A run's last, partial interval (a log line 250 ms after the one before, with 250 I/Os where the
// full seconds hold 1,000) is rated over the time it covers: the IOPS line stays flat. The heat
// map's time axis ends where the data ends (3.25 s), not at the quantum's end or a nice bound.
constexpr char kCheckPartial[] = R"PY(
import sys, xml.etree.ElementTree as ET
ns = {'s': 'http://www.w3.org/2000/svg'}
iops = ET.parse(sys.argv[1]).getroot()
line = iops.find(".//s:g[@class='series']/s:polyline", ns)
ys = [float(p.split(',')[1]) for p in line.get('points').split()]
assert len(ys) == 4, ys
assert max(ys) - min(ys) < 0.5, ('IOPS not flat', ys)
heat = ET.parse(sys.argv[2]).getroot()
cells = heat.findall(".//s:g[@class='cells']/s:rect", ns)
right = max(float(c.get('x')) + float(c.get('width')) for c in cells)
plot_right = max(float(l.get('x2')) for l in heat.findall(".//s:g[@class='axis y']/s:line", ns))
assert abs(right - plot_right) < 1, ('heat map axis runs past the data', right, plot_right)
ticks = [t.text for t in heat.findall(".//s:g[@class='axis x']/s:text", ns)]
assert '4' not in ticks and '3' in ticks, ticks
print('ok', ys, right, plot_right, ticks)
)PY";

TEST_F(PlotTest, APartialLastIntervalIsRatedOverItsTime) {
  {
    std::ofstream log(dir_ / "p_clat_hist.1.log");
    for (const auto& [end_ms, ios] :
         {std::pair{1000, 1000}, {2000, 1000}, {3000, 1000}, {3250, 250}}) {
      log << end_ms << ", 0, 4096";
      for (uint32_t b = 0; b < iotail::stats::kFio3Buckets; ++b)
        log << ", " << (b == 700 ? ios : 0);
      log << "\n";
    }
  }
  const auto r = Shell(std::string(IOTAIL_BINARY) +
                       " plot p_clat_hist.1.log --time-quantum 1s --format svg -o c");
  ASSERT_EQ(r.status, 0) << r.err;
  { std::ofstream(dir_ / "check.py") << kCheckPartial; }
  const auto check = Shell("/usr/bin/python3 check.py c-iops.svg c-read-heatmap.svg");
  EXPECT_EQ(check.status, 0) << check.out << check.err;
  // The bandwidth too, and the page says the last interval was partial.
  const auto html = Shell(std::string(IOTAIL_BINARY) +
                          " plot p_clat_hist.1.log --time-quantum 1s -o report.html");
  ASSERT_EQ(html.status, 0) << html.err;
  EXPECT_NE(iotail::testing::ReadFile(dir_ / "report.html").find("the data ends 250 ms into it"),
            std::string::npos);
}

TEST_F(PlotTest, BadInputIsAClearError) {
  const auto none = iotail::testing::RunIotail("plot -o x.html", dir_);
  EXPECT_EQ(none.status, 2);
  EXPECT_NE(none.err.find("no input files"), std::string::npos) << none.err;
  const auto format = iotail::testing::RunIotail(
      "plot --format pdf " + Data("basic", "hist_clat_hist.1.log"), dir_);
  EXPECT_EQ(format.status, 2);
  EXPECT_NE(format.err.find("--format"), std::string::npos) << format.err;
  std::ofstream(dir_ / "bad.log") << "1000, 0, 4096, 1, 2\n";
  const auto bad = iotail::testing::RunIotail(
      "plot '" + (dir_ / "bad.log").string() + "' -o '" + (dir_ / "o.html").string() + "'", dir_);
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("bad.log:1"), std::string::npos) << bad.err;
  EXPECT_FALSE(fs::exists(dir_ / "o.html"));
}

// The report rendered by a real browser: a PNG screenshot whose pixels are not all one colour.
constexpr char kCheckPng[] = R"PY(
import sys, zlib, struct
data = open(sys.argv[1], 'rb').read()
assert data[:8] == b'\x89PNG\r\n\x1a\n'
pos, idat, width, height = 8, b'', 0, 0
while pos < len(data):
    n, kind = struct.unpack('>I4s', data[pos:pos+8])
    body = data[pos+8:pos+8+n]
    if kind == b'IHDR':
        width, height, depth, colour = struct.unpack('>IIBB', body[:10])
        assert depth == 8 and colour in (2, 6), (depth, colour)
        bpp = 3 if colour == 2 else 4
    if kind == b'IDAT':
        idat += body
    pos += 12 + n
raw = zlib.decompress(idat)
stride = width * bpp
prev = bytearray(stride)
colours = set()
for y in range(height):
    f = raw[y * (stride + 1)]
    line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):
        a = line[i - bpp] if i >= bpp else 0
        b = prev[i]
        c = prev[i - bpp] if i >= bpp else 0
        if f == 1: line[i] = (line[i] + a) & 255
        elif f == 2: line[i] = (line[i] + b) & 255
        elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c; pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    if y % 4 == 0:
        for x in range(0, stride, bpp * 4):
            colours.add(bytes(line[x:x+3]))
    prev = line
print(width, height, len(colours))
assert len(colours) >= 20, 'blank screenshot'
)PY";

TEST_F(PlotTest, HeadlessChromiumRendersTheReport) {
  const std::string chromium = FindInPath("chromium");
  if (chromium.empty()) GTEST_SKIP() << "chromium not found (Debian package chromium)";
  const auto r = iotail::testing::RunIotail("plot " + Data("randrw", "*_clat_hist.*.log") +
                                                " -o '" + (dir_ / "report.html").string() + "'",
                                            dir_);
  ASSERT_EQ(r.status, 0) << r.err;
  const auto shot = Shell("timeout -s KILL 120 " + chromium +
                          " --headless --no-sandbox --disable-gpu --hide-scrollbars "
                          "--user-data-dir=profile --window-size=1000,1400 "
                          "--screenshot=shot.png file://" +
                          (dir_ / "report.html").string());
  ASSERT_TRUE(fs::exists(dir_ / "shot.png")) << shot.out << shot.err;
  { std::ofstream(dir_ / "png.py") << kCheckPng; }
  const auto check = Shell("/usr/bin/python3 png.py shot.png");
  EXPECT_EQ(check.status, 0) << check.out << check.err;
}

}  // namespace plot_test
