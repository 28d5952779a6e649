// iotail sweep: the highest rate at which every SLA target holds. Takes `iotail run`'s options (the
// workload, the target, --sla) and its own (rows of the option table: cli/sweep_options.h): steps
// of --step_time at a fixed rate in the open loop (cli/sweep_step.h: each through the run
// assembly), first an exponential probe (doubling from --start_rate until a step fails, or
// quartering while the first fails, down to --min_rate), then a bisection between the highest
// passing and the lowest failing rate until they are within
// --resolution of each other, then a confirming step at the passing rate (lowered by the
// resolution, at most three times, while it does not confirm). A step that fails on latency alone
// is run again (--retries, default once) and the rate fails only if every run fails: on a shared
// host one stall of tens of ms puts a step's p99 over the target, whatever its rate. Output: a line
// per step and the capacity (cli/sweep_report.h), or JSON with --output-format=json. Exit status: 0
// with a capacity; 3 when no rate meets the SLA; 2 on bad options; 1 when a step counted I/O
// errors or a step's log could not be written; 128 + signal when stopped. A sweep stopped early
// (a signal, I/O errors) still reports every finished step and the highest rate that passed.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <signal.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "cli/command_doc.h"
#include "cli/commands.h"
#include "cli/option_table.h"
#include "cli/run_options.h"
#include "cli/stop_signals.h"
#include "cli/sweep_driver.h"
#include "cli/sweep_options.h"
#include "cli/sweep_report.h"
#include "cli/sweep_step.h"
#include "stats/core/errors.h"
#include "stats/core/sla.h"
#include "stats/util/output_file.h"

