// Tests of the SLC factors against the worked examples of shared/slc.md.
#include "stats/core/slc.h"

#include <gtest/gtest.h>

#include <vector>

namespace iotail::stats {
namespace slc_test {

TEST(SlcTest, SbkPublishedOutputExampleA) {
  const std::vector<double> x = {4, 4, 4, 5, 5,  5,  5,  5,  5,  5,  6,
                                 6, 7, 7, 8, 10, 11, 12, 14, 18, 24, 32};
  const SlcFactors f = ComputeSlc(x, 5);
  EXPECT_EQ(f.slc1, 1);
  EXPECT_EQ(f.slc2, 2);
  EXPECT_DOUBLE_EQ(f.slc1_mean, 1.75 / 9);
  EXPECT_DOUBLE_EQ(f.slc2_mean, 19.0 / 12);
}

TEST(SlcTest, TwentyEightEntryListExampleB) {
  const std::vector<double> x = {80,  85,  88,  90,  92,  95,   97,   98,  99,  100,
                                 102, 105, 108, 110, 115, 120,  130,  150, 170, 200,
                                 260, 400, 450, 520, 700, 1200, 2000, 5000};
  ASSERT_EQ(x.size(), SbkSlcPercentiles().size());
  const SlcFactors f = ComputeSlc(x, 100);
  EXPECT_EQ(f.slc1, 1);
  EXPECT_EQ(f.slc2, 6);
  double s1 = 0;
  for (int i = 1; i <= 9; ++i) s1 += (x[i] - 80) / 80;
  EXPECT_NEAR(s1, 1.55, 1e-12);
  EXPECT_DOUBLE_EQ(f.slc1_mean, s1 / 9);
  double s2 = 0;
  for (int i = 10; i < 28; ++i) s2 += (x[i] - 100) / 100;
  EXPECT_DOUBLE_EQ(f.slc2_mean, s2 / 18);
  EXPECT_NEAR(f.slc2_mean, 5.58, 0.005);
}

TEST(SlcTest, ZeroLowestPercentileExampleC) {
  const std::vector<double> x = {0, 0, 1, 1, 1, 1, 2, 3, 9};
  const SlcFactors f = ComputeSlc(x, 1);
  EXPECT_EQ(f.slc1, 0);
  EXPECT_EQ(f.slc1_mean, 0);
  EXPECT_EQ(f.slc2, 2);
  EXPECT_DOUBLE_EQ(f.slc2_mean, 10.0 / 8);
}

TEST(SlcTest, ValuesEqualToTheMedianCountTowardSlcOne) {
  // lo = 10, median 20: 20 and 20 go to SLC1 (1 + 1), 40 to SLC2 (1).
  const SlcFactors f = ComputeSlc(std::vector<double>{10, 20, 20, 40}, 20);
  EXPECT_DOUBLE_EQ(f.slc1_mean, 1.0);
  EXPECT_DOUBLE_EQ(f.slc2_mean, 1.0);
  EXPECT_EQ(f.slc1, 1);
  EXPECT_EQ(f.slc2, 1);
}

TEST(SlcTest, DegenerateInputsGiveZero) {
  EXPECT_EQ(ComputeSlc(std::vector<double>{}, 1).slc2, 0);
  const SlcFactors one = ComputeSlc(std::vector<double>{5}, 5);
  EXPECT_EQ(one.slc1, 0);
  EXPECT_EQ(one.slc2, 0);
  EXPECT_EQ(one.slc1_mean, 0);
  const SlcFactors zero_top = ComputeSlc(std::vector<double>{0, 0, 0}, 0);
  EXPECT_EQ(zero_top.slc1, 0);
  EXPECT_EQ(zero_top.slc2, 0);
  EXPECT_EQ(zero_top.slc2_mean, 0);
  // A flat curve: every term is zero; SBK's rounding gives trunc((0 + c - 1) / c) = 0.
  const SlcFactors flat = ComputeSlc(std::vector<double>(28, 7.0), 7);
  EXPECT_EQ(flat.slc1, 0);
  EXPECT_EQ(flat.slc2, 0);
  EXPECT_EQ(flat.slc1_mean, 0);
  EXPECT_EQ(flat.slc2_mean, 0);
}

TEST(SlcTest, SbkRoundingIsCeilingOfTheMeanForPositiveSums) {
  // SLC2 terms 0.1 and 0.1: sum 0.2, (0.2 + 1) / 2 = 0.6 -> 0; mean 0.1.
  SlcFactors f = ComputeSlc(std::vector<double>{100, 110, 110}, 100);
  EXPECT_EQ(f.slc2, 0);
  EXPECT_DOUBLE_EQ(f.slc2_mean, 0.1);
  // One term of 1.5: (1.5 + 0) / 1 = 1.5 -> 1.
  f = ComputeSlc(std::vector<double>{100, 250}, 100);
  EXPECT_EQ(f.slc2, 1);
  EXPECT_DOUBLE_EQ(f.slc2_mean, 1.5);
}

TEST(SlcTest, Lists) {
  EXPECT_EQ(SbkSlcPercentiles().size(), 28u);
  EXPECT_EQ(PaperSlcPercentiles().size(), 21u);
  EXPECT_EQ(SbkSlcPercentiles().front(), 5);
  EXPECT_EQ(SbkSlcPercentiles().back(), 99.99);
  EXPECT_EQ(PaperSlcPercentiles().front(), 10);
  for (auto list : {SbkSlcPercentiles(), PaperSlcPercentiles()}) {
    for (size_t i = 1; i < list.size(); ++i) EXPECT_LT(list[i - 1], list[i]);
  }
}

}  // namespace slc_test
}  // namespace iotail::stats
