// fio's bandwidth, IOPS and latency logs written by `iotail run` (--write_bw_log, --write_iops_log,
// --write_lat_log, --log_avg_msec), read by fio's own tools: fio2gnuplot computes the same
// averages as the run's rate, and fiologparser.py treats them exactly as it treats fio 3.33's own
// logs. Tests that need fio's tools skip with the reason when they are missing.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli_test_util.h"

namespace run_value_logs_test {

namespace fs = std::filesystem;
using json = nlohmann::json;
using iotail::testing::CommandResult;

struct Line {
  uint64_t time_ms, value;
  int ddir;
};

std::vector<Line> ReadValueLog(const fs::path& path) {
  std::ifstream in(path);
  std::vector<Line> out;
  std::string text;
  while (std::getline(in, text)) {
    Line l{};
    uint64_t bs = 9, offset = 9;
    char c1, c2, c3, c4;
    std::istringstream fields(text);
    fields >> l.time_ms >> c1 >> l.value >> c2 >> l.ddir >> c3 >> bs >> c4 >> offset;
    EXPECT_TRUE(fields && c1 == ',' && c4 == ',') << text;
    EXPECT_EQ(bs, 0u);  // fio writes 0 block size and offset when windowed
    EXPECT_EQ(offset, 0u);
    out.push_back(l);
  }
  return out;
}

// fio2gnuplot's whole-file statistics of one log (its .global file): min, max, avg, ...
std::map<std::string, double> Fio2gnuplotGlobal(const fs::path& dir, const std::string& log) {
  const fs::path out = dir / ("g-" + log);
  fs::create_directories(out);
  const CommandResult r = iotail::testing::RunShell(
      "cd " + dir.string() + " && fio2gnuplot -p '" + log + "' -d " + out.string(), dir);
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  std::map<std::string, double> stats;
  std::ifstream in(out / (fs::path(log).stem().string() + ".global"));
  std::string text;
  while (std::getline(in, text)) {
    const size_t eq = text.find('=');
    if (eq != std::string::npos) stats[text.substr(0, eq)] = std::stod(text.substr(eq + 1));
  }
  return stats;
}

class RunValueLogsTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = iotail::testing::MakeScratchDir("iotail_value_logs"); }
  void TearDown() override { fs::remove_all(dir_); }
  CommandResult Iotail(const std::string& args) {
    return iotail::testing::RunShell(
        "cd " + dir_.string() + " && " + IOTAIL_BINARY + " run --live_format=none " + args, dir_);
  }
  fs::path dir_;
};

TEST_F(RunValueLogsTest, WindowedLogsHoldTheRunsRatesAndLatencies) {
  const CommandResult r = Iotail(
      "--ioengine=psync --filename=t --size=4m --rw=randread --rate_iops=400 --runtime=1500ms "
      "--time_based --log_avg_msec=250 --write_bw_log=v --write_iops_log=v --write_lat_log=v "
      "--output-format=json");
  ASSERT_EQ(r.status, 0) << r.err;
  const json j = json::parse(r.out);
  const json& read = j["jobs"][0]["read"];
  for (const char* kind : {"bw", "iops", "clat", "lat"}) {
    EXPECT_TRUE(fs::exists(dir_ / (std::string("v_") + kind + ".1.log"))) << kind;
  }
  // A synchronous engine records no slat: its slat log has no lines.
  EXPECT_TRUE(ReadValueLog(dir_ / "v_slat.1.log").empty());
  const auto iops = ReadValueLog(dir_ / "v_iops.1.log");
  const auto bw = ReadValueLog(dir_ / "v_bw.1.log");
  const auto clat = ReadValueLog(dir_ / "v_clat.1.log");
  ASSERT_GE(iops.size(), 5u);
  ASSERT_EQ(bw.size(), iops.size());
  ASSERT_EQ(clat.size(), iops.size());
  for (size_t i = 0; i < iops.size(); ++i) {
    EXPECT_EQ(iops[i].ddir, 0);
    EXPECT_EQ(bw[i].time_ms, iops[i].time_ms);
    if (i + 1 < iops.size()) {
      EXPECT_EQ(iops[i].time_ms % 250, 0u) << "windows close on the epoch-aligned clock";
    }
    // Full windows run at the target rate (4 KiB I/Os: KiB/s = 4 x IOPS).
    if (i > 0 && i + 1 < iops.size()) {
      EXPECT_NEAR(static_cast<double>(iops[i].value), 400, 40) << i;
      EXPECT_NEAR(static_cast<double>(bw[i].value), 1600, 160) << i;
    }
    EXPECT_GE(clat[i].value, read["clat_ns"]["min"].get<uint64_t>());
    EXPECT_LE(clat[i].value, read["clat_ns"]["max"].get<uint64_t>());
  }
}

