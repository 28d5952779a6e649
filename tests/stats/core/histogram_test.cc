// Tests of the integer and weighted histogram value types.
#include "stats/core/histogram.h"

#include <gtest/gtest.h>

#include <vector>

namespace iotail::stats {
namespace histogram_test {

TEST(HistogramTest, AddAndTotal) {
  Histogram h(8);
  EXPECT_EQ(h.size(), 8u);
  EXPECT_TRUE(h.Empty());
  EXPECT_EQ(h.Total(), 0u);
  h.Add(3);
  h.Add(3, 4);
  h.Add(7, 10);
  EXPECT_FALSE(h.Empty());
  EXPECT_EQ(h[3], 5u);
  EXPECT_EQ(h[7], 10u);
  EXPECT_EQ(h.Total(), 15u);
  h.Clear();
  EXPECT_TRUE(h.Empty());
  EXPECT_EQ(h.size(), 8u);
}

TEST(HistogramTest, MergeAddsBucketByBucket) {
  Histogram a(4), b(4);
  a.Add(0, 1);
  a.Add(2, 5);
  b.Add(2, 7);
  b.Add(3, 1);
  a.Merge(b);
  EXPECT_EQ(a, (Histogram([] {
              Histogram e(4);
              e.Add(0, 1);
              e.Add(2, 12);
              e.Add(3, 1);
              return e;
            }())));
  EXPECT_EQ(a.Total(), 14u);
}

TEST(HistogramTest, WeightedMergeScalesCounts) {
  WeightedHistogram w(3);
  const std::vector<uint64_t> counts = {4, 0, 10};
  w.Merge(std::span<const uint64_t>(counts), 0.25);
  w.Merge(std::span<const uint64_t>(counts), 0.75);
  EXPECT_DOUBLE_EQ(w[0], 4.0);
  EXPECT_DOUBLE_EQ(w[2], 10.0);
  EXPECT_DOUBLE_EQ(w.Total(), 14.0);
  w.Merge(std::span<const uint64_t>(counts), 0.1);
  EXPECT_DOUBLE_EQ(w[0], 4.4);
}

TEST(HistogramTest, ResizeClearsCounts) {
  Histogram h(2);
  h.Add(1, 3);
  h.Resize(5);
  EXPECT_EQ(h.size(), 5u);
  EXPECT_TRUE(h.Empty());
}

}  // namespace histogram_test
}  // namespace iotail::stats
