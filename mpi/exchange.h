// The main thread's side of an iotail-mpi rank (mpi/main.cc): what it shares with the rank's run
// thread (Shared, under its mutex), who is where (Cluster), and Exchange, the loop that does every
// MPI call after the start: this rank's messages (intervals, totals, done) sent to rank 0; rank 0
// receiving and merging them into a ClusterView; the ready/start handshake of every batch (each
// rank ready once its targets are open and workers prepared; rank 0 then picks the common start,
// ChooseStart, and names the ranks still setting up after --setup_timeout). MPI is called from the
// main thread only; not thread-safe otherwise.
#pragma once

#include <mpi.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "engine/job_spec.h"
#include "mpi/cluster_view.h"
#include "mpi/rank_messages.h"

namespace iotail::mpi {

// Completes a non-blocking collective by testing it with short sleeps: a rank that waits for the
// others (a slower rank, rank 0's --prometheus_linger) costs next to no CPU, where Open MPI's
// blocking calls poll a whole core.
void Wait(MPI_Request& request);

struct Shared {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<engine::JobSpec> specs;    // set by on_jobs
  uint64_t period_ms = 1000;             // the jobs' log period (set by on_jobs)
  std::unique_ptr<ClusterView> cluster;  // rank 0: made by on_jobs
  bool jobs_known = false;
  bool cluster_ready = false;  // rank 0: all totals received and intervals merged
  std::vector<RankTotals> totals;
  std::vector<bool> has_totals;
  std::atomic<bool> run_done{false};
  size_t ready = 0;              // batches this rank's run is ready to start (on_ready calls)
  std::vector<uint64_t> starts;  // each batch's start (epoch ms), as rank 0 chose it
  int status = 0;
  std::string failure;  // an exception's message (the run did not complete)
  // Rank 0: the ranks given up on (silent past the grace once rank 0's run was over), and for how
  // long each had been silent; the summary is made without them.
  std::vector<double> lost_silence_s;  // per rank; 0: not lost
};

// This rank and the job's: who is where, and each rank's clock offset from rank 0.
struct Cluster {
  int rank = 0, size = 1;
  std::string host;
  std::vector<char> names;       // size x 64 bytes: each rank's host name (rank 0 only)
  std::vector<int64_t> offsets;  // each rank's clock minus rank 0's (rank 0 only)
  uint64_t max_rtt_ns = 0;       // the slowest rank's round trip to rank 0 (rank 0 only)
  std::string Name(int r) const { return std::string(&names[static_cast<size_t>(r) * 64]); }
};

// Rank 0: how long a rank may send nothing while its intervals are due (one a log period) before
// it is named in a warning, and, once rank 0's own run is over, before it is given up on: the job
// then ends with what the others measured (a SIGSTOPped rank would otherwise hold it forever).
std::chrono::milliseconds SilenceWarning(uint64_t period_ms);
std::chrono::milliseconds SilenceGrace(uint64_t period_ms);

// Rank 0: a batch's common start once every rank is ready: on the log period, a lead ahead that
// covers sending it (four of the slowest round trips, and 100 ms for the ranks' wake-up).
uint64_t ChooseStart(const Cluster& c, uint64_t period_ms);

class Exchange {
 public:
  // setup_timeout_ns: --setup_timeout.
  Exchange(const Cluster& c, uint64_t setup_timeout_ns, Shared& shared, Mailbox& mailbox);

  // Runs until every rank is done; throws std::runtime_error (with the failing rank's status in
  // status()) when the run or a message fails.
  void Loop();
  int status() const { return status_; }

 private:
  void MakeCluster();

  // The batches this rank's run became ready to start since the last turn: rank 0 counts its own,
  // the others tell rank 0; rank 0 then starts every batch all ranks are ready for, and names the
  // ranks still setting up once --setup_timeout has passed since the first was ready.
  bool Ready();

  void MarkReady(int rank, uint64_t batch);

  std::string Stragglers(size_t batch) const;

  void SetStart(uint64_t batch, uint64_t start_ms);

  // Not rank 0: the starts rank 0 sends.
  bool ReceiveStart();

  void Send(int tag, std::vector<uint64_t> words, int to = 0);

  void Handle(int from, int tag, std::span<const uint64_t> words);

  // This rank's messages: rank 0 handles its own, the others send them to rank 0.
  bool Local();

  // Rank 0: the other ranks' messages, then whether the cluster's summary can be made.
  bool Receive();
  // Rank 0: names a rank silent past SilenceWarning once; gives up on those silent past
  // SilenceGrace once rank 0 has its own totals (marks them done and lost).
  void CheckSilence();

  void TestSends();

  using Clock = std::chrono::steady_clock;
  const Cluster& c_;
  std::chrono::nanoseconds setup_timeout_;
  Shared& shared_;
  Mailbox& mailbox_;
  ClusterView* cluster_ = nullptr;              // rank 0: shared_.cluster, once the jobs are known
  uint64_t period_ms_ = 1000;                   // the jobs' log period
  uint64_t ready_told_ = 0;                     // this rank's ready batches already told
  std::vector<std::set<int>> ready_ranks_;      // rank 0: per batch, the ranks ready to start it
  std::vector<Clock::time_point> first_ready_;  // rank 0: per batch, when the first was ready
  size_t started_ = 0;                          // rank 0: batches started
  std::vector<std::pair<MPI_Request, std::shared_ptr<std::vector<uint64_t>>>> sends_;
  std::vector<bool> done_;
  std::vector<Clock::time_point> heard_;  // rank 0: when each rank last sent anything
  std::vector<bool> warned_;              // rank 0: named as silent already
  bool sent_done_ = false;
  int status_ = 1;
};

}  // namespace iotail::mpi
