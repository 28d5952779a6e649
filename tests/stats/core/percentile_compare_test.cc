// Tests of the comparison of a percentile between two runs: order statistics on one histogram per
// run (seeded lognormal samples in fio's layout) and Welch's t over repetitions.
#include "stats/core/percentile_compare.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace iotail::stats {
namespace percentile_compare_test {

const HistogramLayout kFio3 = HistogramLayout::Fio3();

std::vector<uint64_t> Lognormal(double median_ns, double sigma, int n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::lognormal_distribution<double> dist(std::log(median_ns), sigma);
  std::vector<uint64_t> counts(kFio3Buckets, 0);
  for (int i = 0; i < n; ++i) ++counts[Fio3BucketIndex(static_cast<uint64_t>(dist(rng)))];
  return counts;
}

PercentileComparison Compare(const std::vector<uint64_t>& a, const std::vector<uint64_t>& b,
                             double p) {
  return CompareHistograms(a, b, kFio3, p, 0.95);
}

TEST(PercentileCompareTest, SixMillisecondsIsSlowerThanFive) {
  const auto a = Lognormal(5e6, 0.1, 5000, 1), b = Lognormal(6e6, 0.1, 5000, 2);
  const PercentileComparison c = Compare(a, b, 50);
  EXPECT_EQ(c.verdict, CompareVerdict::kSlower);
  EXPECT_GT(c.lower_ns, 0);
  EXPECT_NEAR(c.diff_ns, 1e6, 0.05e6);
  EXPECT_LE(c.lower_ns, c.diff_ns);
  EXPECT_GE(c.upper_ns, c.diff_ns);
  EXPECT_EQ(Compare(b, a, 50).verdict, CompareVerdict::kFaster);
}

TEST(PercentileCompareTest, SamplesOfOneDistributionShowNoDifference) {
  // 20 pairs of seeds: the interval of the difference holds 0 in every one at p50 and p99 (its
  // coverage is at least 95% and, being conservative, more in practice).
  int differences = 0;
  for (uint64_t seed = 0; seed < 20; ++seed) {
    const auto a = Lognormal(5e6, 0.3, 3000, 100 + seed), b = Lognormal(5e6, 0.3, 3000, 200 + seed);
    for (double p : {50.0, 99.0}) {
      const PercentileComparison c = Compare(a, b, p);
      if (c.verdict != CompareVerdict::kNoDifference) ++differences;
    }
  }
  EXPECT_LE(differences, 1);
}

TEST(PercentileCompareTest, AnEmptySideGivesNoVerdict) {
  const auto a = Lognormal(5e6, 0.1, 100, 1);
  const std::vector<uint64_t> none(kFio3Buckets, 0);
  const PercentileComparison c = Compare(a, none, 50);
  EXPECT_TRUE(std::isnan(c.lower_ns));
  EXPECT_EQ(c.verdict, CompareVerdict::kNoDifference);
}

TEST(PercentileCompareTest, WelchIntervalOverRepetitions) {
  // Means 3 and 5, variances 2.5 each over 5: standard error 1, 8 degrees of freedom, t = 2.306.
  const std::vector<double> a = {1, 2, 3, 4, 5}, b = {3, 4, 5, 6, 7};
  PercentileComparison c = CompareRepetitions(a, b, 0.95);
  EXPECT_DOUBLE_EQ(c.diff_ns, 2);
  EXPECT_NEAR(c.lower_ns, 2 - 2.306004, 1e-5);
  EXPECT_NEAR(c.upper_ns, 2 + 2.306004, 1e-5);
  EXPECT_EQ(c.verdict, CompareVerdict::kNoDifference);
  const std::vector<double> far = {13, 14, 15, 16, 17};
  c = CompareRepetitions(a, far, 0.95);
  EXPECT_EQ(c.verdict, CompareVerdict::kSlower);
  EXPECT_TRUE(std::isnan(CompareRepetitions(a, std::vector<double>{1}, 0.95).lower_ns));
}

// Issue 38: repetitions without spread (the same file listed twice) give no interval, not a
// certain verdict; one repetition with spread is enough for Welch's interval again.
TEST(PercentileCompareTest, IdenticalRepetitionsGiveNoInterval) {
  const std::vector<double> a = {1000, 1000}, b = {1500, 1500};
  PercentileComparison c = CompareRepetitions(a, b, 0.95);
  EXPECT_DOUBLE_EQ(c.diff_ns, 500);
  EXPECT_TRUE(std::isnan(c.lower_ns));
  EXPECT_TRUE(std::isnan(c.upper_ns));
  EXPECT_EQ(c.verdict, CompareVerdict::kNoInterval);
  c = CompareRepetitions(a, std::vector<double>{1400, 1600}, 0.95);
  EXPECT_FALSE(std::isnan(c.lower_ns));
  EXPECT_NE(c.verdict, CompareVerdict::kNoInterval);
}

// Issue 38: p0 and p100 are not exact: one outlier in B's maximum (or A's minimum) is never a
// significant difference, because a sample bounds a population's maximum only from below.
TEST(PercentileCompareTest, TheExtremesAreNeverSignificantFromOneRun) {
  const auto a = Lognormal(5e6, 0.1, 5000, 1);
  auto b = a;
  ++b[Fio3BucketIndex(2'000'000'000)];  // one 2 s outlier
  const PercentileComparison max = Compare(a, b, 100);
  EXPECT_GT(max.diff_ns, 1e9);
  EXPECT_EQ(max.verdict, CompareVerdict::kNoDifference);
  EXPECT_TRUE(std::isinf(max.upper_ns));
  auto low = a;
  ++low[Fio3BucketIndex(1000)];  // one 1 us outlier in A
  const PercentileComparison min = Compare(low, a, 0);
  EXPECT_GT(min.diff_ns, 0);
  EXPECT_EQ(min.verdict, CompareVerdict::kNoDifference);
}

TEST(PercentileCompareTest, PrintedValuesHaveADifferenceButNoInterval) {
  const PercentileComparison c = ComparePrinted(1000, 1500);
  EXPECT_DOUBLE_EQ(c.diff_ns, 500);
  EXPECT_TRUE(std::isnan(c.lower_ns));
  EXPECT_TRUE(std::isnan(c.upper_ns));
  EXPECT_EQ(c.verdict, CompareVerdict::kNoInterval);
  EXPECT_EQ(CompareVerdictName(c.verdict), "no interval");
}

}  // namespace percentile_compare_test
}  // namespace iotail::stats
