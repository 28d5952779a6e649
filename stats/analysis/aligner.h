// Aligner: maps histogram-log records onto fixed time quanta.
//
// A record covers the interval (start, end]: `start` is the end of the previous record of the same
// source and direction, or the job start for the first one. Quanta are [k*Q, (k+1)*Q) in the log's
// own time base (ms since job start, or Unix-epoch ms, so epoch quanta line up across hosts).
// A record's counts are split over the quanta it overlaps, in proportion to the overlap; a record
// of zero length (a duplicate-timestamp burst) falls wholly into the quantum ending at or after its
// time. When logs are written on a cadence equal to Q and aligned to it (as iotail writes them),
// every record falls into exactly one quantum with weight 1 and counts stay exact integers.
//
// Job start: 0 for relative logs; for Unix-epoch logs (first end time >= kEpochThresholdMs)
// `log_hist_msec` before the first end when given, else inferred from the spacing of the first two
// distinct end times of one direction (see ScanLogSegments), else the first end itself.
// A gap: a record more than kGapPeriods log periods after the record before it (a target that
// stalled, a job that logged nothing for a while, or a damaged time) covers its own last period
// only, (end - period, end]: the I/Os of a record complete near its end in iotail's logs (and at
// most a period after the record before it in fio's), so spreading them over an hours-long gap
// would invent I/O where there was none, and make every consumer walk the whole gap.
// A value type; thread-safe.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>

#include "stats/logs/log_scan.h"  // IsEpochTime

namespace iotail::stats {

// The start of the job whose log's first end times are first_end and (if any) second_end.
int64_t InferJobStart(int64_t first_end, std::optional<int64_t> second_end,
                      std::optional<int64_t> log_hist_msec);

inline constexpr int64_t kGapPeriods = 10;

// The start of the interval of a record that ends at `end`, the record before it (or the job
// start) ending at prev_end, in a log of period period_ms (when known): prev_end, or the end's
// last period after a gap (see above); never after `end`.
inline int64_t RecordStart(int64_t prev_end, int64_t end, std::optional<int64_t> period_ms) {
  if (period_ms && *period_ms > 0 && end > prev_end &&
      static_cast<uint64_t>(end) - static_cast<uint64_t>(prev_end) >
          static_cast<uint64_t>(kGapPeriods) * static_cast<uint64_t>(*period_ms)) {
    return end - *period_ms;
  }
  return std::min(prev_end, end);
}

class Aligner {
 public:
  // quantum_ms must be positive.
  explicit Aligner(int64_t quantum_ms);
  int64_t quantum_ms() const { return quantum_ms_; }

  // Index of the quantum holding instant t (floor division; t may be negative).
  int64_t QuantumOf(int64_t t) const;
  int64_t QuantumStart(int64_t index) const { return index * quantum_ms_; }
  // First and last quantum that (start, end] touches.
  int64_t FirstQuantum(int64_t start, int64_t end) const;
  int64_t LastQuantum(int64_t start, int64_t end) const;

  // Calls fn(quantum_index, weight) for each quantum in [from, to] that (start, end] overlaps, with
  // the fraction of the interval in it; the weights over all quanta add up to 1.
  template <typename Fn>
  void Split(int64_t start, int64_t end, int64_t from, int64_t to, Fn&& fn) const {
    if (end <= start) {
      const int64_t k = LastQuantum(start, end);
      if (k >= from && k <= to) fn(k, 1.0);
      return;
    }
    const double length = static_cast<double>(end - start);
    const int64_t first = std::max(FirstQuantum(start, end), from);
    const int64_t last = std::min(LastQuantum(start, end), to);
    for (int64_t k = first; k <= last; ++k) {
      const int64_t lo = std::max(start, k * quantum_ms_);
      const int64_t hi = std::min(end, (k + 1) * quantum_ms_);
      if (hi > lo) fn(k, hi - lo == end - start ? 1.0 : static_cast<double>(hi - lo) / length);
    }
  }

 private:
  int64_t quantum_ms_;
};

}  // namespace iotail::stats
