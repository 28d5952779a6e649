// RunJob: runs one JobSpec from setup to the final interval and returns what the recorders hold.
//
// Setup (all before the common start instant, all able to throw): validate the spec, choose and
// calibrate the clock, probe the engine, open (and create or safety-check) the targets, build one
// Worker per job with its own engine instance, prepare them, and open the histogram logs. Then the
// workers start together; ramp_time is run but not recorded, and the interval clock starts when
// recording does; runtime counts from there. When every worker has stopped (runtime, bytes, error
// or *stop), the interval clock writes the final partial interval, end_fsync runs, and the totals
// per worker (exactly the sums of the logged intervals) are returned. Not thread-safe; one call
// per run.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/interval_clock.h"
#include "engine/job_spec.h"
#include "stats/recorder.h"

namespace iotail::engine {

struct RunOutcome {
  std::vector<stats::RecorderSnapshot> per_worker;  // totals per worker
  double runtime_s = 0;                             // recorded time (after ramp)
  std::string engine_description;                   // flags the engine actually used
  std::string clock_source;                         // "tsc" or "monotonic"
  std::vector<std::string> log_paths;               // histogram logs written
  std::vector<std::string> created_files;           // targets this run created
  uint64_t start_realtime_ns = 0;                   // recording start, epoch ns
  uint64_t region_size = 0;                         // bytes per file actually used
  int engine_error = 0;                             // first engine-level errno, 0 if none
};

RunOutcome RunJob(const JobSpec& spec, IntervalClock::Callback on_interval = nullptr,
                  const std::atomic<bool>* stop = nullptr);

}  // namespace iotail::engine
