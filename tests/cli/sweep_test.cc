// End-to-end tests of `iotail sweep`: no rate meets an SLA no target can meet (exit 3, said so;
// on the null engine and on an nbdkit server of 2 ms reads), a capacity found against nbdkit with
// 4 threads and 2 ms reads (at most 2,000 IOPS: 4 / 2 ms), the JSON output, and bad options.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_test_util.h"
#include "nbd_fixture.h"

namespace sweep_test {

using iotail::testing::CommandResult;
using iotail::testing::NbdServer;
using nlohmann::json;

// Each sweep runs in a scratch directory of its own (its steps' files land there).
using SweepTest = iotail::testing::ScratchDirTest;

TEST_F(SweepTest, NoRateMeetsAnImpossibleSlaOnTheNullEngine) {
  const CommandResult r = Iotail(
      "sweep --ioengine=null --size=1g --rw=randread --iodepth=4 --sla 'p99<=1ns' "
      "--step_time=300ms --ramp_time=100ms --start_rate=1000 --min_rate=100");
  EXPECT_EQ(r.status, 3) << r.out << r.err;
  EXPECT_NE(r.err.find("no rate meets the SLA"), std::string::npos) << r.err;
  // 1000, then 250: both fail, 62.5 is under --min_rate.
  EXPECT_NE(r.out.find("probe"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("p99<=1ns"), std::string::npos) << r.out;
}

TEST_F(SweepTest, JsonToOutputAndHistogramLogsPerStep) {
  const std::string prefix = (dir_ / "h").string(), output = (dir_ / "sweep.json").string();
  const CommandResult r = Iotail(
      "sweep --ioengine=null --size=1g --rw=randread --sla 'p99<=1ns' --step_time=300ms "
      "--ramp_time=100ms --start_rate=1000 --min_rate=500 --retries=0 --output-format=json "
      "--write_hist_log=" +
      prefix + " --output=" + output);
  EXPECT_EQ(r.status, 3) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  std::ifstream in(output);
  const json doc = json::parse(in);
  ASSERT_EQ(doc["steps"].size(), 1u);  // 1000 fails, no retry, 250 is under --min_rate
  EXPECT_EQ(doc["steps"][0]["verdict"], "fail");
  EXPECT_TRUE(doc["capacity_iops"].is_null());
  EXPECT_GT(doc["steps"][0]["ios"].get<uint64_t>(), 200u);
  EXPECT_TRUE(std::filesystem::exists(prefix + ".step1_clat_hist.1.log"));
}

// Stopped by SIGINT in the middle of its search, a sweep keeps every finished step, in the JSON
// to --output too, with the highest rate that passed, and exits 130 (issue 38). One signal:
// timeout without --foreground signals its process group as well, and a second signal kills, as
// it does `iotail run`.
TEST_F(SweepTest, AStoppedSweepReportsEveryFinishedStep) {
  const std::string output = (dir_ / "sweep.json").string();
  const CommandResult r = iotail::testing::RunShell(
      "cd '" + dir_.string() + "' && timeout --foreground --preserve-status -s INT 3 " +
          IOTAIL_BINARY +
          " sweep --ioengine=null --size=1g --rw=randread --sla 'p99<=1s' --step_time=500ms "
          "--ramp_time=100ms --start_rate=1000 --output-format=json --output=" +
          output,
      dir_);
  EXPECT_EQ(r.status, 130) << r.err;
  std::ifstream in(output);
  ASSERT_TRUE(in) << r.err;
  const json doc = json::parse(in);
  ASSERT_GE(doc["steps"].size(), 2u) << doc;
  EXPECT_EQ(doc["steps"][0]["verdict"], "pass");
  EXPECT_TRUE(doc["capacity_iops"].is_null());
  EXPECT_GE(doc["highest_pass_iops"].get<double>(), 1000.0);
  EXPECT_NE(doc["outcome"].get<std::string>().find("stopped (SIGINT)"), std::string::npos);
}

// SIGINT while the first step lays out its file: 130 (not 1), the outcome said.
TEST_F(SweepTest, SigintDuringAStepsSetupExits130) {
  const CommandResult r = iotail::testing::RunShell(
      "cd '" + dir_.string() + "' && timeout --foreground --preserve-status -s INT 0.3 " +
          IOTAIL_BINARY +
          " sweep --filename=big --size=2g --rw=randread --sla 'p99<=1s' --step_time=1s",
      dir_);
  EXPECT_EQ(r.status, 130) << r.out << r.err;
  EXPECT_NE(r.out.find("stopped (SIGINT)"), std::string::npos) << r.out << r.err;
}

// Its own options are rows of the option table: in its --help, its man page and the completion.
TEST_F(SweepTest, ItsOptionsAreInItsHelpManPageAndCompletion) {
  const CommandResult help = Iotail("sweep --help");
  EXPECT_EQ(help.status, 0);
  for (const char* option :
       {"--step_time=TIME", "--resolution=PCT", "--start_rate=IOPS", "--retries=N"}) {
    EXPECT_NE(help.out.find(option), std::string::npos) << option << "\n" << help.out;
  }
  const CommandResult man = Iotail("sweep --help=man");
  EXPECT_NE(man.out.find("step_time"), std::string::npos);
  EXPECT_NE(man.out.find("iotail run: "), std::string::npos);  // and run's sections
  const CommandResult bash = Iotail("completion bash");
  EXPECT_NE(bash.out.find("--step_time"), std::string::npos);
  // A bad value names the option once.
  const CommandResult bad = Iotail("sweep --ioengine=null --sla 'p99<=1ms' --retries=x");
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("--retries: "), std::string::npos) << bad.err;
  EXPECT_EQ(bad.err.find("----"), std::string::npos) << bad.err;
  // 2^32 - 1 retries is refused, not wrapped to none (issue 38).
  const CommandResult wraps = Iotail("sweep --ioengine=null --sla 'p99<=1ms' --retries=4294967295");
  EXPECT_EQ(wraps.status, 2);
  EXPECT_NE(wraps.err.find("--retries: expected 0..100, got '4294967295'"), std::string::npos)
      << wraps.err;
}

TEST_F(SweepTest, BadOptionsAreRefused) {
  for (const char* args :
       {"--ioengine=null --size=1g --step_time=300ms", "--rw=randread --sla 'p99<=1ms'",
        "--ioengine=null --sla 'p99<=1ms' --resolution=0",
        "--ioengine=null --sla 'p99<=1ms' --start_rate=10 --min_rate=20",
        "--ioengine=null --sla 'p99<=1ms' --step_time=10ms", "--ioengine=null --sla 'p99<=1'"}) {
    const CommandResult r = Iotail(std::string("sweep ") + args);
    EXPECT_EQ(r.status, 2) << args << "\n" << r.err;
    EXPECT_NE(r.err.find("--"), std::string::npos) << r.err;
  }
  // A target on a direction the workload does not do is refused, naming it (issue 38): before,
  // a read-only sweep reported a confirmed capacity for a write target.
  const CommandResult r = Iotail("sweep --ioengine=null --rw=randread --sla 'write:p99<=1ms'");
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("--sla 'write:p99<=1ms': no job of the sweep does writes"),
            std::string::npos)
      << r.err;
}

