// SLC: the Sliding Latency Coverage factors of SBK, exactly as SBK's code computes them (see
// shared/slc.md): SLC1 is the mean relative spread from the lowest listed percentile up to the
// median, SLC2 the mean relative spread from the median up to the highest listed percentile.
//
// Inputs are the latencies at an ascending percentile list and the median (the 50th percentile
// computed on its own). Computed on nanosecond values, so it is not SBK's millisecond
// quantisation noise. Returns both SBK's integer form (trunc((s + c - 1) / c)) and the exact means
// (s / c). The paper's printed formula differs from SBK's code; we follow the code.
#pragma once

#include <cstdint>
#include <span>

namespace iotail::stats {

struct SlcFactors {
  int64_t slc1 = 0;  // SBK's integer form
  int64_t slc2 = 0;
  double slc1_mean = 0;  // the plain means
  double slc2_mean = 0;
};

SlcFactors ComputeSlc(std::span<const double> values, double median);

// SBK's current 28-entry list, the default for SLC.
std::span<const double> SbkSlcPercentiles();
// The 21-entry list of the SLC paper.
std::span<const double> PaperSlcPercentiles();

}  // namespace iotail::stats
