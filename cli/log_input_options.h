// Options shared by the commands that read histogram logs (pctiles, merge): the input files,
// the time quantum, the epoch-log period, fio --client log repair and parser threads. Registers
// them with Boost.Program_options and turns the parsed values into a stats::MergeOptions.
#pragma once

#include <boost/program_options.hpp>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "stats/analysis/merger.h"

namespace iotail::cli {

struct LogInputOptions {
  std::vector<std::string> files;
  std::string time_quantum = "1s";
  int64_t log_hist_msec = 0;  // 0: not given
  bool fio_client_logs = false;
  unsigned threads = 0;

  void Register(boost::program_options::options_description& description);
  // Parses args (args[0] is the command name) against `description` plus the positional input
  // files; files after a literal "--" are appended to `files` last. Returns the parsed map.
  boost::program_options::variables_map Parse(
      CommandArgs args, const boost::program_options::options_description& description);
  // Validates and converts; throws UsageError naming the option.
  stats::MergeOptions ToMergeOptions() const;
};

// Parses a time quantum: a whole number of milliseconds written as "500ms", "2s", "1.5s" or a
// bare number of seconds (as fio-histo-log-pctiles.py's --time-quantum). Throws UsageError.
int64_t ParseQuantumMs(std::string_view text, std::string_view option);

// Splits args at a literal "--": the part before it, and everything after it (files).
struct SplitArgs {
  std::vector<std::string> options;
  std::vector<std::string> after_dashes;
};
SplitArgs SplitAtDashes(CommandArgs args);

}  // namespace iotail::cli
