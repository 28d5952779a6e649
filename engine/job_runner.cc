#include "engine/job_runner.h"

#include <fcntl.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <exception>
#include <latch>
#include <map>
#include <optional>
#include <thread>

#include "engine/clock.h"
#include "engine/explain/batch_explain.h"
#include "engine/io/io_engine.h"
#include "engine/io_scheduler.h"
#include "engine/job_targets.h"
#include "engine/nbd_target.h"
#include "engine/replay/iolog_writer.h"
#include "engine/replay/open_trace.h"
#include "engine/steady_state_monitor.h"
#include "engine/target.h"
#include "engine/worker.h"
#include "engine/worker_threads.h"
#include "stats/core/errors.h"

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

// Each worker's rate: the job's whole rate (fio's rate is per job clone), workers staggered by a
// fraction of a gap so that the union of linear schedules is evenly spaced as well.
void PlanRate(const JobSpec& spec, WorkerPlan& plan, uint32_t jobs) {
  if (!spec.rates.Limited()) return;
  const RateProcess process = spec.rates.poisson ? RateProcess::kPoisson : RateProcess::kLinear;
  auto add = [&](const RateLimit& limit, uint64_t stream) {
    RateTarget t{limit.iops, limit.bytes_per_s};
    const double gap_ns = t.iops > 0 ? 1e9 / t.iops : spec.MinBlockSize() * 1e9 / t.bytes_per_s;
    const double phase = gap_ns * plan.index / jobs;
    const uint64_t seed = spec.randseed ^ (0xd1b54a32d192ed03ull * (plan.index * 4 + stream + 1));
    plan.schedules.emplace_back(t, process, seed, phase);
  };
  if (spec.rates.PerDirection()) {
    plan.per_direction = true;
    if (spec.HasReads()) add(spec.rates.dir[0], 0);
    if (spec.HasWrites()) add(spec.rates.dir[1], 1);
  } else {
    add(spec.rates.limit, 0);
  }
}

// One worker per job: its files (all of them, or with files_per_clone its own), its region, its
// byte budget and its share of the rate, each with its own engine instance.
std::vector<std::unique_ptr<Worker>> BuildWorkers(const JobSpec& spec, const Targets& targets,
                                                  JobOutcome& out) {
  const uint32_t jobs = spec.numjobs;
  std::vector<std::unique_ptr<Worker>> workers;
  for (uint32_t w = 0; w < jobs; ++w) {
    WorkerPlan plan;
    plan.index = static_cast<int>(w);
    const std::vector<size_t> files = FilesOf(spec, targets.count, w);
    for (size_t f : files) {
      // The export: each worker's engine opens its own connection; diskless: no file at all.
      // The file and directory operations: the path alone (their engines open nothing).
      const bool no_fd = targets.nbd || targets.diskless || targets.by_path;
      plan.fds.push_back(no_fd ? -1 : targets.files[f].fd());
      plan.paths.push_back(targets.by_path ? spec.filenames[f]
                           : no_fd         ? ""
                                           : targets.files[f].path());
    }
    const Region region = WorkerRegion(spec, targets, files, w);
    if (!targets.zones.empty()) {
      plan.zones = targets.zones[files.front()];
      plan.zoned_file_size = targets.capacity[files.front()];
    }
    plan.region_offset = region.offset;
    plan.region_size = region.size;
    plan.file_end = region.file_end;
    if (w == 0) out.region_size = region.size;
    // fio's size: the bytes of one loop over the files.
    plan.loop_bytes = region.size * plan.fds.size();
    plan.invalidate = spec.files.invalidate && !spec.direct && !targets.nbd && !targets.diskless &&
                      !targets.by_path;
    if (!spec.time_based) {
      plan.bytes_limit = spec.region.io_size != 0 ? spec.region.io_size : plan.loop_bytes;
      if (__builtin_mul_overflow(plan.bytes_limit, uint64_t{spec.loops}, &plan.bytes_limit)) {
        throw stats::UsageError("--loops: the bytes to do overflow 64 bits");
      }
    }
    PlanRate(spec, plan, jobs);
    if (spec.replay.Active()) {
      plan.bytes_limit = 0;  // the trace's end ends the replay
      // Clone w replays its own trace of read_iolog's list (fio's), on the job's one clock.
      const std::string& trace = spec.replay.TraceOf(w, jobs);
      plan.replay = std::make_shared<replay::ReplayFeed>(replay::OpenTrace(trace), spec.replay,
                                                         static_cast<uint32_t>(plan.fds.size()),
                                                         trace, spec.replay.DeviceFilesOf(w, jobs));
    }
    if (!spec.replay.write_iolog.empty()) {
      plan.iolog = std::make_shared<replay::IologWriter>(spec.replay.write_iolog, plan.paths);
    }
    workers.push_back(
        std::make_unique<Worker>(spec, std::move(plan), ConstructEngine(spec.ioengine)));
  }
  return workers;
}

