// iotail-mpi with a replay job (read_iolog): every rank replays a trace (its own with {rank}), and
// each rank's lateness reaches the cluster's summary and its JSON, beside the cluster's lateness
// histogram (every rank's, summed exactly) and the cluster's trace (every rank's I/Os).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "mpi_fixture.h"

namespace mpi_replay_test {

namespace fs = std::filesystem;
using iotail::testing::mpi::MpiRunTest;
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

}  // namespace mpi_replay_test
