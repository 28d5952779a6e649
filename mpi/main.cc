// iotail-mpi: one benchmark over every rank of an MPI job. `mpirun -np N iotail-mpi run OPTIONS`
// runs on each rank what `iotail run OPTIONS` runs on one host, from one common start, and rank 0
// shows and writes the cluster as one: live lines, fio-format histogram logs of all ranks summed,
// and a summary whose totals are the exact sums of every rank's (docs/ARCHITECTURE.md,
// "iotail-mpi"). Each rank takes the one path of every command that runs jobs: ParsePlan (the
// option table, with iotail-mpi's rows and the rank's {rank} and {host}), RankPlan (the rank's own
// file names: mpi/rank_plan.h), cli::PlanRun, cli::ExecuteRun (with hooks).
//
// Threads: MPI is called from the main thread only (MPI_THREAD_FUNNELED). The run itself goes on a
// second thread (cli::ExecuteRun, with hooks); its interval clock hands each closed interval to
// a ForwardSink, which encodes it into the Mailbox (with --explain, the explain session hands each
// stage's intervals to one more ForwardSink per stage, whatever the rank writes itself; rank 0
// merges them into the cluster's stage logs); the main thread sends it to rank 0 with MPI_Isend and
// progresses the requests with short sleeps (no rank spins a core while it waits, and the workers
// are never touched). Rank 0 receives with MPI_Iprobe/MPI_Recv, merges by time
// (mpi/cluster_reducer.h) and feeds the view sinks of its own run (mpi/cluster_view.h: its live
// lines, --sla checks, cluster log, metrics and linger are a run's, cli::RunHooks::cluster_ranks).
// At the end every rank sends its whole-run totals (exact: the recorders' integer histograms),
// rank 0 puts the cluster's into the summary, and an MPI_Allreduce gives every rank the same exit
// status.
#include <fmt/format.h>
#include <mpi.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <iostream>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "cli/command_doc.h"
#include "cli/commands.h"
#include "cli/option_table.h"
#include "cli/run_assembly.h"
#include "cli/run_hooks.h"
#include "engine/clock.h"
#include "engine/job_runner.h"
#include "mpi/cluster_view.h"
#include "mpi/exchange.h"
#include "mpi/mpi_doc.h"
#include "mpi/mpi_options.h"
#include "mpi/rank_messages.h"
#include "mpi/rank_plan.h"
#include "stats/core/errors.h"
#include "stats/core/percentiles.h"
#include "stats/core/sla.h"
#include "stats/logs/hist_log_writer.h"
#include "stats/record/explain_sink.h"
#include "stats/record/snapshot_codec.h"
#include "stats/report/live_report.h"
#include "stats/report/rate_samples.h"

