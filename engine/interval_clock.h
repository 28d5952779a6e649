// IntervalClock: the one thread that closes every worker's logging interval at the same instants.
//
// Boundaries are the wall-clock (CLOCK_REALTIME) instants that are multiples of the period since
// the Unix epoch, so every worker of a run, and every host running at the same time with
// synchronized clocks, closes its intervals at identical instants. At each boundary the clock
// samples every recorder (RecorderSampler: exact deltas, nothing lost or counted twice), writes one
// fio-format histogram-log line per worker and logged direction (clat, and in the rate-limited mode
// lat into a second set of logs), and calls the optional interval callback with the deltas (the
// hook for live reporting and SLA checks). Finish() must be called after every
// worker has stopped: it writes the final partial interval, so the counts in the logs add up to
// exactly the I/Os the recorders hold.
//
// Log times are the boundary in ms since the period boundary at or before the run's start (so
// multiples of the period, but for the final partial interval; see LogTimeMs) or, with
// unix_epoch, the boundary's Unix epoch ms (an exact multiple of the period).
// Thread-safety: Start/Finish from one controlling thread; the callback runs on the clock thread.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

#include "stats/core/direction.h"
#include "stats/logs/hist_log_writer.h"
#include "stats/record/recorder.h"

namespace iotail::engine {

// The first boundary strictly after now_ns (epoch ns), for a period of period_ms.
constexpr uint64_t NextBoundaryNs(uint64_t now_ns, uint32_t period_ms) {
  const uint64_t period = static_cast<uint64_t>(period_ms) * 1'000'000u;
  return (now_ns / period + 1) * period;
}

// The time column for an interval ending at end_ns (epoch ns) of a run whose recording started at
// start_ns. Relative times count from the log-period boundary at or before the start (the wall
// clock's multiple of period_ms), so that, like epoch times, every interval the clock closes ends
// on a multiple of the period and quanta that are multiples of it need no splitting; the first
// interval nominally begins at 0, up to one period before the first I/O.
constexpr uint64_t LogTimeMs(uint64_t end_ns, uint64_t start_ns, uint64_t period_ms,
                             bool unix_epoch) {
  if (unix_epoch) return (end_ns + 500'000u) / 1'000'000u;
  const uint64_t period_ns = period_ms * 1'000'000u;
  const uint64_t origin = period_ns != 0 ? start_ns - start_ns % period_ns : start_ns;
  return end_ns <= origin ? 0 : (end_ns - origin + 500'000u) / 1'000'000u;
}

// What the callback learns about one interval besides the deltas.
struct IntervalInfo {
  uint64_t time_ms = 0;   // the log's time column for this interval (its end)
  uint64_t start_ns = 0;  // epoch ns: the interval is (start_ns, end_ns]
  uint64_t end_ns = 0;
  bool final = false;          // the last (partial) interval, written by Finish()
  uint64_t planned_bytes = 0;  // bytes the run will do in all (0: time-based or unknown)
};

struct IntervalClockOptions {
  uint32_t period_ms = 1000;
  bool unix_epoch = false;
  uint64_t start_realtime_ns = 0;            // the run's start instant (after ramp), epoch ns
  std::vector<stats::Direction> directions;  // directions logged for every worker
  uint32_t bs = 4096;                        // the bs column (fio: meaningless)
  uint64_t planned_bytes = 0;                // passed on in IntervalInfo
};

class IntervalClock {
 public:
  // Called on the clock thread at each boundary, and by Finish() for the final interval: the
  // interval and one delta per worker.
  using Callback =
      std::function<void(const IntervalInfo&, std::span<const stats::RecorderSnapshot>)>;

  // recorders[i] is worker i's; logs is empty (no logging) or has one writer per worker; lat_logs
  // likewise (lat histograms; all zero for a worker that records no lat).
  IntervalClock(std::vector<const stats::Recorder*> recorders,
                std::vector<std::unique_ptr<stats::HistLogWriter>> logs,
                IntervalClockOptions options, Callback callback = nullptr,
                std::vector<std::unique_ptr<stats::HistLogWriter>> lat_logs = {});
  ~IntervalClock();

  void Start();
  // Stops the thread, then records the final interval ending at end_realtime_ns. Call after all
  // workers have stopped. Rethrows a log-writing failure of the clock thread.
  void Finish(uint64_t end_realtime_ns);

  // Everything sampled so far, per worker (complete after Finish()).
  std::vector<stats::RecorderSnapshot> Totals() const;
  uint64_t intervals_written() const { return intervals_; }

 private:
  void Loop();
  void Close(uint64_t end_ns, bool final);

  std::vector<stats::RecorderSampler> samplers_;
  std::vector<std::unique_ptr<stats::HistLogWriter>> logs_;
  std::vector<std::unique_ptr<stats::HistLogWriter>> lat_logs_;
  std::vector<uint64_t> zeros_;  // an empty lat histogram
  uint64_t last_end_ns_ = 0;
  IntervalClockOptions options_;
  Callback callback_;
  std::vector<stats::RecorderSnapshot> deltas_;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::exception_ptr failure_;
  uint64_t intervals_ = 0;
};

}  // namespace iotail::engine
