// Run summary: the end-of-run report of `iotail run`, as text in fio's normal layout, or as JSON in
// fio's layout and field names (jobs[].read.iops, .bw_bytes, .total_ios,
// .clat_ns.min/max/mean/stddev/N, .clat_ns.percentile{"99.000000": ns}, .clat_ns.bins as fio's
// json+), so tools that read fio's JSON read ours. One entry per job (worker) in "jobs", plus the
// aggregate of all jobs under "iotail_aggregate" in the same layout (kept out of "jobs" so that
// tools summing jobs are not misled). iotail-only figures go in extra fields: "iotail_slc" per
// direction (SLC1/SLC2 by stats/slc.h over SBK's percentile list), "iotail_ci" per direction (the
// 95% confidence interval of each reported percentile, fio_json_extras.h) and "iotail_errors" per
// job (counts by errno name).
//
// min/max/mean/stddev are exact (from the recorder's sums); percentiles use fio's rule on the
// 1856-bucket histogram (stats/percentiles.h), so they equal `iotail pctiles --method fio` over the
// run's logs. slat_ns is the submission call (asynchronous engines; N = 0 for psync, as fio omits
// it for synchronous engines), clat_ns issue to completion and lat_ns start to completion (slat +
// clat), fio's in every mode. In the rate-limited mode each direction also has "iotail_olat_ns",
// iotail's open-loop latency (from each I/O's intended start to its completion, so a backlog
// shows), with its own percentiles and bins; the text form prints it as an `olat` line after
// fio's three and its percentiles after clat's. Per job (and in the aggregate, over all jobs' time)
// usr_cpu, sys_cpu, ctx, majf and minf as fio writes them.
//
// The text form is fio's show_thread_status_normal per entry (`NAME: (groupid=G, jobs=N): err=..`
// and its block, iotail's SLC line after each direction and its error counts after the block),
// then `Run status group G (all jobs):` per group, `Disk stats`, and last `iotail run:` with the
// mode, the rate and schedule checks, the start, the ranks, a signal and the SLA verdicts.
//
// "iotail_run" holds the mode, the rate target against the achieved rate, the issue lag (max, mean,
// I/Os issued late), the start (start_at and its skew) and whether a signal interrupted the run;
// "iotail_sla" the SLA verdicts when targets were given. Pure functions; thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "stats/core/sla.h"
#include "stats/core/steady_state.h"
#include "stats/record/cpu_usage.h"
#include "stats/record/explain_sink.h"
#include "stats/record/io_depths.h"
#include "stats/record/recorder.h"
#include "stats/report/explain_report.h"
#include "stats/report/rate_samples.h"
#include "stats/report/replay_report.h"

