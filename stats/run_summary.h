// Run summary: the end-of-run report of `iotail run`, as text (fio-like) or as JSON in fio's
// layout and field names (jobs[].read.iops, .bw_bytes, .total_ios, .clat_ns.min/max/mean/stddev/N,
// .clat_ns.percentile{"99.000000": ns}, .clat_ns.bins as fio's json+), so tools that read fio's
// JSON read ours. One entry per job (worker) in "jobs", plus the aggregate of all jobs under
// "iotail_aggregate" in the same layout (kept out of "jobs" so that tools summing jobs are not
// misled). iotail-only figures go in extra fields: "iotail_slc" per direction (SLC1/SLC2 by
// stats/slc.h over SBK's percentile list) and "iotail_errors" per job (counts by errno name).
//
// min/max/mean/stddev are exact (from the recorder's sums); percentiles use fio's rule on the
// 1856-bucket histogram (stats/percentiles.h), so they equal `iotail pctiles --method fio` over the
// run's logs. In the closed loop there is no separate submission latency: slat_ns is zero and
// lat_ns repeats clat_ns. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "stats/recorder.h"

namespace iotail::stats {

struct JobTotals {
  std::string name;
  RecorderSnapshot totals;
};

struct RunSummary {
  std::string version = "iotail-0.1.0";
  uint64_t timestamp_s = 0;  // Unix time of the run's start
  double runtime_s = 0;      // recorded duration
  std::vector<JobTotals> jobs;
  std::vector<double> percentiles;                           // fio-rule percentiles to report
  std::vector<std::pair<std::string, std::string>> options;  // settings used ("job options")
  std::string header;  // one-line description for the text form
};

std::string FormatTextSummary(const RunSummary& summary);
std::string FormatJsonSummary(const RunSummary& summary);

// "EIO" etc. (or "E<n>") for an errno value.
std::string ErrnoName(int err);

}  // namespace iotail::stats
