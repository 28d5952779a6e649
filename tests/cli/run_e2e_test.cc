// End-to-end tests of `iotail run`: the built binary on temporary files, every available engine.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "cli_test_util.h"

namespace run_e2e_test {

namespace fs = std::filesystem;
using iotail::testing::ReadFile;

struct Result {
  int status;
  std::string output;
};

// Runs `iotail run ARGS` with stderr merged into the output.
Result RunIotail(const std::string& args) {
  const auto r = iotail::testing::Capture(std::string(IOTAIL_BINARY) + " run " + args + " 2>&1");
  return {r.status, r.out};
}

struct LogLine {
  uint64_t time;
  int ddir;
  uint64_t total;
  size_t fields;
  uint64_t bs;
};

std::vector<LogLine> ReadLog(const fs::path& p) {
  std::vector<LogLine> out;
  std::ifstream in(p);
  std::string line;
  while (std::getline(in, line)) {
    LogLine l{0, 0, 0, 0, 0};
    size_t start = 0;
    for (size_t i = 0;; ++i) {
      const size_t comma = line.find(", ", start);
      const uint64_t v = std::stoull(line.substr(start, comma - start));
      if (i == 0) l.time = v;
      if (i == 1) l.ddir = static_cast<int>(v);
      if (i == 2) l.bs = v;
      if (i >= 3) l.total += v;
      ++l.fields;
      if (comma == std::string::npos) break;
      start = comma + 2;
    }
    out.push_back(l);
  }
  return out;
}

// total_ios per job and direction from our JSON (jobs[] entries only), keyed "NAME#K/DIR" with K
// the 1-based number of the entry among those named NAME (fio's clones share their jobname).
std::map<std::string, uint64_t> TotalIos(const std::string& json) {
  std::map<std::string, uint64_t> out;
  const std::string jobs = json.substr(0, json.find("\"iotail_aggregate\""));
  const std::regex job_re("\"jobname\": \"([^\"]+)\"");
  const std::regex dir_re(
      "\"(read|write|trim)\": \\{\"io_bytes\": [0-9]+[^}]*?\"total_ios\": ([0-9]+)");
  std::vector<std::pair<size_t, std::string>> names;
  std::map<std::string, int> seen;
  for (auto it = std::sregex_iterator(jobs.begin(), jobs.end(), job_re);
       it != std::sregex_iterator(); ++it) {
    const std::string n = (*it)[1];
    names.emplace_back(static_cast<size_t>(it->position()), n + "#" + std::to_string(++seen[n]));
  }
  for (auto it = std::sregex_iterator(jobs.begin(), jobs.end(), dir_re);
       it != std::sregex_iterator(); ++it) {
    std::string name;
    for (const auto& [pos, n] : names) {
      if (pos < static_cast<size_t>(it->position())) name = n;
    }
    out[name + "/" + (*it)[1].str()] = std::stoull((*it)[2]);
  }
  return out;
}

using RunE2eTest = iotail::testing::ScratchDirTest;

TEST_F(RunE2eTest, EveryEngineLogsAddUpToTotalIos) {
  for (const std::string engine : {"io_uring", "libaio", "psync", "null"}) {
    SCOPED_TRACE(engine);
    const fs::path file = dir_ / ("target-" + engine);
    const fs::path prefix = dir_ / ("log-" + engine);
    const fs::path json = dir_ / ("out-" + engine + ".json");
    const Result r =
        RunIotail("--ioengine=" + engine + " --filename " + file.string() +
                  " --size=8m --rw=randrw --rwmixread=70 --bs 4k --iodepth=8 --numjobs=2 "
                  "--runtime=700ms --time_based --log_hist_msec=200 --write_hist_log=" +
                  prefix.string() + " --output-format=json --output " + json.string());
    if (r.status == 2 && r.output.find("not available") != std::string::npos) {
      // Engines the kernel refuses are a clear error, not a failure of this test.
      EXPECT_NE(r.output.find("available:"), std::string::npos) << r.output;
      continue;
    }
    ASSERT_EQ(r.status, 0) << r.output;
    const auto totals = TotalIos(ReadFile(json));
    std::vector<std::vector<LogLine>> logs;
    for (int job = 1; job <= 2; ++job) {
      const fs::path log = prefix.string() + "_clat_hist." + std::to_string(job) + ".log";
      ASSERT_TRUE(fs::exists(log));
      logs.push_back(ReadLog(log));
      uint64_t reads = 0, writes = 0;
      for (const LogLine& l : logs.back()) {
        EXPECT_EQ(l.fields, 1859u);
        (l.ddir == 0 ? reads : writes) += l.total;
      }
      const std::string name = "iotail#" + std::to_string(job);
      EXPECT_EQ(reads, totals.at(name + "/read"));
      EXPECT_EQ(writes, totals.at(name + "/write"));
      EXPECT_GT(reads, 0u);
      EXPECT_GT(writes, 0u);
    }
    // Both workers' logs carry identical timestamps, read and write lines for each.
    ASSERT_EQ(logs[0].size(), logs[1].size());
    EXPECT_GE(logs[0].size(), 6u);  // >= 3 intervals x 2 directions
    for (size_t i = 0; i < logs[0].size(); ++i) {
      EXPECT_EQ(logs[0][i].time, logs[1][i].time);
      EXPECT_EQ(logs[0][i].ddir, logs[1][i].ddir);
    }
  }
}

TEST_F(RunE2eTest, HistLogBsIsTheMeanBytesPerIoSoPlotDrawsTrueBandwidth) {
  // bssplit: the bs column of each line is the interval's mean bytes per I/O (fio writes the
  // size of one I/O, and a plot drew bandwidth 8.5x too low from "4096"), so I/Os x bs over the
  // log gives the bytes the summary reports, within half a byte per I/O.
  const fs::path prefix = dir_ / "mix";
  const fs::path json = dir_ / "mix.json";
  const Result r = RunIotail(
      "--name=mix --ioengine=null --size=64m --rw=randread --bssplit=4k/50:64k/50 "
      "--runtime=600ms --time_based --log_hist_msec=100 --write_hist_log=" +
      prefix.string() + " --output-format=json --output " + json.string());
  ASSERT_EQ(r.status, 0) << r.output;
  const std::string summary = ReadFile(json);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(summary, m, std::regex("\"read\": \\{\"io_bytes\": ([0-9]+)")));
  const uint64_t bytes = std::stoull(m[1]);
  uint64_t ios = 0, logged = 0;
  for (const LogLine& l : ReadLog(prefix.string() + "_clat_hist.1.log")) {
    ios += l.total;
    logged += l.total * l.bs;
    if (l.total > 100) {
      EXPECT_GT(l.bs, 20000u);  // about 34 KiB: half 4k, half 64k
      EXPECT_LT(l.bs, 50000u);
    }
  }
  ASSERT_GT(ios, 1000u);
  EXPECT_LE(logged > bytes ? logged - bytes : bytes - logged, ios / 2);
  const fs::path html = dir_ / "mix.html";
  const auto plot =
      iotail::testing::Capture(std::string(IOTAIL_BINARY) + " plot -o " + html.string() + " " +
                               prefix.string() + "_clat_hist.1.log 2>&1");
  ASSERT_EQ(plot.status, 0) << plot.out;
  const std::string page = ReadFile(html);
  EXPECT_NE(page.find("Bandwidth is each record's I/Os times its bs column"), std::string::npos);
  EXPECT_NE(page.find("id=\"bandwidth\""), std::string::npos);
}

