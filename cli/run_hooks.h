// RunHooks: how a driver around `iotail run` (iotail-mpi: mpi/) takes part in a run without a copy
// of it. The run calls each hook, when set, on its own thread (the one calling RunCommandWith):
// on_jobs once the jobs are settled and valid, before anything is opened; on_batch before each
// batch of jobs (those between two stonewalls) with the job index and the summary entry (a clone,
// or a group with group_reporting; `entries` in all the run) of each of its workers, in the order
// of the interval sinks' deltas; the sinks join every batch's interval clock (IntervalSink's
// contract: the clock thread calls them); on_summary with the summary before it is formatted (it
// may replace figures, e.g. with a cluster's totals); on_ready, when set, before each batch
// starts, once its targets are open and its workers prepared: it returns the Unix epoch ms to start
// at (0: at once), so a driver can start several hosts together once all are ready; print_summary
// false keeps the summary and the log-file lines off the output (the exit status is computed as
// always).
#pragma once

#include <functional>
#include <span>
#include <vector>

#include "engine/job_spec.h"
#include "stats/record/interval_sink.h"
#include "stats/report/run_summary.h"

namespace iotail::cli {

struct RunHooks {
  std::function<void(std::span<const engine::JobSpec>)> on_jobs;
  std::function<void(std::span<const size_t> job_of_worker, std::span<const size_t> entry_of_worker,
                     size_t entries)>
      on_batch;
  std::vector<stats::IntervalSink*> sinks;
  std::function<uint64_t()> on_ready;
  std::function<void(stats::RunSummary&)> on_summary;
  bool print_summary = true;
};

}  // namespace iotail::cli
