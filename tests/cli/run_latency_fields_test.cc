// What `iotail run` reports of each I/O's life, as fio names it: slat (the submission call,
// asynchronous engines only), clat (issue to completion), lat = slat + clat, and each job's CPU;
// and the batching options that trade accuracy for system calls.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_test_util.h"

namespace run_latency_fields_test {

namespace fs = std::filesystem;
using nlohmann::json;

class RunLatencyFieldsTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = iotail::testing::MakeScratchDir("iotail_latfields"); }
  void TearDown() override { fs::remove_all(dir_); }

  // Runs a short job on a file in the scratch dir; returns the JSON summary (null on failure).
  json Run(const std::string& args, iotail::testing::CommandResult* result = nullptr) {
    const auto r = iotail::testing::RunIotail(
        "run --filename=" + (dir_ / "f").string() + " --size=4m --bs=4k --runtime=300ms " +
            "--time_based --live_format=none --output-format=json " + args,
        dir_);
    if (result != nullptr) *result = r;
    const size_t brace = r.out.find('{');
    if (r.status != 0 || brace == std::string::npos) return nullptr;
    return json::parse(r.out.substr(brace));
  }
  fs::path dir_;
};

TEST_F(RunLatencyFieldsTest, AsyncEnginesReportSlatAndLatIsSlatPlusClat) {
  for (const std::string engine : {"io_uring", "libaio", "posixaio"}) {
    SCOPED_TRACE(engine);
    iotail::testing::CommandResult r;
    const json s = Run("--rw=randread --iodepth=8 --ioengine=" + engine, &r);
    if (r.status == 2 && r.err.find("not available") != std::string::npos) continue;
    ASSERT_FALSE(s.is_null()) << r.err << r.out;
    const json& read = s.at("jobs").at(0).at("read");
    const json &slat = read.at("slat_ns"), &clat = read.at("clat_ns"), &lat = read.at("lat_ns");
    const int64_t n = clat.at("N").get<int64_t>();
    ASSERT_GT(n, 0);
    // Every completed I/O has all three, and lat is exactly slat + clat per I/O, so the means add.
    EXPECT_EQ(slat.at("N").get<int64_t>(), n);
    EXPECT_EQ(lat.at("N").get<int64_t>(), n);
    EXPECT_GT(slat.at("max").get<int64_t>(), 0);
    EXPECT_NEAR(lat.at("mean").get<double>(),
                slat.at("mean").get<double>() + clat.at("mean").get<double>(), 1.0);
    EXPECT_GE(lat.at("min").get<int64_t>(), clat.at("min").get<int64_t>());
    EXPECT_GE(lat.at("max").get<int64_t>(), clat.at("max").get<int64_t>());
  }
}

TEST_F(RunLatencyFieldsTest, SyncEngineHasNoSlatAndLatEqualsClat) {
  for (const std::string engine : {"psync", "sync", "vsync", "pvsync", "pvsync2", "mmap"}) {
    SCOPED_TRACE(engine);
    iotail::testing::CommandResult r;
    const json s = Run("--rw=randread --ioengine=" + engine, &r);
    ASSERT_FALSE(s.is_null()) << r.err << r.out;
    const json& read = s.at("jobs").at(0).at("read");
    EXPECT_EQ(read.at("slat_ns").at("N").get<int64_t>(), 0);
    ASSERT_GT(read.at("clat_ns").at("N").get<int64_t>(), 0);
    for (const char* key : {"N", "min", "max"}) {
      EXPECT_EQ(read.at("lat_ns").at(key), read.at("clat_ns").at(key)) << key;
    }
  }
}

TEST_F(RunLatencyFieldsTest, SyncEngineRunsAtDepthOneAndSaysSo) {
  iotail::testing::CommandResult r;
  const json s = Run("--rw=randread --ioengine=psync --iodepth=8", &r);
  ASSERT_FALSE(s.is_null()) << r.err << r.out;
  EXPECT_NE(r.err.find("--iodepth=8 runs as --iodepth=1"), std::string::npos) << r.err;
  // Exactly one line of note, and nothing invented: psync at "depth 8" is psync at depth 1.
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

TEST_F(RunLatencyFieldsTest, EachJobReportsItsCpuAsFio) {
  iotail::testing::CommandResult r;
  const json s = Run("--rw=randread --ioengine=null --numjobs=2", &r);
  ASSERT_FALSE(s.is_null()) << r.err << r.out;
  for (const json& job : s.at("jobs")) {
    for (const char* key : {"usr_cpu", "sys_cpu", "ctx", "majf", "minf"}) {
      ASSERT_TRUE(job.contains(key)) << key;
    }
    // The null engine never waits: its thread is busy whenever it gets a CPU (the bound leaves
    // room for a loaded machine).
    const double busy = job.at("usr_cpu").get<double>() + job.at("sys_cpu").get<double>();
    EXPECT_GT(busy, 20.0);
    EXPECT_LE(busy, 101.0);
  }
  // A job that mostly sleeps (20 I/Os per second) shows as nearly idle.
  const json idle = Run("--rw=randread --ioengine=psync --rate_iops=20", &r);
  ASSERT_FALSE(idle.is_null()) << r.err << r.out;
  const json& job = idle.at("jobs").at(0);
  EXPECT_LT(job.at("usr_cpu").get<double>() + job.at("sys_cpu").get<double>(), 10.0);
  const auto text = iotail::testing::RunIotail(
      "run --filename=" + (dir_ / "f").string() +
          " --size=4m --ioengine=null --runtime=200ms --time_based --live_format=none",
      dir_);
  ASSERT_EQ(text.status, 0) << text.err;
  EXPECT_NE(text.out.find("cpu          : usr="), std::string::npos) << text.out;
}

TEST_F(RunLatencyFieldsTest, BatchOptionsAreCheckedAgainstTheDepth) {
  for (const std::string bad : {"--iodepth_batch_submit=9", "--iodepth_batch_complete_min=9",
                                "--iodepth_batch_complete_min=4 --iodepth_batch_complete_max=2"}) {
    SCOPED_TRACE(bad);
    iotail::testing::CommandResult r;
    const json s = Run("--iodepth=8 --ioengine=io_uring " + bad, &r);
    EXPECT_EQ(r.status, 2);
    const std::string name = bad.substr(bad.rfind("--"), bad.rfind('=') - bad.rfind("--"));
    EXPECT_NE(r.err.find(name), std::string::npos) << r.err;
  }
  // Accepted forms, fio's aliases included.
  for (const std::string good : {"--iodepth_batch=4 --iodepth_batch_complete=2",
                                 "--iodepth_batch_submit=8 --iodepth_batch_complete_min=8 "
                                 "--iodepth_batch_complete_max=8"}) {
    SCOPED_TRACE(good);
    iotail::testing::CommandResult r;
    const json s = Run("--iodepth=8 --ioengine=libaio --rw=randread " + good, &r);
    if (r.status == 2 && r.err.find("not available") != std::string::npos) continue;
    ASSERT_FALSE(s.is_null()) << r.err;
    EXPECT_GT(s.at("jobs").at(0).at("read").at("clat_ns").at("N").get<int64_t>(), 0);
  }
}

}  // namespace run_latency_fields_test