// log_offset adds fio's offset column before the priority: "time, value, ddir, 0, 0, 0" in a
// windowed log, as fio 3.33 writes it (without: "time, value, ddir, 0, 0").
TEST_F(RunValueLogsTest, LogOffsetAddsFiosOffsetColumn) {
  for (const bool offset : {false, true}) {
    const CommandResult r =
        Iotail(std::string("--name=x --ioengine=null --size=64m --rw=read --rate_iops=100 ") +
               "--runtime=1 --time_based --log_avg_msec=250 --write_bw_log=o --log_offset=" +
               (offset ? "1" : "0"));
    ASSERT_EQ(r.status, 0) << r.err;
    std::ifstream in(dir_ / "o_bw.1.log");
    std::string line;
    ASSERT_TRUE(std::getline(in, line));
    EXPECT_EQ(std::count(line.begin(), line.end(), ','), offset ? 5 : 4) << line;
    EXPECT_TRUE(line.ends_with(offset ? ", 0, 0, 0" : ", 0, 0")) << line;
  }
}

TEST_F(RunValueLogsTest, Fio2gnuplotReadsThemAsTheRunsRate) {
  if (iotail::testing::Capture("command -v fio2gnuplot").status != 0) {
    GTEST_SKIP() << "fio2gnuplot not installed (Debian package fio)";
  }
  const CommandResult r = Iotail(
      "--ioengine=psync --filename=t --size=4m --rw=randwrite --rate_iops=300 --runtime=1500ms "
      "--time_based --log_avg_msec=250 --write_bw_log=v --write_iops_log=v");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto bw = Fio2gnuplotGlobal(dir_, "v_bw.1.log");
  const auto iops = Fio2gnuplotGlobal(dir_, "v_iops.1.log");
  ASSERT_TRUE(bw.count("avg") && iops.count("avg") && iops.count("values_count") &&
              iops.count("min") && iops.count("max"));
  // fio2gnuplot's statistics are those of our lines: it read every one, value by value.
  for (const auto& [name, stats] : {std::pair{"v_iops.1.log", iops}, std::pair{"v_bw.1.log", bw}}) {
    SCOPED_TRACE(name);
    const auto lines = ReadValueLog(dir_ / name);
    ASSERT_GE(lines.size(), 5u);
    double sum = 0, lo = 1e300, hi = 0;
    for (const Line& l : lines) {
      sum += static_cast<double>(l.value);
      lo = std::min(lo, static_cast<double>(l.value));
      hi = std::max(hi, static_cast<double>(l.value));
    }
    EXPECT_EQ(stats.at("values_count"), static_cast<double>(lines.size()));
    EXPECT_NEAR(stats.at("avg"), sum / static_cast<double>(lines.size()), 0.01);
    EXPECT_EQ(stats.at("min"), lo);
    EXPECT_EQ(stats.at("max"), hi);
  }
  // The full windows show the target rate (the edge ones are partial: their rate over a few
  // milliseconds is noisy).
  const auto lines = ReadValueLog(dir_ / "v_iops.1.log");
  for (size_t i = 1; i + 1 < lines.size(); ++i) {
    EXPECT_NEAR(static_cast<double>(lines[i].value), 300, 30) << i;
  }
}

TEST_F(RunValueLogsTest, FiologparserTreatsThemAsFiosOwn) {
  const char* script = "/usr/share/doc/fio/fiologparser.py.gz";
  if (!fs::exists(script) || iotail::testing::Capture("command -v fio").status != 0) {
    GTEST_SKIP() << "fio or its fiologparser.py not installed (Debian package fio)";
  }
  ASSERT_EQ(iotail::testing::Capture("zcat " + std::string(script) + " > " +
                                     (dir_ / "fiologparser.py").string())
                .status,
            0);
  ASSERT_EQ(Iotail("--ioengine=psync --filename=t --size=1m --rw=randread --rate_iops=200 "
                   "--runtime=600ms --time_based --log_avg_msec=200 --write_bw_log=ours")
                .status,
            0);
  const CommandResult fio = iotail::testing::RunShell(
      "cd " + dir_.string() +
          " && fio --name=x --ioengine=psync --filename=t --size=1m --rw=randread "
          "--rate_iops=200 --runtime=0.6 --time_based --log_avg_msec=200 --write_bw_log=theirs",
      dir_);
  ASSERT_EQ(fio.status, 0) << fio.err;
  // fio 3.33 writes five fields per line (time, value, ddir, bs, priority) and so does iotail; the
  // fiologparser.py shipped with it still expects four. Whatever it makes of fio's log, it makes
  // of ours.
  auto parse = [&](const std::string& log) {
    const CommandResult r = iotail::testing::RunShell(
        "cd " + dir_.string() + " && python3 fiologparser.py -s " + log, dir_);
    const size_t last = r.err.rfind('\n', r.err.size() - 2);
    return std::make_pair(r.status, r.err.substr(last == std::string::npos ? 0 : last + 1));
  };
  const auto theirs = parse("theirs_bw.1.log");
  const auto ours = parse("ours_bw.1.log");
  EXPECT_EQ(ours, theirs);
}

}  // namespace run_value_logs_test
