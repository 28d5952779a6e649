// iotail-mpi sweep under a real mpirun: the capacity of every rank together at an SLA, each step's
// rate the cluster's (split over the ranks), judged on the cluster's summed histograms; the
// cluster's histogram log per step; no rate meeting the SLA is every rank's exit status 3.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "mpi_fixture.h"
#include "nbd_fixture.h"

namespace mpi_sweep_test {

namespace fs = std::filesystem;
using iotail::testing::NbdServer;
using iotail::testing::mpi::MpiRunTest;
using iotail::testing::mpi::ReadLog;
using nlohmann::json;
using MpiSweepTest = MpiRunTest;

// Two ranks against one server of 4 threads of 2 ms reads. nbdkit's threads are per connection
// and each rank has its own, so the server serves at most 2,000 reads a second to each rank and
// 4,000 to both (measured: iotail run --numjobs=2 over two connections, 3,680 IOPS; one, 1,740).
// The cluster's capacity at p50 <= 5 ms is the two together: more than one connection can serve
// (2,000), at most both (4,000); measured 3,230 to 3,515 here, idle or beside two busy loops. The
// median is the gate because a p99 of 10 ms also judges the machine's scheduling: CI's loaded run
// once put it at 2,100, its p99 past 10 ms at rates where its p50 stayed at 2.5 ms.
TEST_F(MpiSweepTest, ClusterCapacityAgainstFourThreadsOfTwoMillisecondReads) {
  if (const std::string why = NbdServer::Unavailable(); !why.empty()) GTEST_SKIP() << why;
  NbdServer server;
  ASSERT_EQ(server.Start("-t 4 --filter=delay memory 64M rdelay=2ms"), "");
  const auto start = std::chrono::steady_clock::now();
  const auto r = Mpi(2,
                     "--ioengine=nbd --uri='" + server.uri() +
                         "' --rw=randread --bs=4k --iodepth=16 --sla 'p50<=5ms' "
                         "--step_time=1s --ramp_time=200ms --start_rate=500 --resolution=10% "
                         "--output-format=json",
                     "sweep");
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  const json doc = json::parse(r.out.substr(r.out.find('{')));  // rank 0's report only
  EXPECT_EQ(r.out.find('{', r.out.rfind('}')), std::string::npos) << r.out;
  const double capacity = doc["capacity_iops"];
  EXPECT_GT(capacity, 2400) << r.out;
  EXPECT_LE(capacity, 2 * 2000) << r.out;
  EXPECT_TRUE(doc["confirmed"].get<bool>());
  // Each step's rate is the cluster's: what the ranks achieved together, near it when it passed.
  for (const json& step : doc["steps"]) {
    if (step["verdict"].get<std::string>() != "pass") continue;
    EXPECT_NEAR(step["achieved_iops"].get<double>(), step["rate"].get<double>(),
                0.1 * step["rate"].get<double>())
        << step;
  }
  EXPECT_LT(seconds, 150);
}

// The cluster's histogram log per step (PREFIX.stepN), summing both ranks: at the step's rate
// over the step's time.
TEST_F(MpiSweepTest, EachStepWritesTheClustersHistogramLog) {
  const auto r = Mpi(2,
                     "--ioengine=null --filename=t --size=1m --rw=randread --sla 'p99<=1s' "
                     "--start_rate=2000 --max_rate=2000 --step_time=1s --ramp_time=0 "
                     "--write_hist_log=S --log_hist_msec=250",
                     "sweep");
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("capacity: 2000 IOPS"), std::string::npos) << r.out;
  ASSERT_TRUE(fs::exists(dir_ / "S.step1_clat_hist.1.log")) << r.err;
  uint64_t ios = 0;
  for (const auto& line : ReadLog(dir_ / "S.step1_clat_hist.1.log")) {
    for (uint64_t c : line.counts) ios += c;
  }
  EXPECT_NEAR(static_cast<double>(ios), 2000.0, 300.0);  // both ranks: 1,000 a second each
  EXPECT_FALSE(fs::exists(dir_ / "S.step1.rank0_clat_hist.1.log"));  // no --log_per_rank
}

// An SLA no rate can meet: rank 0 says so, and every rank exits 3.
TEST_F(MpiSweepTest, NoRateMeetsTheSlaOnAnyRank) {
  const auto r = Mpi(2,
                     "--ioengine=null --filename=t --size=1m --rw=randread --sla 'p50<=1ns' "
                     "--start_rate=1000 --min_rate=500 --step_time=500ms --ramp_time=0 "
                     "--retries=0",
                     "sweep");
  EXPECT_EQ(r.status, 3) << r.out << r.err;
  EXPECT_NE(r.err.find("no rate meets the SLA"), std::string::npos) << r.err;
}

// Sweep's options are refused as iotail sweep refuses them, on every rank alike.
TEST_F(MpiSweepTest, ASweepWithoutAnSlaIsRefused) {
  const auto r = Mpi(2, "--ioengine=null --filename=t --size=1m --rw=randread", "sweep");
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("--sla: the sweep needs at least one target"), std::string::npos) << r.err;
}

// Ctrl-C on every rank during a step (as a terminal's reaches them) ends the sweep as it ends
// iotail sweep: the steps finished so far reported, the highest rate that passed, status 130.
TEST_F(MpiSweepTest, CtrlCOnTheRanksEndsTheSweepWithItsFinishedSteps) {
  const std::string marker = "--name=ctrlc" + std::to_string(::getpid());
  const std::string script =
      "cd '" + dir_.string() + "' && (exec timeout -s KILL 120 " + mpirun_ +
      " --allow-run-as-root --oversubscribe --bind-to none -np 2 " + IOTAIL_MPI_BINARY +
      " sweep --ioengine=null --filename=t --size=1m --rw=randread --sla 'p99<=1s' "
      "--start_rate=1000 --ramp_time=0 --step_time=3s " +
      marker +
      " > out 2> err) & job=$!; "
      "sleep 5; for p in $(pgrep -f -- '" +
      std::string(IOTAIL_MPI_BINARY) + " sweep'); do grep -q -- '" + marker +
      "' /proc/$p/cmdline && [ \"$(cat /proc/$p/comm)\" = iotail-mpi ] && kill -INT $p; done; "
      "wait $job; echo \"rc=$?\"";
  const auto r = iotail::testing::RunShell(script, dir_);
  std::ifstream out(dir_ / "out");
  const std::string out_text((std::istreambuf_iterator<char>(out)), {});
  EXPECT_NE(r.out.find("rc=130"), std::string::npos) << r.out << out_text;
  // A step of 3 s passes first (stdout to a file is written at the end: the time, not the text, is
  // what the signal waits for).
  EXPECT_NE(out_text.find("stopped (SIGINT) after "), std::string::npos) << out_text;
  EXPECT_NE(out_text.find("the highest rate that passed so far is 1000 IOPS"), std::string::npos)
      << out_text;
}

}  // namespace mpi_sweep_test
