#include "cli/sweep_step.h"

#include <fmt/format.h>

#include <optional>
#include <sstream>

#include "cli/run_assembly.h"
#include "cli/run_hooks.h"
#include "cli/stop_signals.h"
#include "stats/core/histogram_layout.h"
#include "stats/core/percentiles.h"

namespace iotail::cli {

RunPlan StepPlan(const RunPlan& base, double rate, const SweepSettings& settings, int index) {
  RunPlan plan = base;
  uint64_t clones = 0;
  for (const RunOptions& job : plan.jobs) clones += job.spec.numjobs;
  for (RunOptions& job : plan.jobs) {
    job.spec.rates.limit = {rate / static_cast<double>(clones), 0};
    job.spec.rates.dir = {};
    job.spec.runtime_ns = settings.step_ns;
    job.spec.time_based = true;
    job.spec.ramp_time_ns = settings.ramp_ns;
    if (!job.spec.logs.write_hist_log.empty()) {
      job.spec.logs.write_hist_log += fmt::format(".step{}", index);
    }
  }
  plan.run.sla.clear();
  plan.run.live_format = stats::LiveFormat::kNone;
  plan.run.output.clear();
  plan.run.prometheus.clear();
  return plan;
}

namespace {

std::string MsWithUnit(double ns) { return fmt::format("{:.3f} ms", ns / 1e6); }

}  // namespace

SweepStep RunSweepStep(const RunPlan& base, double rate, const std::vector<stats::SlaTarget>& sla,
                       const SweepSettings& settings, int index, std::ostream& err) {
  std::ostringstream quiet;
  PlannedRun run = PlanRun(StepPlan(base, rate, settings, index), index == 1 ? err : quiet);
  RunHooks hooks;
  hooks.print_summary = false;
  std::optional<stats::RunSummary> measured;
  hooks.on_summary = [&](stats::RunSummary& summary) { measured = summary; };
  const int status = ExecuteRun(run, hooks, quiet, err);
  return JudgeStep(measured ? &*measured : nullptr, status, rate, sla, settings);
}

SweepStep JudgeStep(const stats::RunSummary* measured, int status, double rate,
                    const std::vector<stats::SlaTarget>& sla, const SweepSettings& settings) {
  SweepStep step;
  step.rate = rate;
  step.stopped = StopSignals::flag().load();
  if (measured == nullptr) {  // stopped during its setup: nothing was measured
    step.stopped = true;
    return step;
  }
  const stats::RunSummary& summary = *measured;
  // Exit status 1 without counted I/O errors: an output (a log) failed.
  uint64_t errors = 0;
  for (const stats::JobTotals& job : summary.jobs) errors += job.totals.TotalErrors();
  step.output_failed = status == 1 && errors == 0;

  // Every clone's olat (intended start to completion), per direction and combined.
  const stats::HistogramLayout layout = stats::HistogramLayout::Recorded();
  std::array<std::vector<double>, stats::kDirectionCount> dirs;
  std::vector<double> all(layout.size(), 0.0);
  for (auto& d : dirs) d.assign(layout.size(), 0.0);
  for (const stats::JobTotals& job : summary.jobs) {
    step.late_ios += job.totals.schedule.late;
    step.errors += job.totals.TotalErrors();
    for (int d = 0; d < stats::kDirectionCount; ++d) {
      const stats::DirectionSnapshot& dir = job.totals.dirs[d];
      step.ios += dir.ios;
      const std::vector<uint64_t>& hist = dir.OlatOrTotal().hist;
      for (size_t i = 0; i < hist.size() && i < all.size(); ++i) {
        dirs[d][i] += static_cast<double>(hist[i]);
        all[i] += static_cast<double>(hist[i]);
      }
    }
  }
  step.target_iops = summary.mode.target_iops;  // all directions alike, else per direction
  for (double t : summary.mode.dir_target_iops) step.target_iops += t;
  step.achieved_iops =
      summary.runtime_s > 0 ? static_cast<double>(step.ios) / summary.runtime_s : 0;
  step.saturated = step.achieved_iops < settings.saturation * step.target_iops;
  const double p[] = {50, 99, 99.9};
  const auto pct = stats::ComputePercentiles(std::span<const double>(all), layout, p,
                                             stats::PercentileMethod::kFio);
  step.p50_ns = pct[0];
  step.p99_ns = pct[1];
  step.p999_ns = pct[2];
  step.max_ns = 0;
  for (const stats::JobTotals& job : summary.jobs) {
    for (const auto& dir : job.totals.dirs) {
      step.max_ns = std::max(step.max_ns, static_cast<double>(dir.OlatOrTotal().max_ns));
    }
  }

  // Where the step's time went (--explain): each stage's mean over the joined I/Os.
  std::array<uint64_t, stats::kStageCount> stage_sum{};
  for (const stats::JobTotals& job : summary.jobs) {
    if (!job.explain) continue;
    for (const stats::ExplainDirection& dir : job.explain->dirs) {
      step.joined += dir.joined;
      for (size_t s = 0; s < stats::kStageCount; ++s) stage_sum[s] += dir.stages[s].sum_ns;
    }
  }
  step.explained = step.joined > 0;
  for (size_t s = 0; s < stats::kStageCount && step.explained; ++s) {
    step.stage_mean_ns[s] = static_cast<double>(stage_sum[s]) / static_cast<double>(step.joined);
  }

  // The SLA on the whole step: each direction with samples, then all combined.
  stats::SlaChecker checker(sla, stats::PercentileMethod::kFio);
  for (int d = 0; d < stats::kDirectionCount; ++d) {
    const std::string_view name = stats::DirectionName(static_cast<stats::Direction>(d));
    checker.Check(0, name, dirs[d], layout);
  }
  checker.Check(0, "all", all, layout);
  for (size_t i = 0; i < sla.size(); ++i) {
    const stats::SlaChecker::Result& r = checker.results()[i];
    if (r.violated == 0) continue;
    step.violations.push_back(fmt::format("{} ({})", sla[i].text, MsWithUnit(r.worst_ns)));
  }
  return step;
}

}  // namespace iotail::cli
