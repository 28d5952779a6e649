// Percentiles of a bucketed latency histogram, by two named rules.
//
// kFio: fio's own rule. Walk the buckets from the lowest with a running sum S; the value of
//   percentile p is the representative value (HistogramLayout::ValueNs) of the first bucket after
//   which S >= p/100 * N. Reproduces fio's printed percentiles exactly on the same histogram.
// kInterpolate: the same bucket, then linear interpolation between its lower and upper edge by
//   the fraction of the bucket's count needed to reach p/100 * N. Percentile 0 is the lower edge
//   of the first non-empty bucket.
//
// Counts may be integers or fractional (aligned) weights. All values are in nanoseconds. An empty
// histogram yields NaN for every statistic. Free functions; no state; thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "stats/core/histogram_layout.h"

namespace iotail::stats {

enum class PercentileMethod { kFio, kInterpolate };

// Parses "fio" or "interpolate"; throws UsageError naming `option` otherwise.
PercentileMethod ParsePercentileMethod(std::string_view text, std::string_view option);
std::string_view PercentileMethodName(PercentileMethod method);

// fio's default percentile list: 1 5 10 20 30 40 50 60 70 80 90 95 99 99.5 99.9 99.95 99.99.
std::span<const double> FioDefaultPercentiles();

// Values (ns) at each percentile of `percentiles` (each in [0, 100], any order).
std::vector<double> ComputePercentiles(std::span<const uint64_t> counts,
                                       const HistogramLayout& layout,
                                       std::span<const double> percentiles,
                                       PercentileMethod method);
std::vector<double> ComputePercentiles(std::span<const double> counts,
                                       const HistogramLayout& layout,
                                       std::span<const double> percentiles,
                                       PercentileMethod method);

// Sample count, min, max and mean of a histogram, in ns. With kFio, min and max are the
// representative values of the lowest and highest non-empty buckets; with kInterpolate, the lower
// edge of the lowest and the upper edge of the highest. The mean weights each bucket's
// representative value by its count.
struct HistogramStats {
  double samples = 0;
  double min_ns = 0;
  double max_ns = 0;
  double mean_ns = 0;
};
HistogramStats ComputeStats(std::span<const uint64_t> counts, const HistogramLayout& layout,
                            PercentileMethod method);
HistogramStats ComputeStats(std::span<const double> counts, const HistogramLayout& layout,
                            PercentileMethod method);

// ComputeStats and ComputePercentiles of one histogram (the same values), its non-zero buckets
// found once for both.
std::vector<double> ComputeStatsAndPercentiles(std::span<const uint64_t> counts,
                                               const HistogramLayout& layout,
                                               std::span<const double> percentiles,
                                               PercentileMethod method, HistogramStats& stats);
std::vector<double> ComputeStatsAndPercentiles(std::span<const double> counts,
                                               const HistogramLayout& layout,
                                               std::span<const double> percentiles,
                                               PercentileMethod method, HistogramStats& stats);

// Parses a percentile list: one argument with ':' or ',' separators ("50:99:99.9", as fio's
// --percentile_list) or several arguments, each possibly such a list. Every value must be a
// number in [0, 100]. Throws UsageError naming `option`.
std::vector<double> ParsePercentileList(std::span<const std::string> args, std::string_view option);

// The column name of a percentile: "p" followed by the percentile as given ("p50", "p99.9").
std::string PercentileLabel(double percentile);

}  // namespace iotail::stats
