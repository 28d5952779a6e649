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
#include <sys/ioctl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <system_error>
#include <thread>

#include "cli/commands.h"
#include "cli/metrics_server.h"
#include "cli/run_groups.h"
#include "cli/run_hooks.h"
#include "cli/run_options.h"
#include "engine/clock.h"
#include "engine/disk_stats.h"
#include "engine/io/io_engine.h"
#include "engine/job_runner.h"
#include "engine/rate_schedule.h"
#include "stats/core/errors.h"
#include "stats/core/sla.h"
#include "stats/report/live_report.h"
#include "stats/report/prometheus_metrics.h"
#include "stats/report/rate_floor_sink.h"
#include "stats/report/rate_samples.h"
#include "stats/report/run_summary.h"
#include "stats/report/terse_summary.h"
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

// Removes the default benchmark's file on every way out.
struct TempFile {
  std::string path;
  ~TempFile() {
    if (!path.empty()) unlink(path.c_str());
  }
};

}  // namespace

int RunCommand(CommandArgs args, std::ostream& out, std::ostream& err) {
  RunHooks none;
  return RunCommandWith(args, out, err, none);
}

int RunCommandWith(CommandArgs args, std::ostream& out, std::ostream& err, RunHooks& hooks) {
  RunPlan plan = ParseRunPlan(args);
  const RunOptions& run_opts = plan.run;
  if (run_opts.help) {
    out << RunUsage();
    return 0;
  }
  if (!plan.showcmd.empty()) {
    out << plan.showcmd;
    return 0;
  }
  std::vector<RunOptions>& jobs = plan.jobs;
  std::vector<engine::JobSpec> specs;
  for (RunOptions& job : jobs) {
    engine::JobSpec& spec = job.spec;
    if (!job.ioengine_given && !spec.uri.empty()) {
      spec.ioengine = engine::EngineKind::kNbd;
    } else if (!job.ioengine_given) {
      const auto available = engine::AvailableEngines();
      if (available.empty()) throw std::runtime_error("no I/O engine can run here");
      spec.ioengine = available.front();
    }
  }

  // One job without a target: the short default benchmark on a temporary file.
  TempFile temp;
  const bool default_benchmark =
      !plan.named_jobs && jobs[0].spec.filenames.empty() && jobs[0].spec.uri.empty();
  // fio's files: a named job without a target uses NAME.CLONE.FILE (nrfiles per clone, each
  // clone its own), in --directory when given; a --filename list is every clone's. Either way
  // --size is a clone's total, divided among its files, unless --filesize gives each file's.
  for (RunOptions& job : jobs) {
    engine::JobSpec& spec = job.spec;
    if (default_benchmark || !spec.uri.empty()) continue;
    const auto in_directory = [&](const std::string& name) {
      return job.directory.empty() || (!name.empty() && name[0] == '/')
                 ? name
                 : (std::filesystem::path(job.directory) / name).string();
    };
    if (!spec.filenames.empty()) {
      for (std::string& f : spec.filenames) f = in_directory(f);
      if (job.filesize != 0) {
        spec.size = job.filesize;
      } else if (spec.filenames.size() > 1 && spec.size != 0) {
        spec.size = spec.size / spec.filenames.size();
      }
    } else {
      spec.files_per_clone = true;
      // Worker w takes files w, w + numjobs, ... (engine::RunJobs): its own NAME.w.k.
      for (uint32_t k = 0; k < job.nrfiles; ++k) {
        for (uint32_t w = 0; w < spec.numjobs; ++w) {
          spec.filenames.push_back(in_directory(fmt::format("{}.{}.{}", spec.name, w, k)));
        }
      }
      if (job.filesize != 0) {
        spec.size = job.filesize;
      } else if (job.nrfiles > 1 && spec.size != 0) {
        spec.size = spec.size / job.nrfiles;
      }
    }
  }
  if (default_benchmark) {
    RunOptions& job = jobs[0];
    engine::JobSpec& spec = job.spec;
    temp.path = fmt::format("iotail-default.{}.tmp", getpid());
    spec.filenames = {temp.path};
    if (!job.size_given) spec.size = 64 << 20;
    if (!job.rw_given) spec.rw = engine::RwMode::kRandRead;
    if (!job.iodepth_given) spec.iodepth = 32;
    if (!job.runtime_given) spec.runtime_ns = 3'000'000'000;
    spec.time_based = true;
    if (spec.write_hist_log.empty()) {
      spec.write_hist_log = "iotail";
      spec.log_hist_msec = 500;
    }
    if (!job.direct_given) spec.direct = true;
    err << fmt::format(
        "iotail run: no --filename: default benchmark on a temporary {} MiB file "
        "'{}' (removed afterwards)\n",
        spec.size >> 20, temp.path);
  }

  // The status interval rides on the interval clock: the log period, or a multiple of it.
  for (RunOptions& job : jobs) {
    engine::JobSpec& spec = job.spec;
    if (!job.randrepeat) spec.randseed ^= engine::Clock::RealtimeNs() * 0x9e3779b97f4a7c15ull;
    if (const std::string note = SettleLogPeriod(job); !note.empty()) err << note << "\n";
    if (run_opts.status_interval_ms != 0) {
      // The clock ticks at the log period: the status interval's own unless a period was given
      // (then, as with histogram logs, the status interval must be a multiple of it).
      if (spec.write_hist_log.empty() && !job.log_hist_msec_given) {
        spec.log_hist_msec = static_cast<uint32_t>(run_opts.status_interval_ms);
      } else if (run_opts.status_interval_ms % spec.log_hist_msec != 0) {
        throw stats::UsageError(
            fmt::format("--status-interval: it must be a multiple of --log_hist_msec ({})",
                        spec.log_hist_msec));
      }
    }
    if (const std::string note = spec.Normalize(); !note.empty()) err << note << "\n";
    spec.Validate();
    specs.push_back(spec);
  }
  const Groups groups = PlanGroups(jobs);
  if (hooks.on_jobs && !plan.parse_only) hooks.on_jobs(specs);
  if (plan.parse_only) {
    uint32_t clones = 0;
    for (const auto& spec : specs) clones += spec.numjobs;
    err << fmt::format(
        "iotail run: --parse-only: {} job(s) ({} with their clones) in {} group(s), all valid\n",
        jobs.size(), clones, groups.groupid.back() + 1);
    return 0;
  }
  stats::SlaChecker sla(stats::ParseSlaTargets(run_opts.sla, "--sla"),
                        stats::PercentileMethod::kFio);

  // The summary file is checked and created (as a temporary beside it) before the run, so a wrong
  // path is found now rather than after the run; it replaces the destination only when complete.
  std::unique_ptr<stats::OutputFile> summary_file;
  if (!run_opts.output.empty()) {
    summary_file = std::make_unique<stats::OutputFile>(run_opts.output, "--output");
  }

  StopSignals signals;
  // --prometheus: the metrics follow every interval of every batch; the server answers from the
  // text they last rendered (cli/metrics_server.h).
  std::unique_ptr<stats::PrometheusMetrics> metrics;
  std::unique_ptr<MetricsServer> metrics_server;
  if (!run_opts.prometheus.empty()) {
    std::vector<stats::MetricsJob> metric_jobs;
    for (const auto& spec : specs) {
      stats::MetricsJob m{spec.name, engine::LoggedDirections(spec), {}, {}};
      for (int d = 0; d < 2; ++d) {
        m.rate_iops[d] = spec.rate_dir[d].iops * spec.numjobs;
        m.rate_bytes_per_s[d] = spec.rate_dir[d].bytes_per_s * spec.numjobs;
      }
      metric_jobs.push_back(std::move(m));
    }
    metrics = std::make_unique<stats::PrometheusMetrics>(std::move(metric_jobs), IOTAIL_VERSION);
    metrics_server = std::make_unique<MetricsServer>(
        run_opts.prometheus, [m = metrics.get()] { return m->Exposition(); });
    err << fmt::format("iotail run: Prometheus metrics at http://{}/metrics\n",
                       metrics_server->address());
  }
  std::unique_ptr<stats::LiveReport> report;
  std::unique_ptr<stats::RateFloorSink> floor_sink;
  std::string rate_shortfall;
  const Entries entries = PlanEntries(jobs, groups);
  stats::RateSampleSink samples({}, entries.count, specs[0].log_hist_msec);
  // Runs one batch of jobs (those between two stonewalls) together.
  auto run_batch = [&](std::span<const engine::JobSpec> batch, int first_worker) {
    stats::LiveReportOptions live;
    live.format = run_opts.live_format;
    // On a terminal a status line redraws in place, as fio's eta line.
    if (::isatty(STDERR_FILENO) == 1) {
      live.status_line = true;
      winsize size{};
      if (::ioctl(STDERR_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 20) {
        live.status_columns = size.ws_col;
      }
    }
    live.period_ms =
        static_cast<uint32_t>(run_opts.status_interval_ms != 0 ? run_opts.status_interval_ms
                                                               : batch.front().log_hist_msec);
    for (const auto& spec : batch) {
      live.runtime_ns = std::max(live.runtime_ns,
                                 spec.runtime_ns != 0 ? spec.runtime_ns + spec.startdelay_ns : 0);
      live.schedule_latency = live.schedule_latency || spec.RateLimited();
      for (stats::Direction d : engine::LoggedDirections(spec)) {
        if (std::find(live.directions.begin(), live.directions.end(), d) == live.directions.end())
          live.directions.push_back(d);
      }
    }
    std::sort(live.directions.begin(), live.directions.end());
    report = std::make_unique<stats::LiveReport>(live, err, &sla);
    // fio's rate_min / rate_iops_min: a shortfall in a full interval ends the run.
    std::vector<stats::RateFloor> floors;
    size_t worker = 0;
    for (const auto& spec : batch) {
      stats::RateFloor f{spec.name, worker, spec.numjobs, {}, {}};
      for (int d = 0; d < 2; ++d) {
        f.iops[d] = spec.rate_min[d].iops;
        f.bytes_per_s[d] = spec.rate_min[d].bytes_per_s;
      }
      if (f.iops[0] + f.iops[1] + f.bytes_per_s[0] + f.bytes_per_s[1] > 0) floors.push_back(f);
      worker += spec.numjobs;
    }
    floor_sink = std::make_unique<stats::RateFloorSink>(std::move(floors), live.period_ms, &g_stop);
    std::vector<stats::IntervalSink*> sinks = {report.get(), &samples, floor_sink.get(),
                                               metrics.get()};
    sinks.insert(sinks.end(), hooks.sinks.begin(), hooks.sinks.end());
    return engine::RunJobs(
        batch, sinks, &g_stop,
        [&err](const std::string& why) {
          err << fmt::format("iotail run: output failed: {} (that output stops; the run goes on)\n",
                             why);
        },
        first_worker);
  };

  // fio's disk_util: the disks behind the targets, their counters around the whole run.
  std::vector<std::string> target_paths;
  for (const auto& spec : specs) {
    target_paths.insert(target_paths.end(), spec.filenames.begin(), spec.filenames.end());
  }
  const std::vector<std::string> disks = engine::DisksOf(target_paths);
  const std::vector<engine::DiskCounters> disks_before = engine::ReadDiskCounters(disks);
  const uint64_t disks_from_ns = engine::Clock::MonotonicNs();

  std::vector<engine::JobOutcome> outcomes(jobs.size());
  engine::RunOutcome last;
  std::vector<std::string> output_errors;
  double runtime_s = 0;
  uint64_t start_realtime_ns = 0;
  int64_t start_skew_ns = 0;
  int first_worker = 0;
  bool stopped = false;
  for (const std::vector<size_t>& batch_jobs : groups.batches) {
    if (g_stop.load()) break;
    std::vector<engine::JobSpec> batch;
    std::vector<size_t> entry_of_worker;
    for (size_t j : batch_jobs) {
      batch.push_back(specs[j]);
      entry_of_worker.insert(entry_of_worker.end(), entries.entry[j].begin(),
                             entries.entry[j].end());
    }
    if (hooks.on_batch) {
      std::vector<size_t> job_of_worker;
      for (size_t j : batch_jobs) job_of_worker.insert(job_of_worker.end(), specs[j].numjobs, j);
      hooks.on_batch(job_of_worker, entry_of_worker, entries.count);
    }
    samples.SetWorkers(std::move(entry_of_worker));
    if (metrics != nullptr) {
      std::vector<size_t> job_of_worker;
      for (size_t j : batch_jobs) job_of_worker.insert(job_of_worker.end(), specs[j].numjobs, j);
      metrics->SetWorkers(std::move(job_of_worker));
    }
    engine::RunOutcome outcome;
    try {
      outcome = run_batch(batch, first_worker);
    } catch (const stats::Interrupted& e) {
      err << fmt::format("iotail run: {}; nothing was run\n", e.what());
      return 128 + (g_signal.load() != 0 ? g_signal.load() : SIGINT);
    } catch (const std::system_error& e) {
      // The default benchmark falls back to buffered I/O where O_DIRECT is not supported.
      if (!default_benchmark || !batch[0].direct || e.code().value() != EINVAL) throw;
      err << "iotail run: O_DIRECT not supported here; using buffered I/O\n";
      batch[0].direct = specs[0].direct = jobs[0].spec.direct = false;
      outcome = run_batch(batch, first_worker);
    }
    if (floor_sink != nullptr && !floor_sink->shortfall().empty()) {
      rate_shortfall = floor_sink->shortfall();
    }
    for (size_t k = 0; k < batch_jobs.size(); ++k) {
      outcomes[batch_jobs[k]] = std::move(outcome.jobs[k]);
      first_worker += static_cast<int>(batch[k].numjobs);
    }
    if (start_realtime_ns == 0) {
      start_realtime_ns = outcome.start_realtime_ns;
      start_skew_ns = outcome.start_skew_ns;
    }
    runtime_s += outcome.runtime_s;
    output_errors.insert(output_errors.end(), outcome.output_errors.begin(),
                         outcome.output_errors.end());
    stopped = stopped || outcome.stopped;
    last.clock_source = outcome.clock_source;
  }
  const int signal = g_signal.load();

  stats::RunSummary summary;
  const double disk_ms = static_cast<double>(engine::Clock::MonotonicNs() - disks_from_ns) / 1e6;
  for (const auto& d : engine::DiskDelta(disks_before, engine::ReadDiskCounters(disks))) {
    summary.disk_util.push_back({d.name, d.read_ios, d.write_ios, d.read_merges, d.write_merges,
                                 d.read_ticks, d.write_ticks, d.in_queue,
                                 disk_ms > 0 ? std::min(100.0, 100.0 * d.io_ticks / disk_ms) : 0});
  }
  summary.timestamp_s = start_realtime_ns / 1'000'000'000u;
  summary.timestamp_ms = start_realtime_ns / 1'000'000u;
  summary.runtime_s = runtime_s;
  summary.percentiles = jobs[0].percentiles;
  summary.options = plan.global;
  if (jobs.size() == 1) summary.options = jobs[0].given;
  for (const auto& g : run_opts.given) summary.options.push_back(g);
  summary.options.emplace_back("ioengine_used", outcomes[0].engine_description);
  summary.options.emplace_back("clocksource", last.clock_source);
  for (size_t j = 0; j < jobs.size(); ++j) {
    summary.header +=
        (j ? "\n" : "") + Header(specs[j], outcomes[j], last.clock_source, groups.groupid[j]);
  }
  summary.mode = Mode(specs);
  if (stopped && signal != 0)
    summary.interrupted_by = sigabbrev_np(signal) != nullptr
                                 ? fmt::format("SIG{}", sigabbrev_np(signal))
                                 : fmt::format("signal {}", signal);
  summary.start_at_ms = specs[0].start_at_ms;
  summary.start_skew_ns = start_skew_ns;
  summary.sla = &sla;
  summary.jobs = SummaryJobs(jobs, outcomes, groups, entries, samples.samples());
  if (hooks.on_summary) hooks.on_summary(summary);
  std::vector<OutputFormat> formats = run_opts.output_formats;
  if (formats.empty()) formats.push_back(OutputFormat::kNormal);
  std::string text;
  for (const OutputFormat format : formats) {
    switch (format) {
      case OutputFormat::kNormal:
        text += stats::FormatTextSummary(summary);
        break;
      case OutputFormat::kJson:
      case OutputFormat::kJsonPlus:
        summary.json_bins = format == OutputFormat::kJsonPlus;
        text += stats::FormatJsonSummary(summary);
        break;
      case OutputFormat::kTerse:
        text += stats::FormatTerseSummary(summary);
        break;
    }
  }
  if (!hooks.print_summary) {
    text.clear();
  } else if (summary_file == nullptr) {
    out << text;
  } else {
    summary_file->Write(text);
    summary_file->Commit();
  }
  if (metrics_server != nullptr && run_opts.prometheus_linger_ns > 0 && !g_stop.load()) {
    out.flush();
    err << fmt::format("iotail run: serving the final metrics for {:.3g} s more (Ctrl-C ends)\n",
                       static_cast<double>(run_opts.prometheus_linger_ns) / 1e9);
    const uint64_t until = engine::Clock::MonotonicNs() + run_opts.prometheus_linger_ns;
    while (!g_stop.load() && engine::Clock::MonotonicNs() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  if (metrics_server != nullptr) metrics_server->Stop();
  std::string logs, lat, value_logs;
  for (const auto& o : outcomes) {
    for (const auto& p : o.log_paths) logs += " " + p;
    for (const auto& p : o.lat_log_paths) lat += " " + p;
    for (const auto& p : o.value_log_paths) value_logs += " " + p;
  }
  const bool normal =
      formats.size() == 1 && formats[0] == OutputFormat::kNormal && hooks.print_summary;
  if (!value_logs.empty() && normal) {
    out << fmt::format("  fio bw/iops/lat logs ({} ms windows):{}\n", specs[0].log_hist_msec,
                       value_logs);
  }
  if (!logs.empty() && normal) {
    out << fmt::format("  histogram logs ({} ms, fio format):{}\n", specs[0].log_hist_msec, logs);
    if (!lat.empty()) out << fmt::format("  lat (intended start) histogram logs:{}\n", lat);
    if (default_benchmark)
      out << fmt::format("  per-interval percentiles: iotail pctiles{}\n", logs);
  }

  for (size_t j = 0; j < jobs.size(); ++j) {
    if (specs[j].verify == engine::VerifyKind::kNone) continue;
    const engine::JobOutcome& o = outcomes[j];
    if (!o.verify_failure.empty()) {
      err << fmt::format("iotail run: job '{}': verify ({}) failed at {}\n", specs[j].name,
                         engine::VerifyKindName(specs[j].verify), o.verify_failure);
    } else if (normal) {
      out << fmt::format("  verify ({}) of job '{}': {} block(s) {}, all as written\n",
                         engine::VerifyKindName(specs[j].verify), specs[j].name, o.verified_blocks,
                         specs[j].HasWrites() ? "read back and checked" : "checked as read");
    }
  }
  uint64_t errors = 0;
  for (const auto& j : summary.jobs) errors += j.totals.TotalErrors();
  int engine_error = 0;
  std::string lost_uri;
  for (size_t j = 0; j < jobs.size(); ++j) {
    const engine::JobOutcome& o = outcomes[j];
    if (o.engine_error != 0 && engine_error == 0) engine_error = o.engine_error;
    if (specs[j].ioengine == engine::EngineKind::kNbd && o.engine_error == ENOTCONN) {
      lost_uri = specs[j].uri;
    }
  }
  for (const auto& j : summary.jobs) {
    if (j.totals.errors[ENOTCONN] == 0) continue;
    for (const auto& spec : specs) {
      if (spec.name == j.name && spec.ioengine == engine::EngineKind::kNbd) lost_uri = spec.uri;
    }
  }
  for (const std::string& why : output_errors) {
    err << fmt::format("iotail run: an output failed during the run: {}\n", why);
  }
  if (!rate_shortfall.empty()) {
    err << fmt::format("iotail run: {}; the run stopped\n", rate_shortfall);
    return 1;
  }
  if (!output_errors.empty() && errors == 0 && engine_error == 0) return 1;
  if (errors != 0 || engine_error != 0) {
    std::string why;
    if (engine_error != 0) {
      why = fmt::format(", engine failure {} ({})", stats::ErrnoName(engine_error),
                        std::strerror(engine_error));
    }
    if (!lost_uri.empty()) why += fmt::format(": the connection to '{}' was lost", lost_uri);
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
