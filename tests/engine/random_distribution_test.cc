// fio's random distributions as BlockDistribution draws them: how much of the traffic the hottest
// blocks get (zipf by its exact rank frequencies, pareto by its h/1-h rule, normal by its sigma),
// against the uniform permutation, and the parser's errors.
#include "engine/random_distribution.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <vector>

#include "engine/io_pattern.h"
#include "stats/core/errors.h"

namespace iotail::engine {
namespace random_distribution_test {

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
  for (const char* bad :
       {"zipf", "zipf:0", "pareto:1", "pareto:x", "normal:0", "normal:10:2", "gauss:1", "random:1",
        // fio's zone_split_ddir: shares must make 100, sizes at most 100%.
        "zoned:60/10:30/90", "zoned:60/50:40/60", "zoned:50/5:30/15:20/,50/50", "zoned:abc",
        "zoned:60/x:40/", "zoned_abs:50/1g:50/1g"}) {
    EXPECT_THROW(ParseDistribution(bad), stats::UsageError) << bad;
  }
}

// fio's examples/rand-zones.fio: 50% of the I/Os to the first 5% of the file, 30% to the next 15%,
// 20% to the rest (the size left out is what remains: 80%).
TEST(RandomDistributionTest, ZonedSendsEachShareToItsZone) {
  const DistributionSpec spec = ParseDistribution("zoned:50/5:30/15:20/");
  ASSERT_EQ(spec.zones.size(), 3u);
  EXPECT_EQ(spec.zones[2].size, 80u);
  BlockDistribution zoned(spec, kBlocks, 5);
  std::array<uint64_t, 3> in{};
  for (int i = 0; i < kDraws; ++i) {
    const uint64_t b = zoned.Next();
    ASSERT_LT(b, kBlocks);
    in[b < kBlocks * 5 / 100 ? 0 : b < kBlocks * 20 / 100 ? 1 : 2] += 1;
  }
  EXPECT_NEAR(static_cast<double>(in[0]) / kDraws, 0.5, 0.01);
  EXPECT_NEAR(static_cast<double>(in[1]) / kDraws, 0.3, 0.01);
  EXPECT_NEAR(static_cast<double>(in[2]) / kDraws, 0.2, 0.01);
}

// zoned_abs with sizes, and per file: two files of kBlocks / 2 blocks of 4 KiB; 60% of the I/Os
// go to each file's first 64 KiB (16 blocks), 40% to the next 64 KiB; none beyond.
TEST(RandomDistributionTest, ZonedAbsTakesSizesInEachFile) {
  const auto size = [](std::string_view text, std::string_view) -> uint64_t {
    return text == "64k" ? 65536 : 0;
  };
  const DistributionSpec spec = ParseDistribution("zoned_abs:60/64k:40/64k", size);
  BlockDistribution zoned(spec, kBlocks, 9, 4096, 2);
  std::array<uint64_t, 2> first{}, second{};
  for (int i = 0; i < kDraws; ++i) {
    const uint64_t b = zoned.Next();
    const uint64_t file = b / (kBlocks / 2), in_file = b % (kBlocks / 2);
    ASSERT_LT(in_file, 32u);
    (in_file < 16 ? first : second)[file] += 1;
  }
  EXPECT_NEAR(static_cast<double>(first[0] + first[1]) / kDraws, 0.6, 0.01);
  EXPECT_NEAR(static_cast<double>(first[0] + second[0]) / kDraws, 0.5, 0.01);
  // Zones reaching past a file are refused when the sampler is made.
  EXPECT_THROW(BlockDistribution(ParseDistribution("zoned_abs:100/64k", size), 8, 1, 4096),
               stats::UsageError);
}

}  // namespace random_distribution_test
}  // namespace iotail::engine
