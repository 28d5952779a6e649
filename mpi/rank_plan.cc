#include "mpi/rank_plan.h"

#include <fmt/format.h>

#include "stats/core/errors.h"

namespace iotail::mpi {
namespace {

// The job's log period as it now stands, even once its histogram log is not written here (the
// clock would otherwise follow --status-interval: PlanRun's SettleClock).
void PinLogPeriod(cli::RunOptions& job) {
  if (!job.Given("log_hist_msec")) job.given_names.emplace_back("log_hist_msec");
}

}  // namespace

cli::RunPlan RankPlan(cli::RunPlan plan, int rank) {
  cli::ClusterSettings& cluster = plan.run.driver.cluster;
  const std::string own = fmt::format(".rank{}", rank);
  const bool default_benchmark =
      !plan.named_jobs && plan.jobs[0].spec.filenames.empty() && plan.jobs[0].spec.uri.empty();
  for (cli::RunOptions& job : plan.jobs) {
    engine::JobSpec& spec = job.spec;
    if (job.Given("start_at")) {
      throw stats::UsageError(
          fmt::format("{}{}--start_at: iotail-mpi chooses the common start itself", job.origin,
                      job.origin.empty() ? "" : ": "));
    }
    if (default_benchmark && spec.logs.write_hist_log.empty()) {
      // PlanRun's default benchmark would log to iotail_clat_hist.1.log on every rank.
      spec.logs.write_hist_log = "iotail";
      if (!job.Given("log_hist_msec")) spec.logs.hist_msec = 500;
    }
    if (!spec.logs.write_hist_log.empty()) {
      if (cluster.hist_prefix.empty()) cluster.hist_prefix = spec.logs.write_hist_log;
      PinLogPeriod(job);
      if (cluster.log_per_rank || default_benchmark) {
        spec.logs.write_hist_log += own;
      } else {
        spec.logs.write_hist_log.clear();
      }
    }
    for (std::string* prefix :
         {&spec.logs.write_bw_log, &spec.logs.write_iops_log, &spec.logs.write_lat_log}) {
      if (!prefix->empty()) *prefix += own;
    }
    if (spec.filenames.empty() && spec.uri.empty() && !default_benchmark) {
      job.filename_format =
          (job.filename_format.empty() ? "$jobname.$jobnum.$filenum" : job.filename_format) + own;
    }
  }
  if (cluster.log_per_rank && cluster.hist_prefix.empty()) {
    throw stats::UsageError("--log_per_rank: give --write_hist_log=PREFIX too");
  }
  if (rank != 0) {
    plan.run.live_format = stats::LiveFormat::kNone;
    plan.run.sla.clear();
    plan.run.prometheus.clear();
    plan.run.prometheus_linger_ns = 0;
    plan.run.output.clear();
  }
  return plan;
}

}  // namespace iotail::mpi
