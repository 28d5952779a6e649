// LatencySearch: fio 3.33's latency target search step by step (io_u.c's lat_target_*), on a
// simulated device whose latency grows with the depth.
#include "engine/latency_target.h"

#include <gtest/gtest.h>

#include <functional>
#include <vector>

namespace iotail::engine {
namespace latency_target_test {

using Step = LatencySearch::Step;

JobSpec Spec(uint32_t iodepth, double percentile, bool run = false) {
  JobSpec s;
  s.queue.iodepth = iodepth;
  s.latency_target.target_ns = 1'000'000;
  s.latency_target.window_ns = 100'000'000;
  s.latency_target.percentile = percentile;
  s.latency_target.run = run;
  return s;
}

// Runs windows of 100 I/Os; a depth that `meets` has them all under the target, else all over.
// Returns the depth of each window, ending at kDone (or after max_windows).
std::vector<uint32_t> Walk(const JobSpec& spec, const std::function<bool(uint32_t)>& meets,
                           int max_windows, bool* done = nullptr) {
  LatencySearch s(spec);
  uint64_t now = 0, ios = 0;
  s.Start(now, ios);
  std::vector<uint32_t> depths;
  for (int w = 0; w < max_windows; ++w) {
    depths.push_back(s.depth());
    for (int i = 0; i < 100; ++i) {
      ++ios;
      EXPECT_EQ(s.OnCompletion(meets(s.depth()) ? 900'000 : 1'100'000), Step::kNone);
    }
    now += spec.latency_target.window_ns;
    const Step step = s.Check(now, ios);
    if (step == Step::kDone) {
      if (done) *done = true;
      return depths;
    }
    if (s.limit() == 0) s.Drained(now, ios);
  }
  if (done) *done = false;
  return depths;
}

TEST(LatencySearchTest, DoublesThenBisectsToTheDeepestDepthThatMeetsTheTarget) {
  bool done = false;
  // Depths up to 2 meet the target: 1, 2, 4 (fails), 3 (fails), 2, then the final window at 2.
  EXPECT_EQ(Walk(
                Spec(16, 99), [](uint32_t d) { return d <= 2; }, 20, &done),
            (std::vector<uint32_t>{1, 2, 4, 3, 2, 2}));
  EXPECT_TRUE(done);
  EXPECT_EQ(Walk(
                Spec(16, 99), [](uint32_t d) { return d <= 5; }, 20, &done),
            (std::vector<uint32_t>{1, 2, 4, 8, 6, 5, 5}));
  EXPECT_TRUE(done);
}

TEST(LatencySearchTest, StopsAtIodepthWhenEveryDepthMeetsTheTarget) {
  bool done = false;
  EXPECT_EQ(Walk(
                Spec(8, 99), [](uint32_t) { return true; }, 20, &done),
            (std::vector<uint32_t>{1, 2, 4, 8, 8}));
  EXPECT_TRUE(done);
}

TEST(LatencySearchTest, FailingAtDepthOneKeepsTheWindowGoing) {
  // fio's trace with 2 ms per request and a 7 ms target on a loaded host: up to 2, down to 1.
  bool done = false;
  EXPECT_EQ(Walk(
                Spec(16, 99), [](uint32_t) { return false; }, 5, &done),
            (std::vector<uint32_t>{1, 1, 1, 1, 1}));
  EXPECT_FALSE(done);
}

TEST(LatencySearchTest, LatencyRunNeverEndsAndRaisesTheCeilingWhenStable) {
  bool done = false;
  const auto depths = Walk(
      Spec(16, 99, true), [](uint32_t d) { return d <= 2; }, 12, &done);
  EXPECT_FALSE(done);
  // 1, 2, 4, 3, then 2 three times (stable just under high 3: high becomes 4), then 3 again.
  EXPECT_EQ(depths, (std::vector<uint32_t>{1, 2, 4, 3, 2, 2, 2, 3, 2, 2, 2, 3}));
}

TEST(LatencySearchTest, PercentileHundredLowersTheDepthAtTheFirstIoOverTheTarget) {
  LatencySearch s(Spec(16, 100));
  s.Start(0, 0);
  EXPECT_EQ(s.OnCompletion(1'100'000), Step::kFatal);  // at depth 1: fio's max latency exceeded
  ASSERT_EQ(s.Check(100'000'000, 10),
            Step::kNone);  // success: 10 of 10 (the failure is not counted)
  EXPECT_EQ(s.depth(), 2u);
  ASSERT_EQ(s.Check(200'000'000, 20), Step::kNone);
  EXPECT_EQ(s.depth(), 4u);
  EXPECT_EQ(s.OnCompletion(1'000'000), Step::kNone);  // at the target meets it
  EXPECT_EQ(s.OnCompletion(1'000'001), Step::kDrain);
  EXPECT_EQ(s.limit(), 0u);
  s.Drained(250'000'000, 25);
  EXPECT_EQ(s.depth(), 3u);  // half way down to low 2
}

TEST(LatencySearchTest, AnEmptyWindowIsAFailureAsInFio) {
  LatencySearch s(Spec(16, 50));
  s.Start(0, 0);
  ASSERT_EQ(s.Check(100'000'000, 10), Step::kNone);
  EXPECT_EQ(s.depth(), 2u);
  EXPECT_EQ(s.Check(200'000'000, 10), Step::kDrain);  // 0 I/Os: 0/0 is no success
}

TEST(LatencySearchTest, OffKeepsIodepth) {
  JobSpec spec;
  spec.queue.iodepth = 32;
  LatencySearch s(spec);
  s.Start(0, 0);
  EXPECT_FALSE(s.enabled());
  EXPECT_EQ(s.limit(), 32u);
  EXPECT_EQ(s.OnCompletion(UINT64_MAX), Step::kNone);
}

}  // namespace latency_target_test
}  // namespace iotail::engine
