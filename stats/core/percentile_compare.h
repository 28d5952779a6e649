// Comparing a percentile of two runs, A and B: the difference B - A, its confidence interval and a
// verdict (B faster, slower, or no significant difference), with a confidence level (0.95).
//
// Two ways, by what the runs are:
// - One histogram per run (CompareHistograms): each run's order-statistic interval of the
//   percentile (stats/core/percentile_ci.h, bucket edges included) at confidence 1 - alpha/2, so
//   that both hold together with probability at least 1 - alpha (Bonferroni), and the interval of
//   the difference is [lower_B - upper_A, upper_B - lower_A]. Conservative: its coverage is at
//   least the confidence, usually more. The estimates are fio's percentile rule on each histogram.
// - Several repetitions per run (CompareRepetitions, at least 2 on each side): the percentile of
//   each repetition, then Welch's t interval of the difference of the two means (unequal variances,
//   Welch-Satterthwaite degrees of freedom). It measures the run-to-run variation the order
//   statistics of one run cannot see. Repetitions without spread on both sides give no interval
//   (verdict kNoInterval): their spread is unknown, not zero.
// - Printed percentiles only (ComparePrinted: fio's plain JSON summaries, which hold no histogram
//   bins): the difference of the two values, and no interval (verdict kNoInterval): one printed
//   value per run says nothing about how far it could move by chance.
// The verdict is kSlower when the interval lies above 0, kFaster when below, else kNoDifference.
// Free functions; no state; thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "stats/core/histogram_layout.h"

namespace iotail::stats {

enum class CompareVerdict { kFaster, kSlower, kNoDifference, kNoInterval };
// "faster", "slower", "no difference", "no interval"
std::string_view CompareVerdictName(CompareVerdict verdict);

struct PercentileComparison {
  double a_ns = 0, b_ns = 0;  // estimates of the percentile (NaN: that side has no samples)
  double diff_ns = 0;         // b_ns - a_ns
  double lower_ns = 0;        // the difference's confidence interval (may be -inf, +inf)
  double upper_ns = 0;
  CompareVerdict verdict = CompareVerdict::kNoDifference;
};

PercentileComparison CompareHistograms(std::span<const uint64_t> a, std::span<const uint64_t> b,
                                       const HistogramLayout& layout, double percentile,
                                       double confidence);

// `a` and `b`: the percentile of each repetition (ns), at least 2 each.
PercentileComparison CompareRepetitions(std::span<const double> a, std::span<const double> b,
                                        double confidence);

// `a_ns` and `b_ns`: the percentile as each run printed it (ns). The interval's bounds are NaN.
PercentileComparison ComparePrinted(double a_ns, double b_ns);

}  // namespace iotail::stats
