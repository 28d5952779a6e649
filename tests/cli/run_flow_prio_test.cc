// How clones share the machine, in `iotail run` against fio 3.33 on the same jobs: flow control
// (flow, flow_id, flow_sleep: the jobs of one flow_id issue I/Os in proportion to their weights,
// fio's examples/flow.fio about 1:8; jobs of other flows are not held back, and a job whose
// partner has ended runs freely), and I/O priorities (prio, prioclass: each clone's thread calls
// ioprio_set as fio's does, seen with strace).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "cli_test_util.h"
#include "fio_semantics_fixture.h"

namespace run_flow_prio_test {

namespace fs = std::filesystem;
using iotail::testing::FioSemanticsTest;
using iotail::testing::HaveFio;
using iotail::testing::Job;

uint64_t Ios(const Job& j) { return j.reads + j.writes; }

TEST_F(FioSemanticsTest, FlowWeightsSetTheRatioOfIosAsFio) {
  // fio's examples/flow.fio on the null engine, 1 s.
  const std::string args =
      "--ioengine=null --size=1g --bs=8k --time_based --runtime=1 --flow_sleep=100 --iodepth=8 "
      "--name=job2 --rw=write --flow=1 --name=job1 --rw=randread --flow=8";
  ExpectBoth(args, 0, [](const std::vector<Job>& j, const auto& r) {
    ASSERT_EQ(j.size(), 2u) << r.out;
    ASSERT_GT(Ios(j[0]), 100u) << j[0];
    const double ratio = static_cast<double>(Ios(j[1])) / static_cast<double>(Ios(j[0]));
    EXPECT_GT(ratio, 7.0) << j[0] << " / " << j[1];
    EXPECT_LT(ratio, 9.0) << j[0] << " / " << j[1];
  });
}

TEST_F(FioSemanticsTest, FlowsApartAndEndedPartnersDoNotHoldBack) {
  // job `a` (weight 1) shares flow 1 with `b` (weight 1), which ends after 1,000 I/Os: then `a`
  // runs alone, unheld, to its size. `c` is in flow 2 alone.
  const std::string args =
      "--ioengine=null --bs=4k --rw=read --name=a --size=64m --flow=1 --flow_id=1 --name=b "
      "--size=4000k --flow=1 --flow_id=1 --name=c --size=16m --flow=5 --flow_id=2";
  // fio: a 16,384 reads, b 1,000, c 4,096 (each its size).
  if (!HaveFio()) GTEST_SKIP() << "fio not installed";
  ExpectSameCounts(args);
}

TEST_F(FioSemanticsTest, FlowIsRefusedWithARate) {
  const auto r = Run("iotail", "--name=a --ioengine=null --size=1m --flow=2 --rate_iops=100");
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("--flow"), std::string::npos) << r.err;
  EXPECT_EQ(Run("iotail", "--name=a --ioengine=null --size=1m --flow=1001").status, 2);
}

// The ioprio_set calls a tool makes (strace -f), one per line without the thread id.
std::vector<std::string> IoprioCalls(const std::string& log) {
  std::vector<std::string> calls;
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);) {
    const size_t at = line.find("ioprio_set(");
    if (at != std::string::npos) calls.push_back(line.substr(at));
  }
  return calls;
}

TEST_F(FioSemanticsTest, PrioAndPrioclassSetEachClonesThreadAsFio) {
  if (iotail::testing::Capture("strace -o /dev/null true 2>&1").status != 0) {
    GTEST_SKIP() << "strace cannot trace here";
  }
  const std::string jobs =
      "--ioengine=null --size=1m --thread --name=a --prio=3 --name=b --prioclass=3 --numjobs=2 "
      "--name=c --prioclass=1 --prio=0";
  std::vector<std::string> theirs;
  for (const std::string tool : {"iotail", "fio"}) {
    if (tool == "fio" && !HaveFio()) GTEST_SKIP() << "fio not installed (iotail checked alone)";
    // One log per thread (-ff: LOG.TID), so that no call is split across threads' lines.
    const std::string log = (dir_ / (tool + ".strace")).string();
    const auto r = Run(tool, jobs, "strace -ff -e trace=ioprio_set -o " + log + " ");
    ASSERT_EQ(r.status, 0) << r.err;
    std::string all;
    for (const auto& e : fs::directory_iterator(dir_)) {
      if (e.path().filename().string().starts_with(tool + ".strace.")) {
        all += iotail::testing::ReadFile(e.path());
      }
    }
    std::vector<std::string> calls = IoprioCalls(all);
    std::sort(calls.begin(), calls.end());
    if (tool == "iotail") {
      EXPECT_EQ(
          calls,
          (std::vector<std::string>{
              "ioprio_set(IOPRIO_WHO_PROCESS, 0, IOPRIO_PRIO_VALUE(IOPRIO_CLASS_BE, 3)) = 0",
              "ioprio_set(IOPRIO_WHO_PROCESS, 0, IOPRIO_PRIO_VALUE(IOPRIO_CLASS_IDLE, 0)) = 0",
              "ioprio_set(IOPRIO_WHO_PROCESS, 0, IOPRIO_PRIO_VALUE(IOPRIO_CLASS_IDLE, 0)) = 0",
              "ioprio_set(IOPRIO_WHO_PROCESS, 0, IOPRIO_PRIO_VALUE(IOPRIO_CLASS_RT, 0)) = 0"}));
      theirs = calls;
    } else {
      EXPECT_EQ(calls, theirs);
    }
  }
}

}  // namespace run_flow_prio_test