namespace iotail::stats {

struct JobTotals {
  std::string name;
  RecorderSnapshot totals;
  CpuUsage cpu;
  int groupid = 0;        // fio's reporting group
  double runtime_s = -1;  // this job's recorded time (< 0: the run's, RunSummary::runtime_s)
  // Per direction, the time it was done in (fio's runtime[ddir]; < 0: runtime_s). They differ
  // after a do_verify read-back: the writes' own time, and the read-back's for the reads.
  std::array<double, kDirectionCount> dir_runtime_s = {-1, -1, -1};
  // fio's job_runtime (total_run_time): each member's runtime in whole ms, summed over a
  // group_reporting entry's members (< 0: runtime_s's).
  int64_t runtime_sum_ms = -1;
  std::vector<std::pair<std::string, std::string>> options;  // its own settings ("job options")
  IoDepthCounts depths;  // iodepth_level, iodepth_submit, iodepth_complete
  uint32_t iodepth = 1;  // latency_depth: the depth found with latency_target, else iodepth
  // fio's latency target settings as it prints them: target in ns, window in us.
  uint64_t latency_target_ns = 0;
  uint64_t latency_window_us = 0;
  double latency_percentile = 100.0;
  RateSamples samples;  // bw_* and iops_* statistics over the run's windows
  SampleStats syncs;    // fsync/fdatasync calls and their latencies (ns): fio's "sync"
  // The syncs are fdatasync=N's: fio 3.33 counts them in the text's `issued rwts` short= slot and
  // gives JSON sync.total_ios 0 (their latencies as fsync's).
  bool datasyncs = false;
  // fio's file and directory operation engines: fio measures no total latency for their I/Os
  // (JSON lat_ns empty, no text lat line) and marks none in its coarse buckets (JSON latency_ns/
  // us/ms all 0, no text `lat (usec) :` lines, terse's 0%), only the operations' clat.
  bool no_total_latency = false;
  uint32_t members = 1;     // the clones it sums (fio's jobs=N: numjobs with group_reporting)
  std::string description;  // fio's description (text "Description", JSON "desc", terse's last)
  std::optional<SteadyStateResult> steady_state;  // --steadystate: JSON "steadystate", text line
  uint64_t zone_resets =
      0;  // zonemode=zbd: zones reset (fio's "; N zone resets" on the write line)
  std::optional<ExplainTotals> explain;  // --explain: where its I/Os' time went
};

// One device's /proc/diskstats over the run, as fio's disk_util (ticks in ms).
struct DiskUtil {
  std::string name;
  uint64_t read_ios = 0, write_ios = 0, read_merges = 0, write_merges = 0;
  uint64_t read_ticks = 0, write_ticks = 0, in_queue = 0;
  double util = 0;  // % of the run's time the device was busy
};

// The workload mode and, when rate-limited, its targets (total over all jobs; 0 = none).
struct RunMode {
  bool rate_limited = false;
  std::string description;  // e.g. "burst (closed loop, iodepth 32 per job)"
  std::string process;      // "linear" or "poisson" when rate-limited
  double target_iops = 0;   // all directions together
  double target_bw = 0;     // bytes/s, all directions together
  std::array<double, kDirectionCount> dir_target_iops{};  // per direction (R,W form)
  std::array<double, kDirectionCount> dir_target_bw{};
  uint64_t late_threshold_ns = 0;
};

// One rank of an iotail-mpi run (the cluster summary lists them so the slowest host shows).
struct RankInfo {
  int rank = 0;
  std::string host;
  int64_t start_skew_ns = 0;    // its actual start minus the common start instant, by its clock
  int64_t clock_offset_ns = 0;  // its clock minus rank 0's (ping-pong estimate)
  uint64_t ios = 0, bytes = 0, errors = 0;
  double p99_ns = 0;  // clat p99 of all its I/Os (fio's rule); NaN without I/Os
  // A replay (read_iolog): its I/Os' lateness (issue minus intended), p99 and max; n == 0 else.
  uint64_t lateness_n = 0, lateness_max_ns = 0;
  double lateness_p99_ns = 0;
  // It stopped answering (SIGSTOP, a hang, a lost link) and the run ended without it: its totals
  // are not in the summary; lost_silence_s is how long it had been silent.
  bool lost = false;
  double lost_silence_s = 0;
};

// The binary that ran, as `iotail --version` says it (cli/build_info.h): iotail_run.build in the
// JSON summary.
struct BuildIdentity {
  std::string version, commit, tree, compiler, features;
};

struct RunSummary {
  std::string version = "iotail-0.1.0";
  BuildIdentity build;
  uint64_t timestamp_s = 0;   // Unix time of the run's start
  uint64_t timestamp_ms = 0;  // the same in ms
  std::vector<DiskUtil> disk_util;
  bool json_bins = true;  // json+ (fio's json has no bins)
  double runtime_s = 0;   // recorded duration
  // Seconds since the run began (its first batch's setup), at the report: every job's JSON
  // "elapsed", as fio's time since its start (< 0: each job's own runtime).
  double elapsed_s = -1;
  std::vector<JobTotals> jobs;
  std::vector<double> percentiles;  // fio-rule percentiles to report
  std::vector<std::pair<std::string, std::string>>
      options;         // settings of all jobs ("global options")
  std::string header;  // one-line description for the text form
  RunMode mode;
  std::string interrupted_by;       // "SIGINT" etc. when a signal stopped the run, else ""
  uint64_t start_at_ms = 0;         // --start_at (0 = none)
  int64_t start_skew_ns = 0;        // actual start - start_at
  const SlaChecker* sla = nullptr;  // SLA verdicts (nullptr or empty: none requested)
  std::vector<RankInfo> ranks;      // iotail-mpi: every rank (empty for one host)
  int pid = 0;                      // the process whose threads ran the jobs (fio's pid=)
  uint64_t report_time_s = 0;       // Unix time of the report (the text's job lines; 0: start)
  ExplainNote explain;              // --explain: the kernel view, or why there is none
  ReplayInfo replay;                // read_iolog: the trace ("iotail_replay", replay_report.h)
};

std::string FormatTextSummary(const RunSummary& summary);
std::string FormatJsonSummary(const RunSummary& summary);

// "EIO" etc. (or "E<n>") for an errno value.
std::string ErrnoName(int err);

}  // namespace iotail::stats