namespace iotail::mpi {
namespace {

constexpr auto kPoll = std::chrono::milliseconds(1);

// Each rank's clock offset from rank 0, by the ping-pong with the least round trip (NTP's
// estimate): offset = t_rank - (t_send + t_receive) / 2; *max_rtt_ns: the largest of those round
// trips (rank 0 only).
std::vector<int64_t> ClockOffsets(int rank, int size, uint64_t* max_rtt_ns) {
  std::vector<int64_t> offsets(static_cast<size_t>(size), 0);
  constexpr int kRounds = 16;
  for (int r = 1; r < size; ++r) {
    if (rank == 0) {
      uint64_t best_rtt = UINT64_MAX;
      for (int k = 0; k < kRounds; ++k) {
        const uint64_t t0 = engine::Clock::RealtimeNs();
        MPI_Send(&t0, 1, MPI_UINT64_T, r, kTagPing, MPI_COMM_WORLD);
        uint64_t tr = 0;
        MPI_Recv(&tr, 1, MPI_UINT64_T, r, kTagPing, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        const uint64_t t1 = engine::Clock::RealtimeNs();
        if (t1 - t0 < best_rtt) {
          best_rtt = t1 - t0;
          offsets[static_cast<size_t>(r)] =
              static_cast<int64_t>(tr) - static_cast<int64_t>(t0 + (t1 - t0) / 2);
        }
      }
      *max_rtt_ns = std::max(*max_rtt_ns, best_rtt);
    } else if (rank == r) {
      for (int k = 0; k < kRounds; ++k) {
        uint64_t t0 = 0;
        MPI_Recv(&t0, 1, MPI_UINT64_T, 0, kTagPing, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        const uint64_t tr = engine::Clock::RealtimeNs();
        MPI_Send(&tr, 1, MPI_UINT64_T, 0, kTagPing, MPI_COMM_WORLD);
      }
    }
  }
  return offsets;
}

std::string HostName() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "unknown";
  return name;
}

// Host names and clock offsets (warning about clocks too far apart). Collective: every rank calls
// it, before its run.
void MeetRanks(Cluster& c, uint64_t period_ms) {
  c.names.assign(static_cast<size_t>(c.size) * 64, 0);
  char mine[64] = {};
  std::strncpy(mine, c.host.c_str(), sizeof mine - 1);
  MPI_Request gather;
  MPI_Igather(mine, 64, MPI_CHAR, c.names.data(), 64, MPI_CHAR, 0, MPI_COMM_WORLD, &gather);
  Wait(gather);
  c.offsets = ClockOffsets(c.rank, c.size, &c.max_rtt_ns);
  if (c.rank != 0) return;
  for (int r = 1; r < c.size; ++r) {
    const int64_t off = c.offsets[static_cast<size_t>(r)];
    if (std::abs(static_cast<double>(off)) > 0.01 * static_cast<double>(period_ms) * 1e6) {
      std::cerr << fmt::format(
          "iotail-mpi: warning: rank {}'s clock is {:.3f} ms off rank 0's, over 1% of the log "
          "period; intervals of different ranks will not line up (synchronise the clocks, e.g. "
          "with chrony)\n",
          r, static_cast<double>(off) / 1e6);
    }
  }
}

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
              Forwards& forward) {
  hooks.print_summary = c.rank == 0;
  hooks.cluster_ranks = c.rank == 0 ? c.size : 0;
  hooks.on_jobs = [&](std::span<const engine::JobSpec> specs) {
    std::lock_guard lock(shared.mu);
    shared.specs.assign(specs.begin(), specs.end());
    shared.period_ms = specs[0].log_hist_msec;
    if (c.rank == 0)
      shared.cluster = std::make_unique<ClusterView>(c.size, specs.size(), shared.period_ms);
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

// The plan of this rank: the command line and job files read once by the option table, with
// iotail-mpi's own rows and this rank's {rank} and {host}, then the rank's transform
// (mpi/rank_plan.h). The help is printed here (rank 0) and ends the job: *done.
cli::RunPlan ParsePlan(int argc, char** argv, const Cluster& c, bool* done) {
  if (argc < 2 || std::string_view(argv[1]) != "run") {
    throw stats::UsageError("usage: mpirun -np N iotail-mpi run [the options of iotail run]");
  }
  cli::ParseContext context;
  context.driver = MpiOptionGroups();
  context.substitutions = {{"{rank}", std::to_string(c.rank)}, {"{host}", c.host}};
  cli::RunPlan plan = cli::ParseRunPlan(std::span<char* const>(argv + 1, argv + argc), context);
  *done = plan.run.help != 0 || !plan.showcmd.empty();
  if (*done) {
    if (c.rank == 0) {
      std::cout << (plan.run.help == 3 ? cli::ManPage(MpiDoc())
                    : !plan.showcmd.empty()
                        ? plan.showcmd
                        : "usage: mpirun -np N iotail-mpi run [options] [JOBFILE.fio...]\n"
                          "Every rank runs what iotail run runs; rank 0 shows and writes the "
                          "cluster as one.\n" +
                              cli::OptionsHelp(MpiOptionGroups()) +
                              "\nand every option of iotail run (iotail run --help).\n");
    }
    return plan;
  }
  return RankPlan(std::move(plan), c.rank);
}

// Every rank's plan read and settled (PlanRun; notes from rank 0 only, errors from each rank that
// has them); the worst status of any rank (0, 2 for a plan refused, 1 for another failure) ends
// them all alike. *done: nothing to run (--help, --showcmd, --parse-only: rank 0 has printed it).
int PlanEveryRank(int argc, char** argv, const Cluster& c, std::unique_ptr<cli::PlannedRun>& run,
                  bool* done, std::ostream& quiet) {
  int status = 0;
  try {
    cli::RunPlan plan = ParsePlan(argc, argv, c, done);
    if (!*done) {
      run = std::make_unique<cli::PlannedRun>(
          cli::PlanRun(std::move(plan), c.rank == 0 ? std::cerr : quiet));
      *done = run->plan.parse_only;
      if (*done && c.rank == 0) {
        std::cerr << fmt::format(
            "iotail-mpi: --parse-only: {} job(s) ({} with their clones) per rank, all valid\n",
            run->jobs(), run->clones);
      }
    }
  } catch (const std::exception& e) {
    status = dynamic_cast<const stats::UsageError*>(&e) != nullptr ? 2 : 1;
    if (c.rank == 0 || status == 1) {
      std::cerr << fmt::format("iotail-mpi: {}{}\n",
                               c.rank == 0 ? "" : fmt::format("rank {}: ", c.rank), e.what());
    }
  }
  int worst = 0;
  MPI_Request reduce;
  MPI_Iallreduce(&status, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &reduce);
  Wait(reduce);
  return worst;
}

int Main(int argc, char** argv) {
  if (argc == 2 && std::string_view(argv[1]) == "--help=man") {  // the page, without MPI
    std::cout << cli::ManPage(MpiDoc());
    return 0;
  }
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  Cluster c;
  MPI_Comm_rank(MPI_COMM_WORLD, &c.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &c.size);
  c.host = HostName();
  std::ostringstream quiet;
  std::unique_ptr<cli::PlannedRun> run;
  bool done = false;
  if (const int status = PlanEveryRank(argc, argv, c, run, &done, quiet); status != 0 || done) {
    std::cout.flush();
    MPI_Finalize();
    return status;
  }
  MeetRanks(c, run->spec(0).log_hist_msec);

  Shared shared;
  Mailbox mailbox;
  Exchange exchange(c, run->plan.run.driver.cluster.setup_timeout_ns, shared, mailbox);
  Forwards forward;
  cli::RunHooks hooks;
  SetHooks(hooks, c, shared, mailbox, forward);
  std::thread runner = StartRun(c, *run, hooks, shared, quiet);
  try {
    exchange.Loop();
  } catch (const std::exception& e) {
    std::cerr << fmt::format("iotail-mpi: rank {} ({}): {}\n", c.rank, c.host, e.what())
              << std::flush;
    MPI_Abort(MPI_COMM_WORLD, exchange.status());
    return exchange.status();
  }
  runner.join();
  const int status = shared.status;
  // A rank given up on cannot take part in a collective (MPI_Finalize included): end the job.
  for (double silence : shared.lost_silence_s) {
    if (silence > 0) {
      std::cerr << std::flush;
      std::cout << std::flush;
      MPI_Abort(MPI_COMM_WORLD, 1);
      return 1;
    }
  }
  int common = 0;
  MPI_Request reduce;
  MPI_Iallreduce(&status, &common, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &reduce);
  Wait(reduce);
  MPI_Finalize();
  return common;
}

}  // namespace
}  // namespace iotail::mpi

int main(int argc, char** argv) { return iotail::mpi::Main(argc, argv); }
