// libFuzzer target for the fio job-file reader behind `iotail run FILE.fio`, `--parse-only` and
// `--showcmd`: arbitrary bytes go through ParseJobFile and ShowCommand. Each must end with
// sections or a UsageError; never a crash, a sanitizer report, or unbounded work (libFuzzer's
// -timeout and -rss_limit_mb catch a hang or a blow-up).
//
// The input is a set of files held in memory, split at each NUL byte (which no job file may hold):
// the first is the job file "job.fio", the next ones are "1", "2", ... so that `include 1` finds
// one. Includes never reach the real file system: the harness's reader knows only these files, so
// a run is the same everywhere, cannot read a device or block on a FIFO, and include chains, loops
// and bombs are fuzzed too. The environment is fixed: ${A}, ${B} and ${E} are set (a size, an
// expression, empty), nothing else; 6 CPUs, 1 GiB, 4 KiB pages.
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "cli/job_file.h"
#include "stats/core/errors.h"

using iotail::cli::JobFileContents;
using iotail::cli::JobFileEnvironment;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  std::map<std::string, std::string, std::less<>> files;
  size_t start = 0;
  for (int n = 0; start <= input.size(); ++n) {
    const size_t end = std::min(input.find('\0', start), input.size());
    files[n == 0 ? std::string("job.fio") : std::to_string(n)] = input.substr(start, end - start);
    start = end + 1;
  }
  JobFileEnvironment env;
  env.getenv = [](const std::string& name) -> std::optional<std::string> {
    if (name == "A") return "64k";
    if (name == "B") return "(1+2)*3";
    if (name == "E") return "";
    return std::nullopt;
  };
  env.read_file = [&files](const std::string& path,
                           size_t limit) -> std::optional<JobFileContents> {
    const auto it = files.find(path);
    if (it == files.end()) return std::nullopt;
    return JobFileContents{it->second.substr(0, limit + 1), path};
  };
  env.ncpus = 6;
  env.mb_memory = 1024;
  env.pagesize = 4096;
  try {
    iotail::cli::ParseJobFile("job.fio", env);
    iotail::cli::ShowCommand({"job.fio"}, env, "iotail run");
  } catch (const iotail::stats::UsageError&) {
  }
  return 0;
}
