// RateSchedule: the intended issue times of one worker's I/Os in the rate-limited (open-loop) mode.
//
// The schedule is fixed in advance and never looks at completions: I/O k is meant to start at
// start + phase + gap_0 + ... + gap_{k-1}. With an IOPS target every gap has mean 1e9 / iops ns;
// with a bandwidth target the gap after an I/O of b bytes has mean b * 1e9 / bytes_per_s ns (fio's
// rule: the next I/O is due when the bytes issued so far, at the target rate, have taken their
// time). `linear` makes every gap equal to its mean; it is computed from the I/O or byte count by
// one multiplication, so it never drifts. `poisson` draws each gap from an exponential distribution
// with that mean (a Poisson arrival process) using a generator seeded from --randseed, so a run is
// reproducible. A worker that falls behind does not skip or compress the schedule: late I/Os keep
// their intended times and their latency is measured from them (no coordinated omission).
//
// Allocation-free and cheap (one multiply, or one log for poisson, per I/O); not thread-safe (one
// per worker and direction).
#pragma once

#include <cmath>
#include <cstdint>

#include "engine/io_pattern.h"

namespace iotail::engine {

enum class RateProcess { kLinear, kPoisson };

// An I/O issued more than this after its intended start counts as late.
inline constexpr uint64_t kLateThresholdNs = 100'000;

// One schedule's target: exactly one of the two is > 0.
struct RateTarget {
  double iops = 0;
  double bytes_per_s = 0;
};

class RateSchedule {
 public:
  // phase_ns delays the whole schedule (workers of one job are staggered by a fraction of a gap so
  // that their union is evenly spaced too).
  RateSchedule(RateTarget target, RateProcess process, uint64_t seed, double phase_ns)
      : process_(process),
        ns_per_io_(target.iops > 0 ? 1e9 / target.iops : 0),
        ns_per_byte_(target.iops > 0 ? 0 : 1e9 / target.bytes_per_s),
        phase_ns_(phase_ns),
        rng_(seed) {}

  // Anchors the schedule: the first I/O is due at start_ns + phase.
  void Start(uint64_t start_ns) {
    start_ns_ = start_ns;
    ios_ = 0;
    bytes_ = 0;
    offset_ns_ = phase_ns_;
    next_ns_ = start_ns_ + static_cast<uint64_t>(std::llround(offset_ns_));
  }
  // The intended start of the next I/O.
  uint64_t next_ns() const { return next_ns_; }
  // The next I/O (of `bytes` bytes) has been issued: moves to the one after it.
  void Advance(uint32_t bytes) {
    ++ios_;
    bytes_ += bytes;
    if (process_ == RateProcess::kLinear) {
      offset_ns_ = phase_ns_ + (ns_per_io_ > 0 ? static_cast<double>(ios_) * ns_per_io_
                                               : static_cast<double>(bytes_) * ns_per_byte_);
    } else {
      const double mean = ns_per_io_ > 0 ? ns_per_io_ : static_cast<double>(bytes) * ns_per_byte_;
      // U in (0, 1]: -log(U) is exponential with mean 1.
      const double u = static_cast<double>((rng_.Next() >> 11) + 1) * 0x1.0p-53;
      offset_ns_ += -std::log(u) * mean;
    }
    next_ns_ = start_ns_ + static_cast<uint64_t>(std::llround(offset_ns_));
  }

 private:
  RateProcess process_;
  double ns_per_io_;
  double ns_per_byte_;
  double phase_ns_;
  FastRandom rng_;
  uint64_t start_ns_ = 0;
  uint64_t ios_ = 0;
  uint64_t bytes_ = 0;
  double offset_ns_ = 0;
  uint64_t next_ns_ = 0;
};

}  // namespace iotail::engine
