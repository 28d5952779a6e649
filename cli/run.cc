// `iotail run`: parses the options and job files (cli/run_options.h), plans the run and executes
// it through the run assembly (cli/run_assembly.h: PlanRun, then ExecuteRun), which prints the
// summary. Without --filename it runs the short default benchmark on a temporary file it removes
// after. While it runs, the live report (stats/live_report.h) writes one line per status interval
// to stderr, so stdout carries only the summary; --sla targets are checked on every status
// interval. SIGINT and SIGTERM stop the run cleanly: workers stop issuing, reap what is in flight
// (an nbd server's I/Os for 1 s at most: the rest is given up, counted as ETIMEDOUT), the final
// partial interval is logged, and the summary is printed; a second signal kills at once.
// Exit status: 0 on success; 1 when I/O errors were counted or a system call failed; 2 on bad
// options; 130 (SIGINT) or 143 (SIGTERM) when interrupted; 3 when an --sla target was violated.
// Precedence when several apply: 1, then 130/143, then 3.
#include <fmt/format.h>
#include <signal.h>

#include <atomic>

#include "cli/command_doc.h"
#include "cli/commands.h"
#include "cli/option_table.h"
#include "cli/run_assembly.h"
#include "cli/run_hooks.h"
#include "cli/run_options.h"
#include "cli/stop_signals.h"
#include "stats/core/errors.h"
#include "stats/util/output_file.h"

namespace iotail::cli {

int RunCommand(CommandArgs args, std::ostream& out, std::ostream& err) {
  RunPlan plan = ParseRunPlan(args);
  if (plan.run.help != 0) {
    out << (plan.run.help == 2   ? OptionsMarkdown()
            : plan.run.help == 3 ? ManPage(RunDoc())
                                 : RunUsage());
    return 0;
  }
  if (!plan.showcmd.empty()) {
    out << plan.showcmd;
    return 0;
  }
  PlannedRun run = PlanRun(std::move(plan), err);
  if (run.plan.parse_only) {
    err << fmt::format(
        "iotail run: --parse-only: {} job(s) ({} with their clones) in {} group(s), all valid\n",
        run.jobs(), run.clones, run.groups.groupid.back() + 1);
    return 0;
  }
  RunHooks none;
  return ExecuteRun(run, none, out, err);
}

int ExecuteRun(PlannedRun& run, RunHooks& hooks, std::ostream& out, std::ostream& err) {
  StopSignals signals;  // a driver's own (a sweep's) outlives this one
  if (hooks.on_jobs) hooks.on_jobs(run.Specs());
  // The summary file is checked and created (as a temporary beside it) before the run, so a wrong
  // path is found now rather than after the run; it replaces the destination only when complete.
  std::unique_ptr<stats::OutputFile> summary_file;
  if (!run.plan.run.output.empty() && hooks.print_summary) {
    summary_file = std::make_unique<stats::OutputFile>(run.plan.run.output, "--output");
  }
  RunSinks sinks(run, hooks, err);
  RunResults results;
  try {
    results = RunBatches(run, sinks, hooks, StopSignals::flag(), err);
  } catch (const stats::Interrupted& e) {
    err << fmt::format("iotail run: {}; nothing was run\n", e.what());
    return 128 + (StopSignals::signal() != 0 ? StopSignals::signal() : SIGINT);
  }
  const int signal = StopSignals::signal();
  stats::RunSummary summary = Summarise(run, results, sinks, signal);
  if (hooks.on_summary) hooks.on_summary(summary);
  WriteOutputs(run, summary, results, sinks, hooks, summary_file.get(), out, err);
  sinks.Linger(StopSignals::flag(), out, err);
  return ExitStatus(run, summary, results, sinks, signal, err);
}

}  // namespace iotail::cli
