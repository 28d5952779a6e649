// iotail-mpi under a real mpirun (Open MPI): 4 ranks on this machine run one rate-limited job from
// a common start; the cluster's histogram log equals, bucket for bucket, `iotail merge` of the
// ranks' own logs, and the summary's totals equal the per-rank sums; a rank that cannot open its
// target stops every rank with one error naming that rank, without a hang. Skips, naming the
// reason, where iotail-mpi was not built (no MPI) or mpirun is missing.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli_test_util.h"
#include "nbd_fixture.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct Line {
  uint64_t time_ms = 0;
  int ddir = 0;
  std::vector<uint64_t> counts;
};

std::vector<Line> ReadLog(const fs::path& path) {
  std::vector<Line> lines;
  std::ifstream in(path);
  for (std::string text; std::getline(in, text);) {
    std::stringstream fields(text);
    std::string f;
    Line l;
    std::getline(fields, f, ',');
    l.time_ms = std::stoull(f);
    std::getline(fields, f, ',');
    l.ddir = std::stoi(f);
    std::getline(fields, f, ',');  // bs
    while (std::getline(fields, f, ',')) l.counts.push_back(std::stoull(f));
    lines.push_back(std::move(l));
  }
  return lines;
}

class MpiRunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string(IOTAIL_MPI_BINARY).empty()) GTEST_SKIP() << "iotail-mpi not built (no MPI)";
    mpirun_ = iotail::testing::FindInPath("mpirun");
    if (mpirun_.empty()) GTEST_SKIP() << "mpirun not found (Debian package openmpi-bin)";
    dir_ = iotail::testing::MakeScratchDir("iotail_mpi");
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  iotail::testing::CommandResult Mpi(int ranks, const std::string& args) {
    return iotail::testing::RunShell(
        "cd '" + dir_.string() + "' && timeout -s KILL 120 " + mpirun_ +
            " --allow-run-as-root --oversubscribe --bind-to none -np " + std::to_string(ranks) +
            " " + IOTAIL_MPI_BINARY + " run " + args,
        dir_);
  }
  std::string mpirun_;
  fs::path dir_;
};

TEST_F(MpiRunTest, FourRanksMergeExactlyAndTheSummaryTotalsEveryRank) {
  const auto r = Mpi(4,
                     "--ioengine=null --filename=t.{rank} --size=1m --rate_iops=20000 --runtime=3 "
                     "--time_based --write_hist_log=P --log_hist_msec=500 --log_per_rank "
                     "--output-format=json");
  ASSERT_EQ(r.status, 0) << r.err;
  const json summary = json::parse(r.out.substr(r.out.find('{')));
  const json& ranks = summary["iotail_run"]["ranks"];
  ASSERT_EQ(ranks.size(), 4u) << summary["iotail_run"];
  uint64_t rank_ios = 0;
  for (int k = 0; k < 4; ++k) {
    EXPECT_EQ(ranks[k]["rank"], k);
    EXPECT_LT(std::abs(ranks[k]["start_skew_ns"].get<double>()), 5e6) << ranks[k];
    rank_ios += ranks[k]["ios"].get<uint64_t>();
    EXPECT_TRUE(fs::exists(dir_ / ("t." + std::to_string(k))));  // {rank} in --filename
  }
  const uint64_t ios = summary["jobs"][0]["read"]["total_ios"].get<uint64_t>();
  EXPECT_EQ(ios, rank_ios);
  EXPECT_NEAR(static_cast<double>(ios), 4 * 20000 * 3, 4 * 20000 * 3 * 0.05);
  EXPECT_NE(r.err.find("live over 4 ranks"), std::string::npos) << r.err;

  // The cluster log against `iotail merge` of the ranks' own logs.
  const auto merge = iotail::testing::RunShell("cd '" + dir_.string() + "' && " + IOTAIL_BINARY +
                                                   " merge --time-quantum=500ms -o M.log "
                                                   "P.rank*_clat_hist.*.log",
                                               dir_);
  ASSERT_EQ(merge.status, 0) << merge.err;
  const auto cluster = ReadLog(dir_ / "P_clat_hist.1.log");
  const auto merged = ReadLog(dir_ / "M.log");
  ASSERT_EQ(cluster.size(), merged.size());
  uint64_t logged = 0;
  for (size_t i = 0; i < cluster.size(); ++i) {
    EXPECT_EQ(cluster[i].counts, merged[i].counts) << "line " << i;
    EXPECT_EQ(cluster[i].ddir, merged[i].ddir);
    // Full intervals end where merge's quanta end; the final partial one inside its quantum.
    if (i + 1 < cluster.size()) {
      EXPECT_EQ(cluster[i].time_ms, merged[i].time_ms) << "line " << i;
    } else {
      EXPECT_LE(cluster[i].time_ms, merged[i].time_ms);
      EXPECT_GT(cluster[i].time_ms + 500, merged[i].time_ms);
    }
    for (uint64_t c : cluster[i].counts) logged += c;
  }
  EXPECT_EQ(logged, ios);
  EXPECT_TRUE(fs::exists(dir_ / "P_lat_hist.1.log"));  // rate-limited: the lat log too
}

TEST_F(MpiRunTest, ARankThatCannotStartStopsEveryRankNamingIt) {
  for (int k : {0, 1, 3}) fs::create_directories(dir_ / ("d" + std::to_string(k)));
  const auto r = Mpi(4,
                     "--ioengine=psync --filename=d{rank}/t --size=1m --runtime=30 --time_based "
                     "--rw=write");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("iotail-mpi: rank 2 ("), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("d2/t"), std::string::npos) << r.err;
}

}  // namespace
