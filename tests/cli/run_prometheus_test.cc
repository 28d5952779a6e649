// `iotail run --prometheus` scraped by a real Prometheus (Debian's `prometheus`, on loopback, with
// its own config and a temporary storage path, stopped afterwards): its counters equal the JSON
// summary, histogram_quantile over the exposed histogram is within one union bucket (25%) of the
// summary's p99, and `promtool check metrics` accepts the exposition. Skips, naming the reason,
// where prometheus or promtool is missing.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "cli_test_util.h"
#include "http_get.h"
#include "nbd_fixture.h"

namespace run_prometheus_test {

namespace fs = std::filesystem;
using iotail::testing::ChildProcess;
using iotail::testing::FindInPath;
using iotail::testing::NbdServer;
using nlohmann::json;

// The value of a promtool instant query with one result ("... => VALUE @[TIME]").
double Query(int port, const std::string& expr, const fs::path& dir) {
  const auto r = iotail::testing::RunShell(
      FindInPath("promtool") + " query instant http://127.0.0.1:" + std::to_string(port) + " '" +
          expr + "'",
      dir);
  const size_t arrow = r.out.find("=> ");
  if (r.status != 0 || arrow == std::string::npos) {
    ADD_FAILURE() << expr << ": " << r.out << r.err;
    return NAN;
  }
  return std::stod(r.out.substr(arrow + 3));
}

// `iotail run ARGS` serving its metrics on 127.0.0.1:PORT (and lingering), its JSON summary to
// DIR/summary.json and its stderr to DIR/iotail.log. The process is killed if it is still running
// when this is destroyed.
class ServingRun {
 public:
  ServingRun(fs::path dir, int port) : dir_(std::move(dir)), port_(port) {}

  // Starts the run and waits until it serves. Returns an empty string, or what went wrong.
  std::string Start(const std::vector<std::string>& args, const std::string& linger) {
    std::vector<std::string> argv = {IOTAIL_BINARY, "run"};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.insert(argv.end(),
                {"--live_format=none", "--prometheus=127.0.0.1:" + std::to_string(port_),
                 "--prometheus_linger=" + linger, "--output-format=json",
                 "--output=" + (dir_ / "summary.json").string()});
    if (std::string why = process_.Spawn(argv, log_path(), SIGKILL); !why.empty()) return why;
    if (!iotail::testing::WaitForText(log_path(), "Prometheus metrics at http://127.0.0.1:", 10)) {
      return "no metrics served: " + log();
    }
    return {};
  }
  // The metrics served `after` this long (a mid-run exposition).
  iotail::testing::HttpResponse MetricsAfter(std::chrono::milliseconds after) const {
    std::this_thread::sleep_for(after);
    return iotail::testing::HttpGet(port_, "/metrics");
  }
  // Waits up to 15 s until the run has ended and serves its final metrics (the linger).
  bool WaitForFinalMetrics() const {
    return iotail::testing::WaitForText(log_path(), "serving the final metrics", 15);
  }
  // Waits up to 10 s for the process to exit: success if it exited with status 0.
  ::testing::AssertionResult ExitsCleanly() {
    if (!process_.WaitFor(std::chrono::seconds(10))) {
      return ::testing::AssertionFailure() << "still running after 10 s: " << log();
    }
    if (process_.status() != 0) {
      return ::testing::AssertionFailure() << "exit status " << process_.status() << ": " << log();
    }
    return ::testing::AssertionSuccess();
  }
  std::string log() const { return iotail::testing::ReadFile(log_path()); }
  fs::path summary_path() const { return dir_ / "summary.json"; }

 private:
  fs::path log_path() const { return dir_ / "iotail.log"; }

