// How `iotail run` groups its jobs and reports them, with fio's rules: execution batches (the jobs
// between two stonewalls run together), reporting groups (groupid grows at every stonewall and
// new_group; wait_for must name exactly one earlier job), the summary's entries (one per clone, or
// one per group with group_reporting), the run's mode line and each job's header line. Pure
// functions over the parsed jobs and their outcomes.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "cli/run_options.h"
#include "engine/job_runner.h"
#include "stats/report/run_summary.h"

namespace iotail::cli {

struct Groups {
  std::vector<int> groupid;                  // per job
  std::vector<std::vector<size_t>> batches;  // jobs that run together, in order
};
// Throws UsageError for a wait_for that names no earlier job, or several.
Groups PlanGroups(const std::vector<RunOptions>& jobs);

// entry[j][w]: the summary entry of job j's worker w.
struct Entries {
  std::vector<std::vector<size_t>> entry;
  size_t count = 0;
};
Entries PlanEntries(const std::vector<RunOptions>& jobs, const Groups& groups);

// The summary's jobs from the outcomes (their per-worker totals are moved out) and the rate
// samples of each entry; jobs that never ran (no outcome: the run was stopped before their batch)
// are left out.
std::vector<stats::JobTotals> SummaryJobs(const std::vector<RunOptions>& jobs,
                                          std::vector<engine::JobOutcome>& outcomes,
                                          const Groups& groups, const Entries& entries,
                                          const std::vector<stats::RateSamples>& samples);

// The run's mode (burst, or rate-limited with the targets summed over the jobs' clones).
stats::RunMode Mode(std::span<const engine::JobSpec> specs);

// One job's header line.
std::string Header(const engine::JobSpec& spec, const engine::JobOutcome& job,
                   const std::string& clock_source, int groupid);

}  // namespace iotail::cli
