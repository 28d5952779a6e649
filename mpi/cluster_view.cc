#include "mpi/cluster_view.h"

#include <fmt/format.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "engine/clock.h"
#include "engine/job_runner.h"
#include "stats/core/percentiles.h"

namespace iotail::mpi {

ClusterView::ClusterView(int ranks, const RankArgs& args, std::span<const engine::JobSpec> specs,
                         std::ostream& err)
    : args_(args),
      sla_(stats::ParseSlaTargets(args.sla, "--sla"), stats::PercentileMethod::kFio),
      reducer_(ranks, specs.size(), args.log_hist_msec,
               [this](const ClusterInterval& i) { Emit(i); }) {
  jobs_ = specs.size();
  stats::LiveReportOptions live;
  live.format = args.live_format == "json"   ? stats::LiveFormat::kJson
                : args.live_format == "none" ? stats::LiveFormat::kNone
                                             : stats::LiveFormat::kText;
  live.period_ms =
      static_cast<uint32_t>(args.status_interval_ms ? args.status_interval_ms : args.log_hist_msec);
  live.scope = fmt::format("{} ranks", ranks);
  for (const auto& spec : specs) {
    live.runtime_ns = std::max(live.runtime_ns, spec.runtime_ns + spec.startdelay_ns);
    live.schedule_latency = live.schedule_latency || spec.RateLimited();
    for (stats::Direction d : engine::LoggedDirections(spec)) {
      if (std::find(directions_.begin(), directions_.end(), d) == directions_.end())
        directions_.push_back(d);
    }
  }
  std::sort(directions_.begin(), directions_.end());
  live.directions = directions_;
  if (live.format == stats::LiveFormat::kText && ::isatty(STDERR_FILENO) == 1) {
    live.status_line = true;
    winsize w{};
    if (::ioctl(STDERR_FILENO, TIOCGWINSZ, &w) == 0 && w.ws_col > 20)
      live.status_columns = w.ws_col;
  }
  live_ = std::make_unique<stats::LiveReport>(live, err, &sla_);
  std::vector<size_t> identity(jobs_);
  for (size_t j = 0; j < jobs_; ++j) identity[j] = j;
  if (!args.hist_prefix.empty()) {
    const engine::JobSpec& first = specs.front();
    clat_ = std::make_unique<stats::HistLogWriter>(
        stats::HistLogWriter::ClatLogPath(args.hist_prefix, 1), first.log_hist_coarseness,
        first.log_hist_groups);
    if (live.schedule_latency) {
      lat_ = std::make_unique<stats::HistLogWriter>(
          stats::HistLogWriter::LatLogPath(args.hist_prefix, 1), first.log_hist_coarseness,
          first.log_hist_groups);
    }
    bs_ = first.MinBlockSize();
  }
  if (!args.prometheus.empty()) {
    std::vector<stats::MetricsJob> jobs;
    for (const auto& spec : specs) {
      stats::MetricsJob m{spec.name, engine::LoggedDirections(spec), {}, {}};
      for (int d = 0; d < 2; ++d) {
        // Every rank runs the job: the cluster's target is the ranks' sum.
        m.rate_iops[d] = spec.rate_dir[d].iops * spec.numjobs * ranks;
        m.rate_bytes_per_s[d] = spec.rate_dir[d].bytes_per_s * spec.numjobs * ranks;
      }
      jobs.push_back(std::move(m));
    }
    metrics_ = std::make_unique<stats::PrometheusMetrics>(std::move(jobs), IOTAIL_VERSION);
    metrics_->SetWorkers(identity);
    server_ = std::make_unique<cli::MetricsServer>(
        args.prometheus, [m = metrics_.get()] { return m->Exposition(); });
    err << fmt::format("iotail-mpi: the cluster's Prometheus metrics at http://{}/metrics\n",
                       server_->address());
  }
}

const std::vector<stats::RateSamples>& ClusterView::samples() const {
  static const std::vector<stats::RateSamples> kNone;
  return samples_ ? samples_->samples() : kNone;
}

std::vector<std::string> ClusterView::log_paths() const {
  std::vector<std::string> p;
  if (clat_) p.push_back(clat_->path());
  if (lat_) p.push_back(lat_->path());
  return p;
}

void ClusterView::Close(std::ostream& err) {
  if (clat_) clat_->Close();
  if (lat_) lat_->Close();
  if (server_ && args_.prometheus_linger_ns > 0) {
    err << fmt::format("iotail-mpi: serving the final metrics for {:.3g} s more\n",
                       static_cast<double>(args_.prometheus_linger_ns) / 1e9);
    std::this_thread::sleep_for(std::chrono::nanoseconds(args_.prometheus_linger_ns));
  }
  if (server_) server_->Stop();
}

void ClusterView::Emit(const ClusterInterval& i) {
  const stats::IntervalInfo info{i.time_ms, i.start_ns, i.end_ns, i.final, i.planned_bytes};
  live_->OnInterval(info, i.jobs);
  // Each entry's counts, as the deltas of as many workers (all a rate sample needs).
  const size_t entries = i.entry_counts.size() / kEntryWords;
  if (!samples_) {
    std::vector<size_t> entry_of(entries);
    for (size_t e = 0; e < entries; ++e) entry_of[e] = e;
    samples_ = std::make_unique<stats::RateSampleSink>(std::move(entry_of), entries,
                                                       static_cast<uint32_t>(args_.log_hist_msec));
  }
  entry_deltas_.resize(entries);
  for (size_t e = 0; e < entries; ++e) {
    for (int d = 0; d < stats::kDirectionCount; ++d) {
      entry_deltas_[e].dirs[d].ios = i.entry_counts[e * kEntryWords + 2 * d];
      entry_deltas_[e].dirs[d].bytes = i.entry_counts[e * kEntryWords + 2 * d + 1];
    }
  }
  samples_->OnInterval(info, entry_deltas_);
  if (metrics_) metrics_->OnInterval(info, i.jobs);
  if (!clat_) return;
  stats::RecorderSnapshot all;
  for (const auto& j : i.jobs) all.Add(j);
  for (stats::Direction d : directions_) {
    const auto& dir = all.dirs[stats::DirectionIndex(d)];
    clat_->Write(i.time_ms, d, bs_, dir.clat.hist);
    if (lat_) lat_->Write(i.time_ms, d, bs_, dir.lat.hist);
  }
  clat_->Flush();
  if (lat_) lat_->Flush();
}

}  // namespace iotail::mpi
