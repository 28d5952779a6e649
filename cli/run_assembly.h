// The run assembly: one place where a command that runs jobs (`iotail run`, `iotail-mpi run`,
// each step of `iotail sweep`) turns its parsed options into a run, in named stages:
//
//   PlanRun      the jobs settled: engine chosen, targets named (fio's file names, the default
//                benchmark's temporary file), log period, JobSpec::Normalize and Validate; the
//                execution batches (stonewalls) and the summary entries (clones or groups).
//   RunSinks     every interval sink of the run, built here and nowhere else: per batch the
//                histogram logs and fio's value logs of each job and the live report (and its SLA
//                checks); for the whole run the bw/iops samples, the Prometheus metrics and their
//                server; and the driver's own (RunHooks::sinks). (fio's rate_min is checked by each
//                worker at its completions, as fio's job does: engine/worker.h.)
//   RunBatches   the batches in order, each through engine::RunJobs (which opens the targets,
//                starts the workers on one interval clock, then asks RunSinks for the sinks).
//   Summarise    the RunSummary from the outcomes (fio's figures, groups, disk use, mode, SLA).
//   WriteOutputs the summary in each format, to stdout or --output; the log and verify lines.
//   ExitStatus   the exit status, with its message on stderr.
//
// Every command that runs jobs (`iotail run`, `iotail sweep`'s steps, iotail-mpi's ranks) takes one
// path: ParseRunPlan (its own options are rows of the option table), a pure transform of the plan
// of its own (a sweep step's rate, a rank's log and file names), PlanRun, then ExecuteRun, which
// owns the stages after planning and the interrupt handling; a driver takes part through RunHooks
// (cli/run_hooks.h) rather than a copy of the assembly. All stages run on the caller's thread; the
// sinks are called on the interval clock's thread (stats/record/interval_sink.h). Not thread-safe.
#pragma once

#include <atomic>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "cli/run_groups.h"
#include "cli/run_hooks.h"
#include "cli/run_options.h"
#include "engine/disk_stats.h"
#include "engine/job_runner.h"
#include "stats/core/sla.h"
#include "stats/report/run_summary.h"
#include "stats/util/output_file.h"

namespace iotail::cli {

// Stage 1. The jobs of `plan` settled and checked (UsageError naming the option otherwise); notes
// for the user go to `err`. The default benchmark's temporary file is removed when the PlannedRun
// is destroyed. One planned record per job: plan.jobs[j], its options as parsed with its spec
// settled (no copy beside it to drift).
struct PlannedRun {
  RunPlan plan;  // its jobs' specs settled
  const engine::JobSpec& spec(size_t j) const { return plan.jobs[j].spec; }
  size_t jobs() const { return plan.jobs.size(); }
  // The settled specs in job order, as the engine and RunHooks::on_jobs take them (a copy).
  std::vector<engine::JobSpec> Specs() const;
  Groups groups;
  Entries entries;
  bool default_benchmark = false;  // one job without a target: the short default benchmark
  uint64_t clones = 0;             // the jobs' clones (numjobs) in all: the workers of the run
  struct TempFile {
    std::string path;
    TempFile() = default;
    TempFile(const TempFile&) = delete;
    TempFile& operator=(const TempFile&) = delete;
    ~TempFile();
  };
  std::unique_ptr<TempFile> temp = std::make_unique<TempFile>();
};
PlannedRun PlanRun(RunPlan plan, std::ostream& err);

// Stage 2. Owns every interval sink of the run (see above).
class RunSinks {
 public:
  // The run-wide sinks; with --prometheus the server starts listening now (its address on err).
  // The live lines go to `err`.
  RunSinks(const PlannedRun& run, const RunHooks& hooks, std::ostream& err);
  ~RunSinks();
  RunSinks(const RunSinks&) = delete;
  RunSinks& operator=(const RunSinks&) = delete;

  // Before a batch: the workers' summary entries and jobs, in the order of the deltas.
  void StartBatch(std::span<const size_t> batch_jobs);
  // The sinks of the batch started last (called by engine::RunJobs once its targets are open);
  // first_worker numbers its workers' logs across the run. Creates the batch's log files.
  std::vector<stats::IntervalSink*> OpenBatch(std::span<const size_t> batch_jobs, int first_worker);
  // --explain, --explain_slowest: the batch's stage logs (PREFIX_explain_STAGE_hist.N.log) and
  // slow-I/O logs (PREFIX_slowest.N.log) of jobs with --write_hist_log; says once why there is no
  // kernel view when there is none.
  stats::ExplainSinks OpenExplain(std::span<const size_t> batch_jobs, int first_worker,
                                  const engine::ExplainOutcome& outcome);
  // After a batch: closes its log files and appends the logs of its per_job_logs=0 jobs to their
  // shared files (fio's PREFIX_TYPE.log, opened for appending as fio does); the failures.
  std::vector<std::string> CloseBatch();

