// fio's random distributions as BlockDistribution draws them: how much of the traffic the hottest
// blocks get (zipf by its exact rank frequencies, pareto by its h/1-h rule, normal by its sigma),
// against the uniform permutation, and the parser's errors.
#include "engine/random_distribution.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

#include "engine/io_pattern.h"
#include "stats/core/errors.h"

namespace iotail::engine {
namespace {

constexpr uint64_t kBlocks = 10'000;
constexpr int kDraws = 400'000;

// Share of the draws that fell on the hottest `fraction` of the blocks.
double HottestShare(const std::function<uint64_t()>& next, double fraction) {
  std::vector<uint64_t> counts(kBlocks, 0);
  for (int i = 0; i < kDraws; ++i) {
    const uint64_t b = next();
    EXPECT_LT(b, kBlocks);
    if (b < kBlocks) ++counts[b];
  }
  std::sort(counts.rbegin(), counts.rend());
  uint64_t hot = 0;
  for (size_t i = 0; i < static_cast<size_t>(fraction * kBlocks); ++i) hot += counts[i];
  return static_cast<double>(hot) / kDraws;
}

TEST(RandomDistributionTest, ZipfFollowsItsRankFrequencies) {
  BlockDistribution zipf(ParseDistribution("zipf:1.2"), kBlocks, 42);
  std::vector<uint64_t> counts(kBlocks, 0);
  for (int i = 0; i < kDraws; ++i) ++counts[zipf.Next()];
  std::vector<uint64_t> sorted = counts;
  std::sort(sorted.rbegin(), sorted.rend());
  double norm = 0;
  for (uint64_t k = 1; k <= kBlocks; ++k) norm += std::pow(static_cast<double>(k), -1.2);
  // Rank k is drawn with probability k^-theta / sum; the first ranks have enough draws to check.
  for (uint64_t k = 1; k <= 4; ++k) {
    const double expected = kDraws * std::pow(static_cast<double>(k), -1.2) / norm;
    EXPECT_NEAR(static_cast<double>(sorted[k - 1]), expected, 5 * std::sqrt(expected)) << k;
  }
  BlockDistribution again(ParseDistribution("zipf:1.2"), kBlocks, 42);
  EXPECT_GT(HottestShare([&] { return again.Next(); }, 0.1), 0.85);
}

TEST(RandomDistributionTest, HotSpotIsContiguousAtTheCentre) {
  BlockDistribution zipf(ParseDistribution("zipf:1.5:0.25"), kBlocks, 7);
  std::vector<uint64_t> counts(kBlocks, 0);
  for (int i = 0; i < kDraws; ++i) ++counts[zipf.Next()];
  const auto hottest = std::max_element(counts.begin(), counts.end()) - counts.begin();
  EXPECT_EQ(hottest, static_cast<long>(kBlocks / 4));
  EXPECT_GT(counts[kBlocks / 4 + 1], counts[kBlocks / 4 + 10]);  // rank 2 next to rank 1
}

TEST(RandomDistributionTest, ParetoPutsHOfTheTrafficOnOneMinusHOfTheBlocks) {
  BlockDistribution pareto(ParseDistribution("pareto:0.9"), kBlocks, 3);
  EXPECT_NEAR(HottestShare([&] { return pareto.Next(); }, 0.1), 0.9, 0.02);
  BlockDistribution eighty(ParseDistribution("pareto:0.8"), kBlocks, 3);
  EXPECT_NEAR(HottestShare([&] { return eighty.Next(); }, 0.2), 0.8, 0.02);
}

TEST(RandomDistributionTest, NormalKeepsSixtyEightPercentWithinOneSigma) {
  BlockDistribution normal(ParseDistribution("normal:10"), kBlocks, 5);
  int within = 0;
  for (int i = 0; i < kDraws; ++i) {
    const double b = static_cast<double>(normal.Next());
    if (std::abs(b - kBlocks / 2.0) <= 0.1 * kBlocks) ++within;
  }
  EXPECT_NEAR(static_cast<double>(within) / kDraws, 0.6827, 0.01);
}

TEST(RandomDistributionTest, UniformSpreadsEvenly) {
  BlockDistribution uniform(ParseDistribution("random"), kBlocks, 11);
  EXPECT_LT(HottestShare([&] { return uniform.Next(); }, 0.1), 0.13);
  BlockPermutation permutation(kBlocks, 11);
  EXPECT_NEAR(HottestShare([&] { return permutation.Next(); }, 0.1), 0.1, 1e-9);
}

TEST(RandomDistributionTest, BadSpecificationsAreUsageErrors) {
  for (const char* bad : {"zipf", "zipf:0", "pareto:1", "pareto:x", "normal:0", "normal:10:2",
                          "zoned:60/10:40/90", "gauss:1", "random:1"}) {
    EXPECT_THROW(ParseDistribution(bad), stats::UsageError) << bad;
  }
}

}  // namespace
}  // namespace iotail::engine
