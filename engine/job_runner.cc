#include "engine/job_runner.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <exception>
#include <latch>
#include <thread>

#include "engine/clock.h"
#include "engine/io/io_engine.h"
#include "engine/nbd_target.h"
#include "engine/target.h"
#include "engine/worker.h"
#include "stats/core/errors.h"
#include "stats/report/hist_log_sink.h"

namespace iotail::engine {

namespace {

// Waits for the Unix epoch instant `ns` (CLOCK_REALTIME), in slices so that *stop is seen.
void SleepUntilRealtime(uint64_t ns, const std::atomic<bool>* stop) {
  for (;;) {
    const uint64_t now = Clock::RealtimeNs();
    if (now >= ns || (stop != nullptr && stop->load())) return;
    const uint64_t until = std::min<uint64_t>(ns, now + 50'000'000);
    timespec ts{static_cast<time_t>(until / 1'000'000'000u),
                static_cast<long>(until % 1'000'000'000u)};
    clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &ts, nullptr);
  }
}

void CheckStartAt(uint64_t start_at_ms, uint64_t now_ns) {
  if (start_at_ms == 0) return;
  const uint64_t at_ns = start_at_ms * 1'000'000u;
  if (now_ns > at_ns + kStartAtToleranceMs * 1'000'000u) {
    throw stats::UsageError(fmt::format(
        "--start_at: {} is {:.3f} s in the past (more than {} ms); choose a later instant",
        start_at_ms, static_cast<double>(now_ns - at_ns) / 1e9, kStartAtToleranceMs));
  }
}

// Each worker's share of the rate: total / numjobs per schedule, workers staggered by a fraction
// of a gap so that the union of linear schedules is evenly spaced as well.
void PlanRate(const JobSpec& spec, WorkerPlan& plan, uint32_t jobs) {
  if (!spec.RateLimited()) return;
  const RateProcess process = spec.rate_poisson ? RateProcess::kPoisson : RateProcess::kLinear;
  const double share = 1.0 / jobs;
  auto add = [&](const RateLimit& limit, uint64_t stream) {
    RateTarget t{limit.iops * share, limit.bytes_per_s * share};
    const double gap_ns = t.iops > 0 ? 1e9 / t.iops : spec.MinBlockSize() * 1e9 / t.bytes_per_s;
    const double phase = gap_ns * plan.index / jobs;
    const uint64_t seed = spec.randseed ^ (0xd1b54a32d192ed03ull * (plan.index * 4 + stream + 1));
    plan.schedules.emplace_back(t, process, seed, phase);
  };
  if (spec.RatePerDirection()) {
    plan.per_direction = true;
    if (spec.HasReads()) add(spec.rate_dir[0], 0);
    if (spec.HasWrites()) add(spec.rate_dir[1], 1);
  } else {
    add(spec.rate, 0);
  }
}

// The targets of a run (files and devices, or the NBD export) and the region every worker uses.
struct Targets {
  std::vector<Target> files;  // empty for the nbd engine
  bool nbd = false;
  uint64_t region = 0;  // bytes per file (or of the export) from spec.offset
};

// Opens (creates or safety-checks) every target and settles the region: the smallest capacity
// after the offset, or --size, in whole minimum blocks.
Targets OpenTargets(const JobSpec& spec, RunOutcome& out, const std::atomic<bool>* stop) {
  Targets t;
  TargetOptions topt;
  topt.access = spec.HasWrites() ? Access::kReadWrite : Access::kRead;
  topt.direct = spec.direct;
  topt.size = spec.size;
  topt.offset = spec.offset;
  topt.allow_destructive = spec.allow_destructive;
  topt.stop = stop;
  t.files.reserve(spec.filenames.size());
  std::vector<uint64_t> capacities;
  for (const std::string& path : spec.filenames) {
    t.files.emplace_back(path, topt);
    if (t.files.back().created()) out.created_files.push_back(path);
    capacities.push_back(t.files.back().capacity());
  }
  t.nbd = spec.ioengine == EngineKind::kNbd;
  if (t.nbd) {
    const uint64_t capacity = ProbeNbdExport(spec).size;
    if (spec.offset >= capacity || (spec.size != 0 && spec.size > capacity - spec.offset)) {
      throw stats::UsageError(
          fmt::format("--size/--offset: the export at '{}' has only {} bytes", spec.uri, capacity));
    }
    capacities.push_back(capacity);
  }
  uint64_t region = UINT64_MAX;
  for (uint64_t capacity : capacities) {
    region = std::min(region, spec.size != 0 ? spec.size : capacity - spec.offset);
  }
  const uint32_t unit = spec.MinBlockSize();
  region = region / unit * unit;
  if (region < spec.MaxBlockSize()) {
    throw stats::UsageError(
        fmt::format("--size: the region ({} bytes) is smaller than --bs", region));
  }
  t.region = region;
  out.region_size = region;
  return t;
}

// One worker per job: its files (spread over the workers), its region, its byte budget and its
// share of the rate, each with its own engine instance.
std::vector<std::unique_ptr<Worker>> BuildWorkers(const JobSpec& spec, const Targets& targets) {
  const uint32_t jobs = spec.numjobs;
  const size_t nfiles = targets.nbd ? 1 : targets.files.size();
  std::vector<std::unique_ptr<Worker>> workers;
  for (uint32_t w = 0; w < jobs; ++w) {
    WorkerPlan plan;
    plan.index = static_cast<int>(w);
    if (targets.nbd) {
      plan.fds.push_back(-1);  // the export: each worker's engine opens its own connection
    } else if (jobs >= nfiles) {
      plan.fds.push_back(targets.files[w % nfiles].fd());
    } else {
      for (size_t f = w; f < nfiles; f += jobs) plan.fds.push_back(targets.files[f].fd());
    }
    plan.region_offset = spec.offset;
    plan.region_size = targets.region;
    if (!spec.time_based) {
      plan.bytes_limit = spec.io_size != 0 ? spec.io_size : targets.region * plan.fds.size();
    }
    PlanRate(spec, plan, jobs);
    workers.push_back(
        std::make_unique<Worker>(spec, std::move(plan), ConstructEngine(spec.ioengine)));
  }
  return workers;
}

// The histogram logs as an interval sink (nullptr without --write_hist_log).
std::unique_ptr<stats::HistLogSink> OpenLogs(const JobSpec& spec, RunOutcome& out) {
  if (spec.write_hist_log.empty()) return nullptr;
  stats::HistLogSinkOptions o;
  o.prefix = spec.write_hist_log;
  o.workers = static_cast<int>(spec.numjobs);
  o.coarseness = spec.log_hist_coarseness;
  o.directions = LoggedDirections(spec);
  o.bs = spec.MinBlockSize();
  o.lat_logs = spec.RateLimited();
  auto sink = std::make_unique<stats::HistLogSink>(std::move(o));
  out.log_paths = sink->clat_paths();
  out.lat_log_paths = sink->lat_paths();
  return sink;
}

// The worker threads: each prepares its engine on its own thread (io_uring's single-issuer rings
// belong to the thread that creates them), then waits for Go(); Run() happens there, and the
// engine is torn down there too (in parallel: a libaio context takes ~30 ms to destroy).
class WorkerThreads {
 public:
  WorkerThreads(std::vector<std::unique_ptr<Worker>>& workers, const std::atomic<bool>& stop)
      : workers_(workers), stop_(stop), failures_(workers.size()), prepared_(workers.size()) {
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
  // Starts every worker with these times (workers run until done or *stop).
  void Go(const WorkerTimes& times) {
    times_ = times;
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

 private:
  void Body(size_t w) {
    Worker& worker = *workers_[w];
    try {
      worker.Prepare();
    } catch (...) {
      failures_[w] = std::current_exception();
    }
    prepared_.count_down();
    go_.wait();
    if (!abort_ && failures_[w] == nullptr) worker.Run(times_, stop_);
    worker.ReleaseEngine();
  }

  std::vector<std::unique_ptr<Worker>>& workers_;
  const std::atomic<bool>& stop_;
  std::vector<std::exception_ptr> failures_;
  std::latch prepared_;
  std::latch go_{1};
  bool abort_ = false;
  bool went_ = false;
  bool joined_ = false;
  WorkerTimes times_;
  std::vector<std::thread> threads_;
};

// The common start: after --start_at (if given), ramp_time recorded by nothing, runtime from the
// end of the ramp.
WorkerTimes StartTimes(const JobSpec& spec, RunOutcome& out) {
  WorkerTimes times;
  const uint64_t start_mono = Clock::NowNs();
  const uint64_t start_real = Clock::RealtimeNs();
  if (spec.start_at_ms != 0) {
    out.start_skew_ns =
        static_cast<int64_t>(start_real) - static_cast<int64_t>(spec.start_at_ms * 1'000'000u);
  }
  times.start_ns = start_mono;
  times.record_from_ns = start_mono + spec.ramp_time_ns;
  times.stop_at_ns = spec.runtime_ns != 0 ? times.record_from_ns + spec.runtime_ns : 0;
  out.start_realtime_ns = start_real + spec.ramp_time_ns;
  return times;
}

}  // namespace

std::vector<stats::Direction> LoggedDirections(const JobSpec& spec) {
  std::vector<stats::Direction> dirs;
  if (spec.HasReads()) dirs.push_back(stats::Direction::kRead);
  if (spec.HasWrites()) dirs.push_back(stats::Direction::kWrite);
  return dirs;
}

RunOutcome RunJob(const JobSpec& spec, std::span<stats::IntervalSink* const> sinks,
                  const std::atomic<bool>* stop,
                  std::function<void(const std::string&)> on_output_error) {
  static const std::atomic<bool> kNever{false};
  const std::atomic<bool>& stop_flag = stop != nullptr ? *stop : kNever;
  spec.Validate();
  CheckStartAt(spec.start_at_ms, Clock::RealtimeNs());
  Clock::Init();
  // Probe once (throws UsageError listing the available engines); workers then build theirs
  // without probing again: a libaio probe's io_destroy waits for an RCU grace period (~30 ms),
  // which per worker made --numjobs=1000 take half a minute to start.
  (void)MakeEngine(spec.ioengine);

  RunOutcome out;
  out.clock_source = std::string(Clock::SourceName());
  const Targets targets = OpenTargets(spec, out, stop);
  std::vector<std::unique_ptr<Worker>> workers = BuildWorkers(spec, targets);
  const std::unique_ptr<stats::HistLogSink> logs = OpenLogs(spec, out);

  WorkerThreads threads(workers, stop_flag);
  threads.WaitPrepared();
  out.engine_description = workers.front()->DescribeEngine();
  if (spec.start_at_ms != 0) {
    try {
      CheckStartAt(spec.start_at_ms, Clock::RealtimeNs());
      SleepUntilRealtime(spec.start_at_ms * 1'000'000u, stop);
    } catch (...) {
      threads.Abort();
      throw;
    }
  }
  const WorkerTimes times = StartTimes(spec, out);

  std::vector<stats::IntervalSink*> all_sinks;
  if (logs != nullptr) all_sinks.push_back(logs.get());
  all_sinks.insert(all_sinks.end(), sinks.begin(), sinks.end());
  std::vector<const stats::Recorder*> recorders;
  uint64_t planned_bytes = 0;
  for (const auto& w : workers) {
    recorders.push_back(&w->recorder());
    planned_bytes += w->bytes_limit();
  }
  IntervalClockOptions copt;
  copt.period_ms = spec.log_hist_msec;
  copt.unix_epoch = spec.log_unix_epoch;
  copt.start_realtime_ns = out.start_realtime_ns;  // after the ramp: the clock waits for it
  copt.planned_bytes = planned_bytes;
  copt.on_sink_error = on_output_error;
  IntervalClock clock(std::move(recorders), std::move(all_sinks), copt);
  try {
    clock.Start();
  } catch (...) {
    threads.Abort();  // nothing has run yet
    throw;
  }
  threads.Go(times);
  threads.Join();
  const uint64_t end_mono = Clock::NowNs();
  clock.Finish(Clock::RealtimeNs());

  if (spec.end_fsync && spec.HasWrites()) {
    for (const Target& t : targets.files) t.Sync();
  }
  out.per_worker = clock.Totals();
  out.output_errors = clock.sink_errors();
  for (const auto& w : workers) {
    out.cpu.push_back(w->cpu());
    if (w->engine_error() != 0 && out.engine_error == 0) out.engine_error = w->engine_error();
  }
  out.runtime_s = end_mono > times.record_from_ns
                      ? static_cast<double>(end_mono - times.record_from_ns) / 1e9
                      : 0;
  out.stopped = stop != nullptr && stop->load();
  return out;
}

}  // namespace iotail::engine
