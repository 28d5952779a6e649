// RateFloor: fio's rate_min and rate_iops_min for one worker (its __check_min_rate), a feature
// object of the worker's completions: it counts the bytes and I/Os recorded per direction and,
// when asked at a completion, checks each direction's rate since its last check against the floor,
// from 2 s after the recording start (fio's settle period) and over at least ratecycle ms.
// Present only in a job that sets a floor (Enabled()); the worker calls Count for each recorded
// completion and Check at the end of a round. Not thread-safe (the worker's own); Check allocates
// only when it finds the floor missed (the message), which ends the worker.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "engine/job_spec.h"
#include "stats/core/direction.h"

namespace iotail::engine {

class RateFloor {
 public:
  // The floor of `spec` for worker `index` (0-based; named "NAME (clone i of n)" with numjobs).
  RateFloor(const JobSpec& spec, int index);
  static bool Enabled(const JobSpec& spec) {
    return spec.rates.min[0].Any() || spec.rates.min[1].Any();
  }
  // A completion of `bytes` recorded in direction d (trims are not counted).
  void Count(stats::Direction d, uint32_t bytes) {
    if (d == stats::Direction::kTrim) return;
    const size_t i = d == stats::Direction::kRead ? 0 : 1;
    done_bytes_[i] += bytes;
    ++done_ios_[i];
  }
  // At `now` (Clock::NowNs()), recording since record_from_ns: false when a direction missed its
  // floor over its last cycle; shortfall() then says so in fio's words.
  bool Check(uint64_t now, uint64_t record_from_ns);
  const std::string& shortfall() const { return shortfall_; }

 private:
  struct Base {
    uint64_t bytes = 0, ios = 0, at_ns = 0;
    bool set = false;
  };
  const JobSpec& spec_;
  int index_;
  std::array<Base, 2> base_{};
  std::array<uint64_t, 2> done_bytes_{}, done_ios_{};  // completed and recorded, reads/writes
  std::string shortfall_;
};

}  // namespace iotail::engine
