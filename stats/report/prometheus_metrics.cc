#include "stats/report/prometheus_metrics.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>

#include "stats/core/histogram_layout.h"
#include "stats/core/latency_figures.h"
#include "stats/core/percentiles.h"
#include "stats/core/slc.h"

namespace iotail::stats {

namespace {

constexpr double kGaugePercentiles[] = {50, 90, 99, 99.9, 100};  // 100: the interval's max
constexpr const char* kGaugeLabels[] = {"50", "90", "99", "99.9"};

std::vector<uint64_t> MakeEdges() {
  std::vector<uint64_t> edges = {128};  // buckets 0..127 are exact
  for (int k = 7; k < 36; ++k) {
    for (uint64_t j = 1; j <= 4; ++j)
      edges.push_back((uint64_t{1} << k) + j * (uint64_t{1} << (k - 2)));
  }
  return edges;
}

// For each recorded fine bucket, the histogram slot it counts in (edges.size() is +Inf).
const std::vector<uint16_t>& SlotOfBucket() {
  static const std::vector<uint16_t> slots = [] {
    const auto& edges = PrometheusMetrics::LatencyEdgesNs();
    std::vector<uint16_t> s(kRecordBuckets);
    for (uint32_t i = 0; i < kRecordBuckets; ++i) {
      const uint64_t upper = FineBucketUpper(i);
      s[i] = static_cast<uint16_t>(std::lower_bound(edges.begin(), edges.end(), upper) -
                                   edges.begin());
    }
    return s;
  }();
  return slots;
}

std::string LabelEscape(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') out.push_back('\\');
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out.push_back(c);
  }
  return out;
}

using BufferOut = std::back_insert_iterator<fmt::memory_buffer>;

void Meta(BufferOut o, const char* name, const char* type, const char* help) {
  fmt::format_to(o, "# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
}

}  // namespace

const std::vector<uint64_t>& PrometheusMetrics::LatencyEdgesNs() {
  static const std::vector<uint64_t> edges = MakeEdges();
  return edges;
}

void PrometheusMetrics::Latency::Add(const LatencySnapshot& delta) {
  if (cumulative.empty()) cumulative.assign(LatencyEdgesNs().size() + 1, 0);
  const auto& slots = SlotOfBucket();
  for (size_t i = 0; i < delta.hist.size() && i < slots.size(); ++i) {
    cumulative[slots[i]] += delta.hist[i];
  }
  sum_s += static_cast<double>(delta.sum_ns) / 1e9;
  count += delta.n;
}

PrometheusMetrics::PrometheusMetrics(std::vector<MetricsJob> jobs, std::string version)
    : version_(std::move(version)) {
  for (auto& spec : jobs) {
    Job job;
    rate_limited_ = rate_limited_ || spec.rate_iops[0] + spec.rate_iops[1] +
                                             spec.rate_bytes_per_s[0] + spec.rate_bytes_per_s[1] >
                                         0;
    replay_ = replay_ || spec.replay;
    job.spec = std::move(spec);
    jobs_.push_back(std::move(job));
  }
  Render(0);
}

void PrometheusMetrics::SetWorkers(std::vector<size_t> job_of_worker) {
  job_of_worker_ = std::move(job_of_worker);
}

void PrometheusMetrics::OnInterval(const IntervalInfo& info,
                                   std::span<const RecorderSnapshot> deltas) {
  const HistogramLayout layout = HistogramLayout::Recorded();
  if (run_start_ns_ == 0) run_start_ns_ = info.start_ns;
  // Sum the interval per job and direction, then fold it into the cumulative series.
  std::vector<RecorderSnapshot> per_job(jobs_.size());
  std::vector<bool> seen(jobs_.size(), false);
  for (size_t w = 0; w < deltas.size() && w < job_of_worker_.size(); ++w) {
    const size_t j = job_of_worker_[w];
    if (j >= jobs_.size()) continue;
    per_job[j].Add(deltas[w]);
    seen[j] = true;
  }
  for (size_t j = 0; j < jobs_.size(); ++j) {
    if (!seen[j]) continue;
    Job& job = jobs_[j];
    const RecorderSnapshot& d = per_job[j];
    job.errors += d.TotalErrors();
    job.late += d.schedule.late;
    job.issued += d.schedule.issued;
    job.max_lag_s = std::max(job.max_lag_s, static_cast<double>(d.schedule.max_lag_ns) / 1e9);
    job.in_flight = d.in_flight;  // the workers' levels at the interval's close, summed
    if (d.schedule.lateness.n > 0) job.lateness.Add(d.schedule.lateness);
    for (int k = 0; k < kDirectionCount; ++k) {
      const DirectionSnapshot& dir = d.dirs[k];
      Series& s = job.dirs[k];
      s.ios += dir.ios;
      s.bytes += dir.bytes;
      s.clat.Add(dir.clat);
      if (dir.olat.n > 0) s.lat.Add(dir.olat);  // the schedule latency: olat
      if (dir.clat.n == 0 || dir.clat.hist.empty()) continue;
      const LatencyFigures f =
          ComputeLatencyFigures(std::span<const uint64_t>(dir.clat.hist), layout, kGaugePercentiles,
                                SbkSlcPercentiles(), PercentileMethod::kFio);
      for (size_t p = 0; p < s.pct_s.size(); ++p) s.pct_s[p] = f.percentiles[p] / 1e9;
      s.max_s = f.percentiles.back() / 1e9;
      s.slc1 = f.has_slc ? f.slc.slc1 : 0;
      s.slc2 = f.has_slc ? f.slc.slc2 : 0;
      s.has_interval = true;
    }
  }
  Render(info.end_ns);
}

void PrometheusMetrics::Render(uint64_t end_ns) {
  fmt::memory_buffer buf;
  BufferOut o = std::back_inserter(buf);
  const auto& edges = LatencyEdgesNs();

  Meta(o, "iotail_build_info", "gauge", "iotail's version (always 1).");
  fmt::format_to(o, "iotail_build_info{{version=\"{}\"}} 1\n", LabelEscape(version_));
  if (run_start_ns_ != 0) {  // known from the first interval on
    Meta(o, "iotail_run_start_time_seconds", "gauge",
         "When the run's recording started (Unix epoch seconds).");
    fmt::format_to(o, "iotail_run_start_time_seconds {:.3f}\n",
                   static_cast<double>(run_start_ns_) / 1e9);
    Meta(o, "iotail_last_interval_end_time_seconds", "gauge",
         "End of the last closed interval in these metrics (Unix epoch seconds).");
    fmt::format_to(o, "iotail_last_interval_end_time_seconds {:.3f}\n",
                   static_cast<double>(end_ns) / 1e9);
  }

  // Series of every job and direction the job does.
  auto each = [&](auto&& fn) {
    for (const Job& job : jobs_) {
      for (Direction d : job.spec.directions) {
        fn(job, job.dirs[DirectionIndex(d)],
           fmt::format("jobname=\"{}\",ddir=\"{}\"", LabelEscape(job.spec.name), DirectionName(d)));
      }
    }
  };
  Meta(o, "iotail_io_ops_total", "counter", "Completed I/Os.");
  each([&](const Job&, const Series& s, const std::string& l) {
    fmt::format_to(o, "iotail_io_ops_total{{{}}} {}\n", l, s.ios);
  });
  Meta(o, "iotail_io_bytes_total", "counter", "Bytes transferred by completed I/Os.");
  each([&](const Job&, const Series& s, const std::string& l) {
    fmt::format_to(o, "iotail_io_bytes_total{{{}}} {}\n", l, s.bytes);
  });
  Meta(o, "iotail_io_errors_total", "counter", "I/Os that completed with an error.");
  for (const Job& job : jobs_) {
    fmt::format_to(o, "iotail_io_errors_total{{jobname=\"{}\"}} {}\n", LabelEscape(job.spec.name),
                   job.errors);
  }

  // One histogram series of `name` under labels `l`.
  auto series = [&](const char* name, const std::string& l, const Latency& h) {
    uint64_t running = 0;
    for (size_t e = 0; e < edges.size(); ++e) {
      running += h.cumulative.empty() ? 0 : h.cumulative[e];
      fmt::format_to(o, "{}_bucket{{{},le=\"{}\"}} {}\n", name, l,
                     static_cast<double>(edges[e] - 1) / 1e9, running);
    }
    running += h.cumulative.empty() ? 0 : h.cumulative.back();
    fmt::format_to(o, "{}_bucket{{{},le=\"+Inf\"}} {}\n", name, l, running);
    fmt::format_to(o, "{}_sum{{{}}} {}\n{}_count{{{}}} {}\n", name, l, h.sum_s, name, l, h.count);
  };
  auto histogram = [&](const char* name, const char* help, bool lat) {
    Meta(o, name, "histogram", help);
    each([&](const Job&, const Series& s, const std::string& l) {
      series(name, l, lat ? s.lat : s.clat);
    });
  };
  histogram("iotail_io_latency_seconds",
            "Completion latency (fio's clat: submission to completion); le edges are unions of "
            "fio's buckets.",
            false);
  if (rate_limited_) {
    histogram("iotail_io_schedule_latency_seconds",
              "Latency from each I/O's intended start to its completion (rate-limited runs: "
              "includes any wait behind a late schedule).",
              true);
  }

  if (replay_) {
    const char* name = "iotail_replay_lateness_seconds";
    Meta(o, name, "histogram",
         "A replay's I/Os: how late each was issued after its intended time from the trace.");
    for (const Job& job : jobs_) {
      if (job.spec.replay)
        series(name, fmt::format("jobname=\"{}\"", LabelEscape(job.spec.name)), job.lateness);
    }
  }

  Meta(o, "iotail_interval_latency_seconds", "gauge",
       "Completion latency percentile of the last closed interval (fio's rule).");
  each([&](const Job&, const Series& s, const std::string& l) {
    if (!s.has_interval) return;
    for (size_t p = 0; p < std::size(kGaugeLabels); ++p) {
      fmt::format_to(o, "iotail_interval_latency_seconds{{{},percentile=\"{}\"}} {}\n", l,
                     kGaugeLabels[p], s.pct_s[p]);
    }
  });
  Meta(o, "iotail_interval_latency_max_seconds", "gauge",
       "Largest completion latency of the last closed interval (fio's bucket value).");
  each([&](const Job&, const Series& s, const std::string& l) {
    if (s.has_interval)
      fmt::format_to(o, "iotail_interval_latency_max_seconds{{{}}} {}\n", l, s.max_s);
  });
  Meta(o, "iotail_interval_slc", "gauge",
       "SBK's latency-spread factors of the last closed interval (0: flat; how far the tail "
       "stretches beyond the median).");
  each([&](const Job&, const Series& s, const std::string& l) {
    if (!s.has_interval) return;
    fmt::format_to(o, "iotail_interval_slc{{{},factor=\"slc1\"}} {}\n", l, s.slc1);
    fmt::format_to(o, "iotail_interval_slc{{{},factor=\"slc2\"}} {}\n", l, s.slc2);
  });
  if (rate_limited_) {
    Meta(o, "iotail_rate_target_ops_per_second", "gauge",
         "The job's rate target (all its clones), per direction.");
    each([&](const Job& job, const Series& s, const std::string& l) {
      const auto k = static_cast<size_t>(&s - job.dirs.data());  // read 0, write 1, trim 2
      fmt::format_to(o, "iotail_rate_target_ops_per_second{{{}}} {}\n", l,
                     k < job.spec.rate_iops.size() ? job.spec.rate_iops[k] : 0.0);
    });
  }
  // One line per job: name{jobname="..."} value.
  const auto per_job = [&](const char* name, const char* type, const char* help, auto value) {
    Meta(o, name, type, help);
    for (const Job& job : jobs_) {
      fmt::format_to(o, "{}{{jobname=\"{}\"}} {}\n", name, LabelEscape(job.spec.name), value(job));
    }
  };
  per_job("iotail_schedule_issued_total", "counter",
          "I/Os issued on a schedule (rate-limited, or a replay's trace times).",
          [](const Job& j) { return j.issued; });
  per_job("iotail_schedule_late_total", "counter",
          "I/Os issued late on a schedule (the target could not keep up).",
          [](const Job& j) { return j.late; });
  per_job("iotail_schedule_lag_max_seconds", "gauge",
          "Largest delay of an I/O behind its intended start, over the run.",
          [](const Job& j) { return j.max_lag_s; });
  per_job("iotail_io_in_flight", "gauge",
          "I/Os submitted and not yet completed, at the end of the last closed interval.",
          [](const Job& j) { return j.in_flight; });
  auto text = std::make_shared<const std::string>(buf.data(), buf.size());
  std::lock_guard lock(mutex_);
  text_ = std::move(text);
}

std::shared_ptr<const std::string> PrometheusMetrics::Exposition() const {
  std::lock_guard lock(mutex_);
  return text_;
}

}  // namespace iotail::stats
