// Options of `iotail run`, in fio's spellings: `--name=value` or `--name value`, booleans bare or
// `=0/1`, sizes with suffixes (4k, 64M, 1g; powers of 1024 as fio's default kb_base), times with
// units (3s, 500ms, 100us, 2m, 1h; bare numbers are seconds). Dashes and underscores in option
// names are interchangeable (--cpus-allowed == --cpus_allowed). ParseRunOptions throws UsageError
// naming the option on bad input.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/job_spec.h"

namespace iotail::cli {

enum class OutputFormat { kNormal, kJson };

struct RunOptions {
  engine::JobSpec spec;
  bool help = false;
  bool default_benchmark = false;  // no --filename: run the short default benchmark
  bool rw_given = false, ioengine_given = false, runtime_given = false, direct_given = false;
  bool iodepth_given = false, size_given = false;
  OutputFormat output_format = OutputFormat::kNormal;
  std::string output;                                      // --output FILE ("" = stdout)
  std::vector<double> percentiles;                         // --percentile_list (default fio's list)
  std::vector<std::pair<std::string, std::string>> given;  // options as given, for the summary
};

RunOptions ParseRunOptions(std::span<char* const> args);
std::string RunUsage();

uint64_t ParseSize(std::string_view text, std::string_view option);
uint64_t ParseTimeNs(std::string_view text, std::string_view option);
bool ParseBool(std::string_view text, std::string_view option);
std::vector<int> ParseCpuList(std::string_view text, std::string_view option);

}  // namespace iotail::cli
