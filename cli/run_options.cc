#include "cli/run_options.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <functional>
#include <vector>

#include "cli/option_table.h"
#include "stats/core/errors.h"
#include "stats/core/percentiles.h"
#include "stats/core/sla.h"
#include "stats/util/option_text.h"

namespace iotail::cli {

using stats::UsageError;

namespace {

uint32_t ParseBs(std::string_view text, std::string_view option, const ValueContext& context) {
  const uint64_t v = ParseSize(text, option, context);
  if (v == 0 || v > UINT32_MAX)
    throw UsageError(fmt::format("--{}: bad block size '{}'", option, text));
  return static_cast<uint32_t>(v);
}

// fio's rw=MODE[:N]: the offset modifier is a gap in bytes after each sequential I/O (negative:
// backwards, rw=read:-8k), or the number of I/Os per random offset (the ones between are
// sequential).
void ParseRw(const std::string& v, std::string_view option, const ValueContext& context,
             RunOptions& o) {
  const size_t colon = v.find(':');
  const std::string mode = v.substr(0, colon);
  if (mode == "trimwrite" || mode == "randtrimwrite") {
    throw UsageError(
        fmt::format("--{}: '{}' is not supported (trim and randtrim are)", option, mode));
  }
  o.spec.rw = engine::ParseRwMode(mode);
  o.spec.rw_modifier = 0;
  if (colon == std::string::npos) return;
  const std::string n = v.substr(colon + 1);
  if (o.spec.IsRandom()) {
    o.spec.rw_modifier = ParseU32(n, option, context);
    return;
  }
  const bool backwards = n.starts_with('-');
  const uint64_t gap = ParseSize(backwards ? n.substr(1) : n, option, context);
  if (gap > static_cast<uint64_t>(INT64_MAX)) {
    throw UsageError(fmt::format("--{}: the gap '{}' is too large", option, n));
  }
  o.spec.rw_modifier = backwards ? -static_cast<int64_t>(gap) : static_cast<int64_t>(gap);
}

// "N%" with 0 < N <= 100 (fio's percentage of a file's size).
double ParsePercent(const std::string& v, std::string_view option) {
  size_t used = 0;
  const double p = ParseNumber(std::string_view(v).substr(0, v.size() - 1), option, &used);
  if (used + 1 != v.size() || p <= 0 || p > 100) {
    throw UsageError(fmt::format("--{}: expected a percentage from 1 to 100, got '{}'", option, v));
  }
  return p;
}

// fio's R,W forms of bsrange and bssplit: one value for both directions, or reads and writes
// (a third, trims, is refused) separated by a comma, an empty one keeping the default.
void PerDirection(const OptionValue& v, engine::JobSpec& spec,
                  void (*apply)(const std::string&, bool, const ValueContext&, engine::JobSpec&)) {
  const PerDirectionText parts = SplitPerDirection(v.text, v.option);
  if (parts.one) {
    apply(v.text, false, v.context, spec);
    spec.blocks.bs_write_own = false;
    return;
  }
  if (!parts.dirs[2].empty()) {
    throw UsageError(
        fmt::format("--{}: iotail does not do trims (R,W only), got '{}'", v.option, v.text));
  }
  spec.blocks.bs_write_own = true;
  if (!parts.dirs[0].empty()) apply(std::string(parts.dirs[0]), false, v.context, spec);
  if (!parts.dirs[1].empty()) apply(std::string(parts.dirs[1]), true, v.context, spec);
}

// fio's bs=int[,int][,int]: one value for every direction, or reads, writes (and trims, which
// iotail does not do) separated by commas (or fio's other separators: FioValueList), an empty
// one keeping the default (4k): "8k,32k", ",8k", "8k," (writes at the default), "4k:8k".
void ParseBlockSizes(const std::string& given, std::string_view option, const ValueContext& context,
                     engine::JobSpec& spec) {
  std::vector<std::string_view> parts;
  const std::string v = FioValueList(given);
  const std::string args[] = {v};
  stats::ForEachListItem(args, ",",
                         [&](std::string_view item, const std::string&) { parts.push_back(item); });
  if (parts.size() > 3) {
    throw UsageError(
        fmt::format("--{}: at most 3 values (reads,writes,trims), got '{}'", option, v));
  }
  if (parts.size() == 1) {
    spec.blocks.bs = ParseBs(parts[0], option, context);
    spec.blocks.bs_dir = {};
    return;
  }
  const std::array<uint32_t, 2> sizes = {
      parts[0].empty() ? 4096u : ParseBs(parts[0], option, context),
      parts[1].empty() ? 4096u : ParseBs(parts[1], option, context)};
  spec.blocks.bs = std::min(sizes[0], sizes[1]);
  spec.blocks.bs_dir = sizes;
}

// fio's ':'-separated file names, '\:' being a colon inside one, added to the job's files as
// fio's str_filename_cb adds them: a job's filename= after one in [global] (or before --name, or
// earlier in its section) gives the job both files, and the names end at an empty one.
void ParseFilenames(RunOptions& o, const OptionValue& v) {
  const std::string& text = v.text;
  std::string name;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i < text.size() && text[i] == '\\' && i + 1 < text.size() && text[i + 1] == ':') {
      name += ':';
      ++i;
    } else if (i < text.size() && text[i] != ':') {
      name += text[i];
    } else {
      if (name.empty()) return;
      o.spec.filenames.push_back(std::move(name));
      name.clear();
    }
  }
}

