#include "stats/core/sample_stats.h"

#include <algorithm>
#include <cmath>

namespace iotail::stats {

void SampleStats::Add(double v) {
  min = n == 0 ? v : std::min(min, v);
  max = n == 0 ? v : std::max(max, v);
  sum += v;
  sum_sq += v * v;
  ++n;
}

double SampleStats::Stddev() const {
  if (n < 2) return 0;
  const double mean = Mean();
  const double var = (sum_sq - static_cast<double>(n) * mean * mean) / static_cast<double>(n - 1);
  return var > 0 ? std::sqrt(var) : 0;
}

}  // namespace iotail::stats
