// RankArgs: the command line of `iotail-mpi run ...` turned into each rank's `iotail run` command
// line. {rank} and {host} are substituted in every argument (targets and log prefixes may differ
// per rank); the options that concern the cluster as a whole are taken out and kept here:
// --write_hist_log (rank 0 writes the cluster's logs; with --log_per_rank each rank also writes
// its own as PREFIX.rank<R>), --log_per_rank, --sla (checked on the cluster's intervals),
// --live_format and --status_interval (rank 0's live view of the cluster), --prometheus and
// --prometheus_linger (rank 0 serves the cluster's metrics), --setup_timeout (how long ranks wait
// for each other to be ready). The log period is read
// (the common start lies on it). Throws UsageError naming the option on bad input. Pure;
// thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace iotail::mpi {

struct RankArgs {
  std::vector<std::string> run_args;  // for RunCommandWith: "run", then the rank's options
  std::string hist_prefix;            // --write_hist_log ("" = none)
  bool log_per_rank = false;
  std::vector<std::string> sla;
  std::string live_format = "text";
  uint64_t log_hist_msec = 1000;
  uint64_t status_interval_ms = 0;
  std::string prometheus;             // --prometheus: rank 0 serves the cluster's metrics
  uint64_t prometheus_linger_ns = 0;  // --prometheus_linger
  // --setup_timeout: how long rank 0 waits, once a rank is ready to start a batch, for the others
  // (laying out their targets); then it names the stragglers and the job ends.
  uint64_t setup_timeout_ns = 600'000'000'000;
  bool help = false;
};

// `args` are the words after `iotail-mpi` (args[0] == "run").
RankArgs MakeRankArgs(const std::vector<std::string>& args, int rank, const std::string& host);

// `text` with every {rank} and {host} replaced.
std::string Substitute(std::string text, int rank, const std::string& host);

}  // namespace iotail::mpi
