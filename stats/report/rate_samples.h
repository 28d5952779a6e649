// RateSampleSink: the interval sink that samples bandwidth and IOPS per window, as fio samples
// them for bw_min/bw_max/bw_mean/bw_dev/bw_samples and iops_min/.../iops_samples: each closed
// interval that covers at least half the period is one sample per entry and direction (fio takes
// one every bw_avg_time; iotail's windows are the interval clock's). An entry is one reported job:
// a worker, or with group_reporting the sum of a group's workers (entry_of_worker maps them). A
// direction is sampled in every window of its entry once it has done I/O (idle windows count as
// 0, as fio's). Used by one thread at a time (see IntervalSink); Samples() after the run.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "stats/core/direction.h"
#include "stats/core/sample_stats.h"
#include "stats/record/interval_sink.h"

namespace iotail::stats {

struct RateSamples {
  std::array<SampleStats, kDirectionCount> bw_kib;  // KiB/s
  std::array<SampleStats, kDirectionCount> iops;
};

class RateSampleSink final : public IntervalSink {
 public:
  // entry_of_worker[w]: the entry worker w (deltas[first_delta + w]) reports under.
  RateSampleSink(std::vector<size_t> entry_of_worker, size_t entries, uint32_t period_ms,
                 size_t first_delta = 0);

  void OnInterval(const IntervalInfo& info, std::span<const RecorderSnapshot> deltas) override;
  // The workers of the next run (a later group of jobs): their entries, samples accumulating.
  void SetWorkers(std::vector<size_t> entry_of_worker) {
    entry_of_worker_ = std::move(entry_of_worker);
  }

  const std::vector<RateSamples>& samples() const { return samples_; }

 private:
  std::vector<size_t> entry_of_worker_;
  size_t first_delta_;
  uint64_t period_ns_;
  std::vector<RateSamples> samples_;
  std::vector<std::array<bool, kDirectionCount>> active_;          // direction has done I/O
  std::vector<std::array<uint64_t, 2 * kDirectionCount>> totals_;  // per entry: ios, bytes
};

}  // namespace iotail::stats