// What the live line counts down ("MB left"): the bytes a worker will do, capped by number_ios
// (times loops) at its one block size; 0 when its end is no byte count known in advance
// (fill_device: until the device is full; number_ios with mixed block sizes).
uint64_t PlannedBytes(const JobSpec& spec, uint64_t bytes_limit) {
  if (spec.region.fill_device || bytes_limit == 0) return 0;
  if (spec.number_ios == 0) return bytes_limit;
  if (spec.MinBlockSize() != spec.MaxBlockSize()) return 0;
  uint64_t ios = 0, bytes = 0;
  if (__builtin_mul_overflow(spec.number_ios, uint64_t{spec.loops}, &ios) ||
      __builtin_mul_overflow(ios, uint64_t{spec.MinBlockSize()}, &bytes)) {
    return bytes_limit;
  }
  return std::min(bytes, bytes_limit);
}

// The run's: the workers' sum, 0 when a worker's end is no byte count (a time_based one's is its
// runtime, which the live line counts down instead).
uint64_t PlannedBytes(std::span<const JobSpec> specs,
                      const std::vector<std::unique_ptr<Worker>>& workers,
                      const std::vector<size_t>& job_of_worker) {
  uint64_t sum = 0;
  for (size_t w = 0; w < workers.size(); ++w) {
    const JobSpec& spec = specs[job_of_worker[w]];
    const uint64_t planned = PlannedBytes(spec, workers[w]->bytes_limit());
    if (planned == 0 && !spec.time_based) return 0;
    sum += planned;
  }
  return sum;
}

// A job's times from the group's common start (monotonic ns): its startdelay, then ramp_time
// recorded by nothing, then runtime from the end of the ramp.
WorkerTimes JobTimes(const JobSpec& spec, uint64_t start_mono) {
  WorkerTimes times;
  times.start_ns = start_mono + spec.startdelay_ns;
  times.record_from_ns = times.start_ns + spec.ramp_time_ns;
  times.stop_at_ns = spec.runtime_ns != 0 ? times.record_from_ns + spec.runtime_ns : 0;
  return times;
}

// The jobs of a group share one interval clock: they must agree on what drives it.
void CheckCommonClock(std::span<const JobSpec> specs) {
  for (const JobSpec& spec : specs) {
    const JobSpec& first = specs.front();
    auto fail = [&](const char* option) {
      throw stats::UsageError(fmt::format(
          "--{}: jobs '{}' and '{}' run together but differ; their logs and live lines close on "
          "one clock, so give them the same value",
          option, first.name, spec.name));
    };
    if (spec.logs.hist_msec != first.logs.hist_msec) fail("log_hist_msec");
    if (spec.logs.unix_epoch != first.logs.unix_epoch) fail("log_unix_epoch");
    if (spec.start_at_ms != first.start_at_ms) fail("start_at");
  }
}