TEST_F(RunE2eTest, EpochTimesAreMultiplesOfThePeriod) {
  const fs::path file = dir_ / "t";
  const fs::path prefix = dir_ / "e";
  const Result r =
      RunIotail("--ioengine=null --filename=" + file.string() +
                " --size=1m --rw=randread --runtime=450ms --time_based --log_hist_msec=100 "
                "--log_unix_epoch --log_hist_coarseness=3 --write_hist_log=" +
                prefix.string());
  ASSERT_EQ(r.status, 0) << r.output;
  const auto log = ReadLog(prefix.string() + "_clat_hist.1.log");
  ASSERT_GE(log.size(), 4u);
  for (size_t i = 0; i + 1 < log.size(); ++i) {
    EXPECT_EQ(log[i].time % 100, 0u);
    EXPECT_EQ(log[i].fields, 3u + 232u);
  }
  EXPECT_GT(log.front().time, 1'600'000'000'000u);
}

TEST_F(RunE2eTest, RelativeTimesAreMultiplesOfThePeriodSoPctilesCountsStayExact) {
  const fs::path file = dir_ / "t";
  const fs::path prefix = dir_ / "r";
  const Result r = RunIotail("--ioengine=null --filename=" + file.string() +
                             " --size=1m --rw=randread --runtime=650ms --time_based "
                             "--log_hist_msec=100 --live-format=none --write_hist_log=" +
                             prefix.string());
  ASSERT_EQ(r.status, 0) << r.output;
  const std::string log_path = prefix.string() + "_clat_hist.1.log";
  const auto log = ReadLog(log_path);
  ASSERT_GE(log.size(), 6u);
  for (size_t i = 0; i + 1 < log.size(); ++i) EXPECT_EQ(log[i].time % 100, 0u) << i;
  EXPECT_LE(log.front().time, 100u);

  // Quanta equal to the period: each log line falls into one quantum whole, so every interval's
  // sample count is exactly the line's count (an integer).
  const auto p = iotail::testing::RunIotail(
      "pctiles --format csv --percentiles 50 --time-quantum 100ms " + log_path, dir_);
  ASSERT_EQ(p.status, 0) << p.err;
  std::map<uint64_t, uint64_t> line_totals;
  for (const auto& l : log) line_totals[(l.time + 99) / 100 * 100 - 100] += l.total;
  std::istringstream rows(p.out);
  std::string row;
  std::getline(rows, row);  // header
  size_t intervals = 0;
  while (std::getline(rows, row)) {
    if (row.starts_with("total")) continue;
    const size_t c1 = row.find(','), c2 = row.find(',', c1 + 1), c3 = row.find(',', c2 + 1);
    const uint64_t start = std::stoull(row.substr(0, c1));
    const std::string samples = row.substr(c2 + 1, c3 - c2 - 1);
    EXPECT_EQ(samples.find('.'), std::string::npos) << row;
    EXPECT_EQ(std::stoull(samples), line_totals[start]) << row;
    ++intervals;
  }
  EXPECT_GE(intervals, 6u);
}

