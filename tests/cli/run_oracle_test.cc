// `iotail run` against targets of known latency and known faults (nbd_fixture.h): every read of
// an nbdkit export behind the delay filter takes 5 ms, so clat can neither be below 5 ms (stamps
// too late at the start, or too early at the end, would show) nor much above it at a queue depth
// the target serves in parallel. Reached through nbdfuse as a file (io_uring, libaio, psync) and
// directly (the nbd engine); then the nbd engine's rate-limited mode, injected EIO, a refused
// connection and a server that dies mid-run. Tests skip, naming the reason, when nbdkit, nbdfuse,
// fusermount3 or /dev/fuse are missing or the FUSE mount fails.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <future>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cli_test_util.h"
#include "nbd_fixture.h"

namespace run_oracle_test {

namespace fs = std::filesystem;
using iotail::testing::NbdFuseMount;
using iotail::testing::NbdServer;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr int64_t kDelayNs = 5'000'000;   // rdelay=5ms
constexpr int64_t kMaxP50Ns = 5'750'000;  // 5 ms + FUSE/NBD/scheduling overhead
constexpr char kDelayedMemory[] = "--filter=delay memory 64M rdelay=5ms";
constexpr char kOutput[] = " --percentile_list=1:50:99 --output-format=json --live_format=none";

struct IotailRun {
  iotail::testing::CommandResult result;
  json summary;  // null when stdout held no JSON
  double seconds = 0;
};

// Runs `iotail run ARGS` (killed after 60 s, so a hang fails instead of stalling the suite) and
// parses the JSON summary on stdout, if any.
IotailRun RunIotail(const std::string& args, const fs::path& scratch) {
  IotailRun run;
  const auto start = Clock::now();
  const std::string timeout = iotail::testing::FindInPath("timeout");
  run.result = iotail::testing::RunShell(
      (timeout.empty() ? "" : timeout + " -s KILL 60 ") + IOTAIL_BINARY + " run " + args, scratch);
  run.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  const size_t brace = run.result.out.find('{');
  if (brace != std::string::npos) {
    run.summary = json::parse(run.result.out.substr(brace), nullptr, /*allow_exceptions=*/false);
    if (run.summary.is_discarded()) run.summary = nullptr;
  }
  return run;
}

std::string Quote(const std::string& s) { return "'" + s + "'"; }

int64_t Pct(const json& clat, const char* key);

// No I/O can complete faster than the target's delay: lat (from right before the submission call,
// slat + clat) never does, on any engine, and clat (from that call's return, fio's definition)
// does not either but for the odd I/O whose thread was preempted between the call's return and
// its stamp on a loaded machine: its 1st percentile must be at the delay.
void ExpectNoLatencyBelowTheDelay(const json& read) {
  EXPECT_GE(read.at("lat_ns").at("min").get<int64_t>(), kDelayNs);
  EXPECT_GE(Pct(read.at("clat_ns"), "1.000000"), kDelayNs);
}

int64_t Pct(const json& clat, const char* key) {
  return clat.at("percentile").at(key).get<int64_t>();
}

// The highest non-empty bucket of each read line of a histogram log, in file order.
std::vector<size_t> MaxBucketPerReadLine(const fs::path& log) {
  std::vector<size_t> out;
  std::ifstream in(log);
  for (std::string line; std::getline(in, line);) {
    std::stringstream fields(line);
    std::vector<uint64_t> v;
    for (std::string f; std::getline(fields, f, ',');) v.push_back(std::stoull(f));
    if (v.size() < 4 || v[1] != 0) continue;
    // An interval with no completion (the run's last, partial one can be a few µs) has no
    // largest latency: it is left out rather than read as bucket 0.
    std::optional<size_t> top;
    for (size_t i = 3; i < v.size(); ++i) {
      if (v[i] != 0) top = i - 3;
    }
    if (top) out.push_back(*top);
  }
  return out;
}

class RunOracleTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = iotail::testing::MakeScratchDir("iotail_oracle"); }
  void TearDown() override { fs::remove_all(dir_); }

  // Skips the test when an engine is not available in this kernel.
  static bool EngineUnavailable(const IotailRun& run) {
    return run.result.status == 2 && run.result.err.find("not available") != std::string::npos;
  }

  fs::path dir_;
};

