// Confidence intervals for percentiles of a bucketed latency histogram, distribution-free, by
// order statistics.
//
// With N independent samples of a continuous latency X and a percentile p, the number B of samples
// below the true quantile Q_p is binomial(N, p/100), so for ranks l < u (1-based order statistics
// X_(1) <= ... <= X_(N))  P(X_(l) <= Q_p < X_(u)) = P(l <= B <= u - 1). OrderStatisticRanks picks
// the equal-tailed pair: l the largest rank with P(B <= l - 1) <= alpha/2, u the smallest with
// P(B <= u - 1) >= 1 - alpha/2, so the coverage is at least the confidence asked for (a discrete
// binomial usually gives more; `coverage` says how much). The binomial is summed exactly (in log
// space, over the window of +-12 standard deviations around N p that holds all but 1e-30 of it)
// while that window has at most 20,000 terms, i.e. N p (1 - p) up to about 690,000; above that the
// normal approximation with continuity correction is used, whose error there is below 1e-3 of a
// rank's probability. p0 has no lower bound and p100 no upper one (a sample bounds a population's
// minimum only from above and its maximum only from below).
// rank's probability. A rank 0 means no lower bound (too few samples below Q_p to bound it: the
// interval starts at 0); a rank N + 1 means no upper bound (upper_ns is +infinity).
//
// PercentileIntervals maps the ranks onto a histogram: the lower bound is the lower edge of the
// bucket holding rank l and the upper bound the upper edge of the bucket holding rank u, so the
// buckets' own widths are inside the interval (the histogram only knows a sample to its bucket).
// Fractional (time-aligned) counts are used as they are, with N their total rounded to an integer;
// the interval is then an approximation of the one the whole samples would give. The last bucket of
// a clamped fio layout extends to infinity; its nominal upper edge is reported.
//
// StudentTQuantile and NormalQuantile are the quantile functions used by comparisons of runs. Free
// functions; no state; thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "stats/core/histogram_layout.h"

namespace iotail::stats {

struct RankInterval {
  uint64_t lower_rank = 0;  // 0: no lower bound
  uint64_t upper_rank = 0;  // N + 1: no upper bound
  double coverage = 0;      // P(lower_rank <= B <= upper_rank - 1) for B ~ binomial(N, p)
};

// `percentile` in [0, 100], `confidence` in (0, 1) (0.95 for a 95% interval). For N = 0 both ranks
// are 0 and coverage is 0. Percentile 0 gives ranks (1, 1) and 100 gives (N, N), coverage 1.
RankInterval OrderStatisticRanks(uint64_t n, double percentile, double confidence);

struct PercentileInterval {
  double lower_ns = 0;  // NaN for an empty histogram
  double upper_ns = 0;  // +infinity when unbounded, NaN for an empty histogram
  double coverage = 0;
};

// One interval per percentile of `percentiles`, in that order, from counts of uint64_t (a run's
// histograms) or double (merged quanta) (instantiated for those two in percentile_ci.cc).
template <class Count>
std::vector<PercentileInterval> PercentileIntervals(std::span<const Count> counts,
                                                    const HistogramLayout& layout,
                                                    std::span<const double> percentiles,
                                                    double confidence);
extern template std::vector<PercentileInterval> PercentileIntervals(std::span<const uint64_t>,
                                                                    const HistogramLayout&,
                                                                    std::span<const double>,
                                                                    double);
extern template std::vector<PercentileInterval> PercentileIntervals(std::span<const double>,
                                                                    const HistogramLayout&,
                                                                    std::span<const double>,
                                                                    double);

// The standard normal quantile (inverse CDF) of q in (0, 1).
double NormalQuantile(double q);
// The quantile of Student's t distribution with `df` > 0 degrees of freedom (fractional allowed,
// as Welch's) at q in (0, 1); by bisection on its CDF, to 1e-9.
double StudentTQuantile(double q, double df);

}  // namespace iotail::stats
