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
#include "engine/io/io_engine.h"
#include "engine/io_scheduler.h"
#include "engine/nbd_target.h"
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
  if (!spec.RateLimited()) return;
  const RateProcess process = spec.rate_poisson ? RateProcess::kPoisson : RateProcess::kLinear;
  auto add = [&](const RateLimit& limit, uint64_t stream) {
    RateTarget t{limit.iops, limit.bytes_per_s};
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

// The targets of a run (files and devices, or the NBD export, or nothing for the null engine) and
// what each worker's region is measured against.
struct Targets {
  std::vector<Target> files;  // empty for the nbd and null engines
  bool nbd = false;
  // The null engine opens nothing (fio's null engine is diskless): each of its files is --size
  // bytes past the worker's offset, as fio takes it.
  bool diskless = false;
  size_t count = 0;                // files (1 for the export)
  std::vector<uint64_t> capacity;  // bytes of each file (or of the export)
};

// Which files of the job worker w does its I/O over (indices into the job's file list): all of
// them, or with files_per_clone its own (fio's NAME.w.k: index k * numjobs + w).
std::vector<size_t> FilesOf(const JobSpec& spec, size_t files, uint32_t w) {
  std::vector<size_t> out;
  if (!spec.files_per_clone) {
    for (size_t f = 0; f < files; ++f) out.push_back(f);
  } else if (spec.numjobs >= files) {
    out.push_back(w % files);
  } else {
    for (size_t f = w; f < files; f += spec.numjobs) out.push_back(f);
  }
  return out;
}

// fio's get_start_offset for clone `clone` on a file of `capacity` bytes: offset (or its
// percentage) plus clone x offset_increment (or its percentage), aligned up to the minimum block
// size when a percentage is involved.
uint64_t CloneOffset(const JobSpec& spec, uint64_t capacity, uint32_t clone) {
  bool align = false;
  uint64_t increment = spec.offset_increment;
  if (spec.offset_increment_percent > 0) {
    increment =
        static_cast<uint64_t>(static_cast<double>(capacity) * spec.offset_increment_percent / 100);
    align = true;
  }
  uint64_t offset = spec.offset;
  if (spec.offset_percent > 0) {
    offset = static_cast<uint64_t>(static_cast<double>(capacity) * spec.offset_percent / 100);
    align = true;
  }
  offset += increment * clone;
  if (align) {
    const uint64_t unit = spec.MinBlockSize();
    offset = (offset + unit - 1) / unit * unit;
  }
  return offset;
}

// Opens (creates or safety-checks) every target. A file is laid out to the end of the last region
// in it (--size from the last clone's offset that uses it).
Targets OpenTargets(const JobSpec& spec, JobOutcome& out, const std::atomic<bool>* stop) {
  Targets t;
  t.nbd = spec.ioengine == EngineKind::kNbd;
  t.diskless = spec.ioengine == EngineKind::kNull;
  t.count = t.nbd ? 1 : spec.filenames.size();
  if (t.diskless) return t;
  TargetOptions topt;
  // Trims destroy data as writes do: the same access and the same guard. fio's falloc and
  // ftruncate engines change the file whatever the direction: they open it for writing.
  const bool changes =
      spec.ioengine == EngineKind::kFalloc || spec.ioengine == EngineKind::kFtruncate;
  topt.access = spec.HasWrites() || spec.HasTrims() || changes ? Access::kReadWrite : Access::kRead;
  topt.direct = spec.direct;
  topt.size = spec.size;
  topt.file_size = spec.file_size;
  topt.allow_destructive = spec.allow_destructive;
  topt.stop = stop;
  topt.sync_flags = spec.sync_flags;
  topt.invalidate = spec.invalidate && !spec.direct;
  topt.fadvise = spec.FadviseAdvice();
  // fio's extend_file: a job that reads (or writes with overwrite) lays its files out with data;
  // a job that only writes just preallocates them.
  topt.fallocate = spec.fallocate;
  topt.fill = spec.HasReads() || (spec.HasWrites() && spec.overwrite);
  topt.content = spec.Content();
  topt.allow_create = spec.allow_file_create;
  topt.fill_device = spec.fill_device;
  t.files.reserve(spec.filenames.size());
  for (size_t f = 0; f < spec.filenames.size(); ++f) {
    // The last clone that uses this file starts furthest in (offset_increment in bytes; a
    // percentage needs the file's size, so such a file must exist).
    uint32_t last_clone = 0;
    for (uint32_t w = 0; w < spec.numjobs; ++w) {
      for (size_t g : FilesOf(spec, spec.filenames.size(), w)) {
        if (g == f) last_clone = w;
      }
    }
    topt.offset = spec.offset + spec.offset_increment * last_clone;
    const std::string& path = spec.filenames[f];
    t.files.emplace_back(path, topt);
    if (t.files.back().created()) out.created_files.push_back(path);
    if (!spec.ioscheduler.empty()) {
      if (const std::string note = SwitchIoScheduler(path, spec.ioscheduler); !note.empty()) {
        std::fprintf(stderr, "iotail run: note: %s\n", note.c_str());
      }
    }
    t.capacity.push_back(t.files.back().capacity());
  }
  if (t.nbd) {
    const uint64_t capacity = ProbeNbdExport(spec, stop).size;
    const uint64_t last = spec.offset + spec.offset_increment * (spec.numjobs - 1);
    if (last >= capacity || (spec.size != 0 && spec.size > capacity - last)) {
      throw stats::UsageError(
          fmt::format("--size/--offset: the export at '{}' has only {} bytes", spec.uri, capacity));
    }
    t.capacity.push_back(capacity);
  }
  return t;
}

// Worker w's region: its offset (fio's get_start_offset on the smallest of its files), its size
// in whole minimum blocks (--size, its percentage, or what the smallest file has after the
// offset), and how far its files reach past the offset.
struct Region {
  uint64_t offset = 0, size = 0, file_end = 0;
};
Region WorkerRegion(const JobSpec& spec, const Targets& targets, const std::vector<size_t>& files,
                    uint32_t w) {
  const uint32_t unit = spec.MinBlockSize();
  Region r;
  if (targets.diskless) {
    r.offset = CloneOffset(spec, 0, w);
    r.size = r.file_end = spec.size / unit * unit;
  } else {
    uint64_t smallest = UINT64_MAX;
    for (size_t f : files) smallest = std::min(smallest, targets.capacity[targets.nbd ? 0 : f]);
    r.offset = CloneOffset(spec, smallest, w);
    uint64_t size = spec.size;
    if (spec.size_percent > 0) {
      size = static_cast<uint64_t>(static_cast<double>(smallest) * spec.size_percent / 100);
    }
    const uint64_t after = smallest > r.offset ? smallest - r.offset : 0;
    if (size == 0 || size > after) size = after;
    r.size = size / unit * unit;
    r.file_end = after;
  }
  if (r.size < spec.MaxBlockSize()) {
    throw stats::UsageError(
        fmt::format("--size: the region ({} bytes{}) is smaller than --bs", r.size,
                    w > 0 ? fmt::format(" of clone {}, from offset {}", w, r.offset) : ""));
  }
  return r;
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
      plan.fds.push_back(targets.nbd || targets.diskless ? -1 : targets.files[f].fd());
      plan.paths.push_back(targets.nbd || targets.diskless ? "" : targets.files[f].path());
    }
    const Region region = WorkerRegion(spec, targets, files, w);
    plan.region_offset = region.offset;
    plan.region_size = region.size;
    plan.file_end = region.file_end;
    if (w == 0) out.region_size = region.size;
    // fio's size: the bytes of one loop over the files.
    plan.loop_bytes = region.size * plan.fds.size();
    plan.invalidate = spec.invalidate && !spec.direct && !targets.nbd && !targets.diskless;
    if (!spec.time_based) {
      plan.bytes_limit = spec.io_size != 0 ? spec.io_size : plan.loop_bytes;
      if (__builtin_mul_overflow(plan.bytes_limit, uint64_t{spec.loops}, &plan.bytes_limit)) {
        throw stats::UsageError("--loops: the bytes to do overflow 64 bits");
      }
    }
    PlanRate(spec, plan, jobs);
    workers.push_back(
        std::make_unique<Worker>(spec, std::move(plan), ConstructEngine(spec.ioengine)));
  }
  return workers;
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
    if (spec.log_hist_msec != first.log_hist_msec) fail("log_hist_msec");
    if (spec.log_unix_epoch != first.log_unix_epoch) fail("log_unix_epoch");
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
  for (size_t w = 0; w < workers.size(); ++w) {
    JobOutcome& job = out.jobs[job_of_worker[w]];
    job.per_worker.push_back(std::move(totals[w]));
    job.cpu.push_back(workers[w]->cpu());
    job.depths.push_back(workers[w]->depths());
    job.syncs.push_back(workers[w]->syncs());
    job.verified_blocks += workers[w]->verified_blocks();
    if (!workers[w]->rate_shortfall().empty()) {
      job.rate_shortfalls.push_back(workers[w]->rate_shortfall());
    }
    job.abandoned_ios += workers[w]->abandoned();
    if (job.verify_failure.empty()) job.verify_failure = workers[w]->verify_failure();
    if (workers[w]->engine_error() != 0 && job.engine_error == 0) {
      job.engine_error = workers[w]->engine_error();
    }
    const size_t j = job_of_worker[w];
    job_end[j] = std::max(job_end[j], threads.end_ns(w));
    const uint64_t verify_start = workers[w]->verify_start_ns();
    io_end[j] = std::max(io_end[j], verify_start != 0 ? verify_start : threads.end_ns(w));
    if (verify_start != 0) verify_from[j] = std::min(verify_from[j], verify_start);
    if (threads.record_from_ns(w) != 0)
      job_from[j] = std::min(job_from[j], threads.record_from_ns(w));
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
            static_cast<double>(job_end[j] - verify_from[j]) / 1e9;
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

// end_fsync, fsync_on_close: a writing job's files synced once it has ended.
void SyncAtTheEnd(std::span<const JobSpec> specs, const std::vector<Targets>& targets) {
  for (size_t j = 0; j < specs.size(); ++j) {
    if ((specs[j].end_fsync || specs[j].fsync_on_close) && specs[j].HasWrites()) {
      for (const Target& t : targets[j].files) t.Sync();
    }
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

}  // namespace

std::vector<stats::Direction> LoggedDirections(const JobSpec& spec) {
  std::vector<stats::Direction> dirs;
  // A do_verify read-back (closed loop only) is the job's reads, as in fio.
  const bool reads_back =
      spec.verify != VerifyKind::kNone && spec.do_verify && spec.HasWrites() && !spec.RateLimited();
  if (spec.HasReads() || reads_back) dirs.push_back(stats::Direction::kRead);
  if (spec.HasWrites()) dirs.push_back(stats::Direction::kWrite);
  if (spec.HasTrims()) dirs.push_back(stats::Direction::kTrim);
  return dirs;
}

RunOutcome RunJobs(std::span<const JobSpec> specs, const RunJobsOptions& options) {
  const std::atomic<bool>* stop = options.stop;
  const int first_worker = options.first_worker;
  static const std::atomic<bool> kNever{false};
  const std::atomic<bool>& stop_flag = stop != nullptr ? *stop : kNever;
  if (specs.empty()) throw std::logic_error("RunJobs: no job");
  for (const JobSpec& spec : specs) spec.Validate();
  CheckCommonClock(specs);
  const JobSpec& lead = specs.front();
  CheckStartAt(lead.start_at_ms, Clock::RealtimeNs());
  Clock::Init();
  ProbeEngines(specs);

  RunOutcome out;
  out.clock_source = std::string(Clock::SourceName());
  out.jobs.resize(specs.size());
  std::vector<Targets> targets;
  targets.reserve(specs.size());
  std::vector<std::unique_ptr<Worker>> workers;
  std::vector<size_t> job_of_worker;
  for (size_t j = 0; j < specs.size(); ++j) {
    JobOutcome& job = out.jobs[j];
    job.first_worker = first_worker + static_cast<int>(workers.size());
    targets.push_back(OpenTargets(specs[j], job, stop));
    for (auto& w : BuildWorkers(specs[j], targets.back(), job)) {
      workers.push_back(std::move(w));
      job_of_worker.push_back(j);
    }
  }

  // fio's flow control: the workers of each flow_id share its counters (outliving the threads).
  std::map<uint32_t, Flow> flows;
  for (size_t w = 0; w < workers.size(); ++w) {
    const JobSpec& spec = specs[job_of_worker[w]];
    if (spec.flow != 0) workers[w]->JoinFlow(&flows[spec.flow_id]);
  }
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
    // The caller's sinks (its logs among them), then the start instant: --start_at, or the one
    // the caller chooses now that this host is ready (iotail-mpi: when every rank is).
    if (options.open_sinks) sinks = options.open_sinks();
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
  uint64_t planned_bytes = 0;
  for (size_t w = 0; w < workers.size(); ++w) {
    recorders.push_back(&workers[w]->recorder());
    worker_times.push_back(job_times[job_of_worker[w]]);
    planned_bytes += workers[w]->bytes_limit();
  }
  IntervalClockOptions copt;
  copt.period_ms = lead.log_hist_msec;
  copt.unix_epoch = lead.log_unix_epoch;
  copt.start_realtime_ns = out.start_realtime_ns;  // after the ramp: the clock waits for it
  copt.planned_bytes = planned_bytes;
  copt.on_sink_error = options.on_output_error;
  IntervalClock clock(std::move(recorders), std::move(sinks), copt);
  try {
    clock.Start();
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

  SyncAtTheEnd(specs, targets);
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
