// RunJobs: runs a group of JobSpecs together from setup to the final interval and returns what the
// recorders hold.
//
// Setup (all before the common start instant, all able to throw): validate each spec, choose and
// calibrate the clock, probe the engines, open (and create or safety-check) each job's targets
// (files and devices, or the NBD export: engine/nbd_target.h), build its numjobs Workers, each with
// its own engine instance and its rate schedule (a rate is per worker, as fio's is per job clone),
// and prepare every worker on its own thread; then it asks the caller for the interval sinks
// (RunJobsOptions::open_sinks: the caller builds them all, histogram logs included; the engine
// builds none, so a bad target leaves no empty log). Then, after waiting for start_at_ms if given
// (UsageError if that is more than kStartAtToleranceMs in the past) or for await_start, the
// workers start together, each job's after its startdelay (or once the job it waits for has ended);
// ramp_time is run but not recorded (no latencies, no lag, no log lines; a clone that ends inside
// it reports the I/Os it did), and the interval clock starts when the first job records and hands
// every interval to the caller's sinks; each job's runtime counts from its own recording start.
// *stop (set by a signal handler, say) ends the run early, cleanly, at any of these stages. When
// every worker has stopped (runtime, bytes, loops, error or *stop), the interval clock writes the
// final partial interval, and the totals per worker (exactly the sums of the logged intervals, but
// for a clone that ended inside its ramp) are returned; end_fsync is each clone's own, at its
// end (Worker). Not thread-safe; one call at a time.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "engine/interval_clock.h"
#include "engine/job_spec.h"
#include "engine/worker.h"
#include "engine/zoned_file.h"
#include "stats/core/sample_stats.h"
#include "stats/core/steady_state.h"
#include "stats/record/explain_sink.h"
#include "stats/record/recorder.h"

