// The JSON summary carries every key fio 3.33 writes, with the same JSON types, compared with fio
// itself on the same one-second job (fio skipped with the reason when not installed); json leaves
// the bins out and json+ has them, as fio; the bandwidth and IOPS sample statistics describe the
// run's windows.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_test_util.h"

namespace run_json_keys_test {

namespace fs = std::filesystem;
using json = nlohmann::json;
using iotail::testing::CommandResult;

std::string Kind(const json& v) {
  if (v.is_boolean()) return "bool";
  if (v.is_number()) return "number";
  if (v.is_string()) return "string";
  if (v.is_array()) return "array";
  return "object";
}

// Every key path and its type, not descending into the contents of maps keyed by values
// (percentiles, bins, job options) and taking the first element of arrays.
void Paths(const json& v, const std::string& prefix, std::map<std::string, std::string>& out) {
  if (prefix.ends_with("/percentile") || prefix.ends_with("/bins") ||
      prefix.ends_with("/job options") || prefix.ends_with("/global options")) {
    return;
  }
  if (v.is_object()) {
    for (const auto& [k, x] : v.items()) {
      out[prefix + "/" + k] = Kind(x);
      Paths(x, prefix + "/" + k, out);
    }
  } else if (v.is_array() && !v.empty()) {
    Paths(v[0], prefix + "[]", out);
  }
}

class RunJsonKeysTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = iotail::testing::MakeScratchDir("iotail_json_keys"); }
  void TearDown() override { fs::remove_all(dir_); }
  json Run(const std::string& command) {
    const CommandResult r =
        iotail::testing::RunShell("cd " + dir_.string() + " && " + command, dir_);
    EXPECT_EQ(r.status, 0) << r.err;
    return r.status == 0 ? json::parse(r.out.substr(r.out.find('{'))) : json::object();
  }
  fs::path dir_;
};

constexpr const char* kJob =
    " --name=x --ioengine=libaio --filename=t --size=8m --rw=randrw --iodepth=4 --direct=1 "
    "--runtime=1 --time_based ";

TEST_F(RunJsonKeysTest, EveryKeyFioWritesWithItsType) {
  if (iotail::testing::Capture("command -v fio").status != 0) GTEST_SKIP() << "fio not installed";
  const json fio = Run(std::string("fio") + kJob + "--output-format=json+");
  const json ours =
      Run(std::string(IOTAIL_BINARY) + " run" + kJob + "--output-format=json+ --live_format=none");
  if (ours.empty() || fio.empty()) return;
  std::map<std::string, std::string> theirs, mine;
  Paths(fio, "", theirs);
  Paths(ours, "", mine);
  EXPECT_GT(theirs.size(), 150u);  // fio 3.33's JSON: a job has about 200 key paths
  for (const auto& [path, kind] : theirs) {
    const auto it = mine.find(path);
    if (it == mine.end()) {
      ADD_FAILURE() << "missing " << path;
    } else {
      EXPECT_EQ(it->second, kind) << path;
    }
  }
  // json+ carries the bins, json does not.
  EXPECT_TRUE(ours["jobs"][0]["read"]["clat_ns"].contains("bins"));
  const json plain =
      Run(std::string(IOTAIL_BINARY) + " run" + kJob + "--output-format=json --live_format=none");
  EXPECT_FALSE(plain["jobs"][0]["read"]["clat_ns"].contains("bins"));
  EXPECT_TRUE(plain["jobs"][0]["read"]["clat_ns"].contains("percentile"));
}

