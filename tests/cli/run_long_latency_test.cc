// Latencies above fio's 17.18 s top, against a target of known latency: every read of an nbdkit
// export behind the delay filter takes 18 s. iotail's recorders count in 59 bucket groups, so the
// summary says 18 s; a --log_hist_groups=59 log keeps it, and `iotail pctiles` and fio's own
// fio-histo-log-pctiles.py (--bucket-groups 59) read 18 s from it; a log in fio's default 29
// groups clamps it into fio's last bucket, as fio does, and fio itself, run on the same target at
// the same time, reports its clamped value. One 18-second test: the jobs run side by side.
// Skips, naming the reason, when nbdkit is missing; fio's part when fio or its script is missing.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <future>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_test_util.h"
#include "nbd_fixture.h"

namespace run_long_latency_test {

namespace fs = std::filesystem;
using iotail::testing::NbdServer;
using nlohmann::json;

constexpr double kLowNs = 17.9e9;  // the window around the 18 s delay
constexpr double kHighNs = 18.5e9;
constexpr double kFioTopNs = 17'179'869'184.0;  // 2^34 ns: fio's histograms end here

double P50(const json& clat) { return clat.at("percentile").at("50.000000").get<double>(); }

// The whole run's read p50, in ns, of `iotail pctiles` over `log`.
double PctilesP50(const fs::path& log, const fs::path& dir) {
  const auto r = iotail::testing::RunIotail(
      "pctiles --format json --output-unit ns --percentiles 50 '" + log.string() + "'", dir);
  EXPECT_EQ(r.status, 0) << r.err;
  const json doc = json::parse(r.out, nullptr, false);
  if (doc.is_discarded() || !doc.contains("total") || doc["total"].empty()) {
    ADD_FAILURE() << r.out;
    return 0;
  }
  EXPECT_EQ(doc["total"][0]["samples"].get<double>(), 2.0);
  return doc["total"][0]["p50"].get<double>();
}

TEST(RunLongLatencyTest, EighteenSecondReadsAreEighteenSecondsInTheSummaryAndTheWideLog) {
  if (const std::string why = NbdServer::Unavailable(); !why.empty()) GTEST_SKIP() << why;
  const fs::path dir = iotail::testing::MakeScratchDir("iotail_long_latency");
  NbdServer server;
  ASSERT_EQ(server.Start("--filter=delay memory 64M rdelay=18"), "");
  const std::string target = " --ioengine=nbd --uri='" + server.uri() + "'";
  const std::string reads = " --rw=read --bs=4k --size=8k --iodepth=2";  // 2 reads of 18 s

  // fio on the same target, at the same time (it has an nbd engine too).
  const bool have_fio = !iotail::testing::FindInPath("fio").empty();
  std::future<iotail::testing::CommandResult> fio;
  if (have_fio) {
    fio = std::async(std::launch::async, [&] {
      return iotail::testing::RunShell("cd '" + dir.string() + "' && timeout -s KILL 60 fio " +
                                           "--name=f" + target + reads + " --output-format=json",
                                       dir);
    });
  }
  // Two jobs at once: one logs in the wide layout, the other in fio's.
  const auto run = iotail::testing::RunShell(
      "cd '" + dir.string() + "' && " + IOTAIL_BINARY +
          " run --live_format=none --output-format=json --log_hist_msec=1000" + target + reads +
          " --name=wide --log_hist_groups=59 --write_hist_log=wide" +
          " --name=fio_layout --write_hist_log=narrow",
      dir);
  ASSERT_EQ(run.status, 0) << run.err;
  const json summary = json::parse(run.out);
  ASSERT_EQ(summary["jobs"].size(), 2u);
  for (const json& job : summary["jobs"]) {
    const json& read = job["read"];
    ASSERT_EQ(read["total_ios"], 2) << job["jobname"];
    const double p50 = P50(read["clat_ns"]);
    EXPECT_GE(p50, kLowNs) << job["jobname"];
    EXPECT_LE(p50, kHighNs) << job["jobname"];
    // min and max are exact, not bucketed: each read took the delay and a little more.
    EXPECT_GE(read["clat_ns"]["min"].get<double>(), 18e9);
    EXPECT_LE(read["clat_ns"]["max"].get<double>(), 18.5e9);
    EXPECT_EQ(job["latency_ms"][">=2000"].get<double>(), 100.0);
  }

  // The wide log keeps 18 s; fio's layout clamps it below fio's top, as fio's own log would.
  const double wide = PctilesP50(dir / "wide_clat_hist.1.log", dir);
  EXPECT_GE(wide, kLowNs);
  EXPECT_LE(wide, kHighNs);
  const double narrow = PctilesP50(dir / "narrow_clat_hist.2.log", dir);
  EXPECT_LT(narrow, kFioTopNs);
  EXPECT_GT(narrow, 17e9);
  // The run says its fio-layout log clamped the two reads (the wide one clamped nothing).
  EXPECT_NE(run.err.find("note: 2 I/O(s) took 17.18 s or more"), std::string::npos) << run.err;

  // fio's own reader takes the wide log with its bucket-group option.
  const fs::path script = "/usr/share/doc/fio/fio-histo-log-pctiles.py.gz";
  if (fs::exists(script) && fs::exists("/usr/bin/python3")) {
    const auto py = iotail::testing::RunShell(
        "cd '" + dir.string() + "' && zcat " + script.string() +
            " > p.py && /usr/bin/python3 p.py wide_clat_hist.1.log --bucket-groups 59 " +
            "--percentiles 50 | tail -n 1",
        dir);
    ASSERT_EQ(py.status, 0) << py.err;
    // The last line: "time, samples, p50" with p50 in microseconds.
    const std::string& line = py.out;
    const size_t second_comma = line.find(',', line.find(',') + 1);
    ASSERT_NE(second_comma, std::string::npos) << line;
    EXPECT_EQ(std::stod(line.substr(line.find(',') + 1)), 2.0) << line;
    const double p50_us = std::stod(line.substr(second_comma + 1));
    EXPECT_GE(p50_us * 1000, kLowNs) << line;
    EXPECT_LE(p50_us * 1000, kHighNs) << line;
  }

  if (have_fio) {
    const auto f = fio.get();
    ASSERT_EQ(f.status, 0) << f.err;
    const json fio_json = json::parse(f.out.substr(f.out.find('{')));
    const json& read = fio_json["jobs"][0]["read"];
    EXPECT_EQ(read["total_ios"], 2);
    EXPECT_LT(P50(read["clat_ns"]), kFioTopNs);             // fio's clamp (fio issue 1668)
    EXPECT_GE(read["clat_ns"]["max"].get<double>(), 18e9);  // its exact max is right
  }
  fs::remove_all(dir);
}

}  // namespace run_long_latency_test