// Engine and iodepth through the nbdfuse file.
struct FuseCase {
  const char* engine;
  int iodepth;
};

void PrintTo(const FuseCase& c, std::ostream* os) { *os << c.engine << " iodepth=" << c.iodepth; }

class RunOracleFuseTest : public RunOracleTest, public ::testing::WithParamInterface<FuseCase> {};

TEST_P(RunOracleFuseTest, ClatIsTheDelayPlusLessThanAMillisecond) {
  const FuseCase c = GetParam();
  NbdFuseMount mount;
  if (const std::string why = mount.Start(kDelayedMemory); !why.empty()) GTEST_SKIP() << why;
  const IotailRun run =
      RunIotail("--filename=" + mount.path().string() + " --ioengine=" + c.engine +
                    " --iodepth=" + std::to_string(c.iodepth) +
                    " --rw=randread --bs=4k --direct=1 --runtime=2s --time_based" + kOutput,
                dir_);
  if (EngineUnavailable(run)) GTEST_SKIP() << c.engine << " not available: " << run.result.err;
  ASSERT_EQ(run.result.status, 0) << run.result.err << run.result.out;
  ASSERT_FALSE(run.summary.is_null()) << run.result.out;
  const json& read = run.summary.at("jobs").at(0).at("read");
  const json& clat = read.at("clat_ns");
  EXPECT_GT(clat.at("N").get<int64_t>(), 0);
  ExpectNoLatencyBelowTheDelay(read);
  EXPECT_LE(Pct(clat, "50.000000"), kMaxP50Ns);
  EXPECT_EQ(run.summary.at("iotail_aggregate").at("read").at("clat_ns").at("N"), clat.at("N"));

  if (std::string(c.engine) == "psync" && c.iodepth > 1) {
    // A synchronous engine runs at depth 1 and says so, in one line.
    const std::string& err = run.result.err;
    const size_t at = err.find("iodepth");
    ASSERT_NE(at, std::string::npos) << err;
    EXPECT_EQ(err.find("iodepth", err.find('\n', at)), std::string::npos) << err;
  }
}

INSTANTIATE_TEST_SUITE_P(Engines, RunOracleFuseTest,
                         ::testing::Values(FuseCase{"io_uring", 1}, FuseCase{"libaio", 1},
                                           FuseCase{"psync", 1}, FuseCase{"psync", 4}),
                         [](const ::testing::TestParamInfo<FuseCase>& info) {
                           return std::string(info.param.engine) + "Qd" +
                                  std::to_string(info.param.iodepth);
                         });

// Once per data path (--nbd_path=libnbd and direct).
class RunOracleNbdTest : public RunOracleTest, public ::testing::WithParamInterface<const char*> {
 protected:
  std::string Path() const { return std::string(" --nbd_path=") + GetParam(); }
  void SetUp() override {
    RunOracleTest::SetUp();
    if (const std::string why = NbdServer::Unavailable(); !why.empty()) GTEST_SKIP() << why;
  }

  // 4 KiB random reads for 2 s on the nbd engine, plus ARGS.
  IotailRun RunNbd(const NbdServer& server, const std::string& args) {
    return RunIotail("--ioengine=nbd --uri=" + Quote(server.uri()) + Path() +
                         " --rw=randread --bs=4k --runtime=2s --time_based " + args + kOutput,
                     dir_);
  }

