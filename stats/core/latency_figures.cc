#include "stats/core/latency_figures.h"

#include <cmath>

namespace iotail::stats {

namespace {

template <typename Count>
LatencyFigures Compute(std::span<const Count> counts, const HistogramLayout& layout,
                       std::span<const double> percentiles, std::span<const double> slc_percentiles,
                       PercentileMethod method, HistogramStats* stats) {
  // One list: the requested percentiles, the SLC list, then the median.
  std::vector<double> wanted(percentiles.begin(), percentiles.end());
  wanted.insert(wanted.end(), slc_percentiles.begin(), slc_percentiles.end());
  wanted.push_back(50.0);
  const std::vector<double> values =
      stats ? ComputeStatsAndPercentiles(counts, layout, wanted, method, *stats)
            : ComputePercentiles(counts, layout, wanted, method);
  LatencyFigures f;
  f.percentiles.assign(values.begin(), values.begin() + static_cast<ptrdiff_t>(percentiles.size()));
  f.median = values.back();
  if (!slc_percentiles.empty() && !std::isnan(f.median)) {
    f.slc = ComputeSlc(
        std::span<const double>(values).subspan(percentiles.size(), slc_percentiles.size()),
        f.median);
    f.has_slc = true;
  }
  return f;
}

}  // namespace

LatencyFigures ComputeLatencyFigures(std::span<const uint64_t> counts,
                                     const HistogramLayout& layout,
                                     std::span<const double> percentiles,
                                     std::span<const double> slc_percentiles,
                                     PercentileMethod method, HistogramStats* stats) {
  return Compute(counts, layout, percentiles, slc_percentiles, method, stats);
}

LatencyFigures ComputeLatencyFigures(std::span<const double> counts, const HistogramLayout& layout,
                                     std::span<const double> percentiles,
                                     std::span<const double> slc_percentiles,
                                     PercentileMethod method, HistogramStats* stats) {
  return Compute(counts, layout, percentiles, slc_percentiles, method, stats);
}

}  // namespace iotail::stats
