// The parts of fio's JSON that describe a job beyond its latencies, written from iotail's own
// data with fio's keys, units and buckets: per direction the bandwidth and IOPS sample statistics
// (bw_min/max/agg/mean/dev/samples in KiB/s, iops_min/max/mean/stddev/samples), per job the queue
// depth and batch distributions (iodepth_level/submit/complete, % of I/Os or calls), the total
// latency distribution in fio's coarse buckets (latency_ns/us/ms, % of I/Os: from the histogram,
// each bucket counted at the value fio prints for it, so a bucket straddling a boundary counts on
// one side), fio's latency-target fields (not used by iotail: depth = iodepth, target 0,
// percentile 100, window 0) and sync (the fsync/fdatasync calls of --fsync/--fdatasync), and the
// run's disk_util, and json+'s bins of a histogram; and fio's object of one latency. Helpers of
// run_summary.cc (and of the replay and explain reports); pure functions, thread-safe.
#pragma once

#include <fmt/format.h>

#include <iterator>
#include <span>
#include <string>
#include <vector>

#include "stats/record/recorder.h"
#include "stats/report/run_summary.h"

namespace iotail::stats {

using JsonOut = std::back_insert_iterator<std::string>;

// `, "bw_min": ..., "iops_samples": N` for direction d of a job (no leading brace).
// group_bw_kib: the aggregate bandwidth of the job's reporting group in KiB/s (for bw_agg).
void JsonRateSampleFields(JsonOut o, const RateSamples& samples, int d, double group_bw_kib);

// `, "iodepth_level": {...}, ..., "latency_window": 0` for a job (no leading brace).
void JsonDepthAndLatencyFields(JsonOut o, const JobTotals& job);

// `"sync": {...}` (no separators): the fsync/fdatasync calls and their latencies.
// With datasyncs (fdatasync=N), total_ios is 0, as fio 3.33's.
void JsonSyncField(JsonOut o, const SampleStats& syncs, bool datasyncs);

// `"steadystate": {...}` as fio writes it (ss, duration, attained, criterion, max_deviation, slope,
// data with bw_mean, iops_mean, iops and bw; lat_mean and lat for a lat criterion, as newer fio).
void JsonSteadyState(JsonOut o, const SteadyStateResult& ss);

// `, "iotail_ci": {"confidence": 95, "clat_ns": {"50.000000": [lo, hi], ...}}`: per percentile of
// the summary the 95% order-statistic interval (stats/core/percentile_ci.h) from the histogram, in
// ns, the bucket edges included; null for an open upper bound. `olat_hist`, when not empty (the
// rate-limited mode: latency from the intended start), adds "olat_ns" the same way. Nothing for an
// empty clat histogram.
void JsonPercentileIntervals(JsonOut o, const std::vector<uint64_t>& clat_hist,
                             const std::vector<uint64_t>& olat_hist,
                             const std::vector<double>& percentiles);

// `, "bins": {"VALUE": COUNT, ...}`: fio json+'s bins of a histogram in the recorded layout, each
// non-zero bucket under its value in ns.
void JsonBins(JsonOut o, const std::vector<uint64_t>& hist);

// The percentiles `which` of a recorded latency by fio's rule; empty when none was recorded.
std::vector<double> RecordedPercentiles(const LatencySnapshot& l, std::span<const double> which);

// `{"min": .., "max": .., "mean": .., "stddev": .., "N": ..}`, fio's object of a latency in ns;
// with `values` (one per entry of `percentiles`) and samples, also fio's "percentile" map and,
// with `bins` (json+), the bins.
void JsonLatencyObject(JsonOut o, const LatencySnapshot& l, std::span<const double> percentiles,
                       const std::vector<double>* values, bool bins);

// `"disk_util": [...]` (no separators).
void JsonDiskUtil(JsonOut o, const std::vector<DiskUtil>& disks);

}  // namespace iotail::stats
