// `iotail run`: parses options into a JobSpec, runs it (engine::RunJob) and prints the summary.
// Without --filename it runs the short default benchmark on a temporary file it removes after.
// While it runs, the live report (stats/live_report.h) writes one line per status interval to
// stderr, so stdout carries only the summary; --sla targets are checked on every status interval.
// SIGINT and SIGTERM stop the run cleanly: workers stop issuing, reap what is in flight, the final
// partial interval is logged, and the summary is printed; a second signal kills at once.
// Exit status: 0 on success; 1 when I/O errors were counted or a system call failed; 2 on bad
// options; 130 (SIGINT) or 143 (SIGTERM) when interrupted; 3 when an --sla target was violated.
// Precedence when several apply: 1, then 130/143, then 3.
#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "cli/commands.h"
#include "cli/run_options.h"
#include "engine/io/io_engine.h"
#include "engine/job_runner.h"
#include "engine/rate_schedule.h"
#include "stats/core/errors.h"
#include "stats/core/sla.h"
#include "stats/report/live_report.h"
#include "stats/report/run_summary.h"
#include "stats/util/output_file.h"

namespace iotail::cli {

namespace {

constexpr int kExitSlaViolated = 3;

std::atomic<bool> g_stop{false};
std::atomic<int> g_signal{0};

extern "C" void OnStopSignal(int sig) {
  g_signal.store(sig);
  g_stop.store(true);
}

// Installs the SIGINT/SIGTERM handlers for one run and restores the previous ones after.
class StopSignals {
 public:
  StopSignals() {
    g_stop = false;
    g_signal = 0;
    struct sigaction sa {};
    sa.sa_handler = OnStopSignal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESETHAND;  // a second signal takes the default action (terminates)
    sigaction(SIGINT, &sa, &old_int_);
    sigaction(SIGTERM, &sa, &old_term_);
  }
  ~StopSignals() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

std::string RateText(const engine::RateLimit& r) {
  return r.iops > 0 ? fmt::format("{:.{}f} IOPS", r.iops, r.iops == std::floor(r.iops) ? 0 : 2)
                    : fmt::format("{:.1f} MiB/s", r.bytes_per_s / (1 << 20));
}

stats::RunMode Mode(const engine::JobSpec& spec) {
  stats::RunMode m;
  if (!spec.RateLimited()) {
    m.description = fmt::format("burst (closed loop, iodepth {} per job)", spec.iodepth);
    return m;
  }
  m.rate_limited = true;
  m.process = spec.rate_poisson ? "poisson" : "linear";
  m.late_threshold_ns = engine::kLateThresholdNs;
  m.target_iops = spec.rate.iops;
  m.target_bw = spec.rate.bytes_per_s;
  std::string target = RateText(spec.rate);
  if (spec.RatePerDirection()) {
    target.clear();
    for (int d = 0; d < 2; ++d) {
      m.dir_target_iops[d] = spec.rate_dir[d].iops;
      m.dir_target_bw[d] = spec.rate_dir[d].bytes_per_s;
      if (spec.rate_dir[d].Any()) {
        target += fmt::format("{}{} {}", target.empty() ? "" : ", ", d == 0 ? "read" : "write",
                              RateText(spec.rate_dir[d]));
      }
    }
  }
  m.description = fmt::format(
      "rate-limited open loop ({}, {} over {} job(s), at most iodepth {} per job in flight)",
      m.process, target, spec.numjobs, spec.iodepth);
  return m;
}

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
  if (!spec.uri.empty()) files = spec.uri;
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
  if (!options.ioengine_given && !spec.uri.empty()) {
    spec.ioengine = engine::EngineKind::kNbd;
  } else if (!options.ioengine_given) {
    const auto available = engine::AvailableEngines();
    if (available.empty()) throw std::runtime_error("no I/O engine can run here");
    spec.ioengine = available.front();
  }

