// Tests of the order-statistic confidence intervals of percentiles and the quantile functions:
// exact ranks against the binomial (values from Python's exact sums), and coverage of the true
// quantile on seeded samples of known distributions put into fio's histogram layout.
#include "stats/core/percentile_ci.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace iotail::stats {
namespace percentile_ci_test {

const HistogramLayout kFio3 = HistogramLayout::Fio3();

TEST(PercentileCiTest, ExactRanksOfSmallSamplesMatchTheBinomial) {
  // Classic: the median of 10 samples lies between X(2) and X(9) with probability 0.978515625.
  RankInterval r = OrderStatisticRanks(10, 50, 0.95);
  EXPECT_EQ(r.lower_rank, 2u);
  EXPECT_EQ(r.upper_rank, 9u);
  EXPECT_NEAR(r.coverage, 0.978515625, 1e-12);
  r = OrderStatisticRanks(100, 50, 0.95);
  EXPECT_EQ(r.lower_rank, 40u);
  EXPECT_EQ(r.upper_rank, 61u);
  EXPECT_NEAR(r.coverage, 0.9647997997822952, 1e-9);
  r = OrderStatisticRanks(1000, 99, 0.95);
  EXPECT_EQ(r.lower_rank, 983u);
  EXPECT_EQ(r.upper_rank, 997u);
  EXPECT_NEAR(r.coverage, 0.9760947634979772, 1e-9);
}

TEST(PercentileCiTest, TheExtremesAreBoundedOnOneSideOnly) {
  RankInterval r = OrderStatisticRanks(100, 0, 0.95);
  EXPECT_EQ(r.lower_rank, 0u);  // no lower bound: the population may go lower
  EXPECT_EQ(r.upper_rank, 1u);  // at most the sample's minimum
  r = OrderStatisticRanks(100, 100, 0.95);
  EXPECT_EQ(r.lower_rank, 100u);  // at least the sample's maximum
  EXPECT_EQ(r.upper_rank, 101u);  // no upper bound
}

TEST(PercentileCiTest, TooFewSamplesLeaveTheUpperBoundOpen) {
  // 100 samples cannot bound p99 from above at 95%: X(100) is below Q99 with probability 0.366.
  const RankInterval r = OrderStatisticRanks(100, 99, 0.95);
  EXPECT_EQ(r.lower_rank, 97u);
  EXPECT_EQ(r.upper_rank, 101u);
  std::vector<uint64_t> counts(kFio3Buckets, 0);
  counts[Fio3BucketIndex(5'000'000)] = 100;
  const auto ci = PercentileIntervals(std::span<const uint64_t>(counts), kFio3, {{99.0}}, 0.95);
  EXPECT_TRUE(std::isinf(ci[0].upper_ns));
  EXPECT_EQ(ci[0].lower_ns, kFio3.LowerNs(Fio3BucketIndex(5'000'000)));
}

TEST(PercentileCiTest, NormalApproximationAgreesWithTheExactSumAtTheSwitch) {
  // N p (1 - p) just below and above the switch to the normal approximation: the ranks move by
  // at most one and stay about 1.96 standard deviations from N p.
  for (uint64_t n : {2'700'000ull, 2'900'000ull}) {
    const RankInterval r = OrderStatisticRanks(n, 50, 0.95);
    const double sd = std::sqrt(n * 0.25);
    EXPECT_NEAR(static_cast<double>(r.lower_rank), n / 2.0 - 1.96 * sd, 2.0) << n;
    EXPECT_NEAR(static_cast<double>(r.upper_rank), n / 2.0 + 1.96 * sd, 2.0) << n;
    EXPECT_GE(r.coverage, 0.95);
    EXPECT_LT(r.coverage, 0.951);
  }
}

TEST(PercentileCiTest, EmptyHistogramGivesNaN) {
  std::vector<uint64_t> counts(kFio3Buckets, 0);
  const auto ci = PercentileIntervals(std::span<const uint64_t>(counts), kFio3, {{50.0}}, 0.95);
  EXPECT_TRUE(std::isnan(ci[0].lower_ns));
  EXPECT_TRUE(std::isnan(ci[0].upper_ns));
}

// How many of `trials` seeded samples of `n` draws (put into fio 3's layout) have an interval at
// `confidence` that holds the true quantile of percentile p.
template <typename Distribution>
int Covered(Distribution dist, double true_quantile_ns, double p, double confidence, int n,
            int trials, double* mean_relative_width) {
  int covered = 0;
  double width = 0;
  for (int t = 0; t < trials; ++t) {
    std::mt19937_64 rng(1000 + static_cast<uint64_t>(t));
    std::vector<uint64_t> counts(kFio3Buckets, 0);
    for (int i = 0; i < n; ++i) ++counts[Fio3BucketIndex(static_cast<uint64_t>(dist(rng)))];
    const auto ci =
        PercentileIntervals(std::span<const uint64_t>(counts), kFio3, {{p}}, confidence);
    if (ci[0].lower_ns <= true_quantile_ns && true_quantile_ns <= ci[0].upper_ns) ++covered;
    width += (ci[0].upper_ns - ci[0].lower_ns) / true_quantile_ns / trials;
  }
  *mean_relative_width = width;
  return covered;
}

TEST(PercentileCiTest, IntervalsCoverTheTrueQuantileOfLognormalSamples) {
  // Lognormal latencies around 1 ms (mu = ln 1e6 ns, sigma = 0.5), 2000 samples per trial.
  const double mu = std::log(1e6), sigma = 0.5;
  for (double p : {50.0, 99.0}) {
    const double truth = std::exp(mu + sigma * NormalQuantile(p / 100));
    double width = 0;
    const int covered =
        Covered(std::lognormal_distribution<double>(mu, sigma), truth, p, 0.95, 2000, 100, &width);
    EXPECT_GE(covered, 90) << "p" << p;
    // Not trivially wide: a few percent of the quantile at p50, some tens at p99.
    EXPECT_LT(width, p == 50 ? 0.1 : 0.4) << "p" << p;
  }
}

TEST(PercentileCiTest, IntervalsCoverTheTrueQuantileOfExponentialSamples) {
  // Exponential latencies with a 200 us mean, 500 samples per trial (exact binomial throughout).
  const double mean_ns = 200'000;
  for (double p : {50.0, 99.0}) {
    const double truth = -std::log(1 - p / 100) * mean_ns;
    double width = 0;
    const int covered = Covered(std::exponential_distribution<double>(1 / mean_ns), truth, p, 0.95,
                                500, 100, &width);
    EXPECT_GE(covered, 90) << "p" << p;
  }
}

TEST(PercentileCiTest, ANarrowConfidenceCoversLess) {
  // The check above can fail: a 50% interval misses the true median in a good share of trials.
  const double mu = std::log(1e6), sigma = 0.5;
  double width = 0;
  const int covered = Covered(std::lognormal_distribution<double>(mu, sigma), std::exp(mu), 50, 0.5,
                              2000, 100, &width);
  EXPECT_LT(covered, 85);
  EXPECT_GT(covered, 35);
}

TEST(PercentileCiTest, QuantileFunctionsMatchTables) {
  EXPECT_NEAR(NormalQuantile(0.975), 1.959963985, 1e-8);
  EXPECT_NEAR(NormalQuantile(0.5), 0, 1e-10);
  EXPECT_NEAR(StudentTQuantile(0.975, 1), 12.7062047, 1e-5);
  EXPECT_NEAR(StudentTQuantile(0.975, 4), 2.7764451, 1e-6);
  EXPECT_NEAR(StudentTQuantile(0.975, 10), 2.2281389, 1e-6);
  EXPECT_NEAR(StudentTQuantile(0.025, 30), -2.0422725, 1e-6);
}

}  // namespace percentile_ci_test
}  // namespace iotail::stats