  // RunNbd against a fresh server whose every read takes kDelayNs; the job's "read" object, or
  // null after recording why the run gave none.
  json DelayedReads(const std::string& args) {
    NbdServer server;
    if (const std::string why = server.Start(kDelayedMemory); !why.empty()) {
      ADD_FAILURE() << "nbdkit: " << why;
      return nullptr;
    }
    const IotailRun run = RunNbd(server, args);
    if (run.result.status != 0 || run.summary.is_null()) {
      ADD_FAILURE() << "exit " << run.result.status << ": " << run.result.err << run.result.out;
      return nullptr;
    }
    return run.summary.at("jobs").at(0).at("read");
  }
};

TEST_P(RunOracleNbdTest, Qd1ClatIsTheServersDelay) {
  const json read = DelayedReads("--iodepth=1");
  ASSERT_FALSE(read.is_null());
  const json& clat = read.at("clat_ns");
  EXPECT_GT(clat.at("N").get<int64_t>(), 0);
  ExpectNoLatencyBelowTheDelay(read);
  EXPECT_LE(Pct(clat, "50.000000"), kMaxP50Ns);
}

TEST_P(RunOracleNbdTest, Qd8ReadsOverlapSoIopsIsEightOverTheDelay) {
  const json read = DelayedReads("--iodepth=8");
  ASSERT_FALSE(read.is_null());
  const json& clat = read.at("clat_ns");
  ASSERT_GT(clat.at("N").get<int64_t>(), 0);
  EXPECT_GE(Pct(clat, "1.000000"), kDelayNs);
  const int64_t p50 = Pct(clat, "50.000000");
  EXPECT_LE(p50, kMaxP50Ns);
  EXPECT_GE(read.at("iops").get<double>(), 0.85 * 8 / (static_cast<double>(p50) * 1e-9));
}