  TempFile temp;
  if (spec.filenames.empty() && spec.uri.empty()) {
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

  // The status interval rides on the interval clock: the log period, or a multiple of it.
  if (options.status_interval_ms != 0) {
    if (spec.write_hist_log.empty()) {
      spec.log_hist_msec = static_cast<uint32_t>(options.status_interval_ms);
    } else if (options.status_interval_ms % spec.log_hist_msec != 0) {
      throw stats::UsageError(fmt::format(
          "--status-interval: with histogram logs it must be a multiple of --log_hist_msec ({})",
          spec.log_hist_msec));
    }
  }
  if (const std::string note = spec.Normalize(); !note.empty()) err << note << "\n";
  spec.Validate();
  stats::SlaChecker sla(stats::ParseSlaTargets(options.sla, "--sla"),
                        stats::PercentileMethod::kFio);
  stats::LiveReportOptions live;
  live.format = options.live_format;
  live.period_ms = static_cast<uint32_t>(
      options.status_interval_ms != 0 ? options.status_interval_ms : spec.log_hist_msec);
  live.runtime_ns = spec.runtime_ns;
  live.schedule_latency = spec.RateLimited();
  live.directions = engine::LoggedDirections(spec);

  // The summary file is checked and created (as a temporary beside it) before the run, so a wrong
  // path is found now rather than after the run; it replaces the destination only when complete.
  std::unique_ptr<stats::OutputFile> summary_file;
  if (!options.output.empty()) {
    summary_file = std::make_unique<stats::OutputFile>(options.output, "--output");
  }

  StopSignals signals;
  engine::RunOutcome outcome;
  std::unique_ptr<stats::LiveReport> report;
  auto run = [&] {
    // A fresh report and checker for each attempt (the default benchmark may run twice).
    sla = stats::SlaChecker(stats::ParseSlaTargets(options.sla, "--sla"),
                            stats::PercentileMethod::kFio);
    report = std::make_unique<stats::LiveReport>(live, err, &sla);
    stats::IntervalSink* const sinks[] = {report.get()};
    return engine::RunJob(spec, sinks, &g_stop, [&err](const std::string& why) {
      err << fmt::format("iotail run: output failed: {} (that output stops; the run goes on)\n",
                         why);
    });
  };
  try {
    outcome = run();
  } catch (const stats::Interrupted& e) {
    err << fmt::format("iotail run: {}; nothing was run\n", e.what());
    return 128 + (g_signal.load() != 0 ? g_signal.load() : SIGINT);
  } catch (const std::system_error& e) {
    // The default benchmark falls back to buffered I/O where O_DIRECT is not supported.
    if (!options.default_benchmark || !spec.direct || e.code().value() != EINVAL) throw;
    err << "iotail run: O_DIRECT not supported here; using buffered I/O\n";
    spec.direct = false;
    outcome = run();
  }
  const int signal = g_signal.load();

  stats::RunSummary summary;
  summary.timestamp_s = outcome.start_realtime_ns / 1'000'000'000u;
  summary.runtime_s = outcome.runtime_s;
  summary.percentiles = options.percentiles;
  summary.options = options.given;
  summary.options.emplace_back("ioengine_used", outcome.engine_description);
  summary.options.emplace_back("clocksource", outcome.clock_source);
  summary.header = Header(spec, outcome);
  summary.mode = Mode(spec);
  if (outcome.stopped && signal != 0)
    summary.interrupted_by = sigabbrev_np(signal) != nullptr
                                 ? fmt::format("SIG{}", sigabbrev_np(signal))
                                 : fmt::format("signal {}", signal);
  summary.start_at_ms = spec.start_at_ms;
  summary.start_skew_ns = outcome.start_skew_ns;
  summary.sla = &sla;
  for (size_t w = 0; w < outcome.per_worker.size(); ++w) {
    const stats::CpuUsage cpu = w < outcome.cpu.size() ? outcome.cpu[w] : stats::CpuUsage{};
    summary.jobs.push_back(
        {fmt::format("{}.{}", spec.name, w + 1), std::move(outcome.per_worker[w]), cpu});
  }
  const std::string text = options.output_format == OutputFormat::kJson
                               ? stats::FormatJsonSummary(summary)
                               : stats::FormatTextSummary(summary);
  if (summary_file == nullptr) {
    out << text;
  } else {
    summary_file->Write(text);
    summary_file->Commit();
  }
  if (!outcome.log_paths.empty() && options.output_format == OutputFormat::kNormal) {
    std::string logs;
    for (const auto& p : outcome.log_paths) logs += " " + p;
    out << fmt::format("  histogram logs ({} ms, fio format):{}\n", spec.log_hist_msec, logs);
    if (!outcome.lat_log_paths.empty()) {
      std::string lat;
      for (const auto& p : outcome.lat_log_paths) lat += " " + p;
      out << fmt::format("  lat (intended start) histogram logs:{}\n", lat);
    }
    if (options.default_benchmark) {
      out << fmt::format("  per-interval percentiles: iotail pctiles{}\n", logs);
    }
  }

  uint64_t errors = 0, lost = 0;
  for (const auto& j : summary.jobs) {
    errors += j.totals.TotalErrors();
    lost += j.totals.errors[ENOTCONN];
  }
  for (const std::string& why : outcome.output_errors) {
    err << fmt::format("iotail run: an output failed during the run: {}\n", why);
  }
  if (!outcome.output_errors.empty() && errors == 0 && outcome.engine_error == 0) return 1;
  if (errors != 0 || outcome.engine_error != 0) {
    std::string why;
    if (outcome.engine_error != 0) {
      why = fmt::format(", engine failure {} ({})", stats::ErrnoName(outcome.engine_error),
                        std::strerror(outcome.engine_error));
    }
    if (spec.ioengine == engine::EngineKind::kNbd &&
        (outcome.engine_error == ENOTCONN || lost != 0)) {
      why += fmt::format(": the connection to '{}' was lost", spec.uri);
    }
    err << fmt::format("iotail run: {} I/O error(s){}\n", errors, why);
    return 1;
  }
  if (summary.interrupted_by.size() > 0) {
    err << fmt::format("iotail run: interrupted by {}\n", summary.interrupted_by);
    return 128 + signal;
  }
  if (sla.AnyViolated()) {
    err << "iotail run: SLA violated\n";
    return kExitSlaViolated;
  }
  return 0;
}

}  // namespace iotail::cli
