// fio's trace replay options: read_iolog and the replay_* options that shape it
// (engine/replay/replay_spec.h). The trace's files become the job's targets in PlanRun.
#include <fmt/format.h>

#include <bit>

#include "cli/option_table.h"
#include "cli/option_values.h"
#include "cli/run_options.h"
#include "stats/core/errors.h"

namespace iotail::cli {

using stats::UsageError;

namespace {

using enum ValueType;

// fio's replay_skip: a comma-separated list of read, write, trim, sync.
uint32_t ParseSkip(std::string_view text, std::string_view option) {
  uint32_t bits = 0;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = text.find(',', start);
    const std::string_view word = text.substr(
        start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    if (word == "read") {
      bits |= engine::replay::kSkipRead;
    } else if (word == "write") {
      bits |= engine::replay::kSkipWrite;
    } else if (word == "trim") {
      bits |= engine::replay::kSkipTrim;
    } else if (word == "sync") {
      bits |= engine::replay::kSkipSync;
    } else {
      throw UsageError(fmt::format(
          "--{}: '{}' is not a direction; expected a comma-separated list of read, write, trim, "
          "sync",
          option, word));
    }
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return bits;
}

// replay_map: FROM=TO pairs separated by commas, each FROM once.
std::vector<std::pair<std::string, std::string>> ParseMap(std::string_view text,
                                                          std::string_view option) {
  std::vector<std::pair<std::string, std::string>> map;
  size_t start = 0;
  while (start <= text.size()) {
    // A pair ends at the first comma after its '=' (a blktrace device's name, MAJOR,MINOR, has a
    // comma of its own before it).
    const size_t eq_at = text.find('=', start);
    const size_t comma = text.find(',', eq_at == std::string_view::npos ? start : eq_at);
    const std::string_view pair = text.substr(
        start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    const size_t eq = pair.find('=');
    if (eq == std::string_view::npos || eq == 0 || eq + 1 == pair.size()) {
      throw UsageError(fmt::format(
          "--{}: '{}' is not TRACEFILE=TARGET (expected FROM=TO pairs separated by commas)", option,
          pair));
    }
    std::string from(pair.substr(0, eq));
    for (const auto& [f, t] : map) {
      if (f == from) throw UsageError(fmt::format("--{}: '{}' is mapped twice", option, from));
    }
    map.emplace_back(std::move(from), std::string(pair.substr(eq + 1)));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return map;
}

const std::vector<OptionDef>& ReplayRows() {
  static const std::vector<OptionDef> table = {
      Labeled("FILE[:FILE...]",
              {"read_iolog", kName,
               [](RunOptions& o, const OptionValue& v) { o.spec.replay.read_iolog = v.text; },
               "replay this trace (fio iolog v2/v3, blktrace dump; plain, .gz or .zst): each I/O "
               "issued at its trace time (open loop; latency from that time, lateness in "
               "iotail_replay), the trace's files the targets; a ':' list gives each clone "
               "(numjobs) its own trace, as fio"}),
      {"read_iolog_chunked", kFlag,
       [](RunOptions& o, const OptionValue& v) { o.spec.replay.chunked = v.number != 0; },
       "read the trace gradually (iotail always streams a trace in bounded memory)", "0"},
      {"replay_no_stall", kFlag,
       [](RunOptions& o, const OptionValue& v) { o.spec.replay.no_stall = v.number != 0; },
       "replay as fast as the queue takes the I/Os, ignoring the trace's times and waits", "0"},
      {"replay_time_scale", kCount,
       [](RunOptions& o, const OptionValue& v) {
         o.spec.replay.time_scale = static_cast<uint32_t>(v.number);
       },
       "the trace's speed in percent: 200 replays it twice as fast, 50 at half speed", "100",
       Also(), Choices(), OptionScope::kJob, 1, 1'000'000},
      Labeled("FILE", {"replay_redirect", kName,
                       [](RunOptions& o, const OptionValue& v) { o.spec.replay.redirect = v.text; },
                       "replay every I/O of the trace onto this one file or device"}),
      Labeled(
          "FROM=TO[,FROM=TO...]",
          {"replay_map", kText,
           [](RunOptions& o, const OptionValue& v) {
             o.spec.replay.map = ParseMap(v.text, v.option);
           },
           "iotail's: each trace file onto a target of its own, all in the trace's one time order "
           "(FROM=TO,FROM=TO, a blktrace device as MAJOR,MINOR=TO; fio needs a run per device)"}),
      {"replay_align", kSize,
       [](RunOptions& o, const OptionValue& v) {
         if (v.number != 0 && !std::has_single_bit(static_cast<uint64_t>(v.number))) {
           throw UsageError(fmt::format("--{}: {} is not a power of 2", v.option, v.text));
         }
         o.spec.replay.align = static_cast<uint64_t>(v.number);
       },
       "round the trace's offsets down to a multiple of this (a power of 2; after replay_scale)",
       "0"},
      {"replay_scale", kCount,
       [](RunOptions& o, const OptionValue& v) {
         o.spec.replay.scale = static_cast<uint64_t>(v.number);
       },
       "divide the trace's offsets by this", "1"},
      Labeled("DIR[,DIR...]", {"replay_skip", kText,
                               [](RunOptions& o, const OptionValue& v) {
                                 o.spec.replay.skip = ParseSkip(v.text, v.option);
                               },
                               "leave out the trace's I/Os of these directions (comma-separated: "
                               "read, write, trim, sync)"}),
      Labeled(
          "FILE",
          {"write_iolog", kName,
           [](RunOptions& o, const OptionValue& v) { o.spec.replay.write_iolog = v.text; },
           "log the job's I/Os to this file as fio 3.33 does (a version 3 iolog, appended to), for "
           "fio's or iotail's read_iolog"}),
  };
  return table;
}

}  // namespace

std::span<const OptionDef> ReplayOptionTable() { return ReplayRows(); }

}  // namespace iotail::cli
