// ClusterView: rank 0's view of an iotail-mpi run, without MPI: the ClusterReducer and what its
// merged intervals feed: the live report over the cluster (with the --sla checks), the bw/iops
// samples of the summary, the cluster's histogram logs (PREFIX_clat_hist.1.log, and lat when
// rate-limited: every rank and job summed) and, with --prometheus, the cluster's metrics served
// by rank 0 (cli/metrics_server.h). Built once the jobs are known; used by one thread (the main
// thread of rank 0); the metrics server answers on its own thread from the last rendered text.
#pragma once

#include <memory>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "cli/metrics_server.h"
#include "engine/job_spec.h"
#include "mpi/cluster_reducer.h"
#include "mpi/rank_args.h"
#include "stats/core/sla.h"
#include "stats/logs/hist_log_writer.h"
#include "stats/report/live_report.h"
#include "stats/report/prometheus_metrics.h"
#include "stats/report/rate_samples.h"

namespace iotail::mpi {

class ClusterView {
 public:
  // Throws UsageError (a bad --sla or --prometheus) or std::system_error (a log file).
  ClusterView(int ranks, const RankArgs& args, std::span<const engine::JobSpec> specs,
              std::ostream& err);

  ClusterReducer& reducer() { return reducer_; }
  const stats::SlaChecker& sla() const { return sla_; }
  // The bw/iops samples of each summary entry (a clone, or a group with group_reporting).
  const std::vector<stats::RateSamples>& samples() const;
  std::vector<std::string> log_paths() const;
  // Closes the logs; serves the final metrics for --prometheus_linger, then stops the server.
  void Close(std::ostream& err);

 private:
  void Emit(const ClusterInterval& i);

  RankArgs args_;
  size_t jobs_ = 0;
  std::vector<stats::Direction> directions_;
  stats::SlaChecker sla_;
  ClusterReducer reducer_;
  std::unique_ptr<stats::LiveReport> live_;
  std::unique_ptr<stats::RateSampleSink> samples_;  // made at the first interval: one per entry
  std::vector<stats::RecorderSnapshot> entry_deltas_;
  std::unique_ptr<stats::HistLogWriter> clat_, lat_;
  std::unique_ptr<stats::PrometheusMetrics> metrics_;
  std::unique_ptr<cli::MetricsServer> server_;
  uint64_t bs_ = 4096;
};

}  // namespace iotail::mpi