  const stats::SlaChecker& sla() const { return sla_; }
  const std::vector<stats::RateSamples>& samples() const;
  // Per job: the histogram logs (clat, then lat) and fio's value logs written.
  const std::vector<std::vector<std::string>>& hist_logs() const { return hist_logs_; }
  const std::vector<std::vector<std::string>>& lat_logs() const { return lat_logs_; }
  const std::vector<std::vector<std::string>>& value_logs() const { return value_logs_; }
  // Samples the histogram logs of the batches so far counted in their last bucket though above it
  // (fio's 29 groups end at 17.18 s; the summary stays exact).
  uint64_t clamped_in_logs() const;
  // After the summary: serve the final metrics for --prometheus_linger (Ctrl-C ends), then stop.
  void Linger(const std::atomic<bool>& stop, std::ostream& out, std::ostream& err);
  // A cluster's view (RunHooks::cluster_ranks): its histogram logs (none in a local run).
  std::vector<std::string> cluster_logs() const;

 private:
  void StartMetrics(int ranks);
  void StartClusterView();
  struct State;
  const PlannedRun& run_;
  const RunHooks& hooks_;
  std::ostream& err_;
  stats::SlaChecker sla_;
  std::unique_ptr<State> state_;
  std::vector<std::vector<std::string>> hist_logs_, lat_logs_, value_logs_;
};

// Stage 3. What the batches did, in job order.
struct RunResults {
  std::vector<engine::JobOutcome> outcomes;  // one per job (empty for jobs that never ran)
  double runtime_s = 0;
  uint64_t start_realtime_ns = 0;
  uint64_t start_at_ms = 0;  // the first batch's start instant (--start_at, or RunHooks::on_ready)
  int64_t start_skew_ns = 0;
  std::string clock_source;
  std::vector<std::string> output_errors;
  std::vector<std::string> rate_shortfalls;  // clones that missed rate_min and ended (fio's words)
  engine::ExplainOutcome explain;            // --explain: what the batches could see (summed)
  bool stopped = false;
  std::vector<engine::DiskCounters> disks;  // fio's disk_util: the targets' disks over the run
  double disks_ms = 0;                      // the time their counters cover
};
RunResults RunBatches(PlannedRun& run, RunSinks& sinks, const RunHooks& hooks,
                      const std::atomic<bool>& stop, std::ostream& err);

// Stage 4. The summary of the run (signal: the one that stopped it, 0 if none); the outcomes'
// per-worker totals are moved into it.
stats::RunSummary Summarise(const PlannedRun& run, RunResults& results, const RunSinks& sinks,
                            int signal);

// Stage 5. The summary in its formats (to `out`, or committed to `summary_file` when --output
// gave one; nothing when the hooks keep it off) and, in the normal format, the lines naming the
// logs and the verify results.
void WriteOutputs(const PlannedRun& run, stats::RunSummary& summary, const RunResults& results,
                  const RunSinks& sinks, const RunHooks& hooks, stats::OutputFile* summary_file,
                  std::ostream& out, std::ostream& err);

// Stages 2 to 6 after PlanRun, for every command that runs jobs: on_jobs, the summary file
// (--output, checked before the run; not when the hooks keep the summary off), RunSinks,
// RunBatches, Summarise, on_summary, WriteOutputs, the --prometheus_linger, ExitStatus. SIGINT
// and SIGTERM stop the run cleanly for its duration (cli/stop_signals.h; a driver's own
// StopSignals around several runs keeps them handled in between); one during the targets' setup
// ends it with "nothing was run" and 128 + signal. Returns the exit status (as ExitStatus).
int ExecuteRun(PlannedRun& run, RunHooks& hooks, std::ostream& out, std::ostream& err);

// Stage 6. 0 on success; 1 when I/O errors were counted, the engine failed, an output failed or a
// job clone missed its rate floor (and ended, as in fio); 128 + signal when interrupted; 3 when an
// --sla target was violated. Precedence: 1, then 128 + signal, then 3. The reason goes to `err`.
int ExitStatus(const PlannedRun& run, const stats::RunSummary& summary, const RunResults& results,
               const RunSinks& sinks, int signal, std::ostream& err);

}  // namespace iotail::cli
