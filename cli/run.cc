// `iotail run`: parses options into a JobSpec, runs it (engine::RunJob) and prints the summary.
// Without --filename it runs the short default benchmark on a temporary file it removes after.
// Exit status: 0 on success, 1 when I/O errors were counted or a system call failed, 2 on bad
// options.
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "cli/commands.h"
#include "cli/run_options.h"
#include "engine/io_engine.h"
#include "engine/job_runner.h"
#include "stats/errors.h"
#include "stats/run_summary.h"

namespace iotail::cli {

namespace {

// Removes the default benchmark's file on every way out.
struct TempFile {
  std::string path;
  ~TempFile() {
    if (!path.empty()) unlink(path.c_str());
  }
};

std::string Header(const engine::JobSpec& spec, const engine::RunOutcome& outcome) {
  std::string bs = fmt::format("{}", spec.bs);
  if (spec.bs_min != 0) bs = fmt::format("{}-{}", spec.bs_min, spec.bs_max);
  if (!spec.bssplit.empty()) bs = "split";
  std::string files;
  for (const auto& f : spec.filenames) files += (files.empty() ? "" : ":") + f;
  return fmt::format(
      "iotail run '{}': rw={}, bs={}, iodepth={}, numjobs={}, direct={}, target={} ({} bytes "
      "used), engine={}, clock={}",
      spec.name, engine::RwModeName(spec.rw), bs, spec.iodepth, spec.numjobs, spec.direct ? 1 : 0,
      files, outcome.region_size, outcome.engine_description, outcome.clock_source);
}

}  // namespace

int RunCommand(CommandArgs args, std::ostream& out, std::ostream& err) {
  RunOptions options = ParseRunOptions(args);
  if (options.help) {
    out << RunUsage();
    return 0;
  }
  engine::JobSpec& spec = options.spec;
  if (!options.ioengine_given) {
    const auto available = engine::AvailableEngines();
    if (available.empty()) throw std::runtime_error("no I/O engine can run here");
    spec.ioengine = available.front();
  }

  TempFile temp;
  if (spec.filenames.empty()) {
    options.default_benchmark = true;
    temp.path = fmt::format("iotail-default.{}.tmp", getpid());
    spec.filenames = {temp.path};
    if (!options.size_given) spec.size = 64 << 20;
    if (!options.rw_given) spec.rw = engine::RwMode::kRandRead;
    if (!options.iodepth_given) spec.iodepth = 32;
    if (!options.runtime_given) spec.runtime_ns = 3'000'000'000;
    spec.time_based = true;
    if (spec.write_hist_log.empty()) {
      spec.write_hist_log = "iotail";
      spec.log_hist_msec = 500;
    }
    if (!options.direct_given) spec.direct = true;
    err << fmt::format(
        "iotail run: no --filename: default benchmark on a temporary {} MiB file "
        "'{}' (removed afterwards)\n",
        spec.size >> 20, temp.path);
  }

  engine::RunOutcome outcome;
  try {
    outcome = engine::RunJob(spec);
  } catch (const std::system_error& e) {
    // The default benchmark falls back to buffered I/O where O_DIRECT is not supported.
    if (!options.default_benchmark || !spec.direct || e.code().value() != EINVAL) throw;
    err << "iotail run: O_DIRECT not supported here; using buffered I/O\n";
    spec.direct = false;
    outcome = engine::RunJob(spec);
  }

  stats::RunSummary summary;
  summary.timestamp_s = outcome.start_realtime_ns / 1'000'000'000u;
  summary.runtime_s = outcome.runtime_s;
  summary.percentiles = options.percentiles;
  summary.options = options.given;
  summary.options.emplace_back("ioengine_used", outcome.engine_description);
  summary.options.emplace_back("clocksource", outcome.clock_source);
  summary.header = Header(spec, outcome);
  for (size_t w = 0; w < outcome.per_worker.size(); ++w) {
    summary.jobs.push_back(
        {fmt::format("{}.{}", spec.name, w + 1), std::move(outcome.per_worker[w])});
  }
  const std::string text = options.output_format == OutputFormat::kJson
                               ? stats::FormatJsonSummary(summary)
                               : stats::FormatTextSummary(summary);
  if (options.output.empty()) {
    out << text;
  } else {
    std::ofstream file(options.output);
    file << text;
    file.close();
    if (!file) {
      throw std::system_error(errno, std::generic_category(),
                              fmt::format("write summary '{}'", options.output));
    }
  }
  if (!outcome.log_paths.empty() && options.output_format == OutputFormat::kNormal) {
    std::string logs;
    for (const auto& p : outcome.log_paths) logs += " " + p;
    out << fmt::format("  histogram logs ({} ms, fio format):{}\n", spec.log_hist_msec, logs);
    if (options.default_benchmark) {
      out << fmt::format("  per-interval percentiles: iotail pctiles{}\n", logs);
    }
  }

  uint64_t errors = 0;
  for (const auto& j : summary.jobs) errors += j.totals.TotalErrors();
  if (errors != 0 || outcome.engine_error != 0) {
    err << fmt::format(
        "iotail run: {} I/O error(s){}\n", errors,
        outcome.engine_error != 0
            ? fmt::format(", engine failure {}", stats::ErrnoName(outcome.engine_error))
            : "");
    return 1;
  }
  return 0;
}

}  // namespace iotail::cli
