// Option values as fio writes them: sizes with suffixes under fio's kb_base (k = 1024 by default,
// KiB = 1000; ScopedKbBase switches for one job's options), times with units (bare numbers are
// seconds), booleans (1/0, true/false, yes/no, on/off), whole numbers, CPU lists ("0-2,5"), and
// rates ("N" or "R,W", per direction). Each parser throws stats::UsageError naming the option.
// Parse-time only (ScopedKbBase is a process-wide setting for the single-threaded parse).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "engine/job_spec.h"

namespace iotail::cli {

// A non-negative number at the start of text; *used says how many characters it took.
double ParseNumber(std::string_view text, std::string_view option, size_t* used);
// Sizes as fio reads them under the kb_base in effect (ScopedKbBase; default 1024).
uint64_t ParseSize(std::string_view text, std::string_view option);
// fio's zone units: "Nz" is N zones (of --zonesize, settled later), returned as N; anything not
// ending in 'z' is nullopt (a size for ParseSize); "Nz" with N not a whole number is an error, as
// fio's "unexpected zone value".
std::optional<uint32_t> ParseZoneCount(std::string_view text, std::string_view option);
// Sets fio's kb_base (1000 or 1024) for the ParseSize calls in its scope (one job's options).
class ScopedKbBase {
 public:
  explicit ScopedKbBase(int kb_base);
  ~ScopedKbBase();
  ScopedKbBase(const ScopedKbBase&) = delete;
  ScopedKbBase& operator=(const ScopedKbBase&) = delete;

 private:
  int previous_;
};
uint32_t ParseU32(std::string_view text, std::string_view option);
// fio's separators between the values of an option that takes one per direction (bs, blockalign,
// the rates): at each value, a comma if the rest holds one, else a colon, else a dash (fio's
// parse.c), each value ending at its first separator of any kind: "4k:8k", "4k-512k" and
// "8k:64k,16k" are "4k,8k", "4k,512k" and "8k,16k" as fio reads them (reads, writes). Returns the
// values separated by commas.
std::string FioValueList(std::string_view text);
// fio's per-direction form of a value, R,W[,T]: one value for every direction, or the reads',
// the writes' and the trims' separated by commas, an empty one keeping that direction's default
// ("8k,32k", ",8k", "8k,", "1,2,3"). The one parse of that form: each option then reads its parts
// (and refuses what it cannot take, e.g. a trims' value where iotail does no trims). More than
// three parts is a UsageError naming `option`.
struct PerDirectionText {
  bool one = true;                       // a single value for every direction (in dirs[0])
  std::array<std::string_view, 3> dirs;  // reads, writes, trims; "" keeps that one's default
};
PerDirectionText SplitPerDirection(std::string_view text, std::string_view option);
// "N" (all directions together) or "R,W", "R,", ",W" (per direction) into spec's rate fields;
// bytes: sizes with suffixes per second (--rate), else I/Os per second (--rate_iops). A rate of
// 0 is no limit (fio's).
void ParseRate(std::string_view text, std::string_view option, bool bytes, engine::JobSpec& spec);
uint64_t ParseTimeNs(std::string_view text, std::string_view option);
bool ParseBool(std::string_view text, std::string_view option);
std::vector<int> ParseCpuList(std::string_view text, std::string_view option);
// fio's NUMA node lists (numbers and A-B ranges, or all) and numa_mem_policy
// (default|prefer:NODE|bind:NODES|interleave:NODES|local). Throw UsageError naming `option`.
engine::NumaNodes ParseNumaNodes(std::string_view text, std::string_view option);
engine::NumaMemPolicy ParseNumaMemPolicy(std::string_view text, std::string_view option);

}  // namespace iotail::cli
