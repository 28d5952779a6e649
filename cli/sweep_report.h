// The output of `iotail sweep`: a line per step as it ends (text) and the result, or one JSON
// document at the end. Keys of the JSON: sla (targets as given), step_time_s, ramp_time_s,
// resolution_pct, steps[] ({phase, rate, target_iops, achieved_iops, p50_ms, p99_ms, p99.9_ms,
// max_ms, ios, late_ios, saturated, verdict, violations[]}), capacity_iops (null when no rate met
// the SLA), confirmed, highest_pass_iops (the highest rate that passed a step, confirmed or not;
// null if none: what a stopped sweep had found), outcome (a sentence). With --explain each step
// also has explain ({joined, stages_mean_ms: {schedule, submit, queue, device, delivery}, and for a
// step that failed on latency, stage_grew_most}), and a failed step's text verdict names that
// stage: the one whose mean grew most against the sweep's first step that passed, or without one
// yet, the stage that is most of the step's mean. Not thread-safe; one report per stream.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "cli/sweep_step.h"

namespace iotail::cli {

struct SweepOutcome {
  std::optional<double> capacity;  // the highest rate R that met every target
  std::optional<double> passed;    // the highest rate that passed a step (confirmed or not)
  bool confirmed = false;          // a confirming step at that rate met them too
  std::string message;             // what the sweep found, in a sentence
};

// For a step that failed on latency with its stages known (--explain), which stage to name: the
// one whose mean grew most against `baseline` (a passing step's), or without one the largest;
// and the words saying so ("device grew most: mean 0.041 -> 0.512 ms"). Empty when not explained.
struct StageBlame {
  std::string stage;
  bool grew = false;  // against a baseline (else: the largest)
  std::string text;
};
StageBlame BlameStage(const SweepStep& step, const SweepStep* baseline);

class SweepReport {
 public:
  SweepReport(std::ostream& out, bool json, std::vector<std::string> sla,
              const SweepSettings& settings);
  // Writes the header (text).
  void Begin();
  // One step, as it ends (text: its line now).
  void Step(const SweepStep& step);
  void End(const SweepOutcome& outcome);

 private:
  std::ostream& out_;
  bool json_;
  std::vector<std::string> sla_;
  SweepSettings settings_;
  std::vector<SweepStep> steps_;
  std::vector<StageBlame> blames_;     // per step, what BlameStage named
  std::optional<SweepStep> baseline_;  // the first step that passed, explained (--explain)
};

// "pass", "saturated", "stopped", "I/O errors" or "fail".
std::string SweepVerdict(const SweepStep& step);

}  // namespace iotail::cli