// What each job's workers did, once they have ended: totals (from the interval clock, so exactly
// the sums of the logged intervals), CPU, depths, syncs, verify, errors, and each job's runtime per
// direction (fio's runtime[ddir]).
void CollectOutcomes(std::span<const JobSpec> specs,
                     const std::vector<std::unique_ptr<Worker>>& workers,
                     const std::vector<size_t>& job_of_worker, const WorkerThreads& threads,
                     std::vector<stats::RecorderSnapshot> totals, RunOutcome& out) {
  std::vector<uint64_t> job_end(specs.size(), 0);
  std::vector<uint64_t> job_from(specs.size(), UINT64_MAX);
  // do_verify: where the I/O phase ends (the last worker's writes) and the read-back begins.
  std::vector<uint64_t> io_end(specs.size(), 0);
  std::vector<uint64_t> verify_from(specs.size(), UINT64_MAX);
  std::vector<uint64_t> verify_span(specs.size(), 0);  // the longest read-back time of several
  for (size_t w = 0; w < workers.size(); ++w) {
    JobOutcome& job = out.jobs[job_of_worker[w]];
    if (const stats::RecorderSnapshot* base = workers[w]->stats_baseline()) {
      totals[w].SubtractCounts(*base);  // the latency target's final window alone
    }
    job.latency_depth = workers[w]->latency_depth();
    job.per_worker.push_back(std::move(totals[w]));
    job.cpu.push_back(workers[w]->cpu());
    job.depths.push_back(workers[w]->depths());
    job.syncs.push_back(workers[w]->syncs());
    job.verified_blocks += workers[w]->verified_blocks();
    if (!workers[w]->rate_shortfall().empty()) {
      job.rate_shortfalls.push_back(workers[w]->rate_shortfall());
    }
    job.abandoned_ios += workers[w]->abandoned();
    job.short_reads += workers[w]->short_reads();
    job.zone_resets.push_back(workers[w]->zone_resets());
    if (job.verify_failure.empty()) job.verify_failure = workers[w]->verify_failure();
    if (workers[w]->engine_error() != 0 && job.engine_error == 0) {
      job.engine_error = workers[w]->engine_error();
    }
    const size_t j = job_of_worker[w];
    job_end[j] = std::max(job_end[j], threads.end_ns(w));
    // A clone that ended inside its ramp_time: fio never reset its statistics, so they are all
    // its I/O, over its time from its start.
    uint64_t from = threads.record_from_ns(w);
    if (const Worker::RampCounts& ramp = workers[w]->ramp_counts();
        ramp.on && from != 0 && threads.end_ns(w) < from) {
      stats::RecorderSnapshot& whole = job.per_worker.back();  // nothing recorded: the errors
      for (size_t d = 0; d < whole.dirs.size(); ++d) {
        whole.dirs[d].ios = ramp.ios[d];
        whole.dirs[d].bytes = ramp.bytes[d];
      }
      from -= specs[j].ramp_time_ns;
    }
    const uint64_t verify_start = workers[w]->verify_start_ns();
    // Read-backs after several loops (JobSpec::VerifiesWrittenEachLoop): the I/O's time is the
    // worker's time less theirs, as fio adds up each direction's phases.
    const bool phases = workers[w]->verify_phases() > 1;
    const uint64_t end = threads.end_ns(w);
    io_end[j] = std::max(io_end[j], phases              ? end - workers[w]->verify_ns()
                                    : verify_start != 0 ? verify_start
                                                        : end);
    if (phases) verify_span[j] = std::max(verify_span[j], workers[w]->verify_ns());
    if (verify_start != 0) verify_from[j] = std::min(verify_from[j], verify_start);
    if (from != 0)
      job_from[j] = std::min(job_from[j], std::max(from, workers[w]->stats_reset_ns()));
  }
  for (size_t j = 0; j < specs.size(); ++j) {
    const uint64_t from = job_from[j];
    const auto seconds = [from](uint64_t to) {
      return to > from ? static_cast<double>(to - from) / 1e9 : 0.0;
    };
    JobOutcome& job = out.jobs[j];
    job.runtime_s = seconds(job_end[j]);
    job.dir_runtime_s.fill(job.runtime_s);
    if (verify_from[j] != UINT64_MAX) {
      job.dir_runtime_s[static_cast<size_t>(stats::Direction::kWrite)] = seconds(io_end[j]);
      job.dir_runtime_s[static_cast<size_t>(stats::Direction::kTrim)] = seconds(io_end[j]);
      if (!specs[j].HasReads()) {
        job.dir_runtime_s[static_cast<size_t>(stats::Direction::kRead)] =
            static_cast<double>(verify_span[j] != 0 ? verify_span[j]
                                                    : job_end[j] - verify_from[j]) /
            1e9;
      }
    }
  }
}

// Probes each engine once (throws UsageError listing the available engines); workers then build
// theirs without probing again: a libaio probe's io_destroy waits for an RCU grace period
// (~30 ms), which per worker made --numjobs=1000 take half a minute to start.
void ProbeEngines(std::span<const JobSpec> specs) {
  std::vector<EngineKind> probed;
  for (const JobSpec& spec : specs) {
    if (std::find(probed.begin(), probed.end(), spec.ioengine) != probed.end()) continue;
    (void)MakeEngine(spec.ioengine);
    probed.push_back(spec.ioengine);
  }
}

