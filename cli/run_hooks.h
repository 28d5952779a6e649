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
// always). explain_sinks[s] join stage s of every batch that explains (--explain: the explain
// session's stage sinks, stats/record/explain_sink.h; one delta per worker of the batch, called on
// the session's thread), whether or not the run writes stage logs itself.
//
// cluster_ranks > 0 (iotail-mpi's rank 0) makes the run's view sinks the cluster's: RunSinks builds
// them once for the run, by the same code as a local run's (the live report and its --sla checks
// over every job, the histogram log of the sum of every rank and job under
// RunOptions::driver.cluster.hist_prefix, the Prometheus metrics with targets of that many ranks,
// the bw/iops samples per summary entry, and with --explain the cluster's stage logs under that
// prefix too), does not feed them from this run's own interval clock,
// and hands them to on_view (on the run's thread, once built, and with empty pointers before they
// are destroyed): the driver feeds them the cluster's intervals on its own thread, which must end
// before on_summary returns. The --prometheus_linger and the SLA's exit status are then the run's.
#pragma once

#include <array>
#include <functional>
#include <span>
#include <vector>

#include "engine/job_spec.h"
#include "stats/record/explain_sink.h"
#include "stats/record/interval_sink.h"
#include "stats/report/rate_samples.h"
#include "stats/report/run_summary.h"

namespace iotail::cli {

// The view sinks of a cluster run (see above): per_job take one delta per job of the run (a
// cluster's interval summed over its ranks), per_entry one per summary entry.
struct ViewSinks {
  std::vector<stats::IntervalSink*> per_job;
  // The cluster's histogram logs (HistLogSinks in their sum mode: clat's, and a replay's recorded
  // latencies'): each fed one delta, the cluster's, whose bytes are those of the ranks' logs (the
  // driver's to say; see mpi/cluster_reducer.h).
  std::vector<stats::IntervalSink*> hist_logs;
  stats::RateSampleSink* per_entry = nullptr;  // its samples() go into the cluster's summary
  // --explain: the cluster's stage logs (PREFIX_explain_STAGE_hist.1.log, sum mode), fed like
  // hist_logs with one delta per interval whose clat is the stage's histogram (null: none).
  std::array<stats::IntervalSink*, stats::kStageCount> explain_logs{};
};

struct RunHooks {
  std::function<void(std::span<const engine::JobSpec>)> on_jobs;
  std::function<void(std::span<const size_t> job_of_worker, std::span<const size_t> entry_of_worker,
                     size_t entries)>
      on_batch;
  std::vector<stats::IntervalSink*> sinks;
  std::array<std::vector<stats::IntervalSink*>, stats::kStageCount> explain_sinks;
  std::function<uint64_t()> on_ready;
  std::function<void(stats::RunSummary&)> on_summary;
  bool print_summary = true;
  int cluster_ranks = 0;
  std::function<void(const ViewSinks&)> on_view;
};

}  // namespace iotail::cli
