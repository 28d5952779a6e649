// iotail merge: aligns and merges histogram logs into one fio-format histogram log.
//
// One line per quantum and direction present in the input, stamped with the quantum's end (the
// logs' own time base: ms since job start or Unix-epoch ms), every quantum from the first to the
// last, empty ones included, so that each line covers exactly (previous line, this line]. Counts
// split over quanta are fractional; each bucket is rounded so that its running total stays the
// rounded running total of the exact counts, which keeps every bucket's whole-run sum exact.
#include <fmt/format.h>
#include <sys/stat.h>

#include <boost/program_options.hpp>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <memory>
#include <system_error>

#include "cli/commands.h"
#include "cli/log_input_options.h"
#include "stats/analysis/merger.h"
#include "stats/core/errors.h"

namespace po = boost::program_options;

namespace iotail::cli {
namespace {

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

}  // namespace

int MergeCommand(CommandArgs args, std::ostream& out, std::ostream& err) {
  LogInputOptions input;
  std::string output;
  bool combine = false;
  po::options_description description(
      "usage: iotail merge -o OUT [options] FILES...\n\n"
      "Aligns fio-format histogram logs on time quanta, adds them up across files, and writes one\n"
      "fio-format histogram log (one line per quantum and direction, end-of-interval times).\n\n"
      "options");
  description.add_options()("help,h", "show this help")(
      "output,o", po::value(&output), "the merged log to write ('-' for standard output)")(
      "combine", po::bool_switch(&combine),
      "add read, write and trim together into one direction (written as ddir 0)");
  input.Register(description);
  const po::variables_map vm = input.Parse(args, description);
  if (vm.count("help")) {
    out << description << '\n';
    return 0;
  }
  if (output.empty()) throw stats::UsageError("--output: the merged log's path is required");
  const stats::MergeOptions merge_options = input.ToMergeOptions();
  stats::Merger merger(input.files, merge_options);
  // The readers find recoverable damage (a torn last line) as they read: report it after Run().
  auto print_warnings = [&] {
    for (const auto& w : merger.warnings()) err << "iotail merge: warning: " << w << '\n';
  };

  std::unique_ptr<std::FILE, FileCloser> file;
  std::FILE* sink = stdout;
  if (output != "-") {
    // Opening the output truncates it: it must not be one of the inputs.
    struct stat out_st {};
    if (::stat(output.c_str(), &out_st) == 0) {
      for (const std::string& f : input.files) {
        struct stat in_st {};
        if (::stat(f.c_str(), &in_st) == 0 && in_st.st_dev == out_st.st_dev &&
            in_st.st_ino == out_st.st_ino) {
          throw stats::UsageError(fmt::format(
              "--output: '{}' is also an input ('{}'); refusing to overwrite it", output, f));
        }
      }
    }
    file.reset(std::fopen(output.c_str(), "w"));
    if (!file) throw std::system_error(errno, std::generic_category(), "open '" + output + "'");
    sink = file.get();
  }
  if (merger.Empty()) {
    print_warnings();
    err << "iotail merge: warning: the input holds no histogram records; wrote an empty log\n";
    return 0;
  }
  const size_t buckets = merger.layout().size();
  // Per output direction: running exact sum and running emitted sum of each bucket.
  struct Running {
    std::vector<double> exact;
    std::vector<uint64_t> emitted;
  };
  std::array<Running, stats::kDirectionCount> running;
  for (auto& r : running) {
    r.exact.assign(buckets, 0.0);
    r.emitted.assign(buckets, 0);
  }
  fmt::memory_buffer line;
  std::vector<double> combined(buckets);
  auto write = [&](int64_t time, int ddir, std::span<const double> counts) {
    Running& r = running[ddir];
    line.clear();
    fmt::format_to(std::back_inserter(line), "{}, {}, 0", time, ddir);
    for (size_t i = 0; i < buckets; ++i) {
      r.exact[i] += counts[i];
      const auto target = static_cast<uint64_t>(std::llround(r.exact[i]));
      const uint64_t n = target > r.emitted[i] ? target - r.emitted[i] : 0;
      r.emitted[i] += n;
      fmt::format_to(std::back_inserter(line), ", {}", n);
    }
    line.push_back('\n');
    if (std::fwrite(line.data(), 1, line.size(), sink) != line.size()) {
      throw std::system_error(errno, std::generic_category(), "write '" + output + "'");
    }
  };
  merger.Run([&](const stats::MergedQuantum& q) {
    if (combine) {
      std::fill(combined.begin(), combined.end(), 0.0);
      for (int d = 0; d < stats::kDirectionCount; ++d) {
        for (size_t i = 0; i < buckets; ++i) combined[i] += q.counts[d][i];
      }
      write(q.end_ms, 0, combined);
      return;
    }
    for (int d = 0; d < stats::kDirectionCount; ++d) {
      if (merger.HasDirection(static_cast<stats::Direction>(d))) write(q.end_ms, d, q.counts[d]);
    }
  });
  if (std::fflush(sink) != 0) {
    throw std::system_error(errno, std::generic_category(), "write '" + output + "'");
  }
  print_warnings();
  err << fmt::format("iotail merge: {} files, {} records -> '{}' ({})\n", input.files.size(),
                     merger.records(), output, merger.layout().Describe());
  return 0;
}

}  // namespace iotail::cli
