// PrometheusMetrics: the interval sink that keeps a run's Prometheus exposition (text format 0.0.4)
// up to date, built from the closed intervals that feed the live line, so the workers are never
// touched and a scrape never waits for them.
//
// Names follow Prometheus's conventions: prefix `iotail_`, base units (seconds, bytes), `_total` on
// counters, labels `jobname` and `ddir` (never `job`, `instance` or `quantile`, which belong to
// Prometheus). Per job and direction: I/O, byte and (per job) error counters; the histograms
// `iotail_io_latency_seconds` (clat: issue to completion, fio's clat) and, rate-limited,
// `iotail_io_schedule_latency_seconds` (intended start to completion), whose `le` edges are exact
// unions of fio's buckets (four per power of two from 128 ns to 2^36 ns), so series from any host
// add up and histogram_quantile works; each `le` is the largest whole nanosecond of its union, in
// seconds, so a count "<= le" is exact. Gauges for the last closed interval: percentiles by fio's
// rule (label `percentile`), max, SBK's SLC factors; the rate target; the rate-limited schedule's
// late I/Os and largest lag; the I/Os in flight at the interval's close (each worker publishes
// its level with a relaxed store after each submission and batch of completions); build info, and
// from the first interval on, the run's start and the last interval's end. A replay (read_iolog)
// adds per job `iotail_replay_lateness_seconds`, the histogram of its I/Os' lateness (issue minus
// the intended time from the trace), on the same edges; its issued and late I/Os count in the
// schedule counters.
//
// Threading: OnInterval/Close run on the clock thread (IntervalSink's contract) and rebuild the
// text there; Exposition() may be called from any thread (the HTTP server's) at any time and
// returns the latest complete text under a mutex held only for a pointer copy.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "stats/core/direction.h"
#include "stats/record/interval_sink.h"

namespace iotail::stats {

// One job of the run as the metrics see it.
struct MetricsJob {
  std::string name;                          // the jobname label
  std::vector<Direction> directions;         // directions the job does (a series each)
  std::array<double, 2> rate_iops{};         // rate target per read/write clone sum (0: none)
  std::array<double, 2> rate_bytes_per_s{};  // the same in bytes per second
  bool replay = false;                       // it replays a trace (read_iolog)
};

class PrometheusMetrics final : public IntervalSink {
 public:
  PrometheusMetrics(std::vector<MetricsJob> jobs, std::string version);

  // Which job each delta of the next intervals belongs to: job_of_worker[w] indexes the jobs
  // given to the constructor (a batch of jobs between stonewalls runs with its own workers).
  void SetWorkers(std::vector<size_t> job_of_worker);

  void OnInterval(const IntervalInfo& info, std::span<const RecorderSnapshot> deltas) override;

  // The latest exposition (never empty: the metadata and zero counters before the first interval).
  std::shared_ptr<const std::string> Exposition() const;

  // The histogram's upper edges in whole ns (exclusive bounds of fio bucket unions), ascending.
  static const std::vector<uint64_t>& LatencyEdgesNs();

 private:
  struct Latency {
    std::vector<uint64_t> cumulative;  // per edge (not yet cumulative over edges) plus +Inf
    double sum_s = 0;
    uint64_t count = 0;
    void Add(const LatencySnapshot& delta);
  };
  struct Series {
    uint64_t ios = 0, bytes = 0;
    Latency clat, lat;
    bool has_interval = false;  // the gauges below hold the last interval with samples
    std::array<double, 4> pct_s{};
    double max_s = 0, slc1 = 0, slc2 = 0;
  };
  struct Job {
    MetricsJob spec;
    std::array<Series, kDirectionCount> dirs;
    uint64_t errors = 0, late = 0, issued = 0;
    double max_lag_s = 0;
    uint64_t in_flight = 0;  // at the last interval's close
    Latency lateness;        // a replay's: issue minus intended
  };
  void Render(uint64_t end_ns);

  std::vector<Job> jobs_;
  std::vector<size_t> job_of_worker_;
  std::string version_;
  uint64_t run_start_ns_ = 0;  // the first interval's start
  bool rate_limited_ = false;
  bool replay_ = false;
  mutable std::mutex mutex_;
  std::shared_ptr<const std::string> text_;
};

}  // namespace iotail::stats