// wait_for: the job of this group each job waits for, or -1 (a name of an earlier group's job
// has ended already).
std::vector<int> WaitsOn(std::span<const JobSpec> specs) {
  std::vector<int> waits_on(specs.size(), -1);
  for (size_t j = 0; j < specs.size(); ++j) {
    for (size_t k = 0; k < j && !specs[j].wait_for.empty(); ++k) {
      if (specs[k].name == specs[j].wait_for) waits_on[j] = static_cast<int>(k);
    }
  }
  return waits_on;
}

std::map<uint32_t, Flow> JoinFlows(std::span<const JobSpec> specs,
                                   std::vector<std::unique_ptr<Worker>>& workers,
                                   std::span<const size_t> job_of_worker) {
  std::map<uint32_t, Flow> flows;
  for (size_t w = 0; w < workers.size(); ++w) {
    const JobSpec& spec = specs[job_of_worker[w]];
    if (spec.flow.weight != 0) workers[w]->JoinFlow(&flows[spec.flow.id]);
  }
  return flows;
}

// Every check before anything is opened, and the clock the run stamps with.
void CheckAndPrepare(std::span<const JobSpec> specs) {
  if (specs.empty()) throw std::logic_error("RunJobs: no job");
  for (const JobSpec& spec : specs) spec.Validate();
  CheckCommonClock(specs);
  CheckStartAt(specs.front().start_at_ms, Clock::RealtimeNs());
  Clock::Init();
  // --explain: the kernel's clock, to compare with its tracepoints exactly.
  if (std::any_of(specs.begin(), specs.end(), [](const JobSpec& s) { return s.explain.on; }))
    Clock::UseMonotonic();
  ProbeEngines(specs);
}

// The caller's sinks (its logs among them), then the explain session's (last: it closes its
// intervals after the others have seen them).
std::vector<stats::IntervalSink*> OpenSinks(const RunJobsOptions& options, BatchExplain* explain,
                                            uint32_t period_ms) {
  std::vector<stats::IntervalSink*> sinks;
  if (options.open_sinks) sinks = options.open_sinks();
  if (explain != nullptr) {
    stats::ExplainSinks outputs;
    if (options.open_explain_sinks) outputs = options.open_explain_sinks(explain->outcome());
    sinks.push_back(explain->Open(std::move(outputs), period_ms, options.on_output_error));
  }
  return sinks;
}

}  // namespace

std::vector<stats::Direction> LoggedDirections(const JobSpec& spec) {
  std::vector<stats::Direction> dirs;
  // A do_verify read-back (closed loop only) is the job's reads, as in fio.
  const bool reads_back = spec.verify.kind != VerifyKind::kNone && spec.verify.do_verify &&
                          spec.HasWrites() && !spec.rates.Limited();
  if (spec.HasReads() || reads_back) dirs.push_back(stats::Direction::kRead);
  if (spec.HasWrites()) dirs.push_back(stats::Direction::kWrite);
  if (spec.HasTrims()) dirs.push_back(stats::Direction::kTrim);
  return dirs;
}

