// SampleStats: the running statistics of one series of samples (count, min, max, sum, sum of
// squares), as fio keeps them for bw_*/iops_* and for its "sync" latencies: the mean and fio's
// sample standard deviation (n - 1) are computed from them. A plain value type with no owner or
// thread of its own: one series is added to by one thread at a time, and series are combined with
// Merge (per worker, then per job or group).
#pragma once

#include <cstdint>

namespace iotail::stats {

struct SampleStats {
  uint64_t n = 0;
  double min = 0, max = 0, sum = 0, sum_sq = 0;

  void Add(double v);
  double Mean() const { return n ? sum / static_cast<double>(n) : 0; }
  // Sample standard deviation (n - 1), as fio's; 0 for fewer than two samples.
  double Stddev() const;
  // Adds another series' samples (min/max combine).
  void Merge(const SampleStats& o) {
    if (o.n == 0) return;
    min = n == 0 ? o.min : (o.min < min ? o.min : min);
    max = n == 0 ? o.max : (o.max > max ? o.max : max);
    sum += o.sum;
    sum_sq += o.sum_sq;
    n += o.n;
  }
};

}  // namespace iotail::stats
