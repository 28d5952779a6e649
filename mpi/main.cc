// iotail-mpi: one benchmark over every rank of an MPI job. `mpirun -np N iotail-mpi run OPTIONS`
// runs on each rank what `iotail run OPTIONS` runs on one host, from one common start, and rank 0
// shows and writes the cluster as one: live lines, fio-format histogram logs of all ranks summed,
// and a summary whose totals are the exact sums of every rank's (docs/ARCHITECTURE.md,
// "iotail-mpi").
//
// Threads: MPI is called from the main thread only (MPI_THREAD_FUNNELED). The run itself goes on a
// second thread (cli::RunCommandWith, with hooks); its interval clock hands each closed interval to
// a ForwardSink, which encodes it into the Mailbox; the main thread sends it to rank 0 with
// MPI_Isend and progresses the requests with short sleeps (no rank spins a core while it waits,
// and the workers are never touched). Rank 0 receives with MPI_Iprobe/MPI_Recv, merges by time
// (mpi/cluster_reducer.h) and feeds its cluster sinks. At the end every rank sends its whole-run
// totals (exact: the recorders' integer histograms), rank 0 puts the cluster's into the summary,
// and an MPI_Allreduce gives every rank the same exit status.
#include <fmt/format.h>
#include <mpi.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <iostream>
#include <memory>
#include <mutex>
#include <sstream>
#include <thread>

#include "cli/commands.h"
#include "cli/run_hooks.h"
#include "engine/clock.h"
#include "engine/job_runner.h"
#include "mpi/cluster_view.h"
#include "mpi/rank_args.h"
#include "mpi/rank_messages.h"
#include "stats/core/errors.h"
#include "stats/core/percentiles.h"
#include "stats/core/sla.h"
#include "stats/logs/hist_log_writer.h"
#include "stats/record/snapshot_codec.h"
#include "stats/report/live_report.h"
#include "stats/report/rate_samples.h"

namespace iotail::mpi {
namespace {

constexpr auto kPoll = std::chrono::milliseconds(1);

// Rank 0's clock minus... each rank's offset from rank 0, by the ping-pong with the least round
// trip (NTP's estimate): offset = t_rank - (t_send + t_receive) / 2.
std::vector<int64_t> ClockOffsets(int rank, int size) {
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

// Completes a non-blocking collective by testing it with short sleeps: a rank that waits for the
// others (a slower rank, rank 0's --prometheus_linger) costs next to no CPU, where Open MPI's
// blocking calls poll a whole core.
void Wait(MPI_Request& request) {
  for (int done = 0;;) {
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (done) return;
    std::this_thread::sleep_for(kPoll);
  }
}

struct Shared {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<engine::JobSpec> specs;  // set by on_jobs
  bool jobs_known = false;
  bool cluster_ready = false;  // rank 0: all totals received and intervals merged
  std::vector<RankTotals> totals;
  std::vector<bool> has_totals;
  std::atomic<bool> run_done{false};
  int status = 0;
  std::string failure;  // an exception's message (the run did not complete)
};

std::string HostName() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "unknown";
  return name;
}

int Main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const std::string host = HostName();
  auto fail = [&](const std::string& why, int code) {
    std::cerr << fmt::format("iotail-mpi: rank {} ({}): {}\n", rank, host, why) << std::flush;
    MPI_Abort(MPI_COMM_WORLD, code);
    return code;
  };

  RankArgs args;
  try {
    args = MakeRankArgs(std::vector<std::string>(argv + 1, argv + argc), rank, host);
  } catch (const std::exception& e) {
    if (rank == 0) std::cerr << "iotail-mpi: " << e.what() << "\n";
    MPI_Finalize();
    return 2;
  }
  if (args.help) {
    if (rank == 0) {
      std::cout << "usage: mpirun -np N iotail-mpi run [the options of iotail run]\n"
                   "  --log_per_rank  also write each rank's own logs as PREFIX.rank<R>_...\n"
                   "  {rank} and {host} in any option are replaced per rank\n";
    }
    MPI_Finalize();
    return 0;
  }

