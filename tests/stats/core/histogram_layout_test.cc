// Tests of fio's bucket layout: value to index, index to bounds and printed value, bit for bit.
#include "stats/core/histogram_layout.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>

namespace iotail::stats {
namespace histogram_layout_test {

// An independent, deliberately naive re-statement of fio's plat_val_to_idx (fio-format.md §1).
uint32_t ReferenceIndex(uint64_t v, int groups) {
  if (v < 128) return static_cast<uint32_t>(v);
  int msb = 0;
  for (uint64_t x = v; x > 1; x >>= 1) ++msb;
  const int eb = msb - 6;
  uint64_t index = static_cast<uint64_t>(eb + 1) * 64 + ((v >> eb) & 63);
  const uint64_t last = static_cast<uint64_t>(groups) * 64 - 1;
  return static_cast<uint32_t>(index > last ? last : index);
}

TEST(LayoutTest, IndexMatchesFioAtGroupBoundaries) {
  for (int k = 0; k < 64; ++k) {
    const uint64_t p = uint64_t{1} << k;
    for (uint64_t v : {p - 1, p, p + 1}) {
      SCOPED_TRACE(v);
      EXPECT_EQ(FineBucketIndex(v, kFio3Groups), ReferenceIndex(v, kFio3Groups));
      EXPECT_EQ(FineBucketIndex(v, kFio2Groups), ReferenceIndex(v, kFio2Groups));
      EXPECT_EQ(Fio3BucketIndex(v), ReferenceIndex(v, kFio3Groups));
    }
  }
  EXPECT_EQ(Fio3BucketIndex(UINT64_MAX), 1855u);
  // The first bucket of each group g >= 2 starts at 2^(g+5).
  for (uint32_t g = 2; g < kFio3Groups; ++g) {
    const uint64_t start = uint64_t{1} << (g + 5);
    EXPECT_EQ(Fio3BucketIndex(start), g * 64) << "group " << g;
    EXPECT_EQ(Fio3BucketIndex(start - 1), g * 64 - 1) << "group " << g;
  }
}

TEST(LayoutTest, DocumentedExamples) {
  struct Example {
    uint64_t ns;
    uint32_t index;
    uint64_t lower, upper, value;
  };
  for (const Example& e : {Example{127, 127, 127, 128, 127}, Example{128, 128, 128, 130, 129},
                           Example{1000, 317, 1000, 1008, 1004},
                           Example{1'000'000, 954, 999'424, 1'007'616, 1'003'520}}) {
    SCOPED_TRACE(e.ns);
    EXPECT_EQ(Fio3BucketIndex(e.ns), e.index);
    EXPECT_EQ(FineBucketLower(e.index), e.lower);
    EXPECT_EQ(FineBucketUpper(e.index), e.upper);
    EXPECT_EQ(FineBucketValue(e.index), e.value);
  }

  const auto layout = HistogramLayout::Fio3();
  EXPECT_EQ(layout.IndexOfNs(1000), 317u);
  EXPECT_DOUBLE_EQ(layout.LowerNs(954), 999'424);
  EXPECT_DOUBLE_EQ(layout.UpperNs(954), 1'007'616);
  EXPECT_DOUBLE_EQ(layout.ValueNs(954), 1'003'520);
}

TEST(LayoutTest, ValueMapsBackToItsIndexForEveryBucket) {
  for (uint32_t i = 0; i < kFio3Buckets; ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(Fio3BucketIndex(FineBucketValue(i)), i);
    EXPECT_EQ(Fio3BucketIndex(FineBucketLower(i)), i);
    EXPECT_EQ(Fio3BucketIndex(FineBucketUpper(i) - 1), i);
    EXPECT_LT(FineBucketLower(i), FineBucketUpper(i));
    EXPECT_LE(FineBucketLower(i), FineBucketValue(i));
    EXPECT_LT(FineBucketValue(i), FineBucketUpper(i));
    if (i > 0) {  // contiguous
      EXPECT_EQ(FineBucketUpper(i - 1), FineBucketLower(i));
    }
  }
}

TEST(LayoutTest, RelativeBucketWidthIsAtMostOneSixtyFourth) {
  for (uint32_t i = 128; i < kFio3Buckets; ++i) {
    const double width = static_cast<double>(FineBucketUpper(i) - FineBucketLower(i));
    EXPECT_LE(width / static_cast<double>(FineBucketLower(i)), 1.0 / 64) << i;
  }
}

TEST(LayoutTest, ClampsAtTwoToTheThirtyFour) {
  const uint64_t top = uint64_t{1} << 34;
  EXPECT_EQ(FineBucketLower(1855), 17'045'651'456u);
  EXPECT_EQ(FineBucketUpper(1855), top);
  EXPECT_EQ(Fio3BucketIndex(top - 1), 1855u);
  EXPECT_EQ(Fio3BucketIndex(top), 1855u);
  EXPECT_EQ(Fio3BucketIndex(top * 1000), 1855u);
  EXPECT_EQ(HistogramLayout::Fio3().IndexOfNs(UINT64_MAX), 1855u);
  EXPECT_EQ(HistogramLayout::Fio3(6).IndexOfNs(UINT64_MAX), 28u);
}

TEST(LayoutTest, Fio2CountsMicroseconds) {
  const auto layout = HistogramLayout::Fio2();
  EXPECT_EQ(layout.size(), 1216u);
  EXPECT_EQ(layout.unit_ns(), 1000u);
  EXPECT_EQ(layout.generation(), FioGeneration::kFio2);
  // 1000 us = 1,000,000 ns -> fine index 317 in microseconds.
  EXPECT_EQ(layout.IndexOfNs(1'000'000), 317u);
  EXPECT_EQ(layout.IndexOfNs(1'000'999), 317u);  // truncated to whole microseconds
  EXPECT_EQ(layout.IndexOfNs(999), 0u);
  EXPECT_DOUBLE_EQ(layout.LowerNs(317), 1'000'000);
  EXPECT_DOUBLE_EQ(layout.UpperNs(317), 1'008'000);
  EXPECT_DOUBLE_EQ(layout.ValueNs(317), 1'004'000);
  // Clamp: 2^24 us and above in the last bucket.
  EXPECT_EQ(layout.IndexOfNs((uint64_t{1} << 24) * 1000), 1215u);
  EXPECT_EQ(layout.IndexOfNs((uint64_t{1} << 24) * 1000 - 1000), 1215u);
  EXPECT_EQ(layout.IndexOfNs((uint64_t{1} << 23) * 1000 - 1000), 1151u);
  EXPECT_EQ(layout.Describe(), "fio2");
}

TEST(LayoutTest, CoarseBucketsSumAdjacentFineBuckets) {
  for (int c = 0; c <= kMaxCoarseness; ++c) {
    SCOPED_TRACE(c);
    const auto layout = HistogramLayout::Fio3(c);
    EXPECT_EQ(layout.size(), 1856u >> c);
    EXPECT_EQ(layout.coarseness(), c);
    const uint32_t stride = 1u << c;
    for (uint32_t i = 0; i < layout.size(); ++i) {
      EXPECT_DOUBLE_EQ(layout.LowerNs(i), static_cast<double>(FineBucketLower(i * stride)));
      EXPECT_DOUBLE_EQ(layout.UpperNs(i),
                       static_cast<double>(FineBucketUpper((i + 1) * stride - 1)));
      EXPECT_GE(layout.ValueNs(i), layout.LowerNs(i));
      EXPECT_LT(layout.ValueNs(i), layout.UpperNs(i));
      if (i > 0) {
        EXPECT_DOUBLE_EQ(layout.UpperNs(i - 1), layout.LowerNs(i));
      }
    }
    for (uint64_t v : {uint64_t{0}, uint64_t{127}, uint64_t{128}, uint64_t{1000},
                       uint64_t{1'000'000}, uint64_t{1} << 40}) {
      EXPECT_EQ(layout.IndexOfNs(v), Fio3BucketIndex(v) >> c) << v;
    }
  }
  EXPECT_EQ(HistogramLayout::Fio3(6).Describe(), "fio3,coarseness=6");
  EXPECT_EQ(HistogramLayout::Fio3().Describe(), "fio3");
  // Coarse values are bucket midpoints.
  EXPECT_DOUBLE_EQ(HistogramLayout::Fio3(1).ValueNs(0), 1.0);  // [0, 2)
  EXPECT_DOUBLE_EQ(HistogramLayout::Fio3(0).ValueNs(0), 0.0);
}

TEST(LayoutTest, RejectsCoarsenessOutsideZeroToSix) {
  EXPECT_THROW(HistogramLayout::Fio3(7), std::invalid_argument);
  EXPECT_THROW(HistogramLayout::Fio3(-1), std::invalid_argument);
  EXPECT_THROW(HistogramLayout::Fio2(7), std::invalid_argument);
}

TEST(LayoutTest, FromColumnCountIdentifiesAllTwentyOneLayouts) {
  int found = 0;
  for (int c = 0; c <= kMaxCoarseness; ++c) {
    const auto fio3 = HistogramLayout::FromColumnCount(1856u >> c);
    ASSERT_TRUE(fio3.has_value()) << c;
    EXPECT_EQ(*fio3, HistogramLayout::Fio3(c));
    const auto fio2 = HistogramLayout::FromColumnCount(1216u >> c);
    ASSERT_TRUE(fio2.has_value()) << c;
    EXPECT_EQ(*fio2, HistogramLayout::Fio2(c));
    const auto wide = HistogramLayout::FromColumnCount(3776u >> c);
    ASSERT_TRUE(wide.has_value()) << c;
    EXPECT_EQ(*wide, HistogramLayout::Fio3(c, kWideGroups));
    found += 3;
  }
  EXPECT_EQ(found, 21);
  int accepted = 0;
  for (size_t n = 0; n <= 4000; ++n) {
    if (HistogramLayout::FromColumnCount(n)) ++accepted;
  }
  EXPECT_EQ(accepted, 21);
  for (size_t n : {size_t{0}, size_t{1}, size_t{2}, size_t{5}, size_t{14}, size_t{1855},
                   size_t{1857}, size_t{1859}, size_t{3712}}) {
    EXPECT_FALSE(HistogramLayout::FromColumnCount(n).has_value()) << n;
  }
}

TEST(LayoutTest, WideLayoutCoversEverySixtyFourBitValueWithoutClamping) {
  const HistogramLayout wide = HistogramLayout::Recorded();
  EXPECT_EQ(wide.size(), kWideBuckets);
  EXPECT_EQ(wide.groups(), 59);
  // Below fio's top both layouts agree bucket for bucket.
  for (uint64_t v :
       {uint64_t{0}, uint64_t{127}, uint64_t{128}, uint64_t{999'999}, (uint64_t{1} << 34) - 1}) {
    EXPECT_EQ(wide.IndexOfNs(v), HistogramLayout::Fio3().IndexOfNs(v)) << v;
  }
  // fio clamps 18 s into its last bucket; the wide layout keeps it in a bucket that holds 18 s.
  const uint64_t eighteen_s = 18'000'000'000;
  EXPECT_EQ(HistogramLayout::Fio3().IndexOfNs(eighteen_s), kFio3Buckets - 1);
  const uint32_t i = wide.IndexOfNs(eighteen_s);
  EXPECT_GT(i, kFio3Buckets - 1);
  EXPECT_LE(wide.LowerNs(i), 18e9);
  EXPECT_GT(wide.UpperNs(i), 18e9);
  EXPECT_NEAR(wide.ValueNs(i), 18e9, 0.14e9);  // bucket width 2^28 ns there
  // Every value has a bucket whose bounds hold it, up to 2^64 - 1 in the last one.
  for (int bit = 0; bit < 64; ++bit) {
    const uint64_t v = (uint64_t{1} << bit) | (uint64_t{1} << bit) / 3;
    const uint32_t k = wide.IndexOfNs(v);
    EXPECT_LE(wide.LowerNs(k), static_cast<double>(v)) << bit;
    EXPECT_GE(wide.UpperNs(k), static_cast<double>(v)) << bit;
  }
  EXPECT_EQ(wide.IndexOfNs(UINT64_MAX), kWideBuckets - 1);
  EXPECT_EQ(wide.Describe(), "fio3,groups=59");
  EXPECT_THROW(HistogramLayout::Fio3(0, 40), std::invalid_argument);
}

}  // namespace histogram_layout_test
}  // namespace iotail::stats
