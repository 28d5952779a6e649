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
#include "cli/stop_signals.h"
#include "cli/sweep_driver.h"
#include "cli/sweep_options.h"
#include "engine/clock.h"
#include "engine/job_runner.h"
#include "mpi/cluster_run.h"
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

// What this rank starts with: the command (run or sweep), its plan and, for a run, the plan
// settled; for a sweep, the SLA targets (checked on every rank alike, before the rank transform).
struct RankStart {
  bool sweep = false;
  cli::RunPlan plan;
  std::unique_ptr<cli::PlannedRun> run;
  std::vector<stats::SlaTarget> sla;
};

// Every option group iotail-mpi sweep reads before iotail run's: the sweep's, then iotail-mpi's.
std::span<const cli::OptionGroup> SweepGroups() {
  static const std::vector<cli::OptionGroup> groups = [] {
    std::vector<cli::OptionGroup> all(cli::SweepOptionGroups().begin(),
                                      cli::SweepOptionGroups().end());
    all.insert(all.end(), MpiOptionGroups().begin(), MpiOptionGroups().end());
    return all;
  }();
  return groups;
}

std::string Usage(bool sweep) {
  if (sweep) {
    return "usage: mpirun -np N iotail-mpi sweep --sla TARGETS [options] [JOBFILE.fio...]\n"
           "The capacity of all ranks together at the SLA: each step's rate is the cluster's, "
           "split over the ranks.\n" +
           cli::OptionsHelp(SweepGroups()) +
           "\nand every option of iotail run (iotail run --help).\n";
  }
  return "usage: mpirun -np N iotail-mpi run [options] [JOBFILE.fio...]\n"
         "Every rank runs what iotail run runs; rank 0 shows and writes the cluster as one.\n" +
         cli::OptionsHelp(MpiOptionGroups()) +
         "\nand every option of iotail run (iotail run --help).\n";
}

// The plan of this rank: the command line and job files read once by the option table, with
// iotail-mpi's own rows (and the sweep's) and this rank's {rank} and {host}, then the rank's
// transform (mpi/rank_plan.h). The help is printed here (rank 0) and ends the job: *done.
RankStart ParsePlan(int argc, char** argv, const Cluster& c, bool* done) {
  const std::string_view command = argc >= 2 ? argv[1] : "";
  if (command != "run" && command != "sweep") {
    throw stats::UsageError(
        "usage: mpirun -np N iotail-mpi run|sweep [the options of iotail run, or of iotail "
        "sweep]");
  }
  RankStart start;
  start.sweep = command == "sweep";
  cli::ParseContext context;
  context.driver = start.sweep ? SweepGroups() : MpiOptionGroups();
  context.substitutions = {{"{rank}", std::to_string(c.rank)}, {"{host}", c.host}};
  start.plan = cli::ParseRunPlan(std::span<char* const>(argv + 1, argv + argc), context);
  const cli::RunPlan& plan = start.plan;
  *done = plan.run.help != 0 || !plan.showcmd.empty();
  if (*done) {
    if (c.rank == 0) {
      std::cout << (plan.run.help == 3      ? cli::ManPage(MpiDoc())
                    : !plan.showcmd.empty() ? plan.showcmd
                                            : Usage(start.sweep));
    }
    return start;
  }
  if (start.sweep) start.sla = cli::CheckSweepPlan(start.plan);
  start.plan = RankPlan(std::move(start.plan), c.rank);
  return start;
}

// Every rank's plan read and settled (PlanRun; for a sweep, its first step's; notes from rank 0
// only, errors from each rank that has them); the worst status of any rank (0, 2 for a plan
// refused, 1 for another failure) ends them all alike. *done: nothing to run (--help, --showcmd,
// --parse-only: rank 0 has printed it).
int PlanEveryRank(int argc, char** argv, const Cluster& c, RankStart& start, bool* done,
                  std::ostream& quiet) {
  int status = 0;
  try {
    start = ParsePlan(argc, argv, c, done);
    if (!*done) {
      cli::RunPlan plan =
          start.sweep
              ? cli::StepPlan(start.plan,
                              start.plan.run.driver.sweep.start_rate / static_cast<double>(c.size),
                              start.plan.run.driver.sweep, 1)
              : start.plan;
      start.run = std::make_unique<cli::PlannedRun>(
          cli::PlanRun(std::move(plan), c.rank == 0 ? std::cerr : quiet));
      *done = start.run->plan.parse_only;
      if (*done && c.rank == 0) {
        std::cerr << fmt::format(
            "iotail-mpi: --parse-only: {} job(s) ({} with their clones) per rank, all valid\n",
            start.run->jobs(), start.run->clones);
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

// Rank 0 tells every rank what comes next: a step (its cluster rate and number) or, with a rate
// below 0, the end of the sweep and its exit status.
struct StepOrder {
  double rate = -1;
  int64_t index = 0;
};
StepOrder Broadcast(StepOrder order) {
  double words[2] = {order.rate, static_cast<double>(order.index)};
  MPI_Request request;
  MPI_Ibcast(words, 2, MPI_DOUBLE, 0, MPI_COMM_WORLD, &request);
  Wait(request);
  return {words[0], static_cast<int64_t>(words[1])};
}

// iotail-mpi sweep: rank 0 searches (cli/sweep_driver.h) and orders each step; every rank runs it
// at its share of the rate (the cluster's rate over the ranks), through ClusterRun; rank 0 judges
// it on the cluster's summary (every rank's histograms summed). Returns the sweep's status.
int SweepOverRanks(const Cluster& c, const RankStart& start, std::ostream& quiet) {
  const cli::SweepSettings& settings = start.plan.run.driver.sweep;
  cli::StopSignals signals;  // held between steps too: a signal there ends the sweep cleanly
  auto step_on_ranks = [&](double rate, int index, std::optional<stats::RunSummary>* summary) {
    cli::RunPlan plan =
        cli::StepPlan(start.plan, rate / static_cast<double>(c.size), settings, index);
    std::string& prefix = plan.run.driver.cluster.hist_prefix;
    if (!prefix.empty()) prefix += fmt::format(".step{}", index);
    cli::PlannedRun run = cli::PlanRun(std::move(plan), quiet);
    ClusterRunOptions options;
    options.print_summary = false;
    options.summary = summary;
    return ClusterRun(c, run, quiet, options);
  };
  if (c.rank != 0) {
    for (;;) {
      const StepOrder order = Broadcast({});
      if (order.rate < 0) return static_cast<int>(order.index);
      step_on_ranks(order.rate, static_cast<int>(order.index), nullptr);
    }
  }
  const int status = cli::RunSweep(
      start.plan,
      [&](double rate, int index) {
        Broadcast({rate, index});
        std::optional<stats::RunSummary> summary;
        const int step_status = step_on_ranks(rate, index, &summary);
        return cli::JudgeStep(summary ? &*summary : nullptr, step_status, rate, start.sla,
                              settings);
      },
      std::cout, std::cerr);
  std::cout.flush();
  Broadcast({-1, status});
  return status;
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
  RankStart start;
  bool done = false;
  if (const int status = PlanEveryRank(argc, argv, c, start, &done, quiet); status != 0 || done) {
    std::cout.flush();
    MPI_Finalize();
    return status;
  }
  MeetRanks(c, start.run->spec(0).logs.hist_msec);

  const int status =
      start.sweep ? SweepOverRanks(c, start, quiet) : ClusterRun(c, *start.run, quiet);
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
