// fio's latency target mode (latency_target, latency_window, latency_percentile, latency_run),
// iotail against fio 3.33 on the same jobs:
// - on a target of known latency, an nbdkit server with one thread (requests served one at a time)
//   and the delay filter (each read 20 ms), so depth d costs about d x 20 ms: with a 50 ms target
//   both tools find depth 2 and report only the final window at it (the JSON's latency_* fields,
//   the text's "latency :" line, a job runtime of about one window, the depths it ran at);
// - on the null engine with a target nothing misses: the search climbs to iodepth and ends there;
// - with latency_percentile=100 (the default), one I/O over the target at depth 1 ends the job
//   with ETIMEDOUT, as fio's "max latency exceeded";
// - latency_run keeps the job going for its whole runtime;
// - bad values and the combination with a rate are refused naming the option.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "cli_test_util.h"
#include "fio_semantics_fixture.h"
#include "nbd_fixture.h"

namespace iotail::testing {
namespace run_latency_target_test {

using nlohmann::json;

json FirstJob(const std::string& out) {
  const size_t brace = out.find('{');
  if (brace == std::string::npos) return json();
  const json j = json::parse(out.substr(brace), nullptr, false);
  if (j.is_discarded() || !j.contains("jobs") || j["jobs"].empty()) return json();
  return j["jobs"][0];
}

class RunLatencyTargetTest : public FioSemanticsTest {};

TEST_F(RunLatencyTargetTest, FindsTheDepthThatMeetsTheTargetOnAServerOfKnownLatency) {
  if (const std::string why = NbdServer::Unavailable(); !why.empty()) GTEST_SKIP() << why;
  NbdServer server;
  // One server thread (the later -t wins): requests wait for each other, 20 ms each.
  ASSERT_EQ(server.Start("-t 1 --filter=delay memory 64M rdelay=20ms"), "");
  const std::string args = "--name=lt --ioengine=nbd '--uri=" + server.uri() +
                           "' --rw=randread --bs=4k --size=16m --iodepth=16 --latency_target=50ms "
                           "--latency_window=400ms --latency_percentile=90 --time_based "
                           "--runtime=20";
  for (const std::string tool : {"iotail", "fio"}) {
    if (tool == "fio" && !HaveFio()) GTEST_SKIP() << "fio not installed (iotail checked alone)";
    SCOPED_TRACE(tool);
    const CommandResult r = Run(tool, args);
    ASSERT_EQ(r.status, 0) << r.err;
    const json job = FirstJob(r.out);
    ASSERT_TRUE(job.is_object()) << r.out;
    EXPECT_EQ(job["latency_depth"], 2);
    EXPECT_EQ(job["latency_target"], 50'000'000);  // ns
    EXPECT_EQ(job["latency_window"], 400'000);     // us
    EXPECT_DOUBLE_EQ(job["latency_percentile"].get<double>(), 90.0);
    EXPECT_EQ(job["error"], 0);
    // Only the final window at depth 2 is reported: about 400 ms and 40 reads of about 40 ms.
    EXPECT_GE(job["job_runtime"].get<int>(), 380);
    EXPECT_LT(job["job_runtime"].get<int>(), 1500);
    const json& read = job["read"];
    EXPECT_GE(read["total_ios"].get<int>(), 12);
    EXPECT_LE(read["total_ios"].get<int>(), 60);
    EXPECT_GE(read["lat_ns"]["mean"].get<double>(), 20e6);
    EXPECT_GT(job["iodepth_level"]["2"].get<double>(), 80.0);  // the depth it ran at
  }
}

TEST_F(RunLatencyTargetTest, TheTextOutputNamesTheTargetWindowPercentileAndDepth) {
  const CommandResult r =
      RunShell(std::string(IOTAIL_BINARY) +
                   " run --live_format=none --name=t --ioengine=null --size=64m --rw=randread "
                   "--iodepth=4 --latency_target=1s --latency_window=50ms "
                   "--latency_percentile=99.5 --time_based --runtime=5",
               dir_);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("     latency   : target=1000000000, window=50000, percentile=99.50%, "
                       "depth=4\n"),
            std::string::npos)
      << r.out;
}

TEST_F(RunLatencyTargetTest, ATargetNothingMissesClimbsToIodepthAndEndsAfterOneWindowThere) {
  // 1, 2, 4, 8, then the final window at 8: about 0.5 s of a 10 s runtime, as fio.
  ExpectBoth(
      "--name=n --ioengine=null --size=64m --rw=randread --iodepth=8 --latency_target=1s "
      "--latency_window=100ms --time_based --runtime=10",
      0, [](const std::vector<Job>& jobs, const CommandResult& r) {
        ASSERT_EQ(jobs.size(), 1u);
        const json job = FirstJob(r.out);
        EXPECT_EQ(job["latency_depth"], 8);
        EXPECT_GE(jobs[0].runtime_ms, 95u);
        EXPECT_LT(jobs[0].runtime_ms, 1000u);  // the final window only
      });
}

TEST_F(RunLatencyTargetTest, AnIoOverTheTargetAtDepthOneEndsTheJobWithEtimedout) {
  if (const std::string why = NbdServer::Unavailable(); !why.empty()) GTEST_SKIP() << why;
  NbdServer server;
  ASSERT_EQ(server.Start("--filter=delay memory 64M rdelay=10ms"), "");
  ExpectBoth("--name=slow --ioengine=nbd '--uri=" + server.uri() +
                 "' --rw=randread --bs=4k --size=16m --iodepth=4 --latency_target=2ms "
                 "--time_based --runtime=5",
             1, [](const std::vector<Job>& jobs, const CommandResult&) {
               ASSERT_EQ(jobs.size(), 1u);
               EXPECT_EQ(jobs[0].error, 110);  // ETIMEDOUT
               EXPECT_LE(jobs[0].reads, 4u);   // at the first read's completion
               EXPECT_LT(jobs[0].runtime_ms, 1000u);
             });
}

TEST_F(RunLatencyTargetTest, LatencyRunKeepsAdjustingForTheWholeRuntime) {
  ExpectBoth(
      "--name=n --ioengine=null --size=64m --rw=randread --iodepth=8 --latency_target=1s "
      "--latency_window=100ms --latency_run=1 --time_based --runtime=1",
      0, [](const std::vector<Job>& jobs, const CommandResult& r) {
        ASSERT_EQ(jobs.size(), 1u);
        EXPECT_GE(jobs[0].runtime_ms, 950u);  // not cut short by the search
        EXPECT_EQ(FirstJob(r.out)["latency_depth"], 8);
      });
}

TEST_F(RunLatencyTargetTest, BadValuesAndARateAreRefusedNamingTheOption) {
  const std::string base = " run --parse-only --name=x --ioengine=null --size=1m ";
  for (const auto& [args, option] :
       {std::pair<std::string, std::string>{"--latency_percentile=101", "--latency_percentile"},
        {"--latency_percentile=abc", "--latency_percentile"},
        {"--latency_target=fast", "--latency_target"},
        {"--latency_target=1ms --rate_iops=100", "--latency_target"}}) {
    SCOPED_TRACE(args);
    const CommandResult r = RunShell(std::string(IOTAIL_BINARY) + base + args, dir_);
    EXPECT_EQ(r.status, 2) << r.out;
    EXPECT_NE(r.err.find(option), std::string::npos) << r.err;
  }
}

}  // namespace run_latency_target_test
}  // namespace iotail::testing
