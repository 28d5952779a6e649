// ComputeLatencyFigures: one walk for the requested percentiles, the SLC list and the median must
// give exactly what the separate computations give, for both rules and both count types.
#include "stats/core/latency_figures.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace iotail::stats {
namespace latency_figures_test {

std::vector<uint64_t> SkewedHistogram() {
  std::vector<uint64_t> counts(kFio3Buckets, 0);
  for (uint64_t v = 1000; v < 3'000'000; v = v * 21 / 20 + 7) counts[Fio3BucketIndex(v)] += v % 13;
  counts[Fio3BucketIndex(40'000'000)] += 3;  // a tail
  return counts;
}

TEST(LatencyFiguresTest, SameAsSeparatePercentileAndSlcComputations) {
  const HistogramLayout layout = HistogramLayout::Fio3();
  const std::vector<uint64_t> counts = SkewedHistogram();
  const std::vector<double> weights(counts.begin(), counts.end());
  const double shown[] = {99.9, 1, 50, 99};
  const double p50[] = {50};
  for (PercentileMethod method : {PercentileMethod::kFio, PercentileMethod::kInterpolate}) {
    const LatencyFigures f = ComputeLatencyFigures(std::span<const uint64_t>(counts), layout, shown,
                                                   SbkSlcPercentiles(), method);
    const auto pct = ComputePercentiles(std::span<const uint64_t>(counts), layout, shown, method);
    const auto slc_values =
        ComputePercentiles(std::span<const uint64_t>(counts), layout, SbkSlcPercentiles(), method);
    const double median =
        ComputePercentiles(std::span<const uint64_t>(counts), layout, p50, method)[0];
    EXPECT_EQ(f.percentiles, pct);
    EXPECT_EQ(f.median, median);
    ASSERT_TRUE(f.has_slc);
    const SlcFactors slc = ComputeSlc(slc_values, median);
    EXPECT_EQ(f.slc.slc1, slc.slc1);
    EXPECT_EQ(f.slc.slc2, slc.slc2);
    EXPECT_EQ(f.slc.slc1_mean, slc.slc1_mean);
    EXPECT_GT(f.slc.slc2, 0);  // the tail shows
    const LatencyFigures w = ComputeLatencyFigures(std::span<const double>(weights), layout, shown,
                                                   SbkSlcPercentiles(), method);
    EXPECT_EQ(w.percentiles, f.percentiles);
  }
}

TEST(LatencyFiguresTest, EmptyHistogramHasNoSlc) {
  const std::vector<uint64_t> counts(kFio3Buckets, 0);
  const double shown[] = {50, 99};
  const LatencyFigures f =
      ComputeLatencyFigures(std::span<const uint64_t>(counts), HistogramLayout::Fio3(), shown,
                            SbkSlcPercentiles(), PercentileMethod::kFio);
  EXPECT_FALSE(f.has_slc);
  ASSERT_EQ(f.percentiles.size(), 2u);
  EXPECT_TRUE(std::isnan(f.percentiles[0]));
}

}  // namespace latency_figures_test
}  // namespace iotail::stats