TEST_F(RunE2eTest, SequentialReadOfIoSizeStopsAfterOnePass) {
  const fs::path file = dir_ / "seq";
  const fs::path json = dir_ / "seq.json";
  const Result r =
      RunIotail("--ioengine=psync --filename=" + file.string() +
                " --size=1m --rw=read --bs=64k --output-format=json --output=" + json.string());
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(TotalIos(ReadFile(json)).at("iotail#1/read"), 16u);
}

TEST_F(RunE2eTest, TextSummaryAndDirectIo) {
  const fs::path file = dir_ / "direct";
  const Result r = RunIotail("--ioengine=io_uring --direct=1 --filename=" + file.string() +
                             " --size=4m --rw=randwrite --iodepth 4 --runtime 300ms --time_based "
                             "--end_fsync --percentile_list=50:99");
  if (r.output.find("not available") != std::string::npos) GTEST_SKIP() << r.output;
  if (r.output.find("O_DIRECT") != std::string::npos) GTEST_SKIP() << "no O_DIRECT on /tmp";
  ASSERT_EQ(r.status, 0) << r.output;
  // fio's precision is the list's: "50:99" prints " 50th=[", as fio 3.33 does.
  EXPECT_TRUE(iotail::testing::ContainsAll(r.output,
                                           {"write: IOPS=", " 50th=[", " 99th=[", "errors: none"}));
}

TEST_F(RunE2eTest, BadOptionsExitTwoNamingTheOption) {
  const std::string f = " --filename=" + (dir_ / "x").string() + " --size=1m";
  iotail::testing::ExpectRefused(
      {
          {"--iodepth=0" + f, "--iodepth"},
          {"--rw=sideways" + f, "--rw"},
          {"--bs=4q" + f, "--bs"},
          {"--runtime=3fortnights" + f, "--runtime"},
          {"--no_such_option=1", "--no_such_option"},
          {"--ioengine=spdk" + f, "--ioengine"},
          {"--filename=" + (dir_ / "missing").string(), "--size"},
          {"--log_hist_coarseness=7" + f, "--log_hist_coarseness"},
      },
      dir_);
  EXPECT_FALSE(fs::exists(dir_ / "missing"));
}