// A size or "N%" of each file's size, into the region's bytes or the percentage (the other
// cleared), or with Zones fio's "Nz", N zones of --zonesize (the others cleared).
template <uint64_t engine::RegionOptions::*Bytes, double engine::RegionOptions::*Percent,
          uint32_t RunOptions::*Zones = nullptr>
void SizeOrPercent(RunOptions& o, const OptionValue& v) {
  if constexpr (Zones != nullptr) {
    o.*Zones = 0;
    if (const std::optional<uint32_t> zones = ParseZoneCount(v.text, v.option)) {
      o.*Zones = *zones;
      o.spec.region.*Bytes = 0;
      o.spec.region.*Percent = 0;
      return;
    }
  }
  if (v.text.ends_with('%')) {
    // fio reads only the suffix's first character: "100%%" (a job file written for Python's
    // configparser, which turns "%%" into "%") is 100% too.
    std::string_view text = v.text;
    while (text.ends_with("%%")) text.remove_suffix(1);
    o.spec.region.*Percent = ParsePercent(std::string(text), v.option);
    o.spec.region.*Bytes = 0;
  } else {
    o.spec.region.*Bytes = ParseSize(v.text, v.option, v.context);
    o.spec.region.*Percent = 0;
  }
}

// The sizes and offsets that take fio's percentages and zones, and io_size (zones only).
constexpr OptionSetter SetSize =
    SizeOrPercent<&engine::RegionOptions::size, &engine::RegionOptions::size_percent,
                  &RunOptions::size_zones>;
constexpr OptionSetter SetOffset =
    SizeOrPercent<&engine::RegionOptions::offset, &engine::RegionOptions::offset_percent,
                  &RunOptions::offset_zones>;
constexpr OptionSetter SetOffsetIncrement =
    SizeOrPercent<&engine::RegionOptions::offset_increment,
                  &engine::RegionOptions::offset_increment_percent,
                  &RunOptions::offset_increment_zones>;
constexpr OptionSetter SetIoSize = SizeOrZones<&RunOptions::io_size_zones, &engine::JobSpec::region,
                                               &engine::RegionOptions::io_size>;