TEST_F(RunJsonKeysTest, SampleStatisticsDescribeTheWindows) {
  const json j = Run(std::string(IOTAIL_BINARY) +
                     " run --name=x --ioengine=psync --filename=t --size=4m --rw=randread "
                     "--rate_iops=500 --runtime=2 --time_based --log_hist_msec=250 "
                     "--output-format=json --live_format=none");
  if (j.empty()) return;
  const json& r = j["jobs"][0]["read"];
  // 2 s in 250 ms windows: 7 or 8 full or mostly full ones, each at the target rate.
  EXPECT_GE(r["iops_samples"].get<int>(), 7);
  EXPECT_LE(r["iops_samples"].get<int>(), 9);
  EXPECT_NEAR(r["iops_mean"].get<double>(), 500, 50);
  EXPECT_NEAR(r["bw_mean"].get<double>(), 2000, 200);  // KiB/s of 4 KiB reads
  // min and max are whole numbers, as fio prints them: within rounding of the mean's side.
  EXPECT_LE(r["iops_min"].get<double>(), r["iops_mean"].get<double>() + 0.5);
  EXPECT_GE(r["iops_max"].get<double>(), r["iops_mean"].get<double>() - 0.5);
  EXPECT_NEAR(r["bw_agg"].get<double>(), 100, 5);  // the only job of its group
  // One I/O at a time: every submission at depth 1, one I/O per call.
  EXPECT_DOUBLE_EQ(j["jobs"][0]["iodepth_level"]["1"].get<double>(), 100.0);
  EXPECT_DOUBLE_EQ(j["jobs"][0]["iodepth_submit"]["4"].get<double>(), 100.0);
  double lat_pct = 0;
  for (const char* table : {"latency_ns", "latency_us", "latency_ms"}) {
    for (const auto& [k, v] : j["jobs"][0][table].items()) lat_pct += v.get<double>();
  }
  EXPECT_NEAR(lat_pct, 100.0, 1e-3);
}

TEST_F(RunJsonKeysTest, BandwidthAndIopsStatisticsAgreeWithFiosOnARateLimitedJob) {
  if (iotail::testing::Capture("command -v fio").status != 0) GTEST_SKIP() << "fio not installed";
  const std::string job =
      " --name=x --ioengine=psync --filename=t --size=4m --rw=randread --rate_iops=400 "
      "--runtime=3 --time_based --output-format=json";
  const json fio = Run(std::string("fio") + job);
  const json ours =
      Run(std::string(IOTAIL_BINARY) + " run --live_format=none --log_hist_msec=500" + job);
  if (fio.empty() || ours.empty()) return;
  const json& theirs = fio["jobs"][0]["read"];
  const json& mine = ours["jobs"][0]["read"];
  // fio samples every 500 ms (bw_avg_time); iotail every interval of the clock (here 500 ms).
  for (const char* key : {"iops_mean", "iops_min", "iops_max"}) {
    EXPECT_NEAR(mine[key].get<double>(), theirs[key].get<double>(), 0.1 * 400) << key;
  }
  for (const char* key : {"bw_mean", "bw_min", "bw_max"}) {
    EXPECT_NEAR(mine[key].get<double>(), theirs[key].get<double>(), 0.1 * 1600) << key;
  }
  EXPECT_NEAR(mine["iops_samples"].get<double>(), theirs["iops_samples"].get<double>(), 2);
  EXPECT_LT(mine["iops_stddev"].get<double>(), 40);
  EXPECT_LT(theirs["iops_stddev"].get<double>(), 40);
}

// The fields of a terse line.
std::vector<std::string> Fields(const std::string& line) {
  return iotail::testing::SplitOn(line, ";");
}

