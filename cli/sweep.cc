// iotail sweep: the highest rate at which every SLA target holds. Takes `iotail run`'s options (the
// workload, the target) plus --sla and its own: steps of --step_time at a fixed rate in the open
// loop (cli/sweep_step.h: each through the run assembly), first an exponential probe (doubling
// from --start_rate until a step fails, or quartering while the first fails, down to --min_rate),
// then a bisection between the highest passing and the lowest failing rate until they are within
// --resolution of each other, then a confirming step at the passing rate (lowered by the
// resolution, at most three times, while it does not confirm). A step that fails on latency alone
// is run again (--retries, default once) and the rate fails only if every run fails: on a shared
// host one stall of tens of ms puts a step's p99 over the target, whatever its rate. Output: a line
// per step and the capacity (cli/sweep_report.h), or JSON with --output-format=json. Exit status: 0
// with a capacity; 3 when no rate meets the SLA; 2 on bad options; 1 when a step counted I/O
// errors; 128 + signal when stopped.
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

#include "cli/commands.h"
#include "cli/option_values.h"
#include "cli/run_options.h"
#include "cli/stop_signals.h"
#include "cli/sweep_report.h"
#include "cli/sweep_step.h"
#include "stats/core/errors.h"
#include "stats/core/sla.h"
#include "stats/util/output_file.h"

