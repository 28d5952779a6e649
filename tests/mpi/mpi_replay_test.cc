// iotail-mpi with a replay job (read_iolog): every rank replays a trace (its own with {rank}), and
// each rank's lateness reaches the cluster's summary and its JSON, beside the cluster's lateness
// histogram (every rank's, summed exactly) and the cluster's trace (every rank's I/Os).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "mpi_fixture.h"
#include "stats/core/histogram_layout.h"
#include "tests/engine/replay/blktrace_dump.h"

namespace mpi_replay_test {

namespace fs = std::filesystem;
using iotail::testing::mpi::MpiRunTest;
using iotail::testing::mpi::ReadLog;
using nlohmann::json;

// A v3 trace of `n` reads of `file`, 2 ms apart.
void WriteTrace(const fs::path& path, const fs::path& file, int n) {
  std::ofstream t(path);
  t << "fio version 3 iolog\n0 " << file.string() << " add\n";
  for (int i = 0; i < n; ++i) {
    t << i * 2000 << " " << file.string() << " read " << i * 4096 << " 4096\n";
  }
}

TEST_F(MpiRunTest, EachRanksReplayLatenessReachesTheClusterSummary) {
  {
    std::ofstream(dir_ / "data").close();
    fs::resize_file(dir_ / "data", 1 << 20);
  }
  WriteTrace(dir_ / "t.0.iolog", dir_ / "data", 100);
  WriteTrace(dir_ / "t.1.iolog", dir_ / "data", 60);
  const std::string args =
      "--name=r --read_iolog=" + (dir_ / "t.{rank}.iolog").string() + " --ioengine=psync";
  const auto r = Mpi(2, args + " --output-format=json --live_format=none");
  ASSERT_EQ(r.status, 0) << r.err;
  const json summary = json::parse(r.out.substr(r.out.find('{')));
  const json& replay = summary["iotail_replay"];
  EXPECT_EQ(replay["trace_ios"].get<uint64_t>(), 160u);  // each rank's trace
  EXPECT_EQ(replay["issued"].get<uint64_t>(), 160u);
  EXPECT_EQ(replay["lateness_ns"]["N"].get<uint64_t>(), 160u);  // every rank's lateness, summed
  EXPECT_EQ(summary["jobs"][0]["read"]["total_ios"].get<uint64_t>(), 160u);
  const json& ranks = summary["iotail_run"]["ranks"];
  ASSERT_EQ(ranks.size(), 2u);
  for (const json& rank : ranks) {
    ASSERT_TRUE(rank.contains("lateness_p99_ns")) << rank;
    EXPECT_GE(rank["lateness_max_ns"].get<double>(), rank["lateness_p99_ns"].get<double>()) << rank;
    EXPECT_LE(rank["lateness_max_ns"].get<uint64_t>(), replay["lateness_ns"]["max"]) << rank;
  }
  EXPECT_NE(replay["trace"].get<std::string>().find("the other ranks' traces"), std::string::npos);
  EXPECT_EQ(ranks[0]["ios"].get<uint64_t>(), 100u);
  EXPECT_EQ(ranks[1]["ios"].get<uint64_t>(), 60u);

  const auto text = Mpi(2, args + " --live_format=none");
  ASSERT_EQ(text.status, 0) << text.err;
  EXPECT_NE(text.out.find("rank 1 on"), std::string::npos) << text.out;
  size_t lines = 0;
  for (size_t at = 0; (at = text.out.find("lateness p99", at)) != std::string::npos; ++at) ++lines;
  EXPECT_EQ(lines, 2u) << text.out;  // one per rank
}

// A blktrace dump records each I/O's device time: every rank replays it, and the cluster's
// PREFIX_recorded_hist.1.log sums the ranks' recorded latencies, each direction at its own time.
TEST_F(MpiRunTest, TheClustersRecordedLatencyLogSumsEveryRanks) {
  constexpr int kEach = 30;
  constexpr uint64_t kReadNs = 300'000, kWriteNs = 3'000'000;
  std::ofstream(dir_ / "d.bin", std::ios::binary)
      << iotail::testing::DeviceTimedDump(kEach, kReadNs, kWriteNs);
  const auto r = Mpi(2, "--name=r --read_iolog=" + (dir_ / "d.bin").string() +
                            " --replay_redirect=" + (dir_ / "t.{rank}").string() +
                            " --write_hist_log=" + (dir_ / "h").string() +
                            " --output-format=json --live_format=none");
  ASSERT_EQ(r.status, 0) << r.err;
  ASSERT_TRUE(fs::exists(dir_ / "h_recorded_hist.1.log")) << r.err;
  // Per direction, the count, each in the bucket of the one time the dump recorded for it.
  uint64_t count[2] = {0, 0};
  for (const auto& line : ReadLog(dir_ / "h_recorded_hist.1.log")) {
    ASSERT_LT(line.ddir, 2) << "a trim in a dump of reads and writes";
    const auto layout = iotail::stats::HistogramLayout::FromColumnCount(line.counts.size());
    ASSERT_TRUE(layout.has_value()) << line.counts.size();
    for (size_t b = 0; b < line.counts.size(); ++b) {
      if (line.counts[b] == 0) continue;
      count[line.ddir] += line.counts[b];
      const double want = line.ddir == 0 ? kReadNs : kWriteNs;
      EXPECT_NEAR(layout->ValueNs(static_cast<uint32_t>(b)), want, want / 32) << line.ddir;
    }
  }
  EXPECT_EQ(count[0], 2u * kEach);  // both ranks' reads
  EXPECT_EQ(count[1], 2u * kEach);
  EXPECT_TRUE(fs::exists(dir_ / "h_clat_hist.1.log"));
}

}  // namespace mpi_replay_test