void ParseBsRange(const std::string& part, bool writes, const ValueContext& context,
                  engine::JobSpec& spec) {
  const size_t dash = part.find('-');
  if (dash == std::string::npos) {
    throw UsageError("--bsrange: expected MIN-MAX, e.g. 4k-64k (R,W per direction)");
  }
  (writes ? spec.blocks.bs_min_w : spec.blocks.bs_min) =
      ParseBs(part.substr(0, dash), "bsrange", context);
  (writes ? spec.blocks.bs_max_w : spec.blocks.bs_max) =
      ParseBs(part.substr(dash + 1), "bsrange", context);
}

// fio's bssplit: BS/PERCENT entries; those without a percentage share what the others leave
// evenly (fio's whole-number division), the remainder going to the last entry with a share, where
// fio's draw lands when it passes the others (bssplit=4k/50:64k is 4k/50:64k/50, 128k is 128k/100).
void ParseBsSplit(const std::string& part, bool writes, const ValueContext& context,
                  engine::JobSpec& spec) {
  auto& split = writes ? spec.blocks.bssplit_w : spec.blocks.bssplit;
  split.clear();
  const std::string args[] = {part};
  std::vector<bool> shared;  // entries without a percentage
  uint64_t given = 0;
  stats::ForEachListItem(args, ":", [&](std::string_view one, const std::string&) {
    const size_t slash = one.find('/');
    const uint32_t percent =
        slash == std::string_view::npos ? 0 : ParseU32(one.substr(slash + 1), "bssplit", context);
    split.push_back({ParseBs(one.substr(0, slash), "bssplit", context), percent});
    shared.push_back(slash == std::string_view::npos);
    given += percent;
  });
  const auto missing = static_cast<uint32_t>(std::count(shared.begin(), shared.end(), true));
  if (missing == 0) return;
  if (given > 100) {
    throw UsageError(fmt::format(
        "--bssplit: the percentages given add up to {}, leaving nothing for the entries without "
        "one",
        given));
  }
  const auto each = static_cast<uint32_t>((100 - given) / missing);
  for (size_t i = 0; i < split.size(); ++i) {
    if (shared[i]) split[i].percent = each;
  }
  const auto remainder = static_cast<uint32_t>(100 - given - uint64_t{each} * missing);
  for (size_t i = split.size(); i-- > 0;) {
    if (split[i].percent != 0) {
      split[i].percent += remainder;
      break;
    }
  }
}

using engine::JobSpec;
using enum ValueType;

