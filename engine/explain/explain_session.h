// ExplainSession: --explain and --explain_slowest for one batch of a run. A thread of its own takes
// every explained worker's completed I/Os (their IoTrail; each already joined to its block request
// by its worker, engine/explain/request_join.h: TrailJoin), splits each joined I/O's latency into
// the five stages (stats::Stage), keeps, per interval, each stage's histogram per worker and
// direction and each worker's slowest I/Os, and hands every closed interval to the run's explain
// sinks (stats::ExplainSinks: the stage logs, the slow-I/O logs), with the log time of the
// interval clock's interval it belongs to. It owns the batch's BlockTracer (when there is one)
// and closes it last.
//
// Intervals: an I/O belongs to the interval whose (start, end] holds the wall-clock instant it was
// seen done (its monotonic stamp plus the offset between the clocks measured at Start), on the
// interval clock's boundaries (origin + k * period: the epoch's multiples, or the run's start). The
// session is itself an IntervalSink of the interval clock, after the run's others: OnInterval tells
// it an interval has ended; it closes it kGraceMs later (so I/Os reaped at the boundary have
// reached it) and one seen after that goes to the next interval (nothing is lost). The final
// interval (the clock's Finish, once the workers have stopped) takes everything left; Close() waits
// for it to be written, then closes the sinks.
//
// Threads: Start, OnInterval, Close and the destructor from the clock's threads (never two at
// once, as IntervalSink's contract says); totals() once Close has returned. A sink that throws is
// reported through on_error once and gets nothing more.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "engine/explain/block_tracer.h"
#include "engine/explain/request_join.h"
#include "engine/io_trail.h"
#include "stats/record/explain_sink.h"
#include "stats/record/interval_sink.h"

namespace iotail::engine {

// One worker of the batch, as the session sees it.
struct ExplainedWorker {
  IoTrail* trail = nullptr;  // null: the worker's job does not explain (its deltas stay empty)
  int number = 0;            // its number in the run, from 1 (the logs' .N)
  uint32_t slowest = 0;      // its slowest I/Os kept per interval (0: none)
  // An nbd job's: no block layer; its stages are iotail's own (OwnStages).
  bool own_stages = false;
};

struct ExplainSessionOptions {
  uint32_t period_ms = 1000;  // the interval clock's period
  std::function<void(const std::string&)> on_error;
};

class ExplainSession final : public stats::IntervalSink {
 public:
  static constexpr uint64_t kGraceMs = 50;

  // tracer: null when there is no kernel view (the stages beyond schedule stay unknown); the
  // workers read its request table until they stop, and Close() closes it.
  ExplainSession(std::vector<ExplainedWorker> workers, std::unique_ptr<BlockTracer> tracer,
                 stats::ExplainSinks sinks, ExplainSessionOptions options);
  ~ExplainSession() override;

  // Starts the thread; before the workers run. origin_ns: the interval clock's boundaries are
  // origin_ns + k * period (0: the epoch's multiples). Throws std::system_error.
  void Start(uint64_t origin_ns);
  void OnInterval(const stats::IntervalInfo& info,
                  std::span<const stats::RecorderSnapshot> deltas) override;
  void Close() override;

  // Per worker of the batch: what it explained over the run (after Close).
  const std::vector<stats::ExplainTotals>& totals() const { return totals_; }
  bool Explains(size_t w) const { return workers_[w].trail != nullptr; }
  // Every closed interval's stage sums, in time order (after Close).
  const std::vector<stats::ExplainIntervalSums>& history() const { return history_; }
  // Requests of the traced devices that no I/O took (after Close), and records lost on the way
  // (full trails, tracepoint hits the kernel ran no program for).
  uint64_t requests_unmatched() const { return requests_unmatched_; }
  uint64_t records_dropped() const;

  struct Interval;  // what the session holds for one open interval

 private:
  void Loop();
  bool Round(bool final_round);
  void Account(size_t w, const IoTrailRecord& io);
  void Emit(const stats::IntervalInfo& info, Interval& interval);
  Interval& IntervalOf(uint64_t done_ns);

  std::vector<ExplainedWorker> workers_;
  std::unique_ptr<BlockTracer> tracer_;
  stats::ExplainSinks sinks_;
  ExplainSessionOptions options_;
  int64_t mono_to_real_ = 0;
  uint64_t period_ns_ = 0;
  uint64_t origin_ns_ = 0;
  uint64_t last_emitted_end_ = 0;                // epoch ns of the last interval handed over
  std::vector<std::unique_ptr<Interval>> open_;  // by end, ascending
  std::vector<stats::ExplainTotals> totals_;
  std::vector<stats::ExplainIntervalSums> history_;
  uint64_t requests_unmatched_ = 0;

  std::mutex mutex_;
  std::condition_variable cv_;
  struct Boundary {
    stats::IntervalInfo info;
    uint64_t seen_mono_ns = 0;
  };
  std::deque<Boundary> boundaries_;  // guarded by mutex_
  bool finished_ = false;            // the final interval written (guarded by mutex_)
  bool quit_ = false;                // the destructor's stop (guarded by mutex_)
  std::thread thread_;
};

}  // namespace iotail::engine
