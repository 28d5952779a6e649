// BatchExplain: what RunJobs (engine/job_runner.h) sets up for --explain and --explain_slowest in
// one batch: a trail (engine/io_trail.h) for each worker of a job that asks, each target's place on
// its disk (engine/explain/io_places.h), the kernel's view (BlockTracer on those disks, with
// --explain), each worker's way to its requests (TrailJoin, engine/explain/request_join.h) and the
// ExplainSession that takes the trails. Make() is the probe: what the machine lacks
// (no BPF, a tmpfs target) is noted, never thrown, and the run goes on. Owned by RunJobs for the
// batch; Session() is given to the interval clock as its last sink. One thread.
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "engine/explain/explain_session.h"
#include "engine/io_trail.h"
#include "engine/job_runner.h"
#include "engine/job_targets.h"
#include "engine/worker.h"

namespace iotail::engine {

class BatchExplain {
 public:
  // Null when no job of the batch asks. Sets each explained worker's trail.
  static std::unique_ptr<BatchExplain> Make(std::span<const JobSpec> specs,
                                            std::span<const Targets> targets,
                                            std::span<const std::unique_ptr<Worker>> workers,
                                            std::span<const size_t> job_of_worker,
                                            int first_worker);

  // Builds the session with the run's outputs; returns it, for the interval clock.
  stats::IntervalSink* Open(stats::ExplainSinks sinks, uint32_t period_ms,
                            std::function<void(const std::string&)> on_error);
  // origin_ns: the interval clock's boundaries are origin_ns + k * period (0: the epoch's).
  void Start(uint64_t origin_ns) { session_->Start(origin_ns); }
  // After the clock's Finish: each job's totals and the batch's notes into `out`.
  void Collect(std::span<const size_t> job_of_worker, RunOutcome& out) const;

  const ExplainOutcome& outcome() const { return outcome_; }

 private:
  BatchExplain() = default;
  std::vector<std::unique_ptr<IoTrail>> trails_;
  std::vector<ExplainedWorker> workers_;
  std::unique_ptr<BlockTracer> tracer_;
  std::vector<std::unique_ptr<TrailJoin>> joins_;  // the workers' (they outlive the workers' runs)
  std::unique_ptr<ExplainSession> session_;
  ExplainOutcome outcome_;
};

}  // namespace iotail::engine