  // Host names, clock offsets and the common start: on the log period, three seconds ahead (time
  // for every rank to open its targets).
  std::vector<char> names(static_cast<size_t>(size) * 64, 0);
  char mine[64] = {};
  std::strncpy(mine, host.c_str(), sizeof mine - 1);
  MPI_Request gather;
  MPI_Igather(mine, 64, MPI_CHAR, names.data(), 64, MPI_CHAR, 0, MPI_COMM_WORLD, &gather);
  Wait(gather);
  const std::vector<int64_t> offsets = ClockOffsets(rank, size);
  uint64_t start_ms = 0;
  if (rank == 0) {
    const uint64_t now_ms = engine::Clock::RealtimeNs() / 1'000'000;
    start_ms = ((now_ms + 3000) / args.log_hist_msec + 1) * args.log_hist_msec;
    for (int r = 1; r < size; ++r) {
      const int64_t off = offsets[static_cast<size_t>(r)];
      if (std::abs(static_cast<double>(off)) > 0.01 * args.log_hist_msec * 1e6) {
        std::cerr << fmt::format(
            "iotail-mpi: warning: rank {}'s clock is {:.3f} ms off rank 0's, over 1% of the log "
            "period; intervals of different ranks will not line up (synchronise the clocks, e.g. "
            "with chrony)\n",
            r, static_cast<double>(off) / 1e6);
      }
    }
  }
  MPI_Request bcast;
  MPI_Ibcast(&start_ms, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD, &bcast);
  Wait(bcast);
  args.run_args.insert(args.run_args.begin() + 1, fmt::format("--start_at={}", start_ms));

  Shared shared;
  Mailbox mailbox;
  std::unique_ptr<ForwardSink> forward;
  std::unique_ptr<ClusterView> cluster;
  cli::RunHooks hooks;
  hooks.print_summary = rank == 0;
  hooks.on_jobs = [&](std::span<const engine::JobSpec> specs) {
    std::lock_guard lock(shared.mu);
    shared.specs.assign(specs.begin(), specs.end());
    forward = std::make_unique<ForwardSink>(mailbox, specs.size());
    hooks.sinks = {forward.get()};
    shared.jobs_known = true;
    shared.cv.notify_all();
  };
  hooks.on_batch = [&](std::span<const size_t> job_of_worker,
                       std::span<const size_t> entry_of_worker, size_t entries) {
    forward->SetWorkers(job_of_worker, entry_of_worker, entries);
  };
  hooks.on_summary = [&](stats::RunSummary& summary) {
    mailbox.Push({kTagTotals, EncodeTotals(summary)});
    if (rank != 0) return;
    std::unique_lock lock(shared.mu);
    shared.cv.wait(lock, [&] { return shared.cluster_ready; });
    // The cluster's summary: every rank's exact totals per job.
    for (size_t j = 0; j < summary.jobs.size(); ++j) {
      stats::JobTotals& job = summary.jobs[j];
      job.totals = {};
      job.cpu = {};
      job.depths = {};
      for (const RankTotals& t : shared.totals) {
        if (j >= t.totals.size()) continue;
        job.totals.Add(t.totals[j]);
        job.cpu.Add(t.cpu[j]);
        job.depths.Add(t.depths[j]);
      }
      if (j < cluster->samples().size()) job.samples = cluster->samples()[j];
    }
    summary.disk_util.clear();  // per host: not summed
    // The settings as the user gave them, not the rank's own (its start, log prefix, live lines).
    bool seen_period = false;
    std::vector<std::pair<std::string, std::string>> options;
    for (auto& [key, value] : summary.options) {
      if (key == "live_format" || key == "start_at" || key == "write_hist_log") continue;
      if (key == "log_hist_msec" && !seen_period) {
        seen_period = true;  // the one iotail-mpi puts first
        continue;
      }
      options.emplace_back(key, value);
    }
    if (!args.hist_prefix.empty()) options.emplace_back("write_hist_log", args.hist_prefix);
    if (args.log_per_rank) options.emplace_back("log_per_rank", "1");
    summary.options = std::move(options);
    summary.sla = &cluster->sla();
    for (int r = 0; r < size; ++r) {
      stats::RankInfo info;
      info.rank = r;
      info.host = std::string(&names[static_cast<size_t>(r) * 64]);
      info.clock_offset_ns = offsets[static_cast<size_t>(r)];
      info.p99_ns = NAN;
      if (shared.has_totals[static_cast<size_t>(r)]) {
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
      }
      summary.ranks.push_back(std::move(info));
    }
  };