RunOutcome RunJobs(std::span<const JobSpec> specs, const RunJobsOptions& options) {
  const std::atomic<bool>* stop = options.stop;
  static const std::atomic<bool> kNever{false};
  const std::atomic<bool>& stop_flag = stop ? *stop : kNever;
  CheckAndPrepare(specs);
  const JobSpec& lead = specs.front();

  ZoneRegistry own_zones;  // zonemode=zbd, when the caller keeps none (RunJobsOptions::zones)
  RunOutcome out;
  out.clock_source = std::string(Clock::SourceName());
  out.jobs.resize(specs.size());
  std::vector<Targets> targets;
  targets.reserve(specs.size());
  std::vector<std::unique_ptr<Worker>> workers;
  std::vector<size_t> job_of_worker;
  for (size_t j = 0; j < specs.size(); ++j) {
    JobOutcome& job = out.jobs[j];
    job.first_worker = options.first_worker + static_cast<int>(workers.size());
    targets.push_back(OpenTargets(specs[j], job, stop, options.zones ? *options.zones : own_zones));
    for (auto& w : BuildWorkers(specs[j], targets.back(), job)) {
      workers.push_back(std::move(w));
      job_of_worker.push_back(j);
    }
  }

  // fio's flow control: the workers of each flow_id share its counters (outliving the threads).
  std::map<uint32_t, Flow> flows = JoinFlows(specs, workers, job_of_worker);
  // --explain, --explain_slowest: the workers' trails, the targets' places, the kernel's view.
  std::unique_ptr<BatchExplain> explain =
      BatchExplain::Make(specs, targets, workers, job_of_worker, options.first_worker);
  SteadyStateMonitor steady(specs, workers, job_of_worker);
  WorkerThreads threads(workers, stop_flag, job_of_worker, WaitsOn(specs), specs);
  threads.WaitPrepared();
  for (size_t w = 0; w < workers.size(); ++w) {
    JobOutcome& job = out.jobs[job_of_worker[w]];
    if (job.engine_description.empty()) job.engine_description = workers[w]->DescribeEngine();
  }
  std::vector<stats::IntervalSink*> sinks;
  uint64_t start_at_ms = lead.start_at_ms;
  try {
    sinks = OpenSinks(options, explain.get(), lead.logs.hist_msec);
    // The start instant: --start_at, or the one the caller chooses now that this host is ready
    // (iotail-mpi: when every rank is).
    if (options.await_start) start_at_ms = options.await_start();
    if (start_at_ms != 0) {
      CheckStartAt(start_at_ms, Clock::RealtimeNs());
      SleepUntilRealtime(start_at_ms * 1'000'000u, stop);
    }
  } catch (...) {
    threads.Abort();  // nothing has run yet
    throw;
  }
  // Stopped before the start (while preparing, or waiting for the start instant): nothing runs.
  if (stop_flag.load()) {
    threads.Abort();
    throw stats::Interrupted("stopped before the start");
  }
  // The common start; each job's recording starts after its startdelay and ramp.
  const uint64_t start_mono = Clock::NowNs();
  const uint64_t start_real = Clock::RealtimeNs();
  out.start_at_ms = start_at_ms;
  if (start_at_ms != 0) {
    out.start_skew_ns =
        static_cast<int64_t>(start_real) - static_cast<int64_t>(start_at_ms * 1'000'000u);
  }
  std::vector<WorkerTimes> job_times;
  uint64_t first_record_ns = UINT64_MAX;
  for (const JobSpec& spec : specs) {
    job_times.push_back(JobTimes(spec, start_mono));
    first_record_ns = std::min(first_record_ns, job_times.back().record_from_ns);
  }
  out.start_realtime_ns = start_real + (first_record_ns - start_mono);

  std::vector<const stats::Recorder*> recorders;
  std::vector<WorkerTimes> worker_times;
  for (size_t w = 0; w < workers.size(); ++w) {
    recorders.push_back(&workers[w]->recorder());
    worker_times.push_back(job_times[job_of_worker[w]]);
  }
  const uint64_t planned_bytes = PlannedBytes(specs, workers, job_of_worker);
  IntervalClockOptions copt;
  copt.period_ms = lead.logs.hist_msec;
  copt.unix_epoch = lead.logs.unix_epoch;
  copt.start_realtime_ns = out.start_realtime_ns;  // after the ramp: the clock waits for it
  copt.from_start = start_at_ms == 0;  // one host's run: its logs count from its start (fio's)
  copt.planned_bytes = planned_bytes;
  copt.on_sink_error = options.on_output_error;
  IntervalClock clock(std::move(recorders), std::move(sinks), copt);
  try {
    clock.Start();
    // The session places each I/O in the clock's intervals: the same boundaries' origin.
    if (explain) explain->Start(copt.from_start && !copt.unix_epoch ? copt.start_realtime_ns : 0);
  } catch (...) {
    threads.Abort();  // nothing has run yet
    throw;
  }
  threads.Go(std::move(worker_times), start_mono);
  steady.Start(threads);
  threads.Join();
  steady.Stop();
  const uint64_t end_mono = Clock::NowNs();
  clock.Finish(Clock::RealtimeNs());
  if (explain) explain->Collect(job_of_worker, out);
  for (const JobSpec& spec : specs) RemoveJobFiles(spec);  // fio's unlink
  out.output_errors = clock.sink_errors();
  CollectOutcomes(specs, workers, job_of_worker, threads, clock.Totals(), out);
  for (size_t w = 0; w < workers.size(); ++w) {
    out.jobs[job_of_worker[w]].steady_state.push_back(steady.ResultOf(w));
  }
  out.runtime_s =
      end_mono > first_record_ns ? static_cast<double>(end_mono - first_record_ns) / 1e9 : 0;
  out.stopped = stop != nullptr && stop->load();
  return out;
}

}  // namespace iotail::engine
