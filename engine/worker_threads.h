// WorkerThreads: the threads of a run's workers. Each prepares its engine on its own thread
// (io_uring's single-issuer rings belong to the thread that creates them), then waits for Go();
// Run() happens there, and the engine is torn down there too (in parallel: a libaio context takes
// ~30 ms to destroy). A job that waits for another (wait_for) starts when every worker of that job
// has ended, its times moved by as much as it waited. Used by engine/job_runner.cc from one
// controlling thread.
#pragma once

#include <fmt/format.h>

#include <atomic>
#include <exception>
#include <latch>
#include <memory>
#include <span>
#include <system_error>
#include <thread>
#include <vector>

#include "engine/clock.h"
#include "engine/worker.h"

namespace iotail::engine {

class WorkerThreads {
 public:
  // job_of_worker[w]: worker w's job; waits_on[j]: the job that job j waits for (wait_for), or -1.
  // specs[j]: job j's exitall rules (JobSpec::ending.exitall, exitall_on_error, exit_what_group).
  WorkerThreads(std::vector<std::unique_ptr<Worker>>& workers, const std::atomic<bool>& stop,
                std::vector<size_t> job_of_worker, std::vector<int> waits_on,
                std::span<const JobSpec> specs)
      : specs_(specs),
        workers_(workers),
        stop_(stop),
        failures_(workers.size()),
        end_ns_(workers.size()),
        record_from_ns_(workers.size()),
        job_of_worker_(std::move(job_of_worker)),
        waits_on_(std::move(waits_on)),
        running_(waits_on_.size()),
        prepared_(workers.size()) {
    for (size_t w = 0; w < workers.size(); ++w) ++running_[job_of_worker_[w]];
    threads_.reserve(workers.size());
    for (size_t w = 0; w < workers.size(); ++w) {
      try {
        threads_.emplace_back([this, w] { Body(w); });
      } catch (const std::system_error& e) {
        // Release the threads that started (they wait for the preparation of all), join them.
        for (size_t rest = w; rest < workers.size(); ++rest) prepared_.count_down();
        Abort();
        throw std::system_error(
            e.code(), fmt::format("cannot start worker thread {} of {}", w + 1, workers.size()));
      }
    }
  }
  ~WorkerThreads() { Abort(); }

  // Waits until every worker is prepared; rethrows the first preparation failure (after
  // stopping every thread).
  void WaitPrepared() {
    prepared_.wait();
    for (const auto& f : failures_) {
      if (f != nullptr) {
        Abort();
        std::rethrow_exception(f);
      }
    }
  }
  // Starts every worker w with times[w], which count from the common start start_ns (workers run
  // until done or *stop). A job that waits for another starts when that one's workers have all
  // ended: its times move by as much as it waited.
  void Go(std::vector<WorkerTimes> times, uint64_t start_ns) {
    times_ = std::move(times);
    start_ns_ = start_ns;
    went_ = true;
    go_.count_down();
  }
  // Ends the run before it started (a failure between preparation and the start); after Go(),
  // only waits for the workers.
  void Abort() {
    if (joined_) return;
    if (!went_) {
      abort_ = true;
      went_ = true;
      go_.count_down();
    }
    Join();
  }
  void Join() {
    for (auto& t : threads_) {
      if (t.joinable()) t.join();
    }
    joined_ = true;
  }
  // When worker w's Run returned, and when it began to record (Clock::NowNs()); final after Join(),
  // and readable from any thread before (0 until the worker ended, or started).
  uint64_t end_ns(size_t w) const { return end_ns_[w].load(std::memory_order_acquire); }
  uint64_t record_from_ns(size_t w) const {
    return record_from_ns_[w].load(std::memory_order_acquire);
  }

 private:
  void Body(size_t w) {
    Worker& worker = *workers_[w];
    try {
      worker.Prepare(&stop_);
    } catch (...) {
      failures_[w] = std::current_exception();
    }
    prepared_.count_down();
    go_.wait();
    const size_t job = job_of_worker_[w];
    if (!abort_ && failures_[w] == nullptr) {
      WorkerTimes times = times_[w];
      if (const int waitee = waits_on_[job]; waitee >= 0) {
        std::atomic<int>& left = running_[static_cast<size_t>(waitee)];
        for (int n = left.load(); n != 0; n = left.load()) left.wait(n);
        const uint64_t waited = Clock::NowNs() - start_ns_;
        times.start_ns += waited;
        times.record_from_ns += waited;
        if (times.stop_at_ns != 0) times.stop_at_ns += waited;
      }
      record_from_ns_[w].store(times.record_from_ns, std::memory_order_release);
      worker.Run(times, stop_);
      ExitAll(job, worker);
    }
    end_ns_[w].store(Clock::NowNs(), std::memory_order_release);
    if (running_[job].fetch_sub(1) == 1) running_[job].notify_all();
    worker.ReleaseEngine();
  }

  // fio's exitall/exitall_on_error: a clone of `job` has ended; end the jobs its rule names.
  void ExitAll(size_t job, const Worker& ended) {
    const JobSpec& spec = specs_[job];
    if (!spec.ending.exitall && !(spec.ending.exitall_on_error && ended.Failed())) return;
    for (size_t w = 0; w < workers_.size(); ++w) {
      const JobSpec& other = specs_[job_of_worker_[w]];
      if (!spec.ending.exit_what_group || other.report_group == spec.report_group) {
        workers_[w]->Terminate();
      }
    }
  }

  std::span<const JobSpec> specs_;
  std::vector<std::unique_ptr<Worker>>& workers_;
  const std::atomic<bool>& stop_;
  std::vector<std::exception_ptr> failures_;
  std::vector<std::atomic<uint64_t>> end_ns_;          // 0 until the worker ended
  std::vector<std::atomic<uint64_t>> record_from_ns_;  // 0 until it started
  std::vector<size_t> job_of_worker_;
  std::vector<int> waits_on_;
  std::vector<std::atomic<int>> running_;  // per job: workers not yet ended
  uint64_t start_ns_ = 0;
  std::latch prepared_;
  std::latch go_{1};
  bool abort_ = false;
  bool went_ = false;
  bool joined_ = false;
  std::vector<WorkerTimes> times_;
  std::vector<std::thread> threads_;
};

}  // namespace iotail::engine