// The rows of the table below from cpus_allowed on: where the workers run, and when.
const std::vector<OptionDef>& CpuAndTimeRows() {
  static const std::vector<OptionDef> table = {
      Labeled("CPUS", {"cpus_allowed", kText,
                       [](RunOptions& o, const OptionValue& v) {
                         o.spec.placement.cpus_allowed = ParseCpuList(v.text, v.option, v.context);
                       },
                       "CPUs for the workers, e.g. 0-1,3", "all"}),
      Labeled("MASK",
              {"cpumask", kText,
               [](RunOptions& o, const OptionValue& v) {
                 // fio's bitmask of CPUs (decimal, or 0x hex): 34 = CPUs 1 and 5.
                 const std::string_view t = v.text;
                 const bool hex = t.starts_with("0x") || t.starts_with("0X");
                 uint64_t mask = 0;
                 const char* first = t.data() + (hex ? 2 : 0);
                 const auto [p, ec] =
                     std::from_chars(first, t.data() + t.size(), mask, hex ? 16 : 10);
                 if (ec != std::errc() || p != t.data() + t.size() || first == p || mask == 0) {
                   throw UsageError(fmt::format(
                       "--{}: expected a bitmask of CPUs (34 or 0x22: CPUs 1 and 5), got '{}'",
                       v.option, v.text));
                 }
                 o.spec.placement.cpus_allowed.clear();
                 for (int cpu = 0; cpu < 64; ++cpu) {
                   if (mask >> cpu & 1) o.spec.placement.cpus_allowed.push_back(cpu);
                 }
               },
               "CPUs for the workers as a bitmask (34 or 0x22: CPUs 1 and 5), as --cpus_allowed"}),
      Labeled("NODES",
              {"numa_cpu_nodes", kText,
               [](RunOptions& o, const OptionValue& v) {
                 o.spec.placement.numa_cpu_nodes = ParseNumaNodes(v.text, v.option, v.context);
               },
               "run the workers on these NUMA nodes' CPUs (0,2-3 or all; within --cpus_allowed)"}),
      Labeled("POLICY[:NODES]",
              {"numa_mem_policy", kText,
               [](RunOptions& o, const OptionValue& v) {
                 o.spec.placement.numa_mem_policy = ParseNumaMemPolicy(v.text, v.option, v.context);
               },
               "default|prefer:NODE|bind:NODES|interleave:NODES|local: the workers' memory policy "
               "(set_mempolicy)"}),
      Labeled("N", {"randseed", kText,
                    [](RunOptions& o, const OptionValue& v) {
                      uint64_t s = 0;
                      const std::string& t = v.text;
                      const auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), s);
                      if (ec != std::errc() || p != t.data() + t.size())
                        throw UsageError(fmt::format("--{}: expected a whole number", v.option));
                      o.spec.randseed = s;
                    },
                    "random seed"}),
      {"runtime", kTime, JobField<&JobSpec::runtime_ns>, "run time (3s, 500ms; bare = seconds)",
       "no limit", Also("timeout")},
      Row<kFlag, &JobSpec::time_based>("time_based", "run for --runtime, looping over the region"),
      Labeled("SIZE|Nz", {"io_size", kText, SetIoSize, "bytes per clone (or Nz: N zones)",
                          "one pass over size", Also("io_limit")}),
      Row<kTime, &JobSpec::ramp_time_ns>("ramp_time", "warm-up time, not recorded", "0"),
      Row<kFlag, &JobSpec::syncs, &SyncOptions::end_fsync>("end_fsync", "fsync files at the end"),
      Row<kFlag, &JobSpec::allow_destructive>(
          "allow_destructive",
          "allow writing over a device or export with a signature (never a mounted one)"),
      Labeled("EPOCH_MS",
              {"start_at", kText,
               [](RunOptions& o, const OptionValue& v) {
                 uint64_t ms = 0;
                 const std::string& t = v.text;
                 const auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), ms);
                 if (ec != std::errc() || p != t.data() + t.size() || ms < 1'000'000'000'000u) {
                   throw UsageError(
                       fmt::format("--start_at: expected Unix epoch milliseconds, got '{}'", t));
                 }
                 o.spec.start_at_ms = ms;
               },
               "start at this Unix epoch time in ms (hosts start together)", "now"}),
  };
  return table;
}