TEST_F(RunJsonKeysTest, TerseLineHasFiosFieldsAndAgreesWithTheJson) {
  const std::string job =
      " --name=x --ioengine=libaio --filename=t --size=8m --rw=randrw --iodepth=4 --direct=1 "
      "--runtime=1 --time_based";
  // Several formats at once, in the order given: the terse line, then the JSON.
  const CommandResult ours =
      iotail::testing::RunShell("cd " + dir_.string() + " && " + IOTAIL_BINARY +
                                    " run --live_format=none" + job + " --output-format=terse,json",
                                dir_);
  ASSERT_EQ(ours.status, 0) << ours.err;
  const std::string terse = ours.out.substr(0, ours.out.find('\n'));
  const json j = json::parse(ours.out.substr(ours.out.find('{')));
  const auto f = Fields(terse);
  // fio's v3: 5 + 41 per direction + 5 cpu + 7 depths + 10 + 12 latency buckets + 9 per disk.
  const size_t disks = j["disk_util"].size();
  ASSERT_EQ(f.size(), 121 + 9 * disks) << terse;
  EXPECT_EQ(f[0], "3");
  EXPECT_EQ(f[2], "x");
  EXPECT_EQ(f[3], "0");
  const json& r = j["jobs"][0]["read"];
  EXPECT_EQ(std::stoull(f[5]), r["io_kbytes"].get<uint64_t>());
  EXPECT_EQ(f[23],
            "50.000000%=" +
                std::to_string(r["clat_ns"]["percentile"]["50.000000"].get<uint64_t>() / 1000));
  EXPECT_EQ(f[34], "0%=0");  // fio's 17 default percentiles leave 3 of the 20 fields unused
  EXPECT_EQ(std::stoull(f[46]), j["jobs"][0]["write"]["io_kbytes"].get<uint64_t>());
  if (iotail::testing::Capture("command -v fio").status != 0) GTEST_SKIP() << "fio not installed";
  const CommandResult fio =
      iotail::testing::RunShell("cd " + dir_.string() + " && fio" + job + " --minimal", dir_);
  ASSERT_EQ(fio.status, 0) << fio.err;
  const auto theirs = Fields(fio.out.substr(0, fio.out.find('\n')));
  // The same 121 fields, then 9 per disk (fio also finds a disk behind tmpfs files; iotail does
  // not).
  ASSERT_GE(theirs.size(), 121u);
  EXPECT_EQ((theirs.size() - 121) % 9, 0u) << fio.out;
  for (size_t i : {17u, 23u, 34u, 87u, 92u}) {  // the forms of the fields, one of each kind
    EXPECT_EQ(theirs[i].find('%') != std::string::npos, f[i].find('%') != std::string::npos) << i;
  }
}

TEST_F(RunJsonKeysTest, TextSummaryHasTheSectionsFioPrints) {
  if (iotail::testing::Capture("command -v fio").status != 0) GTEST_SKIP() << "fio not installed";
  const std::string job =
      " --name=x --ioengine=libaio --filename=t --size=8m --rw=randrw --iodepth=4 --direct=1 "
      "--runtime=1500ms --time_based --log_hist_msec=500";
  const CommandResult fio = iotail::testing::RunShell(
      "cd " + dir_.string() + " && fio" +
          std::string(job).replace(job.find("--log_hist_msec=500"), 19, "") + " --runtime=1.5",
      dir_);
  const CommandResult ours = iotail::testing::RunShell(
      "cd " + dir_.string() + " && " + IOTAIL_BINARY + " run --live_format=none" + job, dir_);
  ASSERT_EQ(fio.status, 0) << fio.err;
  ASSERT_EQ(ours.status, 0) << ours.err;
  for (const char* section :
       {"  read: IOPS=", "  write: IOPS=", "    slat (", "    clat (", "     lat (",
        "    clat percentiles (", "   bw (  KiB/s): min=", "   iops        : min=", "  lat (",
        "  cpu          : usr=", "  IO depths    : 1=", "     submit    : 0=",
        "     complete  : 0=", "     latency   : target=0, window=0, percentile=100.00%, depth=4",
        "Run status group 0 (all jobs):", "   READ: bw=", "  WRITE: bw="}) {
    EXPECT_NE(fio.out.find(section), std::string::npos) << "fio lacks: " << section;
    EXPECT_NE(ours.out.find(section), std::string::npos) << "iotail lacks: " << section;
  }
  // The disk section whenever the target has a disk behind it (not on tmpfs or overlay).
  EXPECT_EQ(ours.out.find("Disk stats (read/write):") != std::string::npos,
            fio.out.find("Disk stats (read/write):") != std::string::npos);
  // iotail's own lines say what SLC is.
  EXPECT_NE(ours.out.find("how far the tail stretches beyond the median"), std::string::npos);
}

}  // namespace run_json_keys_test
