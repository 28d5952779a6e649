#include "mpi/cluster_run.h"

#include <fmt/format.h>
#include <mpi.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <iostream>
#include <memory>
#include <mutex>
#include <thread>

#include "cli/run_hooks.h"
#include "stats/core/errors.h"
#include "stats/core/percentiles.h"
#include "stats/record/explain_sink.h"
#include "stats/report/rate_samples.h"

namespace iotail::mpi {
namespace {

// One rank's line in the cluster's summary.
stats::RankInfo RankSummary(const Cluster& c, int r, const Shared& shared) {
  stats::RankInfo info;
  info.rank = r;
  info.host = c.Name(r);
  info.clock_offset_ns = c.offsets[static_cast<size_t>(r)];
  info.p99_ns = NAN;
  info.lost_silence_s = shared.lost_silence_s[static_cast<size_t>(r)];
  info.lost = info.lost_silence_s > 0;
  if (!shared.has_totals[static_cast<size_t>(r)]) return info;
  const RankTotals& t = shared.totals[static_cast<size_t>(r)];
  info.start_skew_ns = t.start_skew_ns;
  stats::RecorderSnapshot all;
  for (const auto& s : t.totals) all.Add(s);
  stats::LatencySnapshot clat;
  for (const auto& d : all.dirs) {
    info.ios += d.ios;
    info.bytes += d.bytes;
    clat.Add(d.clat);
  }
  info.errors = all.TotalErrors();
  if (const stats::LatencySnapshot& late = all.schedule.lateness;
      late.n > 0 && !late.hist.empty()) {
    const double p99[] = {99.0};
    info.lateness_n = late.n;
    info.lateness_max_ns = late.max_ns;
    info.lateness_p99_ns = std::min<double>(
        late.max_ns, stats::ComputePercentiles(std::span<const uint64_t>(late.hist),
                                               stats::HistogramLayout::Recorded(), p99,
                                               stats::PercentileMethod::kFio)[0]);
  }
  if (clat.n > 0) {
    const double p99[] = {99.0};
    info.p99_ns = stats::ComputePercentiles(std::span<const uint64_t>(clat.hist),
                                            stats::HistogramLayout::Recorded(), p99,
                                            stats::PercentileMethod::kFio)[0];
  }
  return info;
}

// Rank 0: the summary of the cluster, from every rank's exact totals (the caller holds shared.mu
// and the cluster is complete).
void ClusterSummary(stats::RunSummary& summary, const Cluster& c, Shared& shared) {
  const std::vector<stats::RateSamples> samples = shared.cluster->samples();
  for (size_t j = 0; j < summary.jobs.size(); ++j) {
    stats::JobTotals& job = summary.jobs[j];
    job.totals = {};
    job.cpu = {};
    job.depths = {};
    if (job.explain) job.explain.emplace();  // --explain: the ranks' stages, summed
    for (const RankTotals& t : shared.totals) {
      if (j >= t.totals.size()) continue;
      job.totals.Add(t.totals[j]);
      job.cpu.Add(t.cpu[j]);
      job.depths.Add(t.depths[j]);
      if (job.explain && t.explain[j]) job.explain->Add(*t.explain[j]);
    }
    if (j < samples.size()) job.samples = samples[j];
  }
  summary.disk_util.clear();  // per host: not summed
  // --explain: the kernel view is rank 0's to name; what went unjoined is every rank's.
  summary.explain.requests_unmatched = 0;
  summary.explain.records_dropped = 0;
  for (const RankTotals& t : shared.totals) {
    summary.explain.requests_unmatched += t.requests_unmatched;
    summary.explain.records_dropped += t.records_dropped;
  }
  // Every rank runs the jobs at their rates: the cluster's targets are the ranks' sums.
  const double ranks = c.size;
  summary.mode.target_iops *= ranks;
  summary.mode.target_bw *= ranks;
  for (double& t : summary.mode.dir_target_iops) t *= ranks;
  for (double& t : summary.mode.dir_target_bw) t *= ranks;
  // A replay: the cluster's trace is every rank's (each may replay one of its own).
  if (summary.replay.on && c.size > 1) {
    summary.replay.trace =
        fmt::format("{} (rank 0's) and the other ranks' traces", summary.replay.trace);
  }
  summary.replay.trace_ios = 0;
  summary.replay.recorded_ios = 0;
  for (const RankTotals& t : shared.totals) {
    summary.replay.trace_ios += t.trace_ios;
    summary.replay.recorded_ios += t.trace_recorded;
  }
  for (int r = 0; r < c.size; ++r) summary.ranks.push_back(RankSummary(c, r, shared));
}

// The main thread's side of the run: MPI progress (sends, receives, rank 0's merge) until the run
// and the exchange are over.

// This rank's forwarding sinks: the interval clock's, and one per --explain stage.
struct Forwards {
  std::unique_ptr<ForwardSink> clat;
  std::array<std::unique_ptr<ForwardSink>, stats::kStageCount> stages;
};

// The hooks through which this rank's run feeds the exchange (cli/run_hooks.h); rank 0's run is
// the cluster's view (RunHooks::cluster_ranks), fed by the ClusterView.
void SetHooks(cli::RunHooks& hooks, const Cluster& c, Shared& shared, Mailbox& mailbox,
              Forwards& forward, size_t batches) {
  hooks.print_summary = c.rank == 0;
  hooks.cluster_ranks = c.rank == 0 ? c.size : 0;
  hooks.on_jobs = [&](std::span<const engine::JobSpec> specs) {
    std::lock_guard lock(shared.mu);
    shared.specs.assign(specs.begin(), specs.end());
    shared.period_ms = specs[0].logs.hist_msec;
    if (c.rank == 0)
      shared.cluster =
          std::make_unique<ClusterView>(c.size, specs.size(), shared.period_ms, batches);
    forward.clat = std::make_unique<ForwardSink>(mailbox, specs.size());
    hooks.sinks = {forward.clat.get()};
    for (size_t s = 0; s < stats::kStageCount; ++s) {
      forward.stages[s] = std::make_unique<ForwardSink>(mailbox, specs.size(), static_cast<int>(s));
      hooks.explain_sinks[s] = {forward.stages[s].get()};
    }
    shared.jobs_known = true;
    shared.cv.notify_all();
  };
  hooks.on_view = [&](const cli::ViewSinks& view) { shared.cluster->SetView(view); };
  hooks.on_ready = [&]() -> uint64_t {
    std::unique_lock lock(shared.mu);
    const size_t batch = shared.ready++;
    // Until rank 0 has started the batch (if a rank fails or stays behind, rank 0 ends the job).
    shared.cv.wait(lock, [&] { return shared.starts.size() > batch && shared.starts[batch] != 0; });
    return shared.starts[batch];
  };
  hooks.on_batch = [&](std::span<const size_t> job_of_worker,
                       std::span<const size_t> entry_of_worker, size_t entries) {
    forward.clat->SetWorkers(job_of_worker, entry_of_worker, entries);
    for (auto& stage : forward.stages) stage->SetWorkers(job_of_worker, {}, 0);
  };
  hooks.on_summary = [&](stats::RunSummary& summary) {
    mailbox.Push({kTagTotals, EncodeTotals(summary)});
    if (c.rank != 0) return;
    std::unique_lock lock(shared.mu);
    shared.cv.wait(lock, [&] { return shared.cluster_ready; });
    ClusterSummary(summary, c, shared);
  };
}

// This rank's run (cli::ExecuteRun) on its own thread; its status (or failure) lands in `shared`.
std::thread StartRun(const Cluster& c, cli::PlannedRun& run, cli::RunHooks& hooks, Shared& shared,
                     std::ostream& quiet) {
  return std::thread([&] {
    int status = 1;
    std::string failure;
    try {
      status = cli::ExecuteRun(run, hooks, c.rank == 0 ? std::cout : quiet, std::cerr);
    } catch (const stats::UsageError& e) {
      failure = e.what();
      status = 2;
    } catch (const std::exception& e) {
      failure = e.what();
      status = 1;
    }
    std::cout.flush();
    std::lock_guard lock(shared.mu);
    shared.status = status;
    shared.failure = failure;
    shared.run_done = true;
    shared.cv.notify_all();
  });
}

}  // namespace

int ClusterRun(const Cluster& c, cli::PlannedRun& run, std::ostream& quiet,
               const ClusterRunOptions& options) {
  Shared shared;
  Mailbox mailbox;
  Exchange exchange(c, run.plan.run.driver.cluster.setup_timeout_ns, shared, mailbox);
  Forwards forward;
  cli::RunHooks hooks;
  SetHooks(hooks, c, shared, mailbox, forward, run.groups.batches.size());
  if (!options.print_summary) hooks.print_summary = false;
  if (options.summary != nullptr && c.rank == 0) {
    hooks.on_summary = [&, cluster = hooks.on_summary](stats::RunSummary& summary) {
      cluster(summary);
      *options.summary = summary;
    };
  }
  std::thread runner = StartRun(c, run, hooks, shared, quiet);
  try {
    exchange.Loop();
  } catch (const std::exception& e) {
    std::cerr << fmt::format("iotail-mpi: rank {} ({}): {}\n", c.rank, c.host, e.what())
              << std::flush;
    MPI_Abort(MPI_COMM_WORLD, exchange.status());
    runner.detach();
    return exchange.status();
  }
  runner.join();
  // A rank given up on cannot take part in a collective (MPI_Finalize included): end the job.
  for (double silence : shared.lost_silence_s) {
    if (silence > 0) {
      std::cerr << std::flush;
      std::cout << std::flush;
      MPI_Abort(MPI_COMM_WORLD, 1);
      return 1;
    }
  }
  return shared.status;
}

}  // namespace iotail::mpi
