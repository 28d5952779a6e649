// The settings of the commands that drive runs of jobs rather than being one run: `iotail sweep`'s
// search (cli/sweep.cc) and iotail-mpi's cluster (mpi/). They are rows of the option table like
// every other option (scope run, command line only): each driver passes its own rows to
// ParseRunPlan (cli/option_table.h, ParseContext::driver), which looks them up before iotail run's,
// and their setters store here, in RunPlan::run.driver. Plain data with the defaults documented on
// each field.
#pragma once

#include <cstdint>
#include <string>

namespace iotail::cli {

struct SweepSettings {
  uint64_t step_ns = 4'000'000'000;  // --step_time: the recorded time of each step
  uint64_t ramp_ns = 1'000'000'000;  // --ramp_time: run but record nothing before each step
  double saturation = 0.9;           // achieved / target below this: the step saturated
  double resolution = 0.02;          // --resolution: stop bisecting at this fraction of the rate
  double start_rate = 100;           // --start_rate, --min_rate, --max_rate: I/Os per second,
  double min_rate = 10;              // summed over the clones (and, under iotail-mpi, the ranks)
  double max_rate = 1e7;
  int retries = 1;  // --retries: runs again of a step that fails on latency alone
};

struct ClusterSettings {
  bool log_per_rank = false;                    // --log_per_rank: each rank's own logs too
  uint64_t setup_timeout_ns = 600'000'000'000;  // --setup_timeout: wait for the others this long
  // Set by the rank transform (mpi/rank_plan.h), not an option: the PREFIX of the cluster's
  // histogram log (the first job's write_hist_log, from the command line or a job file).
  std::string hist_prefix;
};

struct DriverSettings {
  SweepSettings sweep;
  ClusterSettings cluster;
};

}  // namespace iotail::cli
