// ClusterView: rank 0's view of an iotail-mpi run, without MPI: the ClusterReducer, and the feeding
// of its merged intervals into the view sinks of rank 0's run (cli::RunHooks::cluster_ranks): the
// live report and --sla checks over the cluster, the cluster's histogram log, the Prometheus
// metrics and the bw/iops samples; and with --explain one more ClusterReducer per stage, whose
// merged intervals feed the cluster's stage logs (the same merge by period as the clat log's, so
// each equals `iotail merge` of the ranks' own stage logs). All built by rank 0's RunSinks as a
// local run's are (cli/run_assembly.h), so the cluster's outputs and a run's cannot drift apart.
// Made by the main thread once the jobs are known, and used by it; SetView is called by the run's
// thread (the sinks handed over, or taken back before they are destroyed) and is safe against Emit.
#pragma once

#include <mutex>
#include <vector>

#include "cli/run_hooks.h"
#include "mpi/cluster_reducer.h"
#include "stats/record/recorder.h"

namespace iotail::mpi {

class ClusterView {
 public:
  // period_ms: every rank's log period (the planned jobs'); jobs: the jobs of the run.
  // batches: the run's batches (stonewalls), each ending with a final interval per rank.
  ClusterView(int ranks, size_t jobs, uint64_t period_ms, size_t batches = 1);

  ClusterReducer& reducer() { return reducer_; }
  // --explain's stage `stage`; std::runtime_error when out of range (a malformed message).
  ClusterReducer& explain(uint64_t stage);
  // `rank` delivers nothing more: every reducer.
  void RankDone(int rank);
  // `rank` delivers no more stage intervals (it sends them all before its totals).
  void ExplainDone(int rank);
  // The view sinks to feed (empty: none, or no longer).
  void SetView(const cli::ViewSinks& view);
  // The bw/iops samples of each summary entry so far (none before the view is set).
  std::vector<stats::RateSamples> samples();

 private:
  void Emit(const ClusterInterval& i);
  void EmitStage(size_t stage, const ClusterInterval& i);

  std::mutex mu_;
  cli::ViewSinks view_;
  std::vector<stats::RecorderSnapshot> entry_deltas_;
  ClusterReducer reducer_;
  std::vector<ClusterReducer> explain_;  // one per stage
};

}  // namespace iotail::mpi
