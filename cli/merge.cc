// iotail merge: aligns and merges histogram logs into one fio-format histogram log. The options
// and the output file are handled here; the log itself is written by stats::MergedLogWriter.
#include <fmt/format.h>
#include <sys/stat.h>

#include <boost/program_options.hpp>
#include <cerrno>
#include <cstdio>
#include <memory>
#include <system_error>

#include "cli/command_doc.h"
#include "cli/commands.h"
#include "cli/log_input_options.h"
#include "stats/analysis/merged_log_writer.h"
#include "stats/analysis/merger.h"
#include "stats/core/errors.h"
#include "stats/util/output_file.h"

namespace po = boost::program_options;

namespace iotail::cli {
namespace {

struct MergeArgs {
  LogInputOptions input;
  std::string output;
  bool combine = false;
};

// merge's own options (LogInputOptions adds the inputs'), bound to `a`.
po::options_description MergeDescription(MergeArgs& a) {
  po::options_description description(
      "usage: iotail merge -o OUT [options] FILES...\n\n"
      "Aligns fio-format histogram logs on time quanta, adds them up across files, and writes one\n"
      "fio-format histogram log (one line per quantum and direction, end-of-interval times).\n"
      "Option names take dashes or fio's underscores (--time_quantum = --time-quantum).\n\n"
      "options");
  description.add_options()("help,h", "show this help (--help=man: the iotail-merge(1) page)")(
      "output,o", po::value(&a.output), "the merged log to write ('-' for standard output)")(
      "combine", po::bool_switch(&a.combine),
      "add read, write and trim together into one direction (written as ddir 0)");
  return description;
}

}  // namespace

CommandDoc MergeDoc() { return LogCommandDoc<MergeArgs>("merge", MergeDescription); }

int MergeCommand(CommandArgs args, std::ostream& out, std::ostream& err) {
  MergeArgs a;
  po::options_description description = MergeDescription(a);
  LogInputOptions& input = a.input;
  if (!input.Parse(args, description, out)) return 0;  // help
  if (a.output.empty()) throw stats::UsageError("--output: the merged log's path is required");
  const stats::MergeOptions merge_options = input.ToMergeOptions(err, "merge");

  // The merged log is written to a temporary file beside the destination and renamed over it only
  // when complete: a bad input found late leaves an existing file as it was, never half a log.
  std::unique_ptr<stats::OutputFile> file;
  std::FILE* sink = stdout;
  if (a.output != "-") {
    // Opening the output truncates it: it must not be one of the inputs.
    struct stat out_st {};
    if (::stat(a.output.c_str(), &out_st) == 0) {
      for (const std::string& f : input.files) {
        struct stat in_st {};
        if (::stat(f.c_str(), &in_st) == 0 && in_st.st_dev == out_st.st_dev &&
            in_st.st_ino == out_st.st_ino) {
          throw stats::UsageError(fmt::format(
              "--output: '{}' is also an input ('{}'); refusing to overwrite it", a.output, f));
        }
      }
    }
    file = std::make_unique<stats::OutputFile>(a.output, "--output");
    sink = file->file();
  }
  stats::Merger merger(input.files, merge_options);
  if (merger.Empty()) {
    if (file) file->Commit();
    PrintMergerWarnings(merger, "merge", err);
    err << "iotail merge: warning: the input holds no histogram records; wrote an empty log\n";
    return 0;
  }
  stats::MergedLogWriter writer(
      sink, a.output, merger,
      a.combine ? stats::MergedDirections::kCombined : stats::MergedDirections::kEach);
  merger.Run([&](const stats::MergedQuantum& q) { writer.Write(q); });
  writer.Flush();
  if (file) file->Commit();
  PrintMergerWarnings(merger, "merge", err);
  err << fmt::format("iotail merge: {} files, {} records -> '{}' ({})\n", input.files.size(),
                     merger.records(), a.output, merger.layout().Describe());
  return 0;
}

}  // namespace iotail::cli
