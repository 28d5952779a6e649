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

namespace iotail::engine {

namespace {

void SleepUntilMonotonic(uint64_t ns, const std::atomic<bool>* stop) {
  for (;;) {
    const uint64_t now = Clock::MonotonicNs();
    if (now >= ns || (stop != nullptr && stop->load())) return;
    std::this_thread::sleep_for(std::chrono::nanoseconds(std::min<uint64_t>(ns - now, 50'000'000)));
  }
}

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

}  // namespace

RunOutcome RunJob(const JobSpec& spec, IntervalClock::Callback on_interval,
                  const std::atomic<bool>* stop) {
  spec.Validate();
  CheckStartAt(spec.start_at_ms, Clock::RealtimeNs());
  Clock::Init();
  // Probe once (throws UsageError listing the available engines); workers then build theirs
  // without probing again: a libaio probe's io_destroy waits for an RCU grace period (~30 ms),
  // which per worker made --numjobs=1000 take half a minute to start.
  (void)MakeEngine(spec.ioengine);

  RunOutcome out;
  out.clock_source = std::string(Clock::SourceName());

  TargetOptions topt;
  topt.access = spec.HasWrites() ? Access::kReadWrite : Access::kRead;
  topt.direct = spec.direct;
  topt.size = spec.size;
  topt.offset = spec.offset;
  topt.allow_destructive = spec.allow_destructive;
  std::vector<Target> targets;
  targets.reserve(spec.filenames.size());
  for (const std::string& path : spec.filenames) {
    targets.emplace_back(path, topt);
    if (targets.back().created()) out.created_files.push_back(path);
  }
  std::vector<uint64_t> capacities;
  for (const Target& t : targets) capacities.push_back(t.capacity());
  const bool nbd = spec.ioengine == EngineKind::kNbd;
  if (nbd) {
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
  out.region_size = region;

  // Spread files over workers.
  const uint32_t jobs = spec.numjobs;
  const size_t nfiles = nbd ? 1 : targets.size();
  std::vector<std::unique_ptr<Worker>> workers;
  for (uint32_t w = 0; w < jobs; ++w) {
    WorkerPlan plan;
    plan.index = static_cast<int>(w);
    if (nbd) {
      plan.fds.push_back(-1);  // the export: each worker's engine opens its own connection
    } else if (jobs >= nfiles) {
      plan.fds.push_back(targets[w % nfiles].fd());
    } else {
      for (size_t f = w; f < nfiles; f += jobs) plan.fds.push_back(targets[f].fd());
    }
    plan.region_offset = spec.offset;
    plan.region_size = region;
    if (!spec.time_based) {
      plan.bytes_limit = spec.io_size != 0 ? spec.io_size : region * plan.fds.size();
    }
    PlanRate(spec, plan, jobs);
    workers.push_back(
        std::make_unique<Worker>(spec, std::move(plan), ConstructEngine(spec.ioengine)));
  }

  std::vector<std::unique_ptr<stats::HistLogWriter>> logs, lat_logs;
  uint64_t planned_bytes = 0;
  for (const auto& w : workers) planned_bytes += w->bytes_limit();
  if (!spec.write_hist_log.empty()) {
    for (uint32_t w = 0; w < jobs; ++w) {
      std::string path =
          stats::HistLogWriter::ClatLogPath(spec.write_hist_log, static_cast<int>(w + 1));
      logs.push_back(std::make_unique<stats::HistLogWriter>(path, spec.log_hist_coarseness));
      out.log_paths.push_back(std::move(path));
      if (spec.RateLimited()) {
        std::string lat =
            stats::HistLogWriter::LatLogPath(spec.write_hist_log, static_cast<int>(w + 1));
        lat_logs.push_back(std::make_unique<stats::HistLogWriter>(lat, spec.log_hist_coarseness));
        out.lat_log_paths.push_back(std::move(lat));
      }
    }
  }
  std::vector<const stats::Recorder*> recorders;
  for (const auto& w : workers) recorders.push_back(&w->recorder());

  // Each worker prepares its engine on its own thread (io_uring's single-issuer rings belong to
  // the thread that creates them), then all wait for the common start instant.
  static const std::atomic<bool> kNever{false};
  const std::atomic<bool>& stop_flag = stop != nullptr ? *stop : kNever;
  std::vector<std::exception_ptr> failures(jobs);
  std::latch prepared(jobs);
  std::latch go(1);
  bool abort = false;
  WorkerTimes times;
  std::vector<std::thread> threads;
  threads.reserve(jobs);
  for (uint32_t w = 0; w < jobs; ++w) {
    Worker* worker = workers[w].get();
    threads.emplace_back([&, worker, w] {
      try {
        worker->Prepare();
      } catch (...) {
        failures[w] = std::current_exception();
      }
      prepared.count_down();
      go.wait();
      if (!abort && failures[w] == nullptr) worker->Run(times, stop_flag);
      worker->ReleaseEngine();  // in parallel: tearing a libaio context down takes ~30 ms
    });
  }
  prepared.wait();
  for (const auto& f : failures) abort = abort || f != nullptr;
  out.engine_description = workers.front()->DescribeEngine();
  std::exception_ptr start_failure;
  if (!abort && spec.start_at_ms != 0) {
    try {
      CheckStartAt(spec.start_at_ms, Clock::RealtimeNs());
      SleepUntilRealtime(spec.start_at_ms * 1'000'000u, stop);
    } catch (...) {
      start_failure = std::current_exception();
      abort = true;
    }
  }
  // The common start instant.
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
  go.count_down();
  if (abort) {
    for (auto& t : threads) t.join();
    for (const auto& f : failures) {
      if (f) std::rethrow_exception(f);
    }
    if (start_failure) std::rethrow_exception(start_failure);
  }

  IntervalClockOptions copt;
  copt.period_ms = spec.log_hist_msec;
  copt.unix_epoch = spec.log_unix_epoch;
  copt.start_realtime_ns = out.start_realtime_ns;
  copt.bs = spec.MinBlockSize();
  copt.planned_bytes = planned_bytes;
  if (spec.HasReads()) copt.directions.push_back(stats::Direction::kRead);
  if (spec.HasWrites()) copt.directions.push_back(stats::Direction::kWrite);
  IntervalClock clock(std::move(recorders), std::move(logs), copt, std::move(on_interval),
                      std::move(lat_logs));

  if (spec.ramp_time_ns != 0) SleepUntilMonotonic(times.record_from_ns, stop);
  clock.Start();
  for (auto& t : threads) t.join();
  const uint64_t end_mono = Clock::NowNs();
  clock.Finish(Clock::RealtimeNs());

  if (spec.end_fsync && spec.HasWrites()) {
    for (const Target& t : targets) t.Sync();
  }
  out.per_worker = clock.Totals();
  for (const auto& w : workers) out.cpu.push_back(w->cpu());
  out.runtime_s = end_mono > times.record_from_ns
                      ? static_cast<double>(end_mono - times.record_from_ns) / 1e9
                      : 0;
  for (const auto& w : workers) {
    if (w->engine_error() != 0 && out.engine_error == 0) out.engine_error = w->engine_error();
  }
  out.stopped = stop != nullptr && stop->load();
  return out;
}

}  // namespace iotail::engine
