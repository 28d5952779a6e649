// Options shared by the commands that read histogram logs (pctiles, merge): the input files,
// the time quantum, the epoch-log period, fio --client log repair and parser threads. Registers
// them with Boost.Program_options and turns the parsed values into a stats::MergeOptions.
#pragma once

#include <algorithm>
#include <boost/program_options.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "cli/command_doc.h"
#include "cli/commands.h"
#include "stats/analysis/merger.h"

namespace iotail::cli {

struct LogInputOptions {
  std::vector<std::string> files;
  std::string time_quantum = "1s";
  int64_t log_hist_msec = 0;  // 0: not given
  bool fio_client_logs = false;
  unsigned threads = 0;

  // Adds these options (bound to this object's fields) to `description`.
  void AddTo(boost::program_options::options_description& description);
  // Adds these options to `description` (the command's own options, "help" among them) and
  // parses args (args[0] is the command name) against it plus the positional input files; files
  // after a literal "--" are appended to `files` last. Returns the parsed map, or nullopt after
  // printing `description` to `out` when help was asked for (the command then exits 0);
  // --help=man prints the command's man page (cli/command_doc.h) instead.
  std::optional<boost::program_options::variables_map> Parse(
      CommandArgs args, boost::program_options::options_description& description,
      std::ostream& out);
  // Validates and converts; throws UsageError naming the option.
  // Files named as fio --client names its logs (NAME.log.HOST) turn --fio-client-logs on, with a
  // note on `err`; a mix of such and other files is a UsageError.
  // iotail's logs of different measures of the same I/Os (clat with lat, or either with an
  // --explain stage; for plot, which charts the stages apart, only clat with lat) are a
  // UsageError: read together every I/O would count twice.
  stats::MergeOptions ToMergeOptions(std::ostream& err, std::string_view command) const;
};

// The doc (man page, completion) of a log command whose Args hold its LogInputOptions `input` and
// whose describe(args) gives its own options.
template <class Args, class Describe>
CommandDoc LogCommandDoc(std::string_view command, Describe describe) {
  Args a;
  boost::program_options::options_description description = describe(a);
  a.input.AddTo(description);
  return ProgramOptionsDoc(command, description);
}

// Prints the recoverable damage (a torn last line) the merger's readers found as they read, so
// after Merger::Run(), one line each: "iotail COMMAND: warning: ...".
void PrintMergerWarnings(const stats::Merger& merger, std::string_view command, std::ostream& err);

// Parses a time quantum: a whole number of milliseconds written as "500ms", "2s", "1.5s" or a
// bare number of seconds (as fio-histo-log-pctiles.py's --time-quantum). Throws UsageError.
int64_t ParseQuantumMs(std::string_view text, std::string_view option);

// Splits args at a literal "--": the part before it, and everything after it (files). Option names
// before it may be spelled as fio spells them, with underscores: they become dashes
// (--log_hist_msec is --log-hist-msec).
struct SplitArgs {
  std::vector<std::string> options;
  std::vector<std::string> after_dashes;
  // Whether the options ask for the command's man page (--help=man).
  bool WantsManPage() const {
    return std::find(options.begin(), options.end(), "--help=man") != options.end();
  }
};
SplitArgs SplitAtDashes(CommandArgs args);

// Parses args (args[0] is the command name) against `description` (the command's options, "help"
// among them) plus positional inputs appended to `inputs`, those after a literal "--" last.
// Returns the parsed map, or nullopt once `out` has the help (--help) or the man page
// (--help=man) that was asked for (the command then exits 0).
std::optional<boost::program_options::variables_map> ParseWithInputs(
    CommandArgs args, const boost::program_options::options_description& description,
    std::vector<std::string>& inputs, std::ostream& out);

// What an iotail histogram log holds, by its name (PREFIX_KIND_hist.N.log): "clat", "lat" or
// "explain_STAGE"; "" for another name (fio's logs, a merged or renamed one).
std::string LogKindOf(const std::string& path);

}  // namespace iotail::cli
