// One step of `iotail sweep`: the sweep's run plan at one target rate (StepPlan, a pure transform
// of the parsed plan), planned and executed as every run is (cli/run_assembly.h: PlanRun, then
// ExecuteRun, with the summary kept off the output and handed to the step through
// RunHooks::on_summary), and judged against the SLA targets.
//
// The step's rate R is fio's rate_iops summed over the clones that run together: each job clone
// gets R / clones per direction (fio's rate_iops=N caps each direction at N), so for a job of one
// direction R is the IOPS asked for. Each step runs time_based for `step_ns` after a ramp of
// `ramp_ns` (recording nothing), with no live lines and no per-interval SLA checks of its own.
// Latencies are the run's olat: in the open loop from each I/O's intended start, so a
// server that cannot keep up shows it (coordinated omission is not hidden). The SLA targets
// (stats/core/sla.h) are checked once, on the whole step's histogram of each direction (and all
// directions combined for "all:" targets). A step whose achieved rate is below `saturation` of its
// target has saturated: it fails whatever its latencies. Not thread-safe; call from one thread.
#pragma once

#include <array>
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "cli/driver_options.h"
#include "cli/run_options.h"
#include "stats/core/sla.h"
#include "stats/report/run_summary.h"

namespace iotail::cli {

struct SweepStep {
  std::string phase;       // "probe", "bisect", "confirm" or "retry"
  double rate = 0;         // R, as above
  double target_iops = 0;  // the run's target, every clone and direction
  double achieved_iops = 0;
  double p50_ns = 0, p99_ns = 0, p999_ns = 0, max_ns = 0;  // all directions combined
  uint64_t ios = 0, late_ios = 0, errors = 0;
  bool saturated = false;
  bool stopped = false;                 // a signal stopped it (before its setup ended: no figures)
  bool output_failed = false;           // a log of the step could not be written
  std::vector<std::string> violations;  // "p99<=10ms (read: 12.3 ms)"
  // --explain: each stage's mean over the step's joined I/Os, every direction (stats/record/
  // explain_sink.h's stages), and how many were joined; explained false without --explain or
  // with no I/O joined.
  bool explained = false;
  uint64_t joined = 0;
  std::array<double, stats::kStageCount> stage_mean_ns{};
  bool Pass() const { return !saturated && !stopped && errors == 0 && violations.empty(); }
  // Failed on latency alone (what a retry may clear).
  bool Failed() const { return !saturated && !stopped && errors == 0 && !violations.empty(); }
};

// The plan of step number `index` (from 1) at rate R: every job clone at R / clones per
// direction, time_based for the step after its ramp, no live lines, SLA checks, summary file or
// metrics of its own; histogram logs (--write_hist_log=PREFIX) per step as PREFIX.stepN. Pure.
RunPlan StepPlan(const RunPlan& base, double rate, const SweepSettings& settings, int index);

// Runs step number `index` on this host; notes of the run plan (PlanRun's) go to `err` for the
// first. Throws what the run assembly throws (UsageError for a plan it refuses, std::system_error).
SweepStep RunSweepStep(const RunPlan& base, double rate, const std::vector<stats::SlaTarget>& sla,
                       const SweepSettings& settings, int index, std::ostream& err);

// The verdict on a step at rate R from its run's summary (null: stopped before anything was
// measured) and exit status: what RunSweepStep returns, and iotail-mpi sweep's from the cluster's
// summary (every rank's histograms summed).
SweepStep JudgeStep(const stats::RunSummary* summary, int status, double rate,
                    const std::vector<stats::SlaTarget>& sla, const SweepSettings& settings);

}  // namespace iotail::cli
