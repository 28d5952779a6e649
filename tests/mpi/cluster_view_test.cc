// Rank 0's --explain stages in iotail-mpi (mpi/cluster_view.h, mpi/rank_messages.h), without MPI: a
// stage's ForwardSink posts its stage with the interval summed per job; the ClusterView merges each
// stage by period into that stage's cluster log (one delta, the bytes the ranks' logs account for);
// a rank's totals (ExplainDone) end its stages even when it sent no final interval; a stage out of
// range is refused.
#include "mpi/cluster_view.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "mpi/rank_messages.h"

namespace iotail::mpi {
namespace cluster_view_test {

// Keeps what it is given: one delta per call.
struct Kept final : stats::IntervalSink {
  void OnInterval(const stats::IntervalInfo& info,
                  std::span<const stats::RecorderSnapshot> deltas) override {
    ASSERT_EQ(deltas.size(), 1u);
    times.push_back(info.time_ms);
    finals.push_back(info.final);
    sums.push_back(deltas[0]);
  }
  void Close() override { ++closed; }
  std::vector<uint64_t> times;
  std::vector<bool> finals;
  std::vector<stats::RecorderSnapshot> sums;
  int closed = 0;
};

// One interval of a device stage from a rank of two workers (job 0): `ios` joined 4 KiB reads of
// `us` microseconds each per worker.
ClusterInterval StageInterval(uint64_t time_ms, uint64_t ios, uint64_t us, bool final) {
  Mailbox mailbox;
  ForwardSink sink(mailbox, 1, static_cast<int>(stats::Stage::kDevice));
  const size_t job_of[] = {0, 0};
  sink.SetWorkers(job_of, {}, 0);
  std::vector<stats::RecorderSnapshot> deltas(2);
  for (auto& d : deltas) {
    d.dirs[0].ios = ios;
    d.dirs[0].bytes = ios * 4096;
    for (uint64_t k = 0; k < ios; ++k) stats::AddSample(d.dirs[0].clat, us * 1000);
  }
  sink.OnInterval({time_ms, (time_ms - 500) * 1'000'000, time_ms * 1'000'000, final, 0}, deltas);
  auto messages = mailbox.TakeAll();
  EXPECT_EQ(messages.size(), 1u);
  EXPECT_EQ(messages[0].tag, kTagExplain);
  EXPECT_EQ(messages[0].words[0], static_cast<uint64_t>(stats::Stage::kDevice));
  return DecodeInterval(std::span<const uint64_t>(messages[0].words).subspan(1));
}

TEST(ClusterViewTest, EachStageMergesByPeriodIntoItsClusterLog) {
  ClusterView view(2, 1, 500);
  Kept device;
  cli::ViewSinks sinks;
  sinks.explain_logs[static_cast<size_t>(stats::Stage::kDevice)] = &device;
  view.SetView(sinks);
  const size_t d = static_cast<size_t>(stats::Stage::kDevice);
  view.explain(d).Add(0, StageInterval(500, 3, 100, false));
  EXPECT_TRUE(device.times.empty());  // rank 1 may still hold period 1
  view.explain(d).Add(1, StageInterval(500, 2, 200, false));
  ASSERT_EQ(device.times.size(), 1u);
  EXPECT_EQ(device.times[0], 500u);
  EXPECT_EQ(device.sums[0].dirs[0].ios, 2u * (3 + 2));
  EXPECT_EQ(device.sums[0].dirs[0].bytes, 2u * (3 + 2) * 4096);
  EXPECT_EQ(device.sums[0].dirs[0].clat.n, 10u);
  EXPECT_EQ(device.sums[0].dirs[0].clat.min_ns, 100'000u);
  EXPECT_EQ(device.sums[0].dirs[0].clat.max_ns, 200'000u);
  // The clat reducer is apart: it has seen nothing.
  EXPECT_EQ(view.reducer().emitted(), 0u);
  // Rank 0's final; rank 1 sends no more (its totals came): the last period is out, final.
  view.explain(d).Add(0, StageInterval(730, 1, 50, true));
  EXPECT_EQ(device.times.size(), 1u);
  view.ExplainDone(1);
  ASSERT_EQ(device.times.size(), 2u);
  EXPECT_EQ(device.times[1], 730u);
  EXPECT_TRUE(device.finals[1]);
  EXPECT_EQ(device.sums[1].dirs[0].ios, 2u);
  EXPECT_EQ(device.closed, 1);
  EXPECT_TRUE(view.explain(d).Complete());
  EXPECT_FALSE(view.reducer().Complete());
}

TEST(ClusterViewTest, AStageOutOfRangeIsRefused) {
  ClusterView view(1, 1, 500);
  EXPECT_THROW(view.explain(stats::kStageCount), std::runtime_error);
}

}  // namespace cluster_view_test
}  // namespace iotail::mpi
