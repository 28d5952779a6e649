// iotail-mpi with --explain under a real mpirun (issue 34): the cluster's stage logs
// (PREFIX_explain_STAGE_hist.1.log) of a 4-rank run, each rank reading a loop device of its own,
// equal `iotail merge` of the ranks' own stage logs bucket for bucket (and the summary's stages are
// every rank's), and are written too when the ranks write no logs of their own. Needs root
// (losetup) and a kernel that loads the BPF programs; without them each test skips with the reason
// (the run's own, from its JSON), never passing without running.
#include <gtest/gtest.h>

#include <array>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "mpi_fixture.h"
#include "tests/engine/explain_fixture.h"

namespace mpi_explain_test {

namespace fs = std::filesystem;
using iotail::testing::LoopDevice;
using iotail::testing::mpi::MpiRunTest;
using iotail::testing::mpi::ReadLog;
using nlohmann::json;

constexpr int kRanks = 4;
constexpr std::array<const char*, 5> kStages = {"schedule", "submit", "queue", "device",
                                                "delivery"};

class MpiExplainTest : public MpiRunTest {
 protected:
  void SetUp() override {
    MpiRunTest::SetUp();
    if (IsSkipped()) return;
    // A loop device per rank, each reached as DIR/devN (rank N's --filename=DIR/dev{rank}).
    for (int r = 0; r < kRanks; ++r) {
      loops_[r] = std::make_unique<LoopDevice>();
      if (std::string why = loops_[r]->AttachNewFile(16 << 20); !why.empty()) {
        GTEST_SKIP() << why;
      }
      fs::create_symlink(loops_[r]->path(), dir_ / ("dev" + std::to_string(r)));
    }
  }
  void TearDown() override {
    for (auto& loop : loops_) loop.reset();
    MpiRunTest::TearDown();
  }

  // A 4-rank --explain run of random 4 KiB reads with `args`; its JSON summary, or null with
  // skip_ set when this machine gives the run no kernel view.
  json Run(const std::string& args) {
    const auto r = Mpi(kRanks, "--name=x --filename=" + (dir_ / "dev{rank}").string() +
                                   " --direct=1 --rw=randread --bs=4k --ioengine=libaio "
                                   "--iodepth=4 --runtime=2 --time_based --explain "
                                   "--log_hist_msec=250 --output-format=json " +
                                   args);
    EXPECT_EQ(r.status, 0) << r.err;
    if (r.status != 0 || r.out.find('{') == std::string::npos) return json();
    json j = json::parse(r.out.substr(r.out.find('{')));
    skip_ = j["iotail_run"]["explain"]["why_not"].get<std::string>();
    return skip_.empty() ? j : json();
  }

  // The I/Os counted in a log (every bucket of every line).
  uint64_t Logged(const std::string& name) {
    uint64_t n = 0;
    for (const auto& line : ReadLog(dir_ / name)) {
      for (uint64_t c : line.counts) n += c;
    }
    return n;
  }

  std::array<std::unique_ptr<LoopDevice>, kRanks> loops_;
  std::string skip_;
};

// --log_per_rank: every stage's cluster log is merge of the ranks' stage logs, bucket for bucket;
// every stage counts the same joined I/Os, nearly all the run's (each rank's device its own), and
// the summary's stages count them all.
TEST_F(MpiExplainTest, ClusterStageLogsEqualMergeOfTheRanks) {
  const json j = Run("--log_per_rank --write_hist_log=P");
  if (!skip_.empty()) GTEST_SKIP() << "no kernel view here: " << skip_;
  ASSERT_FALSE(j.is_null());
  const uint64_t ios = j["jobs"][0]["read"]["total_ios"].get<uint64_t>();
  EXPECT_EQ(CompareWithMerge("P", 250), ios);
  uint64_t joined = 0;
  for (const char* stage : kStages) {
    const std::string kind = std::string("explain_") + stage;
    for (int r = 0; r < kRanks; ++r) {
      EXPECT_TRUE(fs::exists(dir_ / ("P.rank" + std::to_string(r) + "_" + kind + "_hist.1.log")));
    }
    const uint64_t logged = CompareWithMerge("P", 250, kind);
    if (joined == 0) joined = logged;
    EXPECT_EQ(logged, joined) << kind;
  }
  EXPECT_GT(joined, ios * 9 / 10);
  EXPECT_LE(joined, ios);
  EXPECT_GT(ReadLog(dir_ / "P_explain_device_hist.1.log").size(), 4u);
  // The summary's stages are the cluster's too: every rank's joined I/Os.
  const json& e = j["jobs"][0]["iotail_explain"]["read"];
  EXPECT_EQ(e["ios_joined"].get<uint64_t>(), joined);
  EXPECT_EQ(e["ios_joined"].get<uint64_t>() + e["ios_not_joined"].get<uint64_t>(), ios);
  EXPECT_EQ(e["stages"]["device"]["N"].get<uint64_t>(), joined);
}

// Without --log_per_rank the ranks write no logs, yet forward their stages: the cluster's stage
// logs hold the joined I/Os of every rank.
TEST_F(MpiExplainTest, ClusterStageLogsWithoutRankLogs) {
  const json j = Run("--write_hist_log=P");
  if (!skip_.empty()) GTEST_SKIP() << "no kernel view here: " << skip_;
  ASSERT_FALSE(j.is_null());
  const uint64_t ios = j["jobs"][0]["read"]["total_ios"].get<uint64_t>();
  EXPECT_EQ(Logged("P_clat_hist.1.log"), ios);
  for (const auto& entry : fs::directory_iterator(dir_)) {
    EXPECT_EQ(entry.path().filename().string().find(".rank"), std::string::npos) << entry.path();
  }
  for (const char* stage : kStages) {
    const uint64_t logged = Logged(std::string("P_explain_") + stage + "_hist.1.log");
    EXPECT_GT(logged, ios * 9 / 10) << stage;
    EXPECT_LE(logged, ios) << stage;
  }
}

}  // namespace mpi_explain_test