const std::vector<OptionDef>& Table() {
  static const std::vector<OptionDef> table = JoinRows(
      {
          {"help",
           kChoice,
           RunField<&RunSettings::help>,
           "show this help (markdown: every option as docs/run-options.md; man: the iotail-run(1) "
           "page)",
           "",
           Also(),
           {{"1", 1}, {"0", 0}, {"markdown", 2}, {"man", 3}},
           OptionScope::kRun},
          Labeled("NAME",
                  {"name", kText, JobField<&JobSpec::name>, "job name; each --name starts a job"}),
          Labeled("FILE[:FILE...]",
                  {"filename", kText, ParseFilenames,
                   "target file(s) or block device(s), ':'-separated ('\\:' for a colon)"}),
          Labeled("SIZE|N%|Nz",
                  {"size", kText, SetSize,
                   "bytes per clone, divided among its files (or N% of each, or Nz: N "
                   "zones); made if missing",
                   "the whole file or device"}),
          Labeled("SIZE|N%|Nz", {"offset", kText, SetOffset,
                                 "start offset in each file (or N% of it, or Nz: N zones)", "0"}),
          Labeled("SIZE|N%|Nz", {"offset_increment", kText, SetOffsetIncrement,
                                 "clone i starts at offset + i x this (or N% of the file, aligned "
                                 "up to the bs; or Nz)",
                                 "0"}),
          Labeled(
              "read|write|randread|randwrite|rw|randrw|trim|randtrim[:N]",
              {"rw", kText,
               [](RunOptions& o, const OptionValue& v) { ParseRw(v.text, v.option, v.context, o); },
               "read|write|randread|randwrite|rw|randrw|trim|randtrim; :N as fio (read:4k skips 4k "
               "after each I/O, read:-8k goes backwards, randread:8 takes a new random offset "
               "every "
               "8 I/Os)",
               "read", Also("readwrite")}),
          Row<kCount, &JobSpec::rwmixread>("rwmixread", "% reads in rw/randrw", "50"),
          {"rwmixwrite", kCount,
           [](RunOptions& o, const OptionValue& v) {
             o.spec.rwmixread = 100 - static_cast<uint32_t>(v.number);
           },
           "% writes in rw/randrw", "50", Also(), Choices(), OptionScope::kJob, 0, 100},
          Labeled("SIZE[,SIZE]", {"bs", kText,
                                  [](RunOptions& o, const OptionValue& v) {
                                    ParseBlockSizes(v.text, v.option, v.context, o.spec);
                                  },
                                  "block size, or R,W per direction as fio (8k,32k; ,8k)", "4k",
                                  Also("blocksize")}),
          Labeled(
              "MIN-MAX[,MIN-MAX]",
              {"bsrange", kText,
               [](RunOptions& o, const OptionValue& v) { PerDirection(v, o.spec, ParseBsRange); },
               "MIN-MAX block sizes (multiples of MIN), or R,W per direction", "",
               Also("blocksize_range")}),
          Labeled(
              "BS/PCT:...[,...]",
              {"bssplit", kText,
               [](RunOptions& o, const OptionValue& v) { PerDirection(v, o.spec, ParseBsSplit); },
               "block size shares, e.g. 4k/70:64k/30 (an entry without /PERCENT shares what is "
               "left), or "
               "R,W "
               "per direction"}),
          Row<kFlag, &JobSpec::direct>("direct", "O_DIRECT"),
          {"buffered", kFlag,
           [](RunOptions& o, const OptionValue& v) { o.spec.direct = v.number == 0; },
           "buffered I/O: the inverse of --direct, on the same setting (the later one wins)", "1"},
          Row<kCount, &JobSpec::numjobs>("numjobs", "clones of the job (worker threads)", "1"),
      },
      CpuAndTimeRows());

  return table;
}

}  // namespace

std::span<const OptionDef> CoreOptionTable() { return Table(); }

std::string RunDescription() {
  return std::string(
      "Drives I/O at files or block devices and reports latency as fio does. Without --filename\n"
      "it runs a short default benchmark, filling in only what was not given (4k random reads,\n"
      "QD32 with the best engine available, 3 s time_based unless size, io_size, number_ios or\n"
      "loops is given, on a 64 MiB temporary file in the current directory, removed\n"
      "afterwards, none with the null engine; logs to iotail_clat_hist.1.log).\n"
      "A job without --ioengine runs psync (one I/O at a time), as in fio.\n\n"
      "Rate-limited open loop: --rate_iops or --rate schedules every I/O's start in advance\n"
      "(linear or poisson); a late I/O keeps its intended start, so `olat` (intended start to\n"
      "completion, PREFIX_lat_hist.N.log, JSON iotail_olat_ns) shows backlog while `clat` (submit\n"
      "to completion) shows the device; fio's lat_ns stays start to completion. Live lines go to\n"
      "stderr, the summary to stdout.\n"
      "Exit status: 0 ok; 1 I/O errors or a system failure; 2 bad options; 3 an --sla target\n"
      "was violated; 130/143 interrupted by SIGINT/SIGTERM (summary and logs still complete).\n"
      "Precedence: 1, then 130/143, then 3.\n");
}

std::string RunUsage() {
  return "usage: iotail run [options]\n" + RunDescription() + OptionsHelp();
}

}  // namespace iotail::cli
