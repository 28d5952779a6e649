// IntervalClock: the one thread that closes every worker's logging interval at the same instants.
//
// Boundaries are the wall-clock (CLOCK_REALTIME) instants that are multiples of the period since
// the Unix epoch, so every worker of a run, and every host running at the same time with
// synchronized clocks, closes its intervals at identical instants; or, with from_start (a run on
// one host whose logs count from its start, as fio's), multiples of the period after the start. At
// each boundary the clock samples every recorder (RecorderSampler: exact deltas, nothing lost or
// counted twice) and hands the interval and the deltas to every sink in turn
// (stats/record/interval_sink.h: the histogram logs, the live report and SLA checks, ...). Finish()
// must be called after every worker has stopped: it closes the final partial interval and then the
// sinks, so the counts every sink saw add up to exactly the I/Os the recorders hold. A sink that
// throws (a log on a full filesystem) is reported at once through on_sink_error and dropped; the
// run and the other sinks go on.
//
// Log times are the boundary in ms since the period boundary at or before the run's start (so
// multiples of the period, but for the final partial interval; see LogTimeMs) or, with
// unix_epoch, the boundary's Unix epoch ms (an exact multiple of the period). They strictly
// increase: a final interval that would round onto the last boundary's time is stamped 1 ms later.
// A run that ends within a quarter period after a boundary the clock thread has not closed yet
// (it wakes a little late) ends with that boundary's close, stamped with the boundary, as late
// closes always are; so a run's last full period is never stamped past its boundary.
// Thread-safety: Start/Finish from one controlling thread; sinks run on the clock thread (and the
// final interval on the thread calling Finish).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "stats/record/interval_sink.h"
#include "stats/record/recorder.h"

namespace iotail::engine {

// The first boundary strictly after now_ns (epoch ns), for a period of period_ms, boundaries being
// origin_ns + k * period (origin 0: the epoch's multiples).
constexpr uint64_t NextBoundaryNs(uint64_t now_ns, uint32_t period_ms, uint64_t origin_ns = 0) {
  const uint64_t period = static_cast<uint64_t>(period_ms) * 1'000'000u;
  if (now_ns < origin_ns) return origin_ns;
  return origin_ns + ((now_ns - origin_ns) / period + 1) * period;
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

using stats::IntervalInfo;

struct IntervalClockOptions {
  uint32_t period_ms = 1000;
  bool unix_epoch = false;
  uint64_t start_realtime_ns = 0;  // the run's start instant (after ramp), epoch ns
  // Boundaries (and relative times) count from start_realtime_ns rather than the epoch: a run on
  // one host, whose logs then have fio's times (full periods from the start). Not with unix_epoch.
  bool from_start = false;
  uint64_t planned_bytes = 0;  // passed on in IntervalInfo
  // Called (on the clock thread, or the finishing one) when a sink fails, e.g. a log on a full
  // filesystem: that sink gets nothing more, the run and the other sinks go on.
  std::function<void(const std::string&)> on_sink_error;
};

class IntervalClock {
 public:
  // recorders[i] is worker i's; the sinks (not owned) get every interval in this order.
  IntervalClock(std::vector<const stats::Recorder*> recorders,
                std::vector<stats::IntervalSink*> sinks, IntervalClockOptions options);
  ~IntervalClock();

  // Starts the clock thread; it closes no interval before options.start_realtime_ns, so it may be
  // started ahead of the workers. Throws std::system_error if the thread cannot be created.
  void Start();
  // Stops the thread, then closes the final interval ending at end_realtime_ns and the sinks. Call
  // after all workers have stopped. Rethrows a sink's failure on the clock thread.
  void Finish(uint64_t end_realtime_ns);

  // Everything sampled so far, per worker (complete after Finish()).
  std::vector<stats::RecorderSnapshot> Totals() const;
  uint64_t intervals_written() const { return intervals_; }
  // What failed, one message per sink dropped (complete after Finish()).
  const std::vector<std::string>& sink_errors() const { return sink_errors_; }

 private:
  void Loop();
  // Closes the interval ending at end_ns; its time column is that of stamp_ns.
  void Close(uint64_t end_ns, bool final, uint64_t stamp_ns);
  // A final close this close after a boundary not yet closed (at most period/kLateCloseFraction)
  // is stamped with that boundary.
  static constexpr uint64_t kLateCloseFraction = 4;
  void Drop(size_t sink, const std::string& why);

  std::vector<stats::RecorderSampler> samplers_;
  std::vector<stats::IntervalSink*> sinks_;  // a failed sink becomes nullptr
  std::vector<std::string> sink_errors_;
  uint64_t last_end_ns_ = 0;
  uint64_t last_time_ms_ = 0;
  uint64_t origin_ns_ = 0;  // the boundaries' origin: start_realtime_ns with from_start, else 0
  IntervalClockOptions options_;
  std::vector<stats::RecorderSnapshot> deltas_;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::exception_ptr failure_;
  uint64_t intervals_ = 0;
};

}  // namespace iotail::engine