TEST_P(RunOracleNbdTest, RateTheTargetKeepsUpWithHasOlatCloseToClat) {
  const json read = DelayedReads("--rate_iops=100 --iodepth=8");
  ASSERT_FALSE(read.is_null());
  ASSERT_GT(read.at("clat_ns").at("N").get<int64_t>(), 0);
  const int64_t clat50 = Pct(read.at("clat_ns"), "50.000000");
  const int64_t lat50 = Pct(read.at("iotail_olat_ns"), "50.000000");
  EXPECT_GE(clat50, kDelayNs);
  EXPECT_GE(lat50, clat50);
  EXPECT_LE(lat50 - clat50, std::max<int64_t>(clat50 / 10, 500'000)) << lat50 << " " << clat50;
}

TEST_P(RunOracleNbdTest, RateTheTargetCannotKeepUpWithCountsTheWaitInOlat) {
  // 400 reads/s asked, 200/s possible at 5 ms each and depth 1: each read starts later than
  // scheduled by a lag that grows through the run, and lat counts it.
  const fs::path prefix = dir_ / "h";
  const json read = DelayedReads(
      "--rate_iops=400 --iodepth=1 --log_hist_msec=500 "
      "--write_hist_log=" +
      prefix.string());
  ASSERT_FALSE(read.is_null());
  ASSERT_GT(read.at("clat_ns").at("N").get<int64_t>(), 0);
  const int64_t clat50 = Pct(read.at("clat_ns"), "50.000000");
  EXPECT_LE(clat50, kMaxP50Ns);
  EXPECT_GT(Pct(read.at("iotail_olat_ns"), "50.000000"), 2 * clat50);
  // About 1 s of lag by the end of a 2 s run, in olat; fio's lat (start to completion) has none.
  EXPECT_GT(read.at("iotail_olat_ns").at("max").get<int64_t>(), 500'000'000);
  EXPECT_LT(read.at("lat_ns").at("mean").get<double>(), 2.0 * clat50);

  // Interval by interval, the largest lat grows.
  const std::vector<size_t> top = MaxBucketPerReadLine(prefix.string() + "_lat_hist.1.log");
  ASSERT_GE(top.size(), 3u);
  for (size_t i = 1; i < top.size(); ++i) EXPECT_GE(top[i], top[i - 1]) << "interval " << i;
  EXPECT_GT(top.back(), top.front());
}

TEST_P(RunOracleNbdTest, InjectedEioIsCountedAtTheInjectedRate) {
  NbdServer server;
  ASSERT_EQ(server.Start("--log=null --filter=error memory 64M error-pread-rate=5% error=EIO"), "");
  const IotailRun run = RunNbd(server, "--iodepth=8 --continue_on_error=all");
  EXPECT_EQ(run.result.status, 1) << run.result.err;
  ASSERT_FALSE(run.summary.is_null()) << run.result.out;
  const json& job = run.summary.at("jobs").at(0);
  const int64_t ok = job.at("read").at("clat_ns").at("N").get<int64_t>();
  const json& errors = job.at("iotail_errors");
  ASSERT_TRUE(errors.at("by_errno").contains("EIO")) << errors.dump();
  const int64_t eio = errors.at("by_errno").at("EIO").get<int64_t>();
  EXPECT_EQ(errors.at("total").get<int64_t>(), eio);
  ASSERT_GT(ok + eio, 1000);
  const double rate = static_cast<double>(eio) / static_cast<double>(ok + eio);
  EXPECT_GE(rate, 0.03) << eio << " EIO of " << ok + eio;
  EXPECT_LE(rate, 0.07) << eio << " EIO of " << ok + eio;
}

TEST_F(RunOracleTest, RefusedConnectionIsAnErrorNamingTheUri) {
  const std::string uri = "nbd+unix:///?socket=/nonexistent/sock";
  const IotailRun run = RunIotail("--ioengine=nbd --uri=" + Quote(uri) +
                                      " --rw=randread --bs=4k --runtime=2s --time_based" + kOutput,
                                  dir_);
  EXPECT_TRUE(run.result.status == 1 || run.result.status == 2)
      << run.result.status << ": " << run.result.err;
  EXPECT_NE(run.result.err.find(uri), std::string::npos) << run.result.err;
  EXPECT_LT(run.seconds, 10.0);
}

TEST_P(RunOracleNbdTest, ServerDyingMidRunEndsTheRunWithItsLogs) {
  NbdServer server;
  ASSERT_EQ(server.Start("--filter=delay memory 64M rdelay=1ms"), "");
  const fs::path prefix = dir_ / "h";
  const auto start = Clock::now();
  auto pending = std::async(std::launch::async, [&] {
    return RunIotail("--ioengine=nbd --uri=" + Quote(server.uri()) + Path() +
                         " --rw=randread --bs=4k --iodepth=8 --runtime=10s --time_based "
                         "--write_hist_log=" +
                         prefix.string() + kOutput,
                     dir_);
  });
  std::this_thread::sleep_for(std::chrono::seconds(1));
  server.Kill();
  const auto killed = Clock::now();
  const IotailRun run = pending.get();
  const double after_kill = std::chrono::duration<double>(Clock::now() - killed).count();
  const double total = std::chrono::duration<double>(Clock::now() - start).count();
  EXPECT_LT(after_kill, 2.0);
  EXPECT_LT(total, 5.0);
  EXPECT_EQ(run.result.status, 1) << run.result.err;
  const std::string& err = run.result.err;
  EXPECT_NE(err.find(server.socket().string()), std::string::npos) << err;
  EXPECT_TRUE(err.find("lost") != std::string::npos || err.find("ENOTCONN") != std::string::npos)
      << err;
  const fs::path log = prefix.string() + "_clat_hist.1.log";
  ASSERT_TRUE(fs::exists(log));
  EXPECT_GT(fs::file_size(log), 0u);
}

INSTANTIATE_TEST_SUITE_P(Paths, RunOracleNbdTest, ::testing::Values("libnbd", "direct"));

}  // namespace run_oracle_test
