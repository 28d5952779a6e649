// SteadyStateMonitor: fio's steadystate for the jobs of one RunJobs batch that ask for it
// (JobSpec::steady.dur_ns != 0), on a thread of its own.
//
// A unit is one worker (fio's job clone), or with ss_group (group_reporting) every worker of the
// jobs of its reporting group that ask for it. A unit's measurements begin once its first worker
// records (WorkerThreads::record_from_ns), or with ss_ramp one interval after the ramp (fio begins
// "one second after" it), and are then taken every ss_interval: the completions and bytes per
// second since the previous one (the unit's workers summed, from their recorders' Progress(): no
// histogram copied, no lock) and the mean completion latency so far.
// Each goes into the unit's SteadyStateWindow of ss_dur / ss_interval measurements; once the
// criterion holds, every worker of the unit is terminated (Worker::Terminate, as fio ends a job
// that attains steady state) and the unit measures no more. A unit whose workers have all ended
// measures no more either. The units of a reporting group must agree on the settings (UsageError
// naming the jobs, as fio rejects them). Start/Stop from one controlling thread.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <thread>
#include <vector>

#include "engine/job_spec.h"
#include "engine/worker.h"
#include "engine/worker_threads.h"
#include "stats/core/steady_state.h"

namespace iotail::engine {

class SteadyStateMonitor {
 public:
  // Throws UsageError when the jobs of a reporting group disagree on their settings.
  SteadyStateMonitor(std::span<const JobSpec> specs,
                     const std::vector<std::unique_ptr<Worker>>& workers,
                     std::span<const size_t> job_of_worker);
  ~SteadyStateMonitor() { Stop(); }
  SteadyStateMonitor(const SteadyStateMonitor&) = delete;
  SteadyStateMonitor& operator=(const SteadyStateMonitor&) = delete;

  // Starts the monitor's thread over the workers `threads` runs (nothing when no job asks for
  // steady state).
  void Start(const WorkerThreads& threads);
  // Ends the thread; the results are final after it.
  void Stop();
  // Worker w's unit's result; nullopt when its job has no steady-state detection.
  std::optional<stats::SteadyStateResult> ResultOf(size_t w) const;

 private:
  struct Unit {
    std::vector<size_t> workers;
    uint64_t ramp_ns = 0, interval_ns = 0;
    stats::SteadyStateWindow window;
    uint64_t next_ns = 0;  // the next measurement (Clock::NowNs()); 0 until the ramp is over
    uint64_t prev_ns = 0;  // the previous reading's time and counts
    uint64_t prev_ios = 0, prev_bytes = 0;
    bool done = false;
  };
  void Body();
  // Measures every unit that is due at now_ns; returns the earliest next instant (UINT64_MAX:
  // none).
  uint64_t Tick(uint64_t now_ns);
  void Measure(Unit& u, uint64_t now_ns);
  // The unit's workers' recorders summed.
  stats::RecorderProgress Progress(const Unit& u) const;

  const std::vector<std::unique_ptr<Worker>>& workers_;
  const WorkerThreads* threads_ = nullptr;
  std::vector<Unit> units_;
  std::vector<int> unit_of_worker_;  // -1: none
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace iotail::engine
