// Option values as fio writes them: sizes with suffixes under the job's kb_base (k = 1024 by
// default, KiB = 1000), times with units (bare numbers are seconds), booleans (1/0, true/false,
// yes/no, on/off), whole numbers, CPU lists ("0-2,5"), and rates ("N" or "R,W", per direction).
// Each parser throws stats::UsageError naming the option. Arithmetic written without parentheses
// is read as fio 3.33 reads it, its leading number, with a note (FioBareArithmetic). What depends
// on the job being parsed (its kb_base, where the notes go) is passed in a ValueContext: nothing
// here is process-wide, and the parsers are pure functions of their arguments.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/job_spec.h"

namespace iotail::cli {

// How one job's values are read: fio's kb_base (1024, or 1000: k is 1000 and KiB 1024), and
// where the notes on bare arithmetic go (nullptr: dropped). Built per job by the run's parse
// (cli/run_options_jobs.cc: kb_base first, as fio) and carried in each OptionValue.
inline constexpr int kFioKbBase = 1024;  // fio's default kb_base
struct ValueContext {
  int kb_base = kFioKbBase;
  std::vector<std::string>* notes = nullptr;
};

// A non-negative number at the start of text; *used says how many characters it took.
double ParseNumber(std::string_view text, std::string_view option, size_t* used);
// Sizes as fio reads them under the context's kb_base; bare arithmetic as fio reads it
// (FioBareArithmetic).
uint64_t ParseSize(std::string_view text, std::string_view option, const ValueContext& context);
// ParseSize in `context`, as a function of (text, option) for the parsers that take one.
inline auto SizeReader(const ValueContext& context) {
  return [context](std::string_view text, std::string_view option) {
    return ParseSize(text, option, context);
  };
}
// fio's zone units: "Nz" is N zones (of --zonesize, settled later), returned as N; anything not
// ending in 'z' is nullopt (a size for ParseSize); "Nz" with N not a whole number is an error, as
// fio's "unexpected zone value".
std::optional<uint32_t> ParseZoneCount(std::string_view text, std::string_view option);
// fio 3.33 evaluates arithmetic only in parentheses or after a $ variable; written bare
// (iodepth=2*4, bs=4k+4k, runtime=2*1s: a number, one of * + ^ / %, then a number or '(') it
// reads the leading number and ignores the rest, without a word. iotail reads the same and says
// so: ParseSize, ParseU32 and ParseTimeNs read such a value as fio does, each with a note (the
// option, the value, what fio reads) into the context's notes.
enum class ValueSyntax { kSize, kTime };
// What fio reads of `text` when it is bare arithmetic, in the syntax of the value (nullopt when
// it is not), noted. A size or a count (fio's str_to_decimal): the leading digits with the
// letters right after them as their suffix (4k*2: 4k; 2*4k: 2). A time (fio's get_mult_time):
// the leading digits in the unit after the digits, '+' and '-': us and ms as prefixes (1ms*2:
// 1ms), s, m, h and d only as the whole rest (1+1s: 1s; 1s*2: 1us, fio's unit when it knows
// none); no letters there is the option's bare unit (2*1s: 2). A fraction before the operator
// (1.5k*2) is refused: fio reads 1 of it, which iotail does not read of 1.5k alone.
std::optional<std::string> FioBareArithmetic(std::string_view text, std::string_view option,
                                             ValueSyntax syntax, const ValueContext& context);
// A whole number (bare arithmetic as fio reads it: FioBareArithmetic).
uint32_t ParseU32(std::string_view text, std::string_view option, const ValueContext& context);
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
void ParseRate(std::string_view text, std::string_view option, bool bytes, engine::JobSpec& spec,
               const ValueContext& context);
// A time in ns (units ns, us, ms, s, m, h; bare: seconds; bare arithmetic as fio reads it:
// FioBareArithmetic).
uint64_t ParseTimeNs(std::string_view text, std::string_view option, const ValueContext& context);
bool ParseBool(std::string_view text, std::string_view option);
std::vector<int> ParseCpuList(std::string_view text, std::string_view option,
                              const ValueContext& context);
// fio's NUMA node lists (numbers and A-B ranges, or all) and numa_mem_policy
// (default|prefer:NODE|bind:NODES|interleave:NODES|local). Throw UsageError naming `option`.
engine::NumaNodes ParseNumaNodes(std::string_view text, std::string_view option,
                                 const ValueContext& context);
engine::NumaMemPolicy ParseNumaMemPolicy(std::string_view text, std::string_view option,
                                         const ValueContext& context);

}  // namespace iotail::cli
