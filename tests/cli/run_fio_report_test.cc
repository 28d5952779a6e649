// The report of `iotail run` as fio 3.33 writes it, each compared with fio itself on the same job
// (skipped with the reason when fio is not installed): a do_verify read-back is the job's reads
// (JSON read.total_ios and io_bytes, their latencies, the writes' own runtime).
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_test_util.h"

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using iotail::testing::CommandResult;

bool HaveFio() { return iotail::testing::Capture("command -v fio").status == 0; }

class RunFioReportTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = iotail::testing::MakeScratchDir("iotail_fio_report"); }
  void TearDown() override { fs::remove_all(dir_); }
  // `fio ARGS` or `iotail run ARGS` in the scratch directory.
  CommandResult Fio(const std::string& args) {
    return iotail::testing::RunShell("cd " + dir_.string() + " && fio " + args, dir_);
  }
  CommandResult Iotail(const std::string& args) {
    return iotail::testing::RunShell(
        "cd " + dir_.string() + " && " + IOTAIL_BINARY + " run --live_format=none " + args, dir_);
  }
  static json Json(const CommandResult& r) {
    EXPECT_EQ(r.status, 0) << r.err;
    const size_t brace = r.out.find('{');
    return r.status == 0 && brace != std::string::npos ? json::parse(r.out.substr(brace))
                                                       : json::object();
  }
  fs::path dir_;
};

TEST_F(RunFioReportTest, VerifyReadBackIsReportedAsReadsWithTheirOwnRuntime) {
  if (!HaveFio()) GTEST_SKIP() << "fio not installed";
  const std::string job =
      "--name=v --rw=write --verify=crc32c --size=16m --bs=4k --ioengine=psync "
      "--output-format=json ";
  const json fio = Json(Fio(job + "--filename=theirs"));
  const json ours = Json(Iotail(job + "--filename=ours"));
  ASSERT_FALSE(fio.empty());
  ASSERT_FALSE(ours.empty());
  for (const json* j : {&fio, &ours}) {
    const json& job0 = (*j)["jobs"][0];
    const json& read = job0["read"];
    const json& write = job0["write"];
    // Every block written once, then read back once: both directions carry 4096 I/Os.
    EXPECT_EQ(write["total_ios"], 4096) << *j;
    EXPECT_EQ(read["total_ios"], 4096) << *j;
    EXPECT_EQ(read["io_bytes"], 16 << 20) << *j;
    EXPECT_EQ(read["clat_ns"]["N"], 4096) << *j;
    EXPECT_EQ(read["lat_ns"]["N"], 4096) << *j;
    EXPECT_GT(read["clat_ns"]["max"].get<uint64_t>(), 0u);
    // Each direction's runtime is its own phase: together about the job's, not each the whole.
    const uint64_t r = read["runtime"], w = write["runtime"], all = job0["job_runtime"];
    EXPECT_GT(w, 0u) << *j;
    EXPECT_LE(r + w, all + 2) << *j;
  }
  // The total latency buckets cover both directions: 8192 I/Os.
  double sum = 0;
  for (const char* table : {"latency_ns", "latency_us", "latency_ms"}) {
    for (const auto& [k, v] : ours["jobs"][0][table].items()) sum += v.get<double>();
  }
  EXPECT_NEAR(sum, 100.0, 0.1);
}

}  // namespace
