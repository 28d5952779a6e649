#include "cli/sweep_report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>

#include "stats/util/json.h"

namespace iotail::cli {
namespace {

std::string MsCell(double ns) { return std::isfinite(ns) ? fmt::format("{:.3f}", ns / 1e6) : "-"; }
std::string JsonMs(double ns) {
  return std::isfinite(ns) ? fmt::format("{:.6f}", ns / 1e6) : "null";
}

}  // namespace

StageBlame BlameStage(const SweepStep& step, const SweepStep* baseline) {
  if (!step.explained || !step.Failed()) return {};
  const bool against = baseline != nullptr && baseline->explained;
  size_t pick = 0;
  double best = -1;
  double total = 0;
  for (size_t s = 0; s < stats::kStageCount; ++s) {
    total += step.stage_mean_ns[s];
    const double v = step.stage_mean_ns[s] - (against ? baseline->stage_mean_ns[s] : 0.0);
    if (v > best) {
      best = v;
      pick = s;
    }
  }
  StageBlame blame;
  blame.stage = std::string(stats::kStageNames[pick]);
  blame.grew = against;
  const double now_ms = step.stage_mean_ns[pick] / 1e6;
  if (against) {
    blame.text = fmt::format("{} grew most: mean {:.3f} -> {:.3f} ms (vs {:.0f} IOPS)", blame.stage,
                             baseline->stage_mean_ns[pick] / 1e6, now_ms, baseline->rate);
  } else {
    blame.text = fmt::format("{} is most of the mean: {:.3f} ms of {:.3f} ms", blame.stage, now_ms,
                             total / 1e6);
  }
  return blame;
}

std::string SweepVerdict(const SweepStep& step) {
  if (step.stopped) return "stopped";
  if (step.errors != 0) return "I/O errors";
  if (step.saturated) return "saturated";
  return step.violations.empty() ? "pass" : "fail";
}

SweepReport::SweepReport(std::ostream& out, bool json, std::vector<std::string> sla,
                         const SweepSettings& settings)
    : out_(out), json_(json), sla_(std::move(sla)), settings_(settings) {}

void SweepReport::Begin() {
  if (json_) return;
  out_ << fmt::format(
      "iotail sweep: SLA {}; steps of {} s after a {} s ramp; resolution {}%; latency from each "
      "I/O's intended start\n",
      fmt::join(sla_, ", "), settings_.step_ns / 1e9, settings_.ramp_ns / 1e9,
      settings_.resolution * 100);
  out_ << fmt::format("{:<8} {:>10} {:>10} {:>10} {:>9} {:>9} {:>9} {:>9} {:>8}  {}\n", "phase",
                      "rate", "target", "achieved", "p50 ms", "p99 ms", "p99.9 ms", "max ms",
                      "late", "verdict");
  out_.flush();
}

void SweepReport::Step(const SweepStep& step) {
  steps_.push_back(step);
  const StageBlame blame = BlameStage(step, baseline_ ? &*baseline_ : nullptr);
  blames_.push_back(blame);
  if (step.Pass() && step.explained && !baseline_) baseline_ = step;
  if (json_) return;
  std::string verdict = SweepVerdict(step);
  if (!step.violations.empty())
    verdict += ": " + fmt::format("{}", fmt::join(step.violations, ", "));
  if (!blame.text.empty()) verdict += "; " + blame.text;
  if (step.saturated) {
    verdict += fmt::format(" (achieved {:.0f}% of the target)",
                           step.target_iops > 0 ? 100 * step.achieved_iops / step.target_iops : 0);
  }
  out_ << fmt::format("{:<8} {:>10.0f} {:>10.0f} {:>10.1f} {:>9} {:>9} {:>9} {:>9} {:>8}  {}\n",
                      step.phase, step.rate, step.target_iops, step.achieved_iops,
                      MsCell(step.p50_ns), MsCell(step.p99_ns), MsCell(step.p999_ns),
                      MsCell(step.max_ns), step.late_ios, verdict);
  out_.flush();
}

void SweepReport::End(const SweepOutcome& outcome) {
  if (!json_) {
    out_ << outcome.message << '\n';
    return;
  }
  std::string s = "{\"sla\": [";
  for (size_t i = 0; i < sla_.size(); ++i) s += (i ? ", " : "") + stats::JsonString(sla_[i]);
  s += fmt::format("], \"step_time_s\": {}, \"ramp_time_s\": {}, \"resolution_pct\": {},\n",
                   settings_.step_ns / 1e9, settings_.ramp_ns / 1e9, settings_.resolution * 100);
  s += "\"steps\": [";
  for (size_t i = 0; i < steps_.size(); ++i) {
    const SweepStep& st = steps_[i];
    std::string violations;
    for (size_t k = 0; k < st.violations.size(); ++k) {
      violations += (k ? ", " : "") + stats::JsonString(st.violations[k]);
    }
    // --explain: the step's stages, inside its object.
    std::string explain;
    if (st.explained) {
      explain = fmt::format(", \"explain\": {{\"joined\": {}, \"stages_mean_ms\": {{", st.joined);
      for (size_t k = 0; k < stats::kStageCount; ++k) {
        explain += fmt::format("{}\"{}\": {:.6f}", k ? ", " : "", stats::kStageNames[k],
                               st.stage_mean_ns[k] / 1e6);
      }
      explain += "}";
      const StageBlame& b = blames_[i];
      if (!b.stage.empty()) {
        explain += fmt::format(", \"{}\": {}", b.grew ? "stage_grew_most" : "stage_largest",
                               stats::JsonString(b.stage));
      }
      explain += "}";
    }
    s += fmt::format(
        "{}\n{{\"phase\": \"{}\", \"rate\": {:.3f}, \"target_iops\": {:.3f}, \"achieved_iops\": "
        "{:.3f}, \"p50_ms\": {}, \"p99_ms\": {}, \"p99.9_ms\": {}, \"max_ms\": {}, \"ios\": {}, "
        "\"late_ios\": {}, \"saturated\": {}, \"verdict\": {}, \"violations\": [{}]{}}}",
        i ? "," : "", st.phase, st.rate, st.target_iops, st.achieved_iops, JsonMs(st.p50_ns),
        JsonMs(st.p99_ns), JsonMs(st.p999_ns), JsonMs(st.max_ns), st.ios, st.late_ios,
        st.saturated ? "true" : "false", stats::JsonString(SweepVerdict(st)), violations, explain);
  }
  s += fmt::format(
      "\n],\n\"capacity_iops\": {}, \"confirmed\": {}, \"highest_pass_iops\": {}, \"outcome\": "
      "{}}}\n",
      outcome.capacity ? fmt::format("{:.3f}", *outcome.capacity) : "null",
      outcome.confirmed ? "true" : "false",
      outcome.passed ? fmt::format("{:.3f}", *outcome.passed) : "null",
      stats::JsonString(outcome.message));
  out_ << s;
}

}  // namespace iotail::cli
