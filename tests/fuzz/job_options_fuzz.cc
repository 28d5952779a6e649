// libFuzzer target for the values of a job's options as `iotail run --parse-only` reads and settles
// them (ParseRunPlan, then PlanRun): fio's value forms (sizes, times, counts, arithmetic without
// parentheses, rate=0, bssplit entries without a share, cmdprio_bssplit) and the options that
// settle once the job's files are named (bwavgtime, file_service_type, verify_only, verify with
// norandommap, filename_format). Each input must end in a planned run or a UsageError; never a
// crash, a sanitizer report or unbounded work.
//
// The input is lines; each line's first byte picks an option of kOptions (modulo their number)
// and the rest of the line is its value, given as --OPTION=VALUE after a fixed job head
// (--name=f --ioengine=null --size=1m: the null engine opens nothing, and no option
// here can name a file elsewhere, a device or an output, so a run is the same everywhere and
// touches nothing).
#include <cstddef>
#include <cstdint>
#include <ostream>
#include <streambuf>
#include <string>
#include <string_view>
#include <vector>

#include "cli/run_assembly.h"
#include "cli/run_options.h"
#include "stats/core/errors.h"

namespace {

constexpr const char* kOptions[] = {
    "bs",
    "bssplit",
    "bsrange",
    "size",
    "iodepth",
    "numjobs",
    "nrfiles",
    "rate",
    "rate_iops",
    "rate_min",
    "rw",
    "rwmixread",
    "runtime",
    "time_based",
    "number_ios",
    "loops",
    "io_size",
    "offset",
    "blockalign",
    "norandommap",
    "verify",
    "do_verify",
    "verify_only",
    "verifysort",
    "verify_backlog",
    "bwavgtime",
    "iopsavgtime",
    "log_avg_msec",
    "allrandrepeat",
    "randrepeat",
    "file_service_type",
    "filename_format",
    "cmdprio_bssplit",
    "cmdprio_percentage",
    "thinktime",
    "kb_base",
    "fill_device",
    "name",
    "description",
    "random_distribution",
};

// Discards what PlanRun says (notes and warnings).
class NullBuffer : public std::streambuf {
 protected:
  int overflow(int c) override { return c; }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> args = {"run", "--parse-only", "--name=f", "--ioengine=null",
                                   "--size=1m"};
  for (size_t start = 0; start < input.size() && args.size() < 64;) {
    const size_t end = std::min(input.find('\n', start), input.size());
    const std::string_view line = input.substr(start, end - start);
    start = end + 1;
    if (line.empty()) continue;
    const std::string_view option =
        kOptions[static_cast<unsigned char>(line[0]) % std::size(kOptions)];
    std::string value(line.substr(1));
    // A name is also a file name (fio's default files): kept to one directory level here.
    if (option == "name" || option == "filename_format") {
      for (char& c : value) c = c == '/' ? '_' : c;
    }
    args.push_back("--" + std::string(option) + "=" + value);
  }
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  NullBuffer null_buffer;
  std::ostream null_stream(&null_buffer);
  try {
    iotail::cli::RunPlan plan = iotail::cli::ParseRunPlan(argv);
    (void)iotail::cli::PlanRun(std::move(plan), null_stream);
  } catch (const iotail::stats::UsageError&) {
  }
  return 0;
}