  std::ostringstream quiet;
  std::thread runner([&] {
    std::vector<char*> cargs;
    for (auto& a : args.run_args) cargs.push_back(a.data());
    int status = 1;
    std::string failure;
    try {
      status = cli::RunCommandWith(cargs, rank == 0 ? std::cout : quiet, std::cerr, hooks);
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

  // The main thread: MPI progress until the run and the exchange are over.
  std::vector<std::pair<MPI_Request, std::shared_ptr<std::vector<uint64_t>>>> sends;
  std::vector<bool> done(static_cast<size_t>(size), false);
  shared.totals.resize(static_cast<size_t>(size));
  shared.has_totals.assign(static_cast<size_t>(size), false);
  bool sent_done = false;
  auto handle = [&](int from, int tag, std::span<const uint64_t> words) {
    if (tag == kTagInterval) {
      cluster->reducer().Add(from, DecodeInterval(words));
    } else if (tag == kTagTotals) {
      shared.totals[static_cast<size_t>(from)] = DecodeTotals(words);
      shared.has_totals[static_cast<size_t>(from)] = true;
    } else if (tag == kTagDone) {
      done[static_cast<size_t>(from)] = true;
      cluster->reducer().RankDone(from);
    }
  };
  for (;;) {
    bool progress = false;
    if (rank == 0 && !cluster) {
      std::lock_guard lock(shared.mu);
      if (shared.jobs_known) {
        try {
          cluster = std::make_unique<ClusterView>(size, args, shared.specs, std::cerr);
        } catch (const std::exception& e) {
          return fail(e.what(), 1);
        }
      }
    }
    std::deque<Message> local = mailbox.TakeAll();
    const bool run_done = shared.run_done.load();
    if (run_done && !sent_done) {
      std::lock_guard lock(shared.mu);
      if (!shared.failure.empty()) return fail(shared.failure, shared.status);
      local.push_back({kTagDone, {static_cast<uint64_t>(shared.status)}});
      sent_done = true;
    }
    for (Message& m : local) {
      progress = true;
      if (rank == 0) {
        if (!cluster) continue;  // intervals come only after the jobs are known
        handle(0, m.tag, m.words);
      } else {
        auto words = std::make_shared<std::vector<uint64_t>>(std::move(m.words));
        MPI_Request req;
        MPI_Isend(words->data(), static_cast<int>(words->size()), MPI_UINT64_T, 0, m.tag,
                  MPI_COMM_WORLD, &req);
        sends.emplace_back(req, std::move(words));
      }
    }
    if (rank == 0 && cluster) {
      int flag = 1;
      while (flag) {
        MPI_Status st;
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
        if (!flag) break;
        int count = 0;
        MPI_Get_count(&st, MPI_UINT64_T, &count);
        std::vector<uint64_t> words(static_cast<size_t>(count));
        MPI_Recv(words.data(), count, MPI_UINT64_T, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
        progress = true;
        try {
          handle(st.MPI_SOURCE, st.MPI_TAG, words);
        } catch (const std::exception& e) {
          return fail(fmt::format("from rank {}: {}", st.MPI_SOURCE, e.what()), 1);
        }
      }
      bool all_totals = true;
      for (int r = 0; r < size; ++r) {
        all_totals = all_totals &&
                     (shared.has_totals[static_cast<size_t>(r)] || done[static_cast<size_t>(r)]);
      }
      if (all_totals && cluster->reducer().Complete()) {
        std::lock_guard lock(shared.mu);
        if (!shared.cluster_ready) {
          shared.cluster_ready = true;
          shared.cv.notify_all();
        }
      }
    }
    // Completed sends.
    for (size_t i = 0; i < sends.size();) {
      int flag = 0;
      MPI_Test(&sends[i].first, &flag, MPI_STATUS_IGNORE);
      if (flag) {
        sends[i] = std::move(sends.back());
        sends.pop_back();
      } else {
        ++i;
      }
    }
    bool finished = sent_done && sends.empty();
    if (rank == 0) {
      for (int r = 0; r < size; ++r) finished = finished && done[static_cast<size_t>(r)];
    }
    if (finished) break;
    if (!progress) std::this_thread::sleep_for(kPoll);
  }
  runner.join();
  int status = shared.status;
  if (rank == 0 && cluster) {
    cluster->Close(std::cerr);
    if (cluster->sla().AnyViolated() && status == 0) {
      std::cerr << "iotail-mpi: SLA violated (over the cluster's intervals)\n";
      status = 3;
    }
    for (const std::string& p : cluster->log_paths()) {
      std::cerr << fmt::format("iotail-mpi: cluster histogram log {}\n", p);
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
