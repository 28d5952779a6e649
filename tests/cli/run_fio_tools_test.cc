// fio's own Python post-processors read iotail's histogram logs: fio-histo-log-pctiles.py counts
// exactly the I/Os iotail completed (its one-interval-late placement aside), and
// fiologparser_hist.py reads every line. Skipped where fio's scripts or python3-numpy/pandas are
// not installed (scripts/setup.sh installs them).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>

#include "cli_test_util.h"

namespace run_fio_tools_test {

namespace fs = std::filesystem;
using iotail::testing::RunIotail;

constexpr const char* kPython = "/usr/bin/python3";
constexpr const char* kScriptDir = "/usr/share/doc/fio";

class RunFioToolsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* script : {"fio-histo-log-pctiles.py.gz", "fiologparser_hist.py.gz"}) {
      if (!fs::exists(fs::path(kScriptDir) / script)) {
        GTEST_SKIP() << "fio's " << script << " is not installed (apt-get install fio)";
      }
    }
    if (!fs::exists(kPython) ||
        std::system((std::string(kPython) + " -c 'import numpy, pandas' 2>/dev/null").c_str()) !=
            0) {
      GTEST_SKIP() << "python3-numpy and python3-pandas are needed by fiologparser_hist.py";
    }
    dir_ = iotail::testing::MakeScratchDir("iotail_fio_tools");
    for (const char* script : {"fio-histo-log-pctiles.py", "fiologparser_hist.py"}) {
      const std::string cmd =
          std::string("zcat ") + kScriptDir + "/" + script + ".gz > " + (dir_ / script).string();
      ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    }
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  iotail::testing::CommandResult Shell(const std::string& command) {
    return iotail::testing::RunShell(command, dir_);
  }

  fs::path dir_;
};

// I/Os of every direction in the aggregate of iotail's JSON summary.
uint64_t TotalIos(const std::string& json) {
  const auto summary = nlohmann::json::parse(json);
  uint64_t total = 0;
  for (const char* dir : {"read", "write", "trim"}) {
    total += summary["iotail_aggregate"][dir]["total_ios"].get<uint64_t>();
  }
  return total;
}

TEST_F(RunFioToolsTest, FioScriptsReadOurLogsAndCountEveryIo) {
  const std::string prefix = (dir_ / "j").string();
  const auto run = RunIotail(
      "run --ioengine=null --rw=randrw --numjobs=2 --runtime=1200ms "
      "--time_based --log_hist_msec=200 --live-format=none "
      "--output-format=json --filename=" +
          (dir_ / "target").string() + " --size=1m --write_hist_log=" + prefix,
      dir_);
  ASSERT_EQ(run.status, 0) << run.err;
  const uint64_t total_ios = TotalIos(run.out);
  ASSERT_GT(total_ios, 0u) << run.out;
  const std::string logs = prefix + "_clat_hist.1.log " + prefix + "_clat_hist.2.log";

  // fio-histo-log-pctiles.py: rows "msec, samples, ..." after its preamble; with intervals on the
  // quantum grid nothing is split, so the samples add up to every I/O.
  const auto pctiles =
      Shell(std::string(kPython) + " " + (dir_ / "fio-histo-log-pctiles.py").string() +
            " --time-quantum 1 --log-hist-msec 200 -- " + logs);
  ASSERT_EQ(pctiles.status, 0) << pctiles.out << pctiles.err;
  uint64_t samples = 0;
  size_t rows = 0;
  std::istringstream in(pctiles.out);
  const std::regex row("^\\s*[0-9]+,\\s*([0-9]+),.*");
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_match(line, m, row)) {
      samples += std::stoull(m[1]);
      ++rows;
    }
  }
  EXPECT_GE(rows, 2u) << pctiles.out;
  EXPECT_EQ(samples, total_ios) << pctiles.out;

  // fiologparser_hist.py: one row per interval end, no error.
  const auto parser = Shell(std::string(kPython) + " " + (dir_ / "fiologparser_hist.py").string() +
                            " --interval 200 " + logs);
  ASSERT_EQ(parser.status, 0) << parser.out << parser.err;
  EXPECT_NE(parser.out.find("end-time, samples"), std::string::npos) << parser.out;
  EXPECT_GE(std::count(parser.out.begin(), parser.out.end(), '\n'), 6) << parser.out;
}

}  // namespace run_fio_tools_test

namespace run_fio_tools_test {

TEST(RunFioJsonplusTest, FioJsonplusClat2csvReadsAndValidatesOurJsonPlus) {
  if (iotail::testing::Capture("command -v fio_jsonplus_clat2csv").status != 0) {
    GTEST_SKIP() << "fio_jsonplus_clat2csv not installed (Debian package fio)";
  }
  const fs::path dir = iotail::testing::MakeScratchDir("iotail_jsonplus");
  const auto run = iotail::testing::RunShell(
      "cd " + dir.string() + " && " + IOTAIL_BINARY +
          " run --name=x --ioengine=psync --filename=t --size=1m --rw=randrw --live_format=none "
          "--output-format=json+ --output=run.json",
      dir);
  ASSERT_EQ(run.status, 0) << run.err;
  // fio's tool turns the bins into a CSV per job, then checks the CSV against the JSON.
  const auto csv = iotail::testing::RunShell("cd " + dir.string() +
                                                 " && fio_jsonplus_clat2csv run.json out && "
                                                 "fio_jsonplus_clat2csv --validate run.json out",
                                             dir);
  EXPECT_EQ(csv.status, 0) << csv.out << csv.err;
  EXPECT_NE(csv.out.find("out_job0 validated"), std::string::npos) << csv.out << csv.err;
  EXPECT_GT(fs::file_size(dir / "out_job0"), 1000u);
  fs::remove_all(dir);
}

}  // namespace run_fio_tools_test
