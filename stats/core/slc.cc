#include "stats/core/slc.h"

#include <cmath>

namespace iotail::stats {
namespace {

constexpr double kSbk[] = {5,    10, 15,    20,   25,    30,   35,    40,   45,   50,
                           55,   60, 65,    70,   75,    80,   85,    90,   92.5, 95,
                           97.5, 99, 99.25, 99.5, 99.75, 99.9, 99.95, 99.99};
constexpr double kPaper[] = {10,   20, 25,   30, 40,    50,   60,    70,   75,    80,   90,
                             92.5, 95, 97.5, 99, 99.25, 99.5, 99.75, 99.9, 99.95, 99.99};

int64_t SbkRound(double sum, int64_t count) {
  if (count == 0) return 0;
  return static_cast<int64_t>(
      std::trunc((sum + static_cast<double>(count) - 1) / static_cast<double>(count)));
}

}  // namespace

SlcFactors ComputeSlc(std::span<const double> values, double median) {
  SlcFactors factors;
  if (values.size() < 2) return factors;
  const size_t h = values.size() - 1;
  if (!(values[h] > 0)) return factors;
  const double lo = values[0];
  double s1 = 0, s2 = 0;
  int64_t c1 = 0, c2 = 0;
  for (size_t i = 1; i <= h; ++i) {
    if (values[i] <= median && lo > 0) {
      s1 += (values[i] - lo) / lo;
      ++c1;
    } else if (median > 0) {
      s2 += (values[i] - median) / median;
      ++c2;
    }
  }
  factors.slc1 = SbkRound(s1, c1);
  factors.slc2 = SbkRound(s2, c2);
  factors.slc1_mean = c1 ? s1 / static_cast<double>(c1) : 0;
  factors.slc2_mean = c2 ? s2 / static_cast<double>(c2) : 0;
  return factors;
}

std::span<const double> SbkSlcPercentiles() { return kSbk; }
std::span<const double> PaperSlcPercentiles() { return kPaper; }

}  // namespace iotail::stats
