// Stages 3 to 6 of the run assembly (cli/run_assembly.h): the batches, the summary, the outputs and
// the exit status.
#include "cli/run_assembly.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <ctime>
#include <set>
#include <string>
#include <system_error>

#include "cli/build_info.h"
#include "cli/commands.h"
#include "engine/clock.h"
#include "stats/core/errors.h"
#include "stats/report/terse_summary.h"

namespace iotail::cli {

namespace {

// --start_at more than a second ahead: when the run starts, so a long wait is not mistaken for a
// hang (Ctrl-C during the wait stops it: nothing runs).
void AnnounceStart(uint64_t start_at_ms, std::ostream& err) {
  const uint64_t now_ms = engine::Clock::RealtimeNs() / 1'000'000u;
  if (start_at_ms <= now_ms + 1000) return;
  const auto at = static_cast<time_t>(start_at_ms / 1000);
  tm utc{};
  gmtime_r(&at, &utc);
  char when[32];
  std::strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &utc);
  err << fmt::format(
      "iotail run: waiting for --start_at: the run starts at {}.{:03} UTC, in {:.1f} s "
      "(Ctrl-C cancels)\n",
      when, start_at_ms % 1000, static_cast<double>(start_at_ms - now_ms) / 1e3);
}

// One batch (the jobs between two stonewalls) through the engine. The default benchmark falls back
// to buffered I/O where O_DIRECT is not supported.
engine::RunOutcome RunBatch(PlannedRun& run, RunSinks& sinks, const RunHooks& hooks,
                            std::span<const size_t> batch_jobs, int first_worker,
                            engine::ZoneRegistry& zones, const std::atomic<bool>& stop,
                            std::ostream& err) {
  std::vector<engine::JobSpec> batch;
  for (size_t j : batch_jobs) batch.push_back(run.spec(j));
  engine::RunJobsOptions options;
  options.stop = &stop;
  options.first_worker = first_worker;
  options.zones = &zones;
  options.on_output_error = [&err](const std::string& why) {
    err << fmt::format("iotail run: output failed: {} (that output stops; the run goes on)\n", why);
  };
  options.open_sinks = [&] { return sinks.OpenBatch(batch_jobs, first_worker); };
  options.open_explain_sinks = [&](const engine::ExplainOutcome& outcome) {
    return sinks.OpenExplain(batch_jobs, first_worker, outcome);
  };
  options.await_start = hooks.on_ready;
  AnnounceStart(batch[0].start_at_ms, err);
  try {
    return engine::RunJobs(batch, options);
  } catch (const std::system_error& e) {
    if (!run.default_benchmark || !batch[0].direct || e.code().value() != EINVAL) throw;
    err << "iotail run: O_DIRECT not supported here; using buffered I/O\n";
    batch[0].direct = run.plan.jobs[0].spec.direct = false;
    return engine::RunJobs(batch, options);
  }
}

// The whole-disk names behind every target (fio's disk_util, a job's own switch); the null engine
// has none.
std::vector<std::string> TargetDisks(const PlannedRun& run) {
  std::vector<std::string> paths;
  for (size_t j = 0; j < run.jobs(); ++j) {
    const engine::JobSpec& spec = run.spec(j);
    if (spec.ioengine == engine::EngineKind::kNull) continue;  // no file, no disk (as fio)
    if (!run.plan.jobs[j].disk_util) continue;                 // fio's disk_util=0
    paths.insert(paths.end(), spec.filenames.begin(), spec.filenames.end());
  }
  return engine::DisksOf(paths);
}

std::string SignalName(int signal) {
  return sigabbrev_np(signal) != nullptr ? fmt::format("SIG{}", sigabbrev_np(signal))
                                         : fmt::format("signal {}", signal);
}

void AddExplain(const engine::ExplainOutcome& batch, engine::ExplainOutcome& run) {
  if (!batch.asked) return;
  if (!run.asked) {
    run = batch;
    return;
  }
  if (run.attachment.empty()) run.attachment = batch.attachment;
  if (run.why_not.empty()) run.why_not = batch.why_not;
  run.untraced.insert(run.untraced.end(), batch.untraced.begin(), batch.untraced.end());
  run.requests_unmatched += batch.requests_unmatched;
  run.records_dropped += batch.records_dropped;
  run.history.insert(run.history.end(), batch.history.begin(), batch.history.end());
}

}  // namespace

