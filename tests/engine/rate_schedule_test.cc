// RateSchedule: linear spacing is exact and drift-free; poisson gaps have the target mean and an
// exponential distribution; both are reproducible from the seed.
#include "engine/rate_schedule.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace iotail::engine {
namespace rate_schedule_test {

std::vector<double> Gaps(RateSchedule& s, int n, uint32_t bytes = 4096) {
  std::vector<double> gaps;
  uint64_t prev = s.next_ns();
  for (int i = 0; i < n; ++i) {
    s.Advance(bytes);
    gaps.push_back(static_cast<double>(s.next_ns() - prev));
    prev = s.next_ns();
  }
  return gaps;
}

TEST(RateScheduleTest, LinearIopsIsExactlySpacedWithoutDrift) {
  RateSchedule s(RateTarget{3000, 0}, RateProcess::kLinear, 1, 0);
  s.Start(1'000'000'000);
  EXPECT_EQ(s.next_ns(), 1'000'000'000u);
  for (int i = 1; i <= 3'000'000; ++i) {
    s.Advance(4096);
    // 1e9 / 3000 = 333333.33 ns: each time is the rounded exact multiple, never accumulated.
    ASSERT_EQ(s.next_ns(), 1'000'000'000u + static_cast<uint64_t>(std::llround(i * 1e9 / 3000)))
        << i;
  }
  EXPECT_EQ(s.next_ns(), 1'000'000'000u + 1'000'000'000'000u);  // 3M I/Os = 1000 s exactly
}

TEST(RateScheduleTest, LinearBytesSpacesByTransferSize) {
  // 1 MiB/s: a 4 KiB I/O takes 1/256 s of the budget, a 64 KiB one 1/16 s.
  RateSchedule s(RateTarget{0, 1 << 20}, RateProcess::kLinear, 1, 0);
  s.Start(0);
  s.Advance(4096);
  EXPECT_EQ(s.next_ns(), 1'000'000'000u / 256);
  s.Advance(65536);
  EXPECT_EQ(s.next_ns(), 1'000'000'000u / 256 + 1'000'000'000u / 16);
}

TEST(RateScheduleTest, PhaseDelaysTheWholeSchedule) {
  RateSchedule s(RateTarget{1000, 0}, RateProcess::kLinear, 1, 250'000);
  s.Start(10);
  EXPECT_EQ(s.next_ns(), 250'010u);
  s.Advance(512);
  EXPECT_EQ(s.next_ns(), 1'250'010u);
}

TEST(RateScheduleTest, PoissonHasTheMeanRateAndExponentialGaps) {
  constexpr double kIops = 20000;
  constexpr int kN = 200'000;
  RateSchedule s(RateTarget{kIops, 0}, RateProcess::kPoisson, 42, 0);
  s.Start(0);
  std::vector<double> gaps = Gaps(s, kN);
  double sum = 0, sum_sq = 0;
  for (double g : gaps) {
    sum += g;
    sum_sq += g * g;
  }
  const double mean = sum / kN;
  const double sd = std::sqrt(sum_sq / kN - mean * mean);
  // Mean gap 50 us; its standard error is 50 us / sqrt(200000) = 0.11 us.
  EXPECT_NEAR(mean, 1e9 / kIops, 1e9 / kIops * 0.01);
  // Coefficient of variation of an exponential distribution: 1.
  EXPECT_NEAR(sd / mean, 1.0, 0.02);
  // Kolmogorov-Smirnov against Exp(mean): D < 1.63 / sqrt(n) at the 1% level.
  std::sort(gaps.begin(), gaps.end());
  double d = 0;
  for (int i = 0; i < kN; ++i) {
    const double cdf = 1 - std::exp(-gaps[static_cast<size_t>(i)] / (1e9 / kIops));
    d = std::max({d, std::abs(cdf - static_cast<double>(i) / kN),
                  std::abs(cdf - static_cast<double>(i + 1) / kN)});
  }
  EXPECT_LT(d, 1.63 / std::sqrt(static_cast<double>(kN))) << "KS distance " << d;
}

TEST(RateScheduleTest, PoissonBytesMeanScalesWithSize) {
  RateSchedule s(RateTarget{0, 100e6}, RateProcess::kPoisson, 7, 0);
  s.Start(0);
  const std::vector<double> gaps = Gaps(s, 100'000, 65536);
  double sum = 0;
  for (double g : gaps) sum += g;
  EXPECT_NEAR(sum / gaps.size(), 65536 * 1e9 / 100e6, 65536 * 1e9 / 100e6 * 0.02);
}

TEST(RateScheduleTest, SameSeedSameScheduleOtherSeedOther) {
  RateSchedule a(RateTarget{1000, 0}, RateProcess::kPoisson, 5, 0);
  RateSchedule b(RateTarget{1000, 0}, RateProcess::kPoisson, 5, 0);
  RateSchedule c(RateTarget{1000, 0}, RateProcess::kPoisson, 6, 0);
  a.Start(0);
  b.Start(0);
  c.Start(0);
  EXPECT_EQ(Gaps(a, 100), Gaps(b, 100));
  a.Start(0);
  EXPECT_NE(Gaps(a, 100), Gaps(c, 100));
}

}  // namespace rate_schedule_test
}  // namespace iotail::engine