TEST_F(RunE2eTest, DefaultBenchmarkRunsAndCleansUp) {
  const auto r = iotail::testing::Capture("cd " + dir_.string() + " && " + IOTAIL_BINARY +
                                          " run --runtime=400ms --ioengine=null 2>&1");
  const std::string& out = r.out;
  ASSERT_EQ(r.status, 0) << out;
  EXPECT_NE(out.find("read: IOPS="), std::string::npos) << out;
  EXPECT_NE(out.find("iotail pctiles"), std::string::npos) << out;
  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(dir_)) left.push_back(e.path().filename());
  EXPECT_EQ(left, std::vector<std::string>{"iotail_clat_hist.1.log"});
}

// Without --name the default benchmark fills in only what was not given: --number_ios keeps its
// fio meaning (the job ends after that many I/Os, not after 3 s), and the null engine, which opens
// nothing, is not announced with a temporary file.
TEST_F(RunE2eTest, DefaultBenchmarkKeepsTheOptionsGiven) {
  const auto r = iotail::testing::RunShell("cd " + dir_.string() + " && " + IOTAIL_BINARY +
                                               " run --ioengine=null --size=1g "
                                               "--number_ios=100000 --output-format=json",
                                           dir_);
  ASSERT_EQ(r.status, 0) << r.err;
  const auto job = nlohmann::json::parse(r.out).at("jobs").at(0);
  EXPECT_EQ(job.at("read").at("total_ios"), 100000);
  EXPECT_LT(job.at("job_runtime").get<double>(), 3000) << "ran the default 3 s";
  EXPECT_EQ(r.err.find("temporary"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("null engine over 1024 MiB (no file)"), std::string::npos) << r.err;
  // Given nothing that bounds the amount, the default's 3 s (here --runtime's) still applies.
  const auto timed = iotail::testing::RunShell("cd " + dir_.string() + " && " + IOTAIL_BINARY +
                                                   " run --ioengine=null --runtime=300ms "
                                                   "--output-format=json",
                                               dir_);
  ASSERT_EQ(timed.status, 0) << timed.err;
  EXPECT_NE(timed.err.find("default benchmark for 0.3 s with the null engine over 64 MiB"),
            std::string::npos)
      << timed.err;
  EXPECT_GE(nlohmann::json::parse(timed.out).at("jobs").at(0).at("job_runtime").get<double>(), 250);
  // --time_based given without --runtime: the default's 3 s, over the --size given.
  const auto based = iotail::testing::RunShell("cd " + dir_.string() + " && " + IOTAIL_BINARY +
                                                   " run --ioengine=null --size=8m --time_based "
                                                   "--output-format=json",
                                               dir_);
  ASSERT_EQ(based.status, 0) << based.err;
  EXPECT_NE(based.err.find("default benchmark for 3 s with the null engine over 8 MiB"),
            std::string::npos)
      << based.err;
  EXPECT_GE(nlohmann::json::parse(based.out).at("jobs").at(0).at("job_runtime").get<double>(),
            2900);
}

TEST_F(RunE2eTest, WholeRunPercentilesEqualPctilesOverTheLogs) {
  const fs::path file = dir_ / "p";
  const fs::path prefix = dir_ / "pl";
  const fs::path json = dir_ / "p.json";
  const Result r = RunIotail("--ioengine=null --filename=" + file.string() +
                             " --size=4m --rw=randread --runtime=400ms --time_based "
                             "--log_hist_msec=100 --percentile_list=50:99 --write_hist_log=" +
                             prefix.string() + " --output-format=json --output=" + json.string());
  ASSERT_EQ(r.status, 0) << r.output;
  const std::string js = ReadFile(json);
  const std::regex p_re("\"percentile\": \\{\"50.000000\": ([0-9]+), \"99.000000\": ([0-9]+)\\}");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(js, m, p_re)) << js.substr(0, 2000);
  const auto pr = iotail::testing::Capture(
      std::string(IOTAIL_BINARY) +
      " pctiles --method fio --percentiles 50:99 --output-unit ns --format csv " + prefix.string() +
      "_clat_hist.1.log 2>&1");
  const std::string& out = pr.out;
  ASSERT_EQ(pr.status, 0) << out;
  // total,read,samples,min,max,mean,p50,p99,...
  const std::regex total_re("total,read,[^,]*,[^,]*,[^,]*,[^,]*,([0-9.]+),([0-9.]+)");
  std::smatch t;
  ASSERT_TRUE(std::regex_search(out, t, total_re)) << out;
  EXPECT_EQ(std::stod(t[1]), std::stod(m[1]));
  EXPECT_EQ(std::stod(t[2]), std::stod(m[2]));
}

}  // namespace run_e2e_test