RunResults RunBatches(PlannedRun& run, RunSinks& sinks, const RunHooks& hooks,
                      const std::atomic<bool>& stop, std::ostream& err) {
  RunResults r;
  r.outcomes.resize(run.jobs());
  const std::vector<std::string> disks = TargetDisks(run);
  const std::vector<engine::DiskCounters> disks_before = engine::ReadDiskCounters(disks);
  const uint64_t disks_from_ns = engine::Clock::MonotonicNs();
  int first_worker = 0;
  // zonemode=zbd: a file's zones keep their write pointers from one batch to the next, as fio's.
  engine::ZoneRegistry zones;
  for (const std::vector<size_t>& batch_jobs : run.groups.batches) {
    if (stop.load()) {
      r.stopped = true;
      break;
    }
    sinks.StartBatch(batch_jobs);
    engine::RunOutcome outcome =
        RunBatch(run, sinks, hooks, batch_jobs, first_worker, zones, stop, err);
    for (std::string& e : sinks.CloseBatch()) outcome.output_errors.push_back(std::move(e));
    for (size_t k = 0; k < batch_jobs.size(); ++k) {
      const auto& shortfalls = outcome.jobs[k].rate_shortfalls;
      r.rate_shortfalls.insert(r.rate_shortfalls.end(), shortfalls.begin(), shortfalls.end());
      r.outcomes[batch_jobs[k]] = std::move(outcome.jobs[k]);
      first_worker += static_cast<int>(run.spec(batch_jobs[k]).numjobs);
    }
    if (r.start_realtime_ns == 0) {
      r.start_realtime_ns = outcome.start_realtime_ns;
      r.start_at_ms = outcome.start_at_ms;
      r.start_skew_ns = outcome.start_skew_ns;
    }
    r.runtime_s += outcome.runtime_s;
    r.output_errors.insert(r.output_errors.end(), outcome.output_errors.begin(),
                           outcome.output_errors.end());
    r.stopped = r.stopped || outcome.stopped;
    r.clock_source = outcome.clock_source;
    AddExplain(outcome.explain, r.explain);
  }
  r.disks = engine::DiskDelta(disks_before, engine::ReadDiskCounters(disks));
  r.disks_ms = static_cast<double>(engine::Clock::MonotonicNs() - disks_from_ns) / 1e6;
  return r;
}

stats::RunSummary Summarise(const PlannedRun& run, RunResults& results, const RunSinks& sinks,
                            int signal) {
  const std::vector<RunOptions>& jobs = run.plan.jobs;
  stats::RunSummary summary;
  const double ms = results.disks_ms;
  for (const auto& d : results.disks) {
    summary.disk_util.push_back({d.name, d.read_ios, d.write_ios, d.read_merges, d.write_merges,
                                 d.read_ticks, d.write_ticks, d.in_queue,
                                 ms > 0 ? std::min(100.0, 100.0 * d.io_ticks / ms) : 0});
  }
  summary.timestamp_s = results.start_realtime_ns / 1'000'000'000u;
  summary.timestamp_ms = results.start_realtime_ns / 1'000'000u;
  summary.report_time_s = static_cast<uint64_t>(time(nullptr));
  summary.pid = getpid();
  const BuildInfo& build = GetBuildInfo();
  summary.version = fmt::format("iotail-{}", build.version);
  summary.build = {build.version, build.commit, build.tree, build.compiler, build.features};
  summary.runtime_s = results.runtime_s;
  summary.elapsed_s = results.disks_ms / 1e3;  // since the batches began (fio's genesis)
  summary.percentiles = jobs[0].percentiles;
  summary.options = jobs.size() == 1 ? jobs[0].given : run.plan.global;
  for (const auto& g : run.plan.run.given) summary.options.push_back(g);
  summary.options.emplace_back("ioengine_used", results.outcomes[0].engine_description);
  summary.options.emplace_back("clocksource", results.clock_source);
  for (size_t j = 0; j < jobs.size(); ++j) {
    if (results.outcomes[j].per_worker.empty()) continue;  // never ran
    summary.header +=
        (summary.header.empty() ? "" : "\n") +
        Header(run.spec(j), results.outcomes[j], results.clock_source, run.groups.groupid[j]);
  }
  summary.mode = Mode(run.Specs());
  for (const RunOptions& job : jobs) {
    const engine::replay::ReplaySpec& r = job.spec.replay;
    if (r.Active() && !summary.replay.on) {
      summary.replay = {true,      r.read_iolog,     r.trace_ios,
                        r.span_ns, r.trace_recorded, job.spec.explain.on};
    }
  }
  if (results.stopped && signal != 0) summary.interrupted_by = SignalName(signal);
  summary.start_at_ms = results.start_at_ms;
  summary.start_skew_ns = results.start_skew_ns;
  summary.sla = &sinks.sla();
  summary.jobs = SummaryJobs(jobs, results.outcomes, run.groups, run.entries, sinks.samples());
  const engine::ExplainOutcome& e = results.explain;
  summary.explain = {e.asked, e.attachment, e.why_not, e.requests_unmatched, e.records_dropped, {}};
  if (summary.sla != nullptr) summary.explain.sla = stats::SlaStageGrowth(e.history, *summary.sla);
  return summary;
}