namespace iotail::cli {
namespace {

constexpr int kExitNoRate = 3;
constexpr int kConfirmTries = 3;

struct SweepSettings {
  SweepStepSettings step;
  // --resolution: the bisection stops when the bracket is this fraction of its upper rate.
  double resolution = 0.02;
  // --start_rate, --min_rate, --max_rate: I/Os per second, summed over the clones.
  double start_rate = 100;
  double min_rate = 10;
  double max_rate = 1e7;
  int retries = 1;  // --retries: runs again of a step that fails on latency alone
};

constexpr std::string_view kSweepUsage =
    "usage: iotail sweep --sla TARGET [sweep options] [iotail run options]\n\n"
    "Finds the highest rate (IOPS, open loop, latency from each I/O's intended start) at which\n"
    "every --sla target holds over a whole step: an exponential probe, a bisection, a confirming\n"
    "step. The workload is iotail run's options (iotail run --help); each step sets rate_iops\n"
    "(the rate R split over the job clones, per direction as fio's), runtime, time_based and\n"
    "ramp_time. Exit status 3 when no rate meets the SLA.\n\n"
    "sweep options:\n"
    "  --sla TARGET          [read|write|trim|all:]p99<=10ms, mean<2ms, max<1s (repeatable)\n"
    "  --step_time TIME      recorded time of each step (default 4s)\n"
    "  --ramp_time TIME      run but record nothing before each step (default 1s)\n"
    "  --resolution PCT      stop bisecting when the bounds are this close (default 2%)\n"
    "  --start_rate IOPS     first rate of the probe (default 100)\n"
    "  --min_rate IOPS       lowest rate tried when the first step fails (default 10)\n"
    "  --max_rate IOPS       highest rate tried (default 10000000)\n"
    "  --retries N           run a step whose latency failed again, N times at most; the rate\n"
    "                        fails only if every run fails (default 1: a stall of the host\n"
    "                        does not end the probe)\n"
    "  --output-format=json  one JSON document instead of the table (--output FILE: to FILE)\n"
    "  --write_hist_log=P    each step's histogram logs as P.stepN_clat_hist.1.log ...\n";

double ParsePositive(std::string_view text, std::string_view option) {
  size_t used = 0;
  const double v = ParseNumber(text, option, &used);
  if (used != text.size() || !(v > 0)) {
    throw stats::UsageError(fmt::format("{}: expected a positive number, got '{}'", option, text));
  }
  return v;
}

// Takes the sweep's own options out of args (the rest is iotail run's); ramp_time is both.
SweepSettings TakeSweepOptions(CommandArgs args, std::vector<char*>& rest, bool* help) {
  SweepSettings s;
  rest.push_back(args[0]);
  for (size_t i = 1; i < args.size(); ++i) {
    std::string arg = args[i];
    if (arg == "--help" || arg == "-h") *help = true;
    if (!arg.starts_with("--")) {
      rest.push_back(args[i]);
      continue;
    }
    const size_t eq = arg.find('=');
    std::string name = arg.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
    std::replace(name.begin(), name.end(), '-', '_');
    static const std::vector<std::string> kOwn = {
        "step_time", "ramp_time", "resolution", "start_rate", "min_rate", "max_rate", "retries"};
    if (std::find(kOwn.begin(), kOwn.end(), name) == kOwn.end()) {
      rest.push_back(args[i]);
      continue;
    }
    std::string value;
    if (eq != std::string::npos) {
      value = arg.substr(eq + 1);
    } else if (i + 1 < args.size()) {
      value = args[++i];
    } else {
      throw stats::UsageError(fmt::format("--{}: expected a value", name));
    }
    const std::string option = "--" + name;
    if (name == "step_time") {
      s.step.step_ns = ParseTimeNs(value, option);
      if (s.step.step_ns < 100'000'000) {
        throw stats::UsageError(
            fmt::format("{}: expected at least 100ms, got '{}'", option, value));
      }
    } else if (name == "ramp_time") {
      s.step.ramp_ns = ParseTimeNs(value, option);
    } else if (name == "resolution") {
      if (value.ends_with('%')) value.pop_back();
      s.resolution = ParsePositive(value, option) / 100;
      if (s.resolution >= 1) {
        throw stats::UsageError(fmt::format("{}: expected a percentage below 100", option));
      }
    } else if (name == "start_rate") {
      s.start_rate = ParsePositive(value, option);
    } else if (name == "retries") {
      s.retries = static_cast<int>(ParseU32(value, option));
    } else if (name == "min_rate") {
      s.min_rate = ParsePositive(value, option);
    } else {
      s.max_rate = ParsePositive(value, option);
    }
  }
  if (s.min_rate > s.start_rate || s.start_rate > s.max_rate) {
    throw stats::UsageError(
        fmt::format("--min_rate ({}), --start_rate ({}) and --max_rate ({}) must be in that order",
                    s.min_rate, s.start_rate, s.max_rate));
  }
  return s;
}

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

}  // namespace

int SweepCommand(CommandArgs args, std::ostream& out, std::ostream& err) {
  std::vector<char*> rest;
  bool help = false;
  const SweepSettings s = TakeSweepOptions(args, rest, &help);
  if (help) {
    out << kSweepUsage;
    return 0;
  }
  RunPlan plan = ParseRunPlan(rest);
  if (plan.run.help != 0) {
    out << kSweepUsage;
    return 0;
  }
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
  const std::vector<stats::SlaTarget> sla = stats::ParseSlaTargets(plan.run.sla, "--sla");
  const bool json = plan.run.output_format == OutputFormat::kJson ||
                    plan.run.output_format == OutputFormat::kJsonPlus;
  // With --output the report goes to that file, whole or not at all (its path checked now).
  std::unique_ptr<stats::OutputFile> output;
  std::ostringstream buffer;
  if (!plan.run.output.empty()) {
    output = std::make_unique<stats::OutputFile>(plan.run.output, "--output");
  }
  std::ostream& report_out = output ? buffer : out;
  SweepReport report(report_out, json, plan.run.sla, s.step, s.resolution);
  StopSignals signals;
  report.Begin();
  int index = 0;
  bool io_errors = false;
  std::optional<SweepStep> saturated;  // the saturated step of the lowest target
  SweepOutcome outcome = Search(s, [&](const char* phase, double rate) {
    SweepStep step = RunSweepStep(plan, rate, sla, s.step, ++index, err);
    step.phase = phase;
    io_errors = io_errors || step.errors != 0;
    if (step.saturated && (!saturated || step.rate < saturated->rate)) saturated = step;
    report.Step(step);
    if (json) {
      err << fmt::format("iotail sweep: {} {:.0f} IOPS: {}\n", phase, rate, SweepVerdict(step));
    }
    return step;
  });
  if (StopSignals::signal() != 0) {
    err << "iotail sweep: stopped by a signal\n";
    return 128 + StopSignals::signal();
  }
  if (io_errors) {
    err << "iotail sweep: a step counted I/O errors; the sweep stopped there\n";
    return 1;
  }
  if (saturated) {
    outcome.message += fmt::format(
        "\nthe target saturated: asked for {:.0f} IOPS, it achieved {:.0f} ({:.0f}%)",
        saturated->target_iops, saturated->achieved_iops,
        saturated->target_iops > 0 ? 100 * saturated->achieved_iops / saturated->target_iops : 0);
  }
  report.End(outcome);
  if (output) {
    output->Write(buffer.str());
    output->Commit();
  }
  if (!outcome.capacity) {
    err << "iotail sweep: " << outcome.message << '\n';
    return kExitNoRate;
  }
  return 0;
}

}  // namespace iotail::cli