class SweepNbdTest : public SweepTest {
 protected:
  void SetUp() override {
    if (const std::string why = NbdServer::Unavailable(); !why.empty()) GTEST_SKIP() << why;
    SweepTest::SetUp();
  }
};

TEST_F(SweepNbdTest, NoRateMeetsOneMillisecondAgainstTwoMillisecondReads) {
  NbdServer server;
  ASSERT_EQ(server.Start("-t 4 --filter=delay memory 64M rdelay=2ms"), "");
  const CommandResult r = Iotail("sweep --ioengine=nbd --uri='" + server.uri() +
                                 "' --rw=randread --bs=4k --iodepth=32 --sla 'p99<=1ms' "
                                 "--step_time=1s --ramp_time=200ms");
  EXPECT_EQ(r.status, 3) << r.out << r.err;
  EXPECT_NE(r.err.find("no rate meets the SLA"), std::string::npos) << r.err;
}

TEST_F(SweepNbdTest, CapacityAgainstFourThreadsOfTwoMillisecondReads) {
  NbdServer server;
  ASSERT_EQ(server.Start("-t 4 --filter=delay memory 64M rdelay=2ms"), "");
  const auto start = std::chrono::steady_clock::now();
  const CommandResult r = Iotail("sweep --ioengine=nbd --uri='" + server.uri() +
                                 "' --rw=randread --bs=4k --iodepth=32 --sla 'p99<=10ms' "
                                 "--step_time=1s --ramp_time=200ms --start_rate=400 "
                                 "--resolution=10% --output-format=json");
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  const json doc = json::parse(r.out);
  const double capacity = doc["capacity_iops"];
  // 4 threads of 2 ms serve at most 2,000 reads a second; the queue stays short well below that.
  // The probe (400, 800, 1,600, 3,200) passes 2,000 IOPS, so one step saturates.
  EXPECT_GE(capacity, 1000) << r.out;
  EXPECT_LE(capacity, 2100) << r.out;
  EXPECT_TRUE(doc["confirmed"].get<bool>());
  bool saturated = false;
  for (const json& step : doc["steps"]) saturated = saturated || step["saturated"].get<bool>();
  EXPECT_TRUE(saturated) << "the probe passes 2,000 IOPS: some step must saturate\n" << r.out;
  EXPECT_NE(doc["outcome"].get<std::string>().find("the target saturated"), std::string::npos)
      << doc["outcome"];
  EXPECT_LT(seconds, 60);
}

}  // namespace sweep_test