void WriteOutputs(const PlannedRun& run, stats::RunSummary& summary, const RunResults& results,
                  const RunSinks& sinks, const RunHooks& hooks, stats::OutputFile* summary_file,
                  std::ostream& out, std::ostream& err) {
  if (!hooks.print_summary) return;
  std::vector<OutputFormat> formats = run.plan.run.output_formats;
  if (formats.empty()) formats.push_back(OutputFormat::kNormal);
  std::string text;
  for (const OutputFormat format : formats) {
    if (format == OutputFormat::kNormal) {
      text += stats::FormatTextSummary(summary);
    } else if (format == OutputFormat::kTerse) {
      text += stats::FormatTerseSummary(summary);
    } else {
      summary.json_bins = format == OutputFormat::kJsonPlus;
      text += stats::FormatJsonSummary(summary);
    }
  }
  if (summary_file == nullptr) {
    out << text;
  } else {
    summary_file->Write(text);
    summary_file->Commit();
  }
  const bool normal = formats.size() == 1 && formats[0] == OutputFormat::kNormal;
  std::string hist, lat, value;
  std::set<std::string> listed;  // a shared log (per_job_logs=0) is listed once
  for (size_t j = 0; j < run.jobs(); ++j) {
    for (const auto& p : sinks.hist_logs()[j]) hist += listed.insert(p).second ? " " + p : "";
    for (const auto& p : sinks.lat_logs()[j]) lat += listed.insert(p).second ? " " + p : "";
    for (const auto& p : sinks.value_logs()[j]) value += listed.insert(p).second ? " " + p : "";
  }
  const uint32_t period = run.spec(0).logs.hist_msec;
  if (const auto cluster = sinks.cluster_logs(); normal && !cluster.empty()) {
    out << fmt::format(
        "  the cluster's histogram logs ({} ms, fio format, every rank summed): {}\n", period,
        fmt::join(cluster, " "));
  }
  if (normal && !value.empty()) {
    out << fmt::format("  fio bw/iops/lat logs ({} ms windows):{}\n", period, value);
  }
  if (normal && !hist.empty()) {
    out << fmt::format("  histogram logs ({} ms, fio format):{}\n", period, hist);
    if (!lat.empty()) out << fmt::format("  lat (intended start) histogram logs:{}\n", lat);
    if (run.default_benchmark)
      out << fmt::format("  per-interval percentiles: iotail pctiles{}\n", hist);
  }
  if (const uint64_t clamped = sinks.clamped_in_logs(); clamped > 0) {
    err << fmt::format(
        "iotail run: note: {} I/O(s) took 17.18 s or more, above the top of fio's 29-group "
        "histogram: the logs count them in their last bucket, as fio's do (the summary is exact); "
        "--log_hist_groups=59 logs them exactly\n",
        clamped);
  }
  for (size_t j = 0; j < run.jobs(); ++j) {
    const engine::JobSpec& spec = run.spec(j);
    if (spec.verify.kind == engine::VerifyKind::kNone) continue;
    const engine::JobOutcome& o = results.outcomes[j];
    if (!o.verify_failure.empty()) {
      err << fmt::format("iotail run: job '{}': verify ({}) failed at {}\n", spec.name,
                         engine::VerifyKindName(spec.verify.kind), o.verify_failure);
    } else if (normal) {
      out << fmt::format("  verify ({}) of job '{}': {} block(s) {}, all as written\n",
                         engine::VerifyKindName(spec.verify.kind), spec.name, o.verified_blocks,
                         spec.HasWrites() ? "read back and checked" : "checked as read");
    }
  }
}

