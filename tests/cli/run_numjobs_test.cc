// `iotail run` with many workers: setup and teardown must not grow by a kernel wait per worker.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <string>

#include "cli_test_util.h"

namespace run_numjobs_test {

namespace fs = std::filesystem;

// Each libaio probe or context teardown (io_destroy) waits for an RCU grace period (~30 ms). A
// probe per worker and a serial teardown made 200 jobs take over 10 s for a 200 ms run.
TEST(RunNumjobsTest, ManyLibaioJobsStartAndStopPromptly) {
  const fs::path dir = iotail::testing::MakeScratchDir("iotail_numjobs");
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = iotail::testing::RunIotail(
      "run --ioengine=libaio --filename " + (dir / "target").string() +
          " --size=1m --numjobs=200 --runtime=200ms --time_based --live_format=none",
      dir);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  fs::remove_all(dir);
  if (r.status == 2 && r.err.find("not available") != std::string::npos) {
    GTEST_SKIP() << "libaio not available: " << r.err;
  }
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_LT(seconds, 5.0) << "200 libaio jobs took " << seconds << " s";
}

}  // namespace run_numjobs_test
