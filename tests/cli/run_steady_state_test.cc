// fio's steadystate (ss, ss_dur, ss_ramp, ss_interval) in `iotail run`, against fio 3.33 on the
// same jobs: a job whose rate is steady ends once the last ss_dur of per-second measurements meets
// the criterion, with fio's JSON "steadystate" section and text line; one that is not steady runs
// its time; with group_reporting the group is measured and ends as one. Rate-limited null-engine
// jobs give rates known in advance (1,000 IOPS of 4 KiB).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_test_util.h"
#include "fio_semantics_fixture.h"

namespace run_steady_state_test {

using iotail::testing::FioSemanticsTest;
using iotail::testing::HaveFio;
using json = nlohmann::json;

// The JSON summary's jobs.
std::vector<json> JsonJobs(const std::string& out) {
  const size_t brace = out.find('{');
  if (brace == std::string::npos) return {};
  const json j = json::parse(out.substr(brace), nullptr, false);
  if (j.is_discarded()) return {};
  return j["jobs"].get<std::vector<json>>();
}

class SteadyStateTest : public FioSemanticsTest {
 protected:
  // Runs iotail, then fio (where installed), on ARGS; check(jobs) for each.
  template <class Check>
  void ExpectBothJson(const std::string& args, Check check) {
    for (const std::string tool : {"iotail", "fio"}) {
      if (tool == "fio" && !HaveFio()) GTEST_SKIP() << "fio not installed (iotail checked alone)";
      SCOPED_TRACE(tool);
      const auto r = Run(tool, args);
      ASSERT_EQ(r.status, 0) << r.err;
      const std::vector<json> jobs = JsonJobs(r.out);
      ASSERT_FALSE(jobs.empty()) << r.out;
      check(jobs);
    }
  }
};

constexpr const char* kSteady =
    "--name=steady --ioengine=null --rw=read --bs=4k --size=1g --time_based --runtime=20 "
    "--rate_iops=1000 ";

TEST_F(SteadyStateTest, ASteadyJobEndsOnceTheWindowMeetsTheCriterion) {
  ExpectBothJson(std::string(kSteady) + "--ss=iops:5% --ss_dur=3", [](const std::vector<json>& j) {
    ASSERT_EQ(j.size(), 1u);
    const json& ss = j[0]["steadystate"];
    ASSERT_TRUE(ss.is_object()) << j[0].dump();
    EXPECT_EQ(ss["ss"], "iops:5.000000%");
    EXPECT_EQ(ss["duration"], 3);
    EXPECT_EQ(ss["attained"], 1);
    ASSERT_EQ(ss["data"]["iops"].size(), 3u);
    for (const json& v : ss["data"]["iops"]) {
      EXPECT_NEAR(v.get<double>(), 1000, 50);
    }
    EXPECT_NEAR(ss["data"]["iops_mean"].get<double>(), 1000, 30);
    EXPECT_NEAR(ss["data"]["bw_mean"].get<double>(), 4096000, 150000);
    // Three measurements, one a second: about 3 s of the 20 s.
    const uint64_t runtime = j[0]["job_runtime"].get<uint64_t>();
    EXPECT_GE(runtime, 2500u);
    EXPECT_LE(runtime, 4500u);
  });
}

TEST_F(SteadyStateTest, RampDelaysTheMeasurements) {
  ExpectBothJson(std::string(kSteady) + "--ss=bw_slope:5% --ss_dur=2 --ss_ramp=2",
                 [](const std::vector<json>& j) {
                   const json& ss = j[0]["steadystate"];
                   EXPECT_EQ(ss["attained"], 1);
                   EXPECT_EQ(ss["ss"], "bw_slope:5.000000%");
                   const uint64_t runtime = j[0]["job_runtime"].get<uint64_t>();
                   EXPECT_GE(runtime, 3500u);  // 2 s of ramp, then two seconds measured
                   EXPECT_LE(runtime, 5500u);
                 });
}

TEST_F(SteadyStateTest, AJobThatIsNotSteadyRunsItsTime) {
  // A window longer than the run: never full, never judged.
  ExpectBothJson(
      "--name=short --ioengine=null --rw=read --bs=4k --size=1g --time_based --runtime=2 "
      "--rate_iops=1000 --ss=iops:50% --ss_dur=5",
      [](const std::vector<json>& j) {
        const json& ss = j[0]["steadystate"];
        EXPECT_EQ(ss["attained"], 0);
        EXPECT_EQ(ss["data"]["iops"].size(), 5u);
        EXPECT_GE(j[0]["job_runtime"].get<uint64_t>(), 1900u);
      });
}

TEST_F(SteadyStateTest, GroupReportingMeasuresAndEndsTheGroup) {
  ExpectBothJson(std::string(kSteady) + "--numjobs=2 --group_reporting --ss=iops:5% --ss_dur=2",
                 [](const std::vector<json>& j) {
                   ASSERT_EQ(j.size(), 1u);
                   const json& ss = j[0]["steadystate"];
                   EXPECT_EQ(ss["attained"], 1);
                   // The group's rate: both clones, 1,000 IOPS each.
                   EXPECT_NEAR(ss["data"]["iops_mean"].get<double>(), 2000, 60);
                   // Both clones' runtimes summed (fio's job_runtime), each ended by the
                   // criterion after about 2 s, long before its 20 s.
                   EXPECT_LE(j[0]["job_runtime"].get<uint64_t>(), 2 * 4000u);
                 });
}

TEST_F(SteadyStateTest, TextLineAndBadValues) {
  const auto r =
      Run("iotail", std::string(kSteady) + "--ss=iops:5% --ss_dur=2 --output-format=normal");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("  steadystate  : attained=yes, bw="), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(", iops mean dev="), std::string::npos) << r.out;
  for (const char* bad : {"--ss=iops", "--ss=speed:1%", "--ss_dur=2 --ss_interval=500ms",
                          "--ss_dur=1 --ss_interval=2"}) {
    SCOPED_TRACE(bad);
    const auto b = Run("iotail", std::string(kSteady) + bad);
    EXPECT_EQ(b.status, 2) << b.err;
    EXPECT_NE(b.err.find("--ss"), std::string::npos) << b.err;
  }
}

}  // namespace run_steady_state_test