namespace iotail::cli {
namespace {

constexpr int kExitNoRate = 3;
constexpr int kConfirmTries = 3;

// The search; `run` runs one step and reports it. Returns the outcome.
SweepOutcome Search(const SweepSettings& s,
                    const std::function<SweepStep(const char*, double)>& run) {
  SweepOutcome outcome;
  std::optional<double> pass, fail;
  std::optional<SweepStep> last;
  auto step = [&](const char* phase, double rate) {
    last = run(phase, rate);
    // A latency failure may be a passing stall of the host: the rate fails only if it fails again
    // (saturation, errors and signals are not retried).
    for (int i = 0; i < s.retries && last->Failed(); ++i) last = run("retry", rate);
    if (last->Pass()) {
      pass = std::max(pass.value_or(0), rate);
      outcome.passed = pass;
    } else {
      fail = std::min(fail.value_or(rate), rate);
    }
    return last->Pass();
  };
  auto stopped = [&] { return last && (last->stopped || last->errors != 0); };
  // Probe: up by doubling while steps pass; down by quartering while the first ones fail.
  double rate = s.start_rate;
  if (step("probe", rate)) {
    while (!stopped() && rate < s.max_rate &&
           step("probe", rate = std::min(2 * rate, s.max_rate))) {
    }
  } else {
    while (!stopped() && rate / 4 >= s.min_rate && !step("probe", rate /= 4)) {
    }
  }
  if (stopped()) return outcome;
  if (!pass) {
    std::string why = last ? SweepVerdict(*last) : "-";
    if (last && !last->violations.empty())
      why = fmt::format("{}", fmt::join(last->violations, ", "));
    outcome.message = rate < s.start_rate
                          ? fmt::format(
                                "no rate meets the SLA: every step from {:.0f} down to {:.0f} IOPS "
                                "failed (at {:.0f}: {})",
                                s.start_rate, rate, rate, why)
                          : fmt::format(
                                "no rate meets the SLA: the step at {:.0f} IOPS failed ({}) and "
                                "--min_rate ({:.0f}) stops the probe there",
                                rate, why, s.min_rate);
    return outcome;
  }
  // Bisect between the highest pass and the lowest fail above it.
  while (fail && *fail > *pass && (*fail - *pass) > s.resolution * *pass && !stopped()) {
    step("bisect", (*pass + *fail) / 2);
  }
  if (stopped()) return outcome;
  // Confirm, lowering by the resolution while it does not hold.
  double candidate = *pass;
  for (int i = 0; i < kConfirmTries && !stopped(); ++i) {
    SweepStep confirm = run("confirm", candidate);
    for (int k = 0; k < s.retries && confirm.Failed(); ++k) confirm = run("retry", candidate);
    last = confirm;
    if (confirm.Pass()) {
      outcome.passed = std::max(*outcome.passed, candidate);
      outcome.capacity = candidate;
      outcome.confirmed = true;
      break;
    }
    candidate *= 1 - s.resolution;
  }
  if (!outcome.capacity) {
    outcome.message = fmt::format(
        "no rate meets the SLA steadily: {:.0f} IOPS passed once but {} confirming steps down to "
        "{:.0f} IOPS failed",
        *pass, kConfirmTries, candidate / (1 - s.resolution));
    return outcome;
  }
  const bool at_max = !fail && *outcome.capacity >= s.max_rate;
  outcome.message = fmt::format(
      "capacity: {:.0f} IOPS (the highest rate at which every SLA target held{}; confirmed){}",
      *outcome.capacity, fail ? fmt::format(", {:.0f} IOPS did not", *fail) : "",
      at_max ? "; the SLA held up to --max_rate, which bounds the search" : "");
  return outcome;
}

// What a sweep that stopped early had found: the steps run and the highest rate that passed.
void StoppedOutcome(SweepOutcome& outcome, const std::string& why, int steps) {
  outcome.capacity.reset();
  outcome.confirmed = false;
  outcome.message = fmt::format(
      "stopped ({}) after {} step(s): {}", why, steps,
      outcome.passed ? fmt::format("the highest rate that passed so far is {:.0f} IOPS (no "
                                   "capacity: the search did not finish)",
                                   *outcome.passed)
                     : std::string("no rate had passed"));
}

}  // namespace

std::vector<stats::SlaTarget> CheckSweepPlan(RunPlan& plan) {
  const SweepSettings& s = plan.run.driver.sweep;
  SweepOrderCheck(s);
  if (!plan.named_jobs && plan.jobs[0].spec.filenames.empty() && plan.jobs[0].spec.uri.empty()) {
    // Not iotail run's default benchmark (a temporary file, logs in the current directory).
    if (plan.jobs[0].spec.ioengine != engine::EngineKind::kNull) {
      throw stats::UsageError(
          "--filename or --uri: the sweep needs a target (it does not run the default "
          "benchmark)");
    }
    plan.named_jobs = true;  // the null engine opens nothing
  }
  if (plan.run.sla.empty()) {
    throw stats::UsageError("--sla: the sweep needs at least one target, e.g. --sla 'p99<=10ms'");
  }
  std::vector<stats::SlaTarget> sla = stats::ParseSlaTargets(plan.run.sla, "--sla");
  // A target on a direction no job does would hold on nothing at every rate (issue 38): refused.
  for (const stats::SlaTarget& t : sla) {
    if (!t.direction) continue;
    const bool done = std::any_of(plan.jobs.begin(), plan.jobs.end(), [&](const RunOptions& j) {
      switch (*t.direction) {
        case stats::Direction::kRead:
          return j.spec.HasReads();
        case stats::Direction::kWrite:
          return j.spec.HasWrites();
        case stats::Direction::kTrim:
          return j.spec.HasTrims();
      }
      return false;
    });
    if (!done) {
      throw stats::UsageError(fmt::format(
          "--sla '{}': no job of the sweep does {}s, so the target would hold on nothing", t.text,
          stats::DirectionName(*t.direction)));
    }
  }
  return sla;
}

int RunSweep(const RunPlan& plan, const StepRunner& run_step, std::ostream& out,
             std::ostream& err) {
  const SweepSettings& s = plan.run.driver.sweep;
  const bool json = plan.run.output_format == OutputFormat::kJson ||
                    plan.run.output_format == OutputFormat::kJsonPlus;
  // With --output the report goes to that file, whole or not at all (its path checked now).
  std::unique_ptr<stats::OutputFile> output;
  std::ostringstream buffer;
  if (!plan.run.output.empty()) {
    output = std::make_unique<stats::OutputFile>(plan.run.output, "--output");
  }
  std::ostream& report_out = output ? buffer : out;
  SweepReport report(report_out, json, plan.run.sla, s);
  StopSignals signals;  // held across the steps: each step's run nests in it
  report.Begin();
  int index = 0;
  bool io_errors = false, output_failed = false;
  std::optional<SweepStep> saturated;  // the saturated step of the lowest target
  SweepOutcome outcome = Search(s, [&](const char* phase, double rate) {
    SweepStep step = run_step(rate, ++index);
    step.phase = phase;
    io_errors = io_errors || step.errors != 0;
    output_failed = output_failed || step.output_failed;
    if (step.saturated && (!saturated || step.rate < saturated->rate)) saturated = step;
    report.Step(step);
    if (json) {
      err << fmt::format("iotail sweep: {} {:.0f} IOPS: {}\n", phase, rate, SweepVerdict(step));
    }
    return step;
  });
  int status = outcome.capacity ? 0 : kExitNoRate;
  if (const int signal = StopSignals::signal(); signal != 0) {
    StoppedOutcome(outcome,
                   sigabbrev_np(signal) != nullptr ? fmt::format("SIG{}", sigabbrev_np(signal))
                                                   : fmt::format("signal {}", signal),
                   index);
    status = 128 + signal;
  } else if (io_errors) {
    StoppedOutcome(outcome, "a step counted I/O errors", index);
    status = 1;
  } else if (saturated) {
    outcome.message += fmt::format(
        "\nthe target saturated: asked for {:.0f} IOPS, it achieved {:.0f} ({:.0f}%)",
        saturated->target_iops, saturated->achieved_iops,
        saturated->target_iops > 0 ? 100 * saturated->achieved_iops / saturated->target_iops : 0);
  }
  if (output_failed && status != 1 && status < 128) {
    err << "iotail sweep: a step's log could not be written (see above)\n";
    status = 1;
  }
  report.End(outcome);
  if (output) {
    output->Write(buffer.str());
    output->Commit();
  }
  if (status != 0) err << "iotail sweep: " << outcome.message << '\n';
  return status;
}

int SweepCommand(CommandArgs args, std::ostream& out, std::ostream& err) {
  ParseContext context;
  context.driver = SweepOptionGroups();
  RunPlan plan = ParseRunPlan(args, context);
  if (plan.run.help != 0) {
    out << (plan.run.help == 3 ? ManPage(SweepDoc()) : SweepUsage());
    return 0;
  }
  const std::vector<stats::SlaTarget> sla = CheckSweepPlan(plan);
  return RunSweep(
      plan,
      [&](double rate, int index) {
        return RunSweepStep(plan, rate, sla, plan.run.driver.sweep, index, err);
      },
      out, err);
}

}  // namespace iotail::cli