namespace iotail::engine {

// How far in the past --start_at may be when the workers are ready (later is an error).
inline constexpr uint64_t kStartAtToleranceMs = 500;

// What one job (one JobSpec: numjobs workers) did.
struct JobOutcome {
  std::vector<stats::RecorderSnapshot> per_worker;  // totals per worker
  std::vector<stats::CpuUsage> cpu;                 // CPU use per worker
  std::vector<stats::IoDepthCounts> depths;         // queue depths and batches per worker
  std::vector<stats::SampleStats> syncs;            // fsync/fdatasync latencies per worker (ns)
  double runtime_s = 0;                             // recorded time (after startdelay and ramp)
  std::string engine_description;                   // flags the engine actually used
  std::vector<std::string> created_files;           // targets this job created
  uint64_t region_size = 0;                         // bytes per file actually used (clone 0)
  int engine_error = 0;                             // first engine-level errno, 0 if none
  uint64_t abandoned_ios = 0;                       // given up after the stop grace (ETIMEDOUT)
  uint64_t short_reads = 0;           // asynchronous reads that met the end of the file (Worker)
  uint64_t verified_blocks = 0;       // --verify: blocks checked
  std::vector<uint64_t> zone_resets;  // zonemode=zbd: zones reset, per worker
  std::string verify_failure;         // the first block that failed, "" if none
  int first_worker = 0;               // 0-based number of its first worker in the run
  // --latency_target: the depth its last worker's search ended at (fio's latency_depth, which is
  // the last clone's); iodepth without it. Its totals and runtime are those of the final window
  // when the search reset the statistics (fio's reset_all_stats).
  uint32_t latency_depth = 0;
  // fio's rate_min/rate_iops_min: each clone that fell short and ended ("x: rate_iops_min=1000 not
  // met, got 94 IOPS", fio's words), in worker order.
  std::vector<std::string> rate_shortfalls;
  // Per direction, the time it was done in (fio's runtime[ddir]): runtime_s, except after a
  // do_verify read-back: the writes and trims end where the first read-back begins, and the reads
  // are the read-back (from the first worker's to the end), or the whole time if the job also read.
  std::array<double, stats::kDirectionCount> dir_runtime_s{};
  // --steadystate: per worker, its clone's (or with group_reporting its group's) result; nullopt
  // without steady-state detection.
  std::vector<std::optional<stats::SteadyStateResult>> steady_state;
  // --explain, --explain_slowest: per worker, the stages of its I/Os over the run (empty: not
  // asked).
  std::vector<stats::ExplainTotals> explain;
};

// What --explain of a batch could see (RunOutcome::explain).
struct ExplainOutcome {
  bool asked = false;      // a job had --explain
  std::string attachment;  // how the kernel's view attached ("typed raw tracepoints"), "" if not
  std::string why_not;     // why there is no kernel view ("" when there is one)
  std::vector<std::string> untraced;  // "FILE: why" for each target whose I/O is not joined
  uint64_t requests_unmatched = 0;    // block requests of the traced disks joined to no I/O
  uint64_t records_dropped = 0;       // I/Os or requests lost on the way (full buffers)
  std::vector<stats::ExplainIntervalSums> history;  // each closed interval's stages, in order
};

struct RunOutcome {
  std::vector<JobOutcome> jobs;            // one per spec, in order
  std::string clock_source;                // "tsc" or "monotonic"
  uint64_t start_realtime_ns = 0;          // recording start of the earliest job, epoch ns
  uint64_t start_at_ms = 0;                // the start instant waited for (0: none)
  int64_t start_skew_ns = 0;               // actual start - start_at (0 without it)
  bool stopped = false;                    // *stop ended the run early
  std::vector<std::string> output_errors;  // outputs that failed (and stopped)
  double runtime_s = 0;                    // from the earliest recording start to the end
  ExplainOutcome explain;
};

struct RunJobsOptions {
  const std::atomic<bool>* stop = nullptr;  // set (by a signal handler, say): stop cleanly
  // A failing output (a log on a full filesystem) is reported at once through this, stops that
  // output only, and is listed in RunOutcome::output_errors.
  std::function<void(const std::string&)> on_output_error;
  int first_worker = 0;  // where this run's worker numbering starts (fio's thread numbers)
  // zonemode=zbd: the emulated zones of the run's files, kept from one call to the next (fio keeps
  // a file's write pointers across stonewalled groups); nullptr: this call's own.
  ZoneRegistry* zones = nullptr;
  // Called once, after the targets are open and the workers built, before anything runs: the
  // sinks (not owned) that get every closed interval, in this order, with the deltas of all
  // workers of all jobs in job order (histogram logs, the live report, SLA checks, metrics).
  std::function<std::vector<stats::IntervalSink*>()> open_sinks;
  // Called once after open_sinks, when every worker is prepared: returns the Unix epoch ms to
  // start at (0: at once), instead of the jobs' start_at. A driver that starts several hosts
  // together waits here until all are ready. May throw (the run is then abandoned).
  std::function<uint64_t()> await_start;
  // Called once after open_sinks when a job has --explain or --explain_slowest: the outputs of
  // the stages and the slowest I/Os (not owned; see stats/record/explain_sink.h).
  // The argument says what the batch's explain can see (its kernel view, or why there is none).
  std::function<stats::ExplainSinks(const ExplainOutcome&)> open_explain_sinks;
};

// Runs `specs` at the same time (fio's jobs between two stonewalls), all their workers started
// together (each job's after its startdelay) and closed on one interval clock, so their logs share
// the time column. The jobs must agree on the clock: log_hist_msec, log_unix_epoch and start_at
// (UsageError naming the job otherwise).
RunOutcome RunJobs(std::span<const JobSpec> specs, const RunJobsOptions& options);

// The directions a job's logs and reports cover (reads, writes or both).
std::vector<stats::Direction> LoggedDirections(const JobSpec& spec);

}  // namespace iotail::engine
