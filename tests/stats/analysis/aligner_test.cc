// Tests of time-quantum alignment: splitting (start, end] intervals over quanta.
#include "stats/analysis/aligner.h"

#include <gtest/gtest.h>

#include <map>
#include <stdexcept>

namespace iotail::stats {
namespace aligner_test {

std::map<int64_t, double> SplitAll(const Aligner& a, int64_t start, int64_t end) {
  std::map<int64_t, double> out;
  a.Split(start, end, INT64_MIN / 2, INT64_MAX / 2, [&](int64_t k, double w) { out[k] += w; });
  return out;
}

TEST(AlignerTest, SplitsByOverlapWithWeightsSummingToOne) {
  const Aligner a(1000);
  const auto w = SplitAll(a, 750, 2250);  // 250 in q0, 1000 in q1, 250 in q2
  ASSERT_EQ(w.size(), 3u);
  EXPECT_DOUBLE_EQ(w.at(0), 250.0 / 1500);
  EXPECT_DOUBLE_EQ(w.at(1), 1000.0 / 1500);
  EXPECT_DOUBLE_EQ(w.at(2), 250.0 / 1500);
  for (int64_t start : {0, 1, 333, 999, 1000, 12345}) {
    for (int64_t length : {1, 7, 250, 999, 1000, 1001, 4321}) {
      double sum = 0;
      for (const auto& [k, weight] : SplitAll(a, start, start + length)) {
        EXPECT_GT(weight, 0);
        sum += weight;
      }
      EXPECT_NEAR(sum, 1.0, 1e-12) << start << " " << length;
    }
  }
}

TEST(AlignerTest, IntervalIsOpenAtStartClosedAtEnd) {
  const Aligner a(1000);
  // (0, 1000] lies wholly in quantum 0; (1000, 2000] in quantum 1.
  EXPECT_EQ(SplitAll(a, 0, 1000), (std::map<int64_t, double>{{0, 1.0}}));
  EXPECT_EQ(SplitAll(a, 1000, 2000), (std::map<int64_t, double>{{1, 1.0}}));
  EXPECT_EQ(a.FirstQuantum(1000, 2000), 1);
  EXPECT_EQ(a.LastQuantum(1000, 2000), 1);
  EXPECT_EQ(a.LastQuantum(1000, 2001), 2);
}

TEST(AlignerTest, ZeroLengthBurstFallsIntoTheQuantumEndingAtOrAfterIt) {
  const Aligner a(1000);
  EXPECT_EQ(SplitAll(a, 1400, 1400), (std::map<int64_t, double>{{1, 1.0}}));
  EXPECT_EQ(SplitAll(a, 2000, 2000), (std::map<int64_t, double>{{1, 1.0}}));
  EXPECT_EQ(SplitAll(a, 2001, 2001), (std::map<int64_t, double>{{2, 1.0}}));
}

TEST(AlignerTest, SplitRespectsTheWindow) {
  const Aligner a(100);
  std::map<int64_t, double> in_window;
  a.Split(0, 1000, 3, 5, [&](int64_t k, double w) { in_window[k] += w; });
  EXPECT_EQ(in_window, (std::map<int64_t, double>{{3, 0.1}, {4, 0.1}, {5, 0.1}}));
  std::map<int64_t, double> outside;
  a.Split(1400, 1400, 0, 5, [&](int64_t k, double w) { outside[k] += w; });
  EXPECT_TRUE(outside.empty());
}

TEST(AlignerTest, PeriodEqualToQuantumKeepsWeightsExactlyOne) {
  const Aligner a(250);
  for (int64_t k = 0; k < 100; ++k) {
    const auto w = SplitAll(a, k * 250, (k + 1) * 250);
    ASSERT_EQ(w.size(), 1u);
    EXPECT_EQ(w.begin()->first, k);
    EXPECT_EQ(w.begin()->second, 1.0);  // exactly, so integer counts stay integers
  }
}

TEST(AlignerTest, QuantumOfUsesFloorDivision) {
  const Aligner a(1000);
  EXPECT_EQ(a.QuantumOf(0), 0);
  EXPECT_EQ(a.QuantumOf(999), 0);
  EXPECT_EQ(a.QuantumOf(1000), 1);
  EXPECT_EQ(a.QuantumOf(-1), -1);
  EXPECT_EQ(a.QuantumOf(-1000), -1);
  EXPECT_EQ(a.QuantumOf(-1001), -2);
  EXPECT_EQ(a.QuantumStart(3), 3000);
  // Epoch times are aligned to multiples of the quantum.
  const Aligner q(500);
  EXPECT_EQ(q.QuantumStart(q.QuantumOf(1'795'315'430'677)), 1'795'315'430'500);
}

TEST(AlignerTest, RejectsNonPositiveQuantum) {
  EXPECT_THROW(Aligner(0), std::invalid_argument);
  EXPECT_THROW(Aligner(-5), std::invalid_argument);
}

TEST(AlignerTest, InfersTheJobStart) {
  // Relative logs start at 0.
  EXPECT_EQ(InferJobStart(251, 501, std::nullopt), 0);
  EXPECT_EQ(InferJobStart(251, 501, 1000), 0);
  const int64_t t = 1'795'315'430'677;
  EXPECT_TRUE(IsEpochTime(t));
  EXPECT_FALSE(IsEpochTime(99'999'999'999));
  // Epoch logs: log_hist_msec before the first end when given...
  EXPECT_EQ(InferJobStart(t, t + 250, 100), t - 100);
  // ...else the spacing of the first two distinct end times...
  EXPECT_EQ(InferJobStart(t, t + 250, std::nullopt), t - 250);
  // ...else the first end itself.
  EXPECT_EQ(InferJobStart(t, std::nullopt, std::nullopt), t);
}

}  // namespace aligner_test
}  // namespace iotail::stats
