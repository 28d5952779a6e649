// LatencySearch: fio's latency target mode (latency_target, latency_window, latency_percentile,
// latency_run), the search for the deepest queue whose latency meets the target. It is the state
// of one worker (fio's td->latency_*), pure arithmetic: the worker feeds it each completion's
// latency and, after each round, the time and its count of completed I/Os, and does what it asks
// (lower its depth limit, drain the queue, reset its statistics, stop).
//
// As fio 3.33 (io_u.c): the search starts at depth 1 between low 1 and high iodepth. Each window
// (latency_window from its start, checked after every round) whose share of I/Os at or under the
// target (total latency, start to completion) is at least latency_percentile is a success: low
// becomes the depth, which doubles while high is still iodepth and otherwise goes half way to high
// (capped at iodepth); after three successes in a row just under high, high grows by one. A
// window under the percentile is a failure: high becomes the depth, the depth goes half way down
// to low (low first lowered by one when they are equal), the queue is drained and a new window
// begins; at depth 1 nothing changes and the window goes on. With latency_percentile=100 every
// I/O over the target is a failure at once (and at depth 1 fio's "max latency exceeded" error,
// ETIMEDOUT). Without latency_run, a success that leaves the depth unchanged ends the search:
// the queue is drained, the statistics reset, and the next such success ends the job. A new loop
// over the files, and the end of ramp_time unless the search has ended, start it again.
//
// Not thread-safe: one worker's thread. Never allocates, locks or throws.
#pragma once

#include <cstdint>

#include "engine/job_spec.h"

namespace iotail::engine {

class LatencySearch {
 public:
  // What the worker does after a call.
  enum class Step {
    kNone,
    kDrain,          // issue nothing until the queue is empty, then call Drained()
    kDrainAndReset,  // the same, and reset the statistics when it is (the final window)
    kDone,           // the search has ended: the job stops
    kFatal,          // an I/O over the target at depth 1 with percentile 100: fio's ETIMEDOUT
  };

  explicit LatencySearch(const JobSpec& spec);

  bool enabled() const { return target_ns_ != 0; }
  // The depth limit now (iodepth when off); 0 while the queue drains.
  uint32_t limit() const { return draining_ ? 0 : depth_; }
  // The depth found (fio's latency_depth): the current one.
  uint32_t depth() const { return depth_; }
  bool ended() const { return end_run_; }

  // fio's lat_target_init: a new search from depth 1 (the worker's start, a new loop).
  void Start(uint64_t now_ns, uint64_t ios);
  // The ramp is over: fio's reset starts the search again unless it has ended.
  void RampOver(uint64_t now_ns, uint64_t ios) {
    if (!end_run_) Start(now_ns, ios);
  }
  // One completed I/O of total latency lat_ns.
  Step OnCompletion(uint64_t lat_ns);
  // After a round (not while draining): checks the window if it is over. `ios`: the worker's
  // completed I/Os so far (a count that only grows).
  Step Check(uint64_t now_ns, uint64_t ios);
  // The queue has drained: a new window begins.
  void Drained(uint64_t now_ns, uint64_t ios);

 private:
  Step Failed();
  Step Succeeded();

  uint64_t target_ns_;
  uint64_t window_ns_;
  double percentile_;
  bool run_;
  uint32_t iodepth_;
  uint32_t depth_;
  uint32_t low_ = 1;
  uint32_t high_;
  uint32_t stable_ = 0;
  uint64_t window_from_ns_ = 0;
  uint64_t window_ios_ = 0;  // the I/O count when the window began
  uint64_t failed_ = 0;      // I/Os over the target in this window (not reset by Start, as fio)
  bool end_run_ = false;
  bool draining_ = false;
  bool done_ = false;
};

}  // namespace iotail::engine
