// The sweep's search over any way of running a step: `iotail sweep` runs each step on this host
// (cli/sweep_step.h: RunSweepStep), `iotail-mpi sweep` runs it on every rank at once and judges it
// on the cluster's summed histograms (mpi/main.cc). Both check the plan alike (CheckSweepPlan) and
// report, stop and exit alike (RunSweep): the contract is cli/sweep.cc's.
#pragma once

#include <functional>
#include <ostream>
#include <vector>

#include "cli/run_options.h"
#include "cli/sweep_step.h"
#include "stats/core/sla.h"

namespace iotail::cli {

// Runs step number `index` (from 1) at rate R (the whole sweep's: every clone of every host).
using StepRunner = std::function<SweepStep(double rate, int index)>;

// Checks a parsed sweep plan: a target (or the null engine), --sla targets, each on a direction
// some job does, the settings in order. Returns the SLA targets. Throws UsageError naming the
// option. Deterministic: every rank of iotail-mpi reaches the same verdict.
std::vector<stats::SlaTarget> CheckSweepPlan(RunPlan& plan);

// The search, its report (text, or JSON; to --output whole when given) and the exit status: 0
// with a capacity, 3 when no rate meets the SLA, 1 when a step counted I/O errors or a step's log
// could not be written, 128 + signal when stopped. `run_step` is called from this thread.
int RunSweep(const RunPlan& plan, const StepRunner& run_step, std::ostream& out, std::ostream& err);

}  // namespace iotail::cli