int ExitStatus(const PlannedRun& run, const stats::RunSummary& summary, const RunResults& results,
               const RunSinks& sinks, int signal, std::ostream& err) {
  uint64_t errors = 0;
  for (const auto& j : summary.jobs) errors += j.totals.TotalErrors();
  int engine_error = 0;
  std::string lost_uri;  // an nbd job whose connection was lost
  for (size_t j = 0; j < run.jobs(); ++j) {
    const engine::JobSpec& spec = run.spec(j);
    const int e = results.outcomes[j].engine_error;
    if (e != 0 && engine_error == 0) engine_error = e;
    if (spec.ioengine == engine::EngineKind::kNbd && e == ENOTCONN) lost_uri = spec.uri;
  }
  for (const auto& j : summary.jobs) {
    if (j.totals.errors[ENOTCONN] == 0) continue;
    for (const RunOptions& job : run.plan.jobs) {
      const engine::JobSpec& spec = job.spec;
      if (spec.name == j.name && spec.ioengine == engine::EngineKind::kNbd) lost_uri = spec.uri;
    }
  }
  for (size_t j = 0; j < run.jobs(); ++j) {
    if (results.outcomes[j].per_worker.empty() && results.stopped) {
      err << fmt::format("iotail run: job '{}' did not run: the run was stopped before it began\n",
                         run.spec(j).name);
    }
  }
  for (size_t j = 0; j < run.jobs(); ++j) {
    if (const uint64_t n = results.outcomes[j].short_reads; n != 0) {
      err << fmt::format(
          "iotail run: job '{}': {} read(s) met the end of the file and completed short, counted "
          "with the bytes they brought (fio's rule on asynchronous engines)\n",
          run.spec(j).name, n);
    }
  }
  for (const std::string& why : results.output_errors) {
    err << fmt::format("iotail run: an output failed during the run: {}\n", why);
  }
  // --hipri on a file the kernel cannot poll (FUSE, NFS, tmpfs): every I/O fails with EOPNOTSUPP.
  for (const auto& j : summary.jobs) {
    if (j.totals.errors[EOPNOTSUPP] == 0) continue;
    for (const RunOptions& job : run.plan.jobs) {
      const engine::JobSpec& spec = job.spec;
      if (spec.name != j.name || !spec.engine_options.hipri) continue;
      err << fmt::format(
          "iotail run: job '{}': --hipri: the target refused polled I/O (EOPNOTSUPP): it needs a "
          "block device with poll queues or a file system on one (ext4, xfs, btrfs), not FUSE, "
          "NFS or tmpfs\n",
          j.name);
      break;
    }
  }
  // I/Os given up by a stopping run (their engine could abandon them: nbd): errors, but the
  // consequence of the stop, so an interrupted run still exits 128 + signal.
  uint64_t abandoned = 0;
  for (const engine::JobOutcome& o : results.outcomes) abandoned += o.abandoned_ios;
  if (abandoned != 0) {
    err << fmt::format(
        "iotail run: {} I/O(s) still in flight {:g} s after the run began to stop were given up "
        "(the target stopped answering?), counted as ETIMEDOUT\n",
        abandoned, static_cast<double>(engine::Worker::kStopGraceNs) / 1e9);
  }
  if (!results.rate_shortfalls.empty()) {
    // fio ends only the clone that falls short; the others ran on.
    for (const std::string& why : results.rate_shortfalls) {
      err << fmt::format("iotail run: {}; that job ended (EIO)\n", why);
    }
    return 1;
  }
  if (errors > abandoned || engine_error != 0) {
    std::string why;
    if (engine_error != 0) {
      why = fmt::format(", engine failure {} ({})", stats::ErrnoName(engine_error),
                        std::strerror(engine_error));
    }
    if (!lost_uri.empty()) why += fmt::format(": the connection to '{}' was lost", lost_uri);
    err << fmt::format("iotail run: {} I/O error(s){}\n", errors, why);
    return 1;
  }
  if (!results.output_errors.empty()) return 1;
  if (!summary.interrupted_by.empty()) {
    err << fmt::format("iotail run: interrupted by {}\n", summary.interrupted_by);
    return 128 + signal;
  }
  if (abandoned != 0) return 1;
  if (sinks.sla().AnyViolated()) {
    err << "iotail run: SLA violated\n";
    return kExitSlaViolated;
  }
  return 0;
}

}  // namespace iotail::cli
