// Tests of SampleStats: fio's running sample statistics (min, max, mean, sample stddev).
#include "stats/core/sample_stats.h"

#include <gtest/gtest.h>

#include <cmath>

namespace iotail::stats {
namespace sample_stats_test {

TEST(SampleStatsTest, EmptySeriesHasZeroMeanAndStddev) {
  const SampleStats s;
  EXPECT_EQ(s.n, 0u);
  EXPECT_EQ(s.Mean(), 0);
  EXPECT_EQ(s.Stddev(), 0);
}

TEST(SampleStatsTest, OneSampleHasNoSpread) {
  SampleStats s;
  s.Add(7);
  EXPECT_EQ(s.min, 7);
  EXPECT_EQ(s.max, 7);
  EXPECT_EQ(s.Mean(), 7);
  EXPECT_EQ(s.Stddev(), 0);
}

TEST(SampleStatsTest, StddevIsTheSampleStddevAsFios) {
  SampleStats s;
  for (double v : {2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0}) s.Add(v);
  EXPECT_EQ(s.n, 8u);
  EXPECT_EQ(s.min, 2);
  EXPECT_EQ(s.max, 9);
  EXPECT_DOUBLE_EQ(s.Mean(), 5);
  // Sum of squared deviations 32, over n - 1 = 7.
  EXPECT_DOUBLE_EQ(s.Stddev(), std::sqrt(32.0 / 7));
}

TEST(SampleStatsTest, MergeEqualsAddingEverySample) {
  SampleStats a, b, all;
  for (double v : {3.0, 1.0, 8.0}) {
    a.Add(v);
    all.Add(v);
  }
  for (double v : {0.5, 12.0}) {
    b.Add(v);
    all.Add(v);
  }
  a.Merge(b);
  EXPECT_EQ(a.n, all.n);
  EXPECT_EQ(a.min, all.min);
  EXPECT_EQ(a.max, all.max);
  EXPECT_DOUBLE_EQ(a.Mean(), all.Mean());
  EXPECT_DOUBLE_EQ(a.Stddev(), all.Stddev());
}

TEST(SampleStatsTest, MergeIntoEmptyTakesTheOthersMinAndMax) {
  SampleStats empty, b;
  b.Add(-4);
  b.Add(6);
  empty.Merge(b);
  EXPECT_EQ(empty.min, -4);
  EXPECT_EQ(empty.max, 6);
  SampleStats unchanged = b;
  unchanged.Merge(SampleStats{});
  EXPECT_EQ(unchanged.n, 2u);
  EXPECT_EQ(unchanged.min, -4);
}

}  // namespace sample_stats_test
}  // namespace iotail::stats
