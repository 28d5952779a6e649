// End-to-end tests of a replay against what its trace recorded (issue 39, item 6): a blktrace
// dump with dispatch (D) and completion (C) events carries each I/O's device time; the replay
// records those times beside its own latencies (iotail_replay -> DIR -> recorded_ns, and
// PREFIX_recorded_hist.N.log), and `iotail compare --recorded` sets the two side by side, saying
// which is which and that the recorded time is the device's alone.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/cli/cli_test_util.h"
#include "tests/engine/replay/blktrace_dump.h"

namespace run_replay_recorded_test {

namespace fs = std::filesystem;
using iotail::testing::CommandResult;
using iotail::testing::ReadFile;
using nlohmann::json;

constexpr uint64_t kReadDeviceNs = 200'000;     // each read's D to C in the dump
constexpr uint64_t kWriteDeviceNs = 2'000'000;  // each write's
constexpr int kEach = 40;

class ReplayRecordedTest : public iotail::testing::ScratchDirTest {
 protected:
  std::string P(const std::string& name) const { return (dir_ / name).string(); }
  json Json(const std::string& path) { return json::parse(ReadFile(path)); }

  // A dump of kEach reads and kEach writes, each with its device time (DeviceTimedDump).
  void WriteDump(const std::string& name) {
    std::ofstream(P(name), std::ios::binary)
        << iotail::testing::DeviceTimedDump(kEach, kReadDeviceNs, kWriteDeviceNs);
  }
};

// Per direction (0 read, 1 write, 2 trim) the counts a fio histogram log holds.
std::vector<uint64_t> LogCounts(const std::string& text) {
  std::vector<uint64_t> sums(3, 0);
  for (const std::string& line : iotail::testing::Lines(text)) {
    const std::vector<std::string> f = iotail::testing::SplitOn(line, ",");
    if (f.size() < 4) continue;
    for (size_t i = 3; i < f.size(); ++i) sums.at(std::stoi(f[1])) += std::stoull(f[i]);
  }
  return sums;
}

TEST_F(ReplayRecordedTest, ABlktraceDumpsDeviceTimesAreReportedBesideTheReplay) {
  WriteDump("d.bin");
  const CommandResult r =
      Iotail("run --name=r --read_iolog=" + P("d.bin") + " --replay_redirect=" + P("t") +
             " --write_hist_log=" + P("h") + " --output-format=json+ --output=" + P("o.json"));
  ASSERT_EQ(r.status, 0) << r.err;
  const json j = Json(P("o.json"));
  const json& replay = j["iotail_replay"];
  ASSERT_TRUE(replay.contains("recorded")) << replay.dump();
  EXPECT_EQ(replay["recorded"]["ios"].get<uint64_t>(), 2u * kEach);
  EXPECT_NE(replay["recorded"]["what"].get<std::string>().find("dispatch to completion"),
            std::string::npos);
  for (const auto& [dir, ns] :
       {std::pair{"read", kReadDeviceNs}, std::pair{"write", kWriteDeviceNs}}) {
    const json& rec = replay[dir]["recorded_ns"];
    EXPECT_EQ(rec["N"].get<uint64_t>(), uint64_t{kEach}) << dir;
    EXPECT_EQ(rec["min"].get<uint64_t>(), ns) << dir;  // exact, not bucketed
    EXPECT_EQ(rec["max"].get<uint64_t>(), ns) << dir;
    // fio's percentile rule over its buckets: within a bucket's width (1/64) of the value.
    EXPECT_NEAR(rec["percentile"]["50.000000"].get<double>(), static_cast<double>(ns), ns / 50.0);
    uint64_t binned = 0;
    for (const auto& [value, count] : rec["bins"].items()) binned += count.get<uint64_t>();
    EXPECT_EQ(binned, uint64_t{kEach}) << dir;
    // The replayed I/Os themselves are all done.
    EXPECT_EQ(j["jobs"][0][dir]["total_ios"].get<uint64_t>(), uint64_t{kEach}) << dir;
  }
  // The recorded latencies have a histogram log of their own, as clat's, every I/O counted.
  ASSERT_TRUE(fs::exists(P("h_recorded_hist.1.log")));
  const std::vector<uint64_t> counts = LogCounts(ReadFile(P("h_recorded_hist.1.log")));
  EXPECT_EQ(counts[0], uint64_t{kEach});
  EXPECT_EQ(counts[1], uint64_t{kEach});

  // compare --recorded with one summary: A the trace's, B the replay's clat, said as such.
  const CommandResult text = Iotail("compare --recorded " + P("o.json"));
  ASSERT_EQ(text.status, 0) << text.err;
  EXPECT_NE(text.out.find("recorded by the trace (blktrace's dispatch to completion"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("replayed, clat (submission to reaping)"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("--explain's device stage"), std::string::npos) << text.out;
  const CommandResult cj = Iotail("compare --recorded --output-format=json " + P("o.json"));
  ASSERT_EQ(cj.status, 0) << cj.err;
  const json c = json::parse(cj.out);
  EXPECT_NE(c["a"]["what"].get<std::string>().find("recorded"), std::string::npos);
  EXPECT_FALSE(c["notes"].empty());
  int rows = 0;
  for (const json& row : c["rows"]) {
    if (row["percentile"].get<double>() != 50) continue;
    const double want = row["dir"] == "read" ? kReadDeviceNs / 1e3 : kWriteDeviceNs / 1e3;
    EXPECT_NEAR(row["a"].get<double>(), want, want / 50) << row.dump();
    EXPECT_EQ(row["samples_a"].get<uint64_t>(), uint64_t{kEach});
    EXPECT_EQ(row["samples_b"].get<uint64_t>(), uint64_t{kEach});
    EXPECT_EQ(row["method"], "order statistics");  // with its confidence interval
    ++rows;
  }
  EXPECT_EQ(rows, 2);

  // The histogram logs compare the same way (B named as given).
  const CommandResult logs =
      Iotail("compare --recorded " + P("h_recorded_hist.1.log") + " " + P("h_clat_hist.1.log"));
  ASSERT_EQ(logs.status, 0) << logs.err;
  EXPECT_NE(logs.out.find("# A: " + P("h_recorded_hist.1.log")), std::string::npos) << logs.out;
}

TEST_F(ReplayRecordedTest, CompareRecordedRefusesWhatHoldsNoRecordedLatency) {
  {
    std::ofstream t(P("t.iolog"));
    t << "fio version 3 iolog\n0 " << P("f") << " add\n";
    for (int i = 0; i < 20; ++i) t << i * 100 << " " << P("f") << " read " << i * 4096 << " 4096\n";
  }
  const CommandResult r =
      Iotail("run --name=r --read_iolog=" + P("t.iolog") + " --write_hist_log=" + P("h") +
             " --output-format=json+ --output=" + P("o.json"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_FALSE(Json(P("o.json"))["iotail_replay"].contains("recorded"));
  EXPECT_FALSE(fs::exists(P("h_recorded_hist.1.log")));  // an iolog records no latency
  const CommandResult none = Iotail("compare --recorded " + P("o.json"));
  EXPECT_EQ(none.status, 2);
  EXPECT_NE(none.err.find("holds no latencies recorded by a trace"), std::string::npos) << none.err;
  const CommandResult one_log = Iotail("compare --recorded " + P("h_clat_hist.1.log"));
  EXPECT_EQ(one_log.status, 2);
  EXPECT_NE(one_log.err.find("give both"), std::string::npos) << one_log.err;
}

}  // namespace run_replay_recorded_test
