// IntervalSink: where every closed logging interval of a run goes. The interval clock
// (engine/interval_clock.h) samples every worker's recorder at epoch-aligned instants and hands
// each sink the interval's bounds and one exact delta per worker; a sink turns that into an output
// without touching the workers. The sinks (stats/report/): HistLogSink (fio histogram logs),
// ValueLogSink (fio's bw/iops/lat logs), LiveReport (the live line and --sla checks),
// RateSampleSink (the summary's bw/iops samples), PrometheusMetrics (--prometheus); iotail-mpi adds
// ForwardSink (mpi/rank_messages.h: each interval to rank 0). Adding an output is adding a sink;
// nothing else changes.
//
// Contract: OnInterval() is called on the clock thread at each boundary, in time order, and once
// more for the run's final partial interval (info.final) from the thread that finishes the clock;
// never concurrently. It should return quickly (the next boundary waits for it) and may throw: the
// run then fails with that exception. Close() is called once after the final interval, on the
// finishing thread: flush and release. Sinks are owned by whoever built them (a run's: RunSinks,
// cli/run_assembly.h) and must outlive the clock.
#pragma once

#include <cstdint>
#include <span>

#include "stats/record/recorder.h"

namespace iotail::stats {

// One closed interval besides its deltas.
struct IntervalInfo {
  uint64_t time_ms = 0;   // the log's time column for this interval (its end)
  uint64_t start_ns = 0;  // epoch ns: the interval is (start_ns, end_ns]
  uint64_t end_ns = 0;
  bool final = false;          // the last (partial) interval of the run
  uint64_t planned_bytes = 0;  // bytes the run will do in all (0: time-based or unknown)
  uint64_t origin_ns = 0;      // boundaries are origin_ns + k * period (0: the epoch's multiples)
};

class IntervalSink {
 public:
  virtual ~IntervalSink() = default;
  // deltas[w]: what worker w completed in this interval.
  virtual void OnInterval(const IntervalInfo& info, std::span<const RecorderSnapshot> deltas) = 0;
  virtual void Close() {}
};

}  // namespace iotail::stats
