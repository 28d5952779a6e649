// RunJob: runs one JobSpec from setup to the final interval and returns what the recorders hold.
//
// Setup (all before the common start instant, all able to throw): validate the spec, choose and
// calibrate the clock, probe the engine, open (and create or safety-check) the targets (files and
// devices, or the NBD export: engine/nbd_target.h), build one
// Worker per job with its own engine instance and its share of the rate schedule, open the
// histogram logs (clat, plus lat when rate-limited: a stats::HistLogSink), and prepare the workers
// on their own threads. Then, after waiting for
// spec.start_at_ms if given (UsageError if that is more than kStartAtToleranceMs in the past), the
// workers start together; ramp_time is run but not recorded (no counts, no lag, no log lines), and
// the interval clock starts when recording does and hands every interval to the log sink and to
// the caller's sinks; runtime counts from there. *stop (set by a
// signal handler, say) ends the run early, cleanly, at any of these stages. When every worker has
// stopped (runtime, bytes, error or *stop), the interval clock writes the final partial interval,
// end_fsync runs, and the totals per worker (exactly the sums of the logged intervals) are
// returned. Not thread-safe; one call per run.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "engine/interval_clock.h"
#include "engine/job_spec.h"
#include "engine/worker.h"
#include "stats/record/recorder.h"

namespace iotail::engine {

// How far in the past --start_at may be when the workers are ready (later is an error).
inline constexpr uint64_t kStartAtToleranceMs = 500;

struct RunOutcome {
  std::vector<stats::RecorderSnapshot> per_worker;  // totals per worker
  std::vector<stats::CpuUsage> cpu;                 // CPU use per worker
  double runtime_s = 0;                             // recorded time (after ramp)
  std::string engine_description;                   // flags the engine actually used
  std::string clock_source;                         // "tsc" or "monotonic"
  std::vector<std::string> log_paths;               // histogram logs written
  std::vector<std::string> created_files;           // targets this run created
  uint64_t start_realtime_ns = 0;                   // recording start, epoch ns
  uint64_t region_size = 0;                         // bytes per file actually used
  int engine_error = 0;                             // first engine-level errno, 0 if none
  std::vector<std::string> lat_log_paths;           // lat histogram logs (rate-limited mode)
  int64_t start_skew_ns = 0;                        // actual start - start_at (0 without it)
  bool stopped = false;                             // *stop ended the run early
  std::vector<std::string> output_errors;           // outputs that failed (and stopped)
};

// `sinks` (not owned) get every closed interval after the histogram logs (which RunJob writes
// itself when spec.write_hist_log is set): the live report, SLA checks, metrics.
// A failing output (a log on a full filesystem) is reported at once through `on_output_error`,
// stops that output only, and is listed in RunOutcome::output_errors.
RunOutcome RunJob(const JobSpec& spec, std::span<stats::IntervalSink* const> sinks = {},
                  const std::atomic<bool>* stop = nullptr,
                  std::function<void(const std::string&)> on_output_error = nullptr);

// The directions a job's logs and reports cover (reads, writes or both).
std::vector<stats::Direction> LoggedDirections(const JobSpec& spec);

}  // namespace iotail::engine
