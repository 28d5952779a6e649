// Stage 2 of the run assembly (cli/run_assembly.h): RunSinks builds and owns every interval sink.
#include <fmt/format.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <thread>

#include "cli/metrics_server.h"
#include "cli/run_assembly.h"
#include "engine/clock.h"
#include "engine/job_targets.h"
#include "stats/report/hist_log_sink.h"
#include "stats/report/live_report.h"
#include "stats/report/prometheus_metrics.h"
#include "stats/report/rate_samples.h"
#include "stats/report/slow_io_log.h"
#include "stats/report/value_log_sink.h"
#include "stats/util/output_file.h"

namespace iotail::cli {

namespace {

// The live lines of a batch: on a terminal a status line redraws in place, as fio's eta line.
stats::LiveReportOptions LiveOptions(const RunSettings& run_opts,
                                     std::span<const engine::JobSpec* const> batch) {
  stats::LiveReportOptions live;
  live.format = run_opts.live_format;
  if (::isatty(STDERR_FILENO) == 1) {
    live.status_line = true;
    winsize size{};
    if (::ioctl(STDERR_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 20) {
      live.status_columns = size.ws_col;
    }
  }
  live.period_ms = static_cast<uint32_t>(
      run_opts.status_interval_ms != 0 ? run_opts.status_interval_ms : batch[0]->logs.hist_msec);
  for (const engine::JobSpec* spec : batch) {
    live.runtime_ns = std::max(live.runtime_ns,
                               spec->runtime_ns != 0 ? spec->runtime_ns + spec->startdelay_ns : 0);
    live.schedule_latency = live.schedule_latency || spec->rates.Limited() || spec->replay.Active();
    for (stats::Direction d : engine::LoggedDirections(*spec)) {
      if (std::find(live.directions.begin(), live.directions.end(), d) == live.directions.end())
        live.directions.push_back(d);
    }
  }
  std::sort(live.directions.begin(), live.directions.end());
  return live;
}

// The options of a job's histogram logs of `kind` (clat, or a stage of --explain): first_delta:
// its first worker's place among the batch's deltas, first_number: its first log's N.
stats::HistLogSinkOptions JobHistLogOptions(const engine::JobSpec& spec, std::string kind,
                                            size_t first_delta, int first_number) {
  stats::HistLogSinkOptions o;
  o.prefix = spec.logs.write_hist_log;
  o.kind = std::move(kind);
  o.workers = static_cast<int>(spec.numjobs);
  o.first_number = first_number;
  o.first_delta = first_delta;
  o.coarseness = spec.logs.hist_coarseness;
  o.groups = spec.logs.hist_groups;
  o.directions = engine::LoggedDirections(spec);
  o.bs = spec.MinBlockSize();
  return o;
}

// A job's histogram logs (nullptr without --write_hist_log).
std::unique_ptr<stats::HistLogSink> HistLogs(const engine::JobSpec& spec, size_t first_delta,
                                             int first_number) {
  if (spec.logs.write_hist_log.empty()) return nullptr;
  stats::HistLogSinkOptions o = JobHistLogOptions(spec, "clat", first_delta, first_number);
  o.lat_logs = spec.rates.Limited();
  return std::make_unique<stats::HistLogSink>(std::move(o));
}

// A replay's PREFIX_recorded_hist.N.log: the latencies its trace recorded (blktrace's dispatch to
// completion), each in the interval its I/O was issued (nullptr without --write_hist_log, or when
// the trace records none).
std::unique_ptr<stats::HistLogSink> RecordedHistLogs(const engine::JobSpec& spec,
                                                     size_t first_delta, int first_number) {
  if (spec.logs.write_hist_log.empty() || spec.replay.trace_recorded == 0) return nullptr;
  stats::HistLogSinkOptions o = JobHistLogOptions(spec, "recorded", first_delta, first_number);
  o.latency = &stats::DirectionSnapshot::recorded;
  return std::make_unique<stats::HistLogSink>(std::move(o));
}

// The cluster's histogram log (RunHooks::cluster_ranks) of `kind`: clat; a stage of --explain
// ("explain_STAGE", over the directions of the jobs that explain, nullptr when none does); or
// "recorded", a replay's trace-recorded latencies (over the jobs whose trace, as this rank planned
// it, records any; nullptr when none does). One file of the sum of every delta (each job of every
// rank), the bs column what `iotail merge` of the ranks' logs writes (the mean bytes per I/O; in
// an interval without I/O, the jobs' smallest block size, as the ranks' own logs write it there).
// nullptr without a prefix.
std::unique_ptr<stats::HistLogSink> ClusterHistLog(const PlannedRun& run,
                                                   const std::string& kind = "clat") {
  const std::string& prefix = run.plan.run.driver.cluster.hist_prefix;
  if (prefix.empty()) return nullptr;
  const bool stage = kind.starts_with("explain_");
  const bool recorded = kind == "recorded";
  stats::HistLogSinkOptions o;
  o.prefix = prefix;
  o.kind = kind;
  o.sum = true;
  o.bs = 0;
  o.coarseness = run.spec(0).logs.hist_coarseness;
  o.groups = run.spec(0).logs.hist_groups;
  for (const RunOptions& job : run.plan.jobs) {
    const engine::JobSpec& spec = job.spec;
    if ((stage && !spec.explain.on) || (recorded && spec.replay.trace_recorded == 0)) continue;
    const auto bs = static_cast<uint32_t>(spec.MinBlockSize());
    o.bs = o.bs == 0 ? bs : std::min(o.bs, bs);
    o.lat_logs = o.lat_logs || (kind == "clat" && spec.rates.Limited());
    for (stats::Direction d : engine::LoggedDirections(spec)) {
      if (std::find(o.directions.begin(), o.directions.end(), d) == o.directions.end())
        o.directions.push_back(d);
    }
  }
  if ((stage || recorded) && o.directions.empty()) return nullptr;  // no job explains, or records
  if (recorded) o.latency = &stats::DirectionSnapshot::recorded;
  std::sort(o.directions.begin(), o.directions.end());
  return std::make_unique<stats::HistLogSink>(std::move(o));
}

// A job's windowed bw/iops/lat logs as fio names them (nullptr when none is asked for).
std::unique_ptr<stats::ValueLogSink> ValueLogs(const engine::JobSpec& spec, size_t first_delta,
                                               int first_number) {
  if (!spec.logs.HasValueLogs()) return nullptr;
  stats::ValueLogSinkOptions o;
  o.bw_prefix = spec.logs.write_bw_log;
  o.iops_prefix = spec.logs.write_iops_log;
  o.lat_prefix = spec.logs.write_lat_log;
  o.max_value = spec.logs.max_value;
  o.log_offset = spec.logs.offset;
  o.log_prio = spec.logs.prio;
  o.period_ms = spec.logs.hist_msec;
  o.workers = static_cast<int>(spec.numjobs);
  o.first_number = first_number;
  o.first_delta = first_delta;
  return std::make_unique<stats::ValueLogSink>(std::move(o));
}

// per_job_logs=0: a job's logs are written under this suffix of their prefix during the batch,
// then appended to the shared file.
constexpr std::string_view kStaged = ".iotail-staged";

// fio's per_job_logs=0 name of a staged log: PREFIX_TYPE.log for PREFIX.iotail-staged_TYPE.N.log
// (every log sink names its files PREFIX_TYPE.N.log).
std::string SharedLogPath(const std::string& staged) {
  const size_t marker = staged.rfind(kStaged);
  std::string type = staged.substr(marker + kStaged.size());  // _TYPE.N.log
  type.erase(type.rfind('.', type.size() - std::string_view(".log").size() - 1));
  return staged.substr(0, marker) + type + ".log";
}

// Appends the file `from` to `to` (created if missing, as fio's fopen "a"; never through a link
// or into anything but a regular file: stats::OpenRegularForAppending) and removes `from`.
void AppendLog(const std::string& from, const std::string& to) {
  std::ifstream in(from, std::ios::binary);
  if (!in) throw std::runtime_error(fmt::format("per_job_logs=0: cannot read '{}'", from));
  std::FILE* out = stats::OpenRegularForAppending(to, "per_job_logs=0");
  char buffer[1 << 16];
  bool ok = true;
  while (ok && in.read(buffer, sizeof buffer).gcount() > 0) {
    const auto n = static_cast<size_t>(in.gcount());
    ok = std::fwrite(buffer, 1, n, out) == n;
  }
  if (std::fclose(out) != 0 || !ok) {
    throw std::runtime_error(fmt::format("per_job_logs=0: cannot append to '{}'", to));
  }
  in.close();
  std::remove(from.c_str());
}

}  // namespace

struct RunSinks::State {
  explicit State(stats::RateSampleSink s) : samples(std::move(s)) {}
  stats::RateSampleSink samples;
  std::unique_ptr<stats::PrometheusMetrics> metrics;
  std::unique_ptr<MetricsServer> metrics_server;
  // The batch's own: live report, logs.
  std::unique_ptr<stats::LiveReport> report;
  std::vector<std::unique_ptr<stats::IntervalSink>> logs;
  std::vector<const stats::HistLogSink*> hist_logs;  // the batch's, among `logs`
  uint64_t clamped_before = 0;                       // by the histogram logs of earlier batches
  // per_job_logs=0: (staged file, shared file) to append after the batch, in job and clone order.
  std::vector<std::pair<std::string, std::string>> shared_logs;
  // A cluster's view (RunHooks::cluster_ranks), for the whole run: fed by the driver.
  std::unique_ptr<stats::LiveReport> cluster_live;
  std::unique_ptr<stats::HistLogSink> cluster_hist;
  std::unique_ptr<stats::HistLogSink> cluster_recorded;  // a replay's, or none
  std::unique_ptr<stats::RateSampleSink> cluster_samples;
  std::vector<std::unique_ptr<stats::HistLogSink>> cluster_explain;  // per stage, or none
  // --explain: the batch's stage logs and slow-I/O logs (driven by engine::ExplainSession).
  std::vector<std::unique_ptr<stats::HistLogSink>> explain_logs;
  std::vector<std::unique_ptr<stats::SlowIoLog>> slow_logs;
  bool explain_said = false;  // why there is no kernel view, said once
};

RunSinks::RunSinks(const PlannedRun& run, const RunHooks& hooks, std::ostream& err)
    : run_(run),
      hooks_(hooks),
      err_(err),
      sla_(stats::ParseSlaTargets(run.plan.run.sla, "--sla"), stats::PercentileMethod::kFio),
      state_(new State(stats::RateSampleSink({}, run.entries.count, run.spec(0).logs.hist_msec))),
      hist_logs_(run.jobs()),
      lat_logs_(run.jobs()),
      value_logs_(run.jobs()) {
  // The SLA verdicts say which latency they are on: olat where a job has a rate, else clat.
  size_t rated = 0;
  for (const RunOptions& job : run.plan.jobs) rated += job.spec.rates.Limited() ? 1 : 0;
  sla_.SetLatency(rated == 0                      ? "clat"
                  : rated == run.plan.jobs.size() ? "olat"
                                                  : "olat of rate-limited jobs, else clat");
  const int ranks = std::max(hooks.cluster_ranks, 1);
  const std::string& address = run.plan.run.prometheus;
  if (!address.empty()) StartMetrics(ranks);
  if (hooks.cluster_ranks > 0) StartClusterView();
}

void RunSinks::StartMetrics(int ranks) {
  const PlannedRun& run = run_;
  const std::string& address = run.plan.run.prometheus;
  // --prometheus: the metrics follow every interval of every batch; the server answers from the
  // text they last rendered (cli/metrics_server.h).
  std::vector<stats::MetricsJob> metric_jobs;
  for (const RunOptions& job : run.plan.jobs) {
    const engine::JobSpec& spec = job.spec;
    stats::MetricsJob m{spec.name, engine::LoggedDirections(spec), {}, {}, spec.replay.Active()};
    for (int d = 0; d < 2; ++d) {
      // Under iotail-mpi every rank runs the job: the cluster's target is the ranks' sum.
      m.rate_iops[d] = spec.rates.dir[d].iops * spec.numjobs * ranks;
      m.rate_bytes_per_s[d] = spec.rates.dir[d].bytes_per_s * spec.numjobs * ranks;
    }
    metric_jobs.push_back(std::move(m));
  }
  state_->metrics =
      std::make_unique<stats::PrometheusMetrics>(std::move(metric_jobs), IOTAIL_VERSION);
  state_->metrics_server = std::make_unique<MetricsServer>(
      address, [m = state_->metrics.get()] { return m->Exposition(); });
  err_ << fmt::format("iotail run: {}Prometheus metrics at http://{}/metrics\n",
                      ranks > 1 ? "the cluster's " : "", state_->metrics_server->address());
}

void RunSinks::StartClusterView() {
  std::vector<const engine::JobSpec*> all;
  for (const RunOptions& job : run_.plan.jobs) all.push_back(&job.spec);
  stats::LiveReportOptions live = LiveOptions(run_.plan.run, all);
  live.scope = fmt::format("{} ranks", hooks_.cluster_ranks);
  state_->cluster_live = std::make_unique<stats::LiveReport>(live, err_, &sla_);
  state_->cluster_hist = ClusterHistLog(run_);
  if (state_->cluster_hist) state_->cluster_recorded = ClusterHistLog(run_, "recorded");
  std::vector<size_t> entry_of(run_.entries.count);
  for (size_t e = 0; e < entry_of.size(); ++e) entry_of[e] = e;
  state_->cluster_samples = std::make_unique<stats::RateSampleSink>(
      std::move(entry_of), run_.entries.count, run_.spec(0).logs.hist_msec);
  ViewSinks view;
  view.per_job.push_back(state_->cluster_live.get());
  for (stats::HistLogSink* log : {state_->cluster_hist.get(), state_->cluster_recorded.get()}) {
    if (log != nullptr) view.hist_logs.push_back(log);
  }
  if (state_->metrics) {
    std::vector<size_t> identity(run_.jobs());
    for (size_t j = 0; j < identity.size(); ++j) identity[j] = j;
    state_->metrics->SetWorkers(std::move(identity));
    view.per_job.push_back(state_->metrics.get());
  }
  view.per_entry = state_->cluster_samples.get();
  for (size_t s = 0; s < stats::kStageCount; ++s) {
    auto log = ClusterHistLog(run_, fmt::format("explain_{}", stats::kStageNames[s]));
    if (!log) break;
    view.explain_logs[s] = log.get();
    state_->cluster_explain.push_back(std::move(log));
  }
  if (hooks_.on_view) hooks_.on_view(view);
}

std::vector<std::string> RunSinks::cluster_logs() const {
  if (!state_->cluster_hist) return {};
  std::vector<std::string> paths = state_->cluster_hist->clat_paths();
  for (const std::string& p : state_->cluster_hist->lat_paths()) paths.push_back(p);
  if (state_->cluster_recorded) {
    for (const std::string& p : state_->cluster_recorded->clat_paths()) paths.push_back(p);
  }
  for (const auto& log : state_->cluster_explain) {
    for (const std::string& p : log->clat_paths()) paths.push_back(p);
  }
  return paths;
}

RunSinks::~RunSinks() {
  if (hooks_.cluster_ranks > 0 && hooks_.on_view) hooks_.on_view({});
  try {
    CloseBatch();  // a run that ended by an exception: its shared logs still get what was logged
  } catch (...) {
  }
}

std::vector<std::string> RunSinks::CloseBatch() {
  state_->clamped_before = clamped_in_logs();
  state_->hist_logs.clear();
  state_->logs.clear();  // closes the batch's files
  state_->explain_logs.clear();
  state_->slow_logs.clear();
  std::vector<std::string> errors;
  for (const auto& [staged, shared] : state_->shared_logs) {
    try {
      AppendLog(staged, shared);
    } catch (const std::exception& e) {
      errors.push_back(e.what());
    }
  }
  state_->shared_logs.clear();
  return errors;
}

void RunSinks::StartBatch(std::span<const size_t> batch_jobs) {
  std::vector<size_t> job_of_worker, entry_of_worker;
  for (size_t j : batch_jobs) {
    job_of_worker.insert(job_of_worker.end(), run_.spec(j).numjobs, j);
    const std::vector<size_t>& entries = run_.entries.entry[j];
    entry_of_worker.insert(entry_of_worker.end(), entries.begin(), entries.end());
  }
  if (hooks_.on_batch) hooks_.on_batch(job_of_worker, entry_of_worker, run_.entries.count);
  state_->samples.SetWorkers(std::move(entry_of_worker));
  if (state_->metrics != nullptr && hooks_.cluster_ranks == 0) {
    state_->metrics->SetWorkers(std::move(job_of_worker));
  }
}

std::vector<stats::IntervalSink*> RunSinks::OpenBatch(std::span<const size_t> batch_jobs,
                                                      int first_worker) {
  std::vector<const engine::JobSpec*> batch;
  for (size_t j : batch_jobs) batch.push_back(&run_.spec(j));
  state_->clamped_before = clamped_in_logs();
  state_->logs.clear();
  state_->hist_logs.clear();
  size_t first_delta = 0;
  for (size_t j : batch_jobs) {
    const engine::JobSpec& own = run_.spec(j);
    // per_job_logs=0: the logs under staged prefixes, appended to the shared files afterwards.
    engine::JobSpec staged_spec;
    if (!own.logs.per_job) {
      staged_spec = own;
      for (std::string* p : {&staged_spec.logs.write_hist_log, &staged_spec.logs.write_bw_log,
                             &staged_spec.logs.write_iops_log, &staged_spec.logs.write_lat_log}) {
        if (!p->empty()) *p += kStaged;
      }
    }
    const engine::JobSpec& spec = own.logs.per_job ? own : staged_spec;
    // The paths as the user sees them: each staged one recorded with its shared file.
    auto shared = [&](const std::vector<std::string>& paths) {
      if (own.logs.per_job) return paths;
      std::vector<std::string> out;
      for (const std::string& path : paths) {
        std::string to = SharedLogPath(path);
        state_->shared_logs.emplace_back(path, to);
        if (std::find(out.begin(), out.end(), to) == out.end()) out.push_back(std::move(to));
      }
      return out;
    };
    const int first_number = first_worker + static_cast<int>(first_delta) + 1;
    if (auto sink = HistLogs(spec, first_delta, first_number)) {
      hist_logs_[j] = shared(sink->clat_paths());
      lat_logs_[j] = shared(sink->lat_paths());
      state_->hist_logs.push_back(sink.get());
      state_->logs.push_back(std::move(sink));
    }
    if (auto sink = RecordedHistLogs(spec, first_delta, first_number)) {
      for (std::string& p : shared(sink->clat_paths())) hist_logs_[j].push_back(std::move(p));
      state_->hist_logs.push_back(sink.get());
      state_->logs.push_back(std::move(sink));
    }
    if (auto sink = ValueLogs(spec, first_delta, first_number)) {
      value_logs_[j] = shared(sink->paths());
      state_->logs.push_back(std::move(sink));
    }
    first_delta += spec.numjobs;
  }
  std::vector<stats::IntervalSink*> sinks;
  for (const auto& log : state_->logs) sinks.push_back(log.get());
  sinks.push_back(&state_->samples);
  if (hooks_.cluster_ranks == 0) {  // a cluster's view is fed by its driver (RunHooks)
    const stats::LiveReportOptions live = LiveOptions(run_.plan.run, batch);
    state_->report = std::make_unique<stats::LiveReport>(live, err_, &sla_);
    sinks.push_back(state_->report.get());
    if (state_->metrics != nullptr) sinks.push_back(state_->metrics.get());
  }
  sinks.insert(sinks.end(), hooks_.sinks.begin(), hooks_.sinks.end());
  return sinks;
}

uint64_t RunSinks::clamped_in_logs() const {
  uint64_t n = state_->clamped_before;
  for (const stats::HistLogSink* sink : state_->hist_logs) n += sink->clamped();
  return n;
}

const std::vector<stats::RateSamples>& RunSinks::samples() const {
  return state_->samples.samples();
}

void RunSinks::Linger(const std::atomic<bool>& stop, std::ostream& out, std::ostream& err) {
  if (state_->metrics_server == nullptr) return;
  const uint64_t linger_ns = run_.plan.run.prometheus_linger_ns;
  if (linger_ns > 0 && !stop.load()) {
    out.flush();
    err << fmt::format("iotail run: serving the final metrics for {:.3g} s more (Ctrl-C ends)\n",
                       static_cast<double>(linger_ns) / 1e9);
    const uint64_t until = engine::Clock::MonotonicNs() + linger_ns;
    while (!stop.load() && engine::Clock::MonotonicNs() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  state_->metrics_server->Stop();
}

stats::ExplainSinks RunSinks::OpenExplain(std::span<const size_t> batch_jobs, int first_worker,
                                          const engine::ExplainOutcome& outcome) {
  if (outcome.asked && !state_->explain_said) {
    state_->explain_said = true;
    if (!outcome.why_not.empty()) {
      err_ << fmt::format(
          "iotail run: --explain: no kernel view: {}; the stages beyond schedule are not known "
          "(the slowest I/Os are kept)\n",
          outcome.why_not);
    }
    for (const std::string& why : outcome.untraced) {
      err_ << fmt::format("iotail run: --explain: not joined to block requests: {}\n", why);
    }
  }
  stats::ExplainSinks out;
  size_t first_delta = 0;
  for (size_t j : batch_jobs) {
    const engine::JobSpec& spec = run_.spec(j);
    const int first_number = first_worker + static_cast<int>(first_delta) + 1;
    if (!spec.logs.write_hist_log.empty() && spec.explain.on) {
      for (size_t s = 0; s < stats::kStageCount; ++s) {
        state_->explain_logs.push_back(std::make_unique<stats::HistLogSink>(JobHistLogOptions(
            spec, fmt::format("explain_{}", stats::kStageNames[s]), first_delta, first_number)));
        out.stages[s].push_back(state_->explain_logs.back().get());
      }
    }
    if (!spec.logs.write_hist_log.empty() && spec.explain.SlowestKept() > 0) {
      stats::SlowIoLogOptions o;
      o.prefix = spec.logs.write_hist_log;
      o.first_number = first_number;
      for (uint32_t clone = 0; clone < spec.numjobs; ++clone) {
        std::vector<std::string> names;
        for (size_t f : engine::FilesOf(spec, spec.filenames.size(), clone)) {
          names.push_back(f < spec.filenames.size() ? spec.filenames[f] : "");
        }
        o.files.push_back(std::move(names));
      }
      state_->slow_logs.push_back(std::make_unique<stats::SlowIoLog>(std::move(o)));
      out.slowest.push_back(state_->slow_logs.back().get());
    }
    first_delta += spec.numjobs;
  }
  // A driver's (RunHooks::explain_sinks): every stage of the batch, logs of its own or not.
  for (size_t s = 0; s < stats::kStageCount; ++s) {
    out.stages[s].insert(out.stages[s].end(), hooks_.explain_sinks[s].begin(),
                         hooks_.explain_sinks[s].end());
  }
  return out;
}

}  // namespace iotail::cli