  fs::path dir_;
  int port_;
  ChildProcess process_;
};

TEST(RunPrometheusTest, RealPrometheusScrapesCountersEqualToTheSummary) {
  for (const char* tool : {"prometheus", "promtool"}) {
    if (FindInPath(tool).empty()) GTEST_SKIP() << tool << " not found (Debian package prometheus)";
  }
  const fs::path dir = iotail::testing::MakeScratchDir("iotail_prometheus");
  const int metrics_port = iotail::testing::FreeLoopbackPort();
  const int prom_port = iotail::testing::FreeLoopbackPort();
  ASSERT_GT(metrics_port, 0);
  ASSERT_GT(prom_port, 0);
  ASSERT_NE(metrics_port, prom_port);
  {
    std::ofstream config(dir / "prometheus.yml");
    config << "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
           << "scrape_configs:\n  - job_name: iotail\n    static_configs:\n"
           << "      - targets: ['127.0.0.1:" << metrics_port << "']\n";
  }
  ChildProcess prometheus;
  ASSERT_EQ(prometheus.Spawn(
                {FindInPath("prometheus"), "--config.file=" + (dir / "prometheus.yml").string(),
                 "--storage.tsdb.path=" + (dir / "data").string(),
                 "--web.listen-address=127.0.0.1:" + std::to_string(prom_port)},
                dir / "prometheus.log", SIGKILL),
            "");
  ASSERT_TRUE(iotail::testing::WaitForText(dir / "prometheus.log",
                                           "Server is ready to receive web requests", 30))
      << iotail::testing::ReadFile(dir / "prometheus.log");

  // A rate-limited run on a temporary file; the summary goes to a file before the linger.
  ServingRun run(dir, metrics_port);
  ASSERT_EQ(run.Start({"--filename=" + (dir / "target").string(), "--size=16m", "--ioengine=psync",
                       "--rw=randread", "--rate_iops=5000", "--runtime=8", "--time_based"},
                      "4s"),
            "");
  // Mid-run: the exposition as served, for promtool.
  const auto mid = run.MetricsAfter(std::chrono::seconds(3));
  ASSERT_TRUE(mid.ok);
  { std::ofstream(dir / "exposition.txt") << mid.body; }
  const auto check = iotail::testing::RunShell(
      FindInPath("promtool") + " check metrics < '" + (dir / "exposition.txt").string() + "'", dir);
  EXPECT_EQ(check.status, 0) << check.out << check.err;

  // During the linger the final counts are served; two scrapes later Prometheus has them.
  ASSERT_TRUE(run.WaitForFinalMetrics()) << run.log();
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  const json summary = json::parse(iotail::testing::ReadFile(run.summary_path()));
  const json& read = summary["jobs"][0]["read"];
  const double ios = Query(prom_port, "sum(iotail_io_ops_total)", dir);
  const double p99 = Query(
      prom_port, "histogram_quantile(0.99, sum by (le) (iotail_io_latency_seconds_bucket))", dir);
  const double bytes = Query(prom_port, "sum(iotail_io_bytes_total)", dir);
  EXPECT_TRUE(run.ExitsCleanly());
  EXPECT_EQ(ios, read["total_ios"].get<double>());
  EXPECT_NEAR(ios, 5000 * 8, 5000 * 8 * 0.05);
  EXPECT_EQ(bytes, read["io_bytes"].get<double>());
  const double summary_p99 = read["clat_ns"]["percentile"]["99.000000"].get<double>() / 1e9;
  EXPECT_NEAR(p99, summary_p99, 0.25 * summary_p99) << "summary p99 " << summary_p99;
  prometheus.Signal(SIGTERM);
  EXPECT_TRUE(prometheus.WaitFor(std::chrono::seconds(10)));
  fs::remove_all(dir);
}

// The value of `name{...}` in an exposition, or NAN when it is not there.
double Sample(const std::string& exposition, const std::string& name) {
  size_t at = 0;
  while ((at = exposition.find(name, at)) != std::string::npos) {
    const bool line_start = at == 0 || exposition[at - 1] == '\n';
    const size_t space = exposition.find(' ', at);
    if (line_start && space != std::string::npos && exposition[at + name.size()] == '{') {
      return std::stod(exposition.substr(space + 1));
    }
    at += name.size();
  }
  return NAN;
}

TEST(RunPrometheusTest, InFlightIsTheDepthAgainstASlowTargetAndZeroAfterTheRun) {
  // Reads that each take 50 ms at depth 4: at any instant of the run the four are in flight,
  // but for the microseconds between a completion and its resubmission.
  if (const std::string why = NbdServer::Unavailable(); !why.empty()) GTEST_SKIP() << why;
  NbdServer server;
  ASSERT_EQ(server.Start("--filter=delay memory 64M rdelay=50ms"), "");
  const fs::path dir = iotail::testing::MakeScratchDir("iotail_prometheus_in_flight");
  const int port = iotail::testing::FreeLoopbackPort();
  ASSERT_GT(port, 0);
  ServingRun run(dir, port);
  ASSERT_EQ(run.Start({"--ioengine=nbd", "--uri=" + server.uri(), "--rw=randread", "--bs=4k",
                       "--iodepth=4", "--runtime=3", "--time_based", "--log_hist_msec=250"},
                      "3s"),
            "");
  const auto mid = run.MetricsAfter(std::chrono::milliseconds(1500));
  ASSERT_TRUE(mid.ok);
  EXPECT_GE(Sample(mid.body, "iotail_io_in_flight"), 3) << mid.body;
  EXPECT_LE(Sample(mid.body, "iotail_io_in_flight"), 4) << mid.body;
  ASSERT_TRUE(run.WaitForFinalMetrics()) << run.log();
  const auto last = iotail::testing::HttpGet(port, "/metrics");
  ASSERT_TRUE(last.ok);
  EXPECT_EQ(Sample(last.body, "iotail_io_in_flight"), 0) << last.body;  // all drained
  EXPECT_TRUE(run.ExitsCleanly());
  fs::remove_all(dir);
}

}  // namespace run_prometheus_test
