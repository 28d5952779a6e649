// LatencyFigures: the percentiles and SLC factors of one latency histogram, computed the one way
// every report does it (the run summary, the live line, `iotail pctiles`, metrics): the requested
// percentiles by the named rule, then SBK's SLC over `slc_percentiles` around the median (50th
// percentile by the same rule). All values in ns; an empty histogram gives NaN percentiles and zero
// SLC factors (has_slc false). One walk over the buckets for all the percentiles together. Free
// functions; thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "stats/core/histogram_layout.h"
#include "stats/core/percentiles.h"
#include "stats/core/slc.h"

namespace iotail::stats {

struct LatencyFigures {
  std::vector<double> percentiles;  // one per requested percentile, in the order given
  double median = 0;
  SlcFactors slc;
  bool has_slc = false;  // false for an empty histogram or an empty slc_percentiles list
};

// With `stats`, also the histogram's ComputeStats (its non-zero buckets found once for both).
LatencyFigures ComputeLatencyFigures(std::span<const uint64_t> counts,
                                     const HistogramLayout& layout,
                                     std::span<const double> percentiles,
                                     std::span<const double> slc_percentiles,
                                     PercentileMethod method, HistogramStats* stats = nullptr);
LatencyFigures ComputeLatencyFigures(std::span<const double> counts, const HistogramLayout& layout,
                                     std::span<const double> percentiles,
                                     std::span<const double> slc_percentiles,
                                     PercentileMethod method, HistogramStats* stats = nullptr);

}  // namespace iotail::stats
