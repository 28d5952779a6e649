// RateFloorSink: fio's rate_min / rate_iops_min as an interval sink. For each job (a range of
// workers) and direction with a floor, every interval that covers the whole period is checked
// (the first and last, partial ones are not): when the job's workers together did less than their
// floors sum to, the first such shortfall is kept and `stop` is set, so the run ends and reports
// it (fio ends that job; iotail ends the run, whose exit status says it). Used by one thread at a
// time (see IntervalSink).
#pragma once

#include <array>
#include <atomic>
#include <string>
#include <vector>

#include "stats/core/direction.h"
#include "stats/record/interval_sink.h"

namespace iotail::stats {

struct RateFloor {
  std::string job;
  size_t first_worker = 0, workers = 0;         // deltas[first_worker .. +workers)
  std::array<double, 2> iops{}, bytes_per_s{};  // per worker (reads, writes); 0: none
};

class RateFloorSink final : public IntervalSink {
 public:
  RateFloorSink(std::vector<RateFloor> floors, uint32_t period_ms, std::atomic<bool>* stop)
      : floors_(std::move(floors)), period_ns_(uint64_t{period_ms} * 1'000'000u), stop_(stop) {}

  void OnInterval(const IntervalInfo& info, std::span<const RecorderSnapshot> deltas) override;

  // The first shortfall ("job 'x': reads at 812 IOPS, below rate_iops_min 1000 (2 workers x
  // 500)"), or "".
  const std::string& shortfall() const { return shortfall_; }

 private:
  std::vector<RateFloor> floors_;
  uint64_t period_ns_;
  std::atomic<bool>* stop_;
  std::string shortfall_;
};

}  // namespace iotail::stats
