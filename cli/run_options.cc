#include "cli/run_options.h"

#include <fmt/format.h>

#include <array>
#include <charconv>
#include <cmath>
#include <functional>

#include "cli/option_table.h"
#include "stats/core/errors.h"
#include "stats/core/percentiles.h"
#include "stats/core/sla.h"

namespace iotail::cli {

using stats::UsageError;

namespace {

uint32_t ParseBs(std::string_view text, std::string_view option) {
  const uint64_t v = ParseSize(text, option);
  if (v == 0 || v > UINT32_MAX)
    throw UsageError(fmt::format("--{}: bad block size '{}'", option, text));
  return static_cast<uint32_t>(v);
}

// fio's rw=MODE[:N]: the offset modifier is a gap in bytes after each sequential I/O, or the number
// of I/Os per random offset (the ones between are sequential).
void ParseRw(const std::string& v, std::string_view option, RunOptions& o) {
  const size_t colon = v.find(':');
  const std::string mode = v.substr(0, colon);
  if (mode == "trimwrite" || mode == "randtrimwrite") {
    throw UsageError(
        fmt::format("--{}: '{}' is not supported (trim and randtrim are)", option, mode));
  }
  o.spec.rw = engine::ParseRwMode(mode);
  o.rw_given = true;
  o.spec.rw_modifier = 0;
  if (colon == std::string::npos) return;
  const std::string n = v.substr(colon + 1);
  o.spec.rw_modifier = o.spec.IsRandom() ? ParseU32(n, option) : ParseSize(n, option);
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
void PerDirection(const std::string& v, std::string_view option, engine::JobSpec& spec,
                  void (*apply)(const std::string&, bool, engine::JobSpec&)) {
  const size_t comma = v.find(',');
  if (comma == std::string::npos) {
    apply(v, false, spec);
    spec.bs_write_own = false;
    return;
  }
  const std::string r = v.substr(0, comma), w = v.substr(comma + 1);
  if (w.find(',') != std::string::npos && w.substr(w.find(',') + 1) != "") {
    throw UsageError(fmt::format("--{}: iotail does not do trims (R,W only), got '{}'", option, v));
  }
  const std::string writes = w.substr(0, w.find(','));
  spec.bs_write_own = true;
  if (!r.empty()) apply(r, false, spec);
  if (!writes.empty()) apply(writes, true, spec);
}

// fio's bs=int[,int][,int]: one value for every direction, or reads, writes (and trims, which
// iotail does not do) separated by commas, an empty one keeping the default (4k): "8k,32k",
// ",8k", "8k," (writes at the default).
void ParseBlockSizes(const std::string& v, std::string_view option, engine::JobSpec& spec) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (;;) {
    const size_t comma = v.find(',', start);
    parts.push_back(v.substr(start, comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (parts.size() > 3) {
    throw UsageError(
        fmt::format("--{}: at most 3 values (reads,writes,trims), got '{}'", option, v));
  }
  if (parts.size() == 1) {
    spec.bs = ParseBs(parts[0], option);
    spec.bs_dir = {};
    return;
  }
  const std::array<uint32_t, 2> sizes = {parts[0].empty() ? 4096u : ParseBs(parts[0], option),
                                         parts[1].empty() ? 4096u : ParseBs(parts[1], option)};
  spec.bs = std::min(sizes[0], sizes[1]);
  spec.bs_dir = sizes;
}

const std::vector<OptionDef>& Table() {
  using engine::JobSpec;
  static const std::vector<OptionDef> table = {
      {"help", true, "show this help",
       [](RunOptions& o, const std::string& v) { o.help = ParseBool(v, "help"); }},
      {"name", false, "job name", [](RunOptions& o, const std::string& v) { o.spec.name = v; }},
      {"filename", false, "target file(s) or block device(s), ':'-separated ('\\:' for a colon)",
       [](RunOptions& o, const std::string& v) {
         // fio's rule: ':' separates names, '\:' is a colon inside one.
         o.spec.filenames.assign(1, "");
         for (size_t i = 0; i < v.size(); ++i) {
           if (v[i] == '\\' && i + 1 < v.size() && v[i + 1] == ':') {
             o.spec.filenames.back() += ':';
             ++i;
           } else if (v[i] == ':') {
             o.spec.filenames.emplace_back();
           } else {
             o.spec.filenames.back() += v[i];
           }
         }
       }},
      {"size", false, "bytes per file (created if missing); default: whole file/device",
       [](RunOptions& o, const std::string& v) {
         if (v.ends_with('%')) {
           o.spec.size_percent = ParsePercent(v, "size");
           o.spec.size = 0;
         } else {
           o.spec.size = ParseSize(v, "size");
           o.spec.size_percent = 0;
         }
         o.size_given = true;
       }},
      {"offset", false, "start offset in each file",
       [](RunOptions& o, const std::string& v) {
         if (v.ends_with('%')) {
           o.spec.offset_percent = ParsePercent(v, "offset");
           o.spec.offset = 0;
         } else {
           o.spec.offset = ParseSize(v, "offset");
           o.spec.offset_percent = 0;
         }
       }},
      {"rw", false,
       "read|write|randread|randwrite|rw|randrw (default read); :N as fio (read:4k skips 4k after "
       "each I/O, randread:8 takes a new random offset every 8 I/Os)",
       [](RunOptions& o, const std::string& v) { ParseRw(v, "rw", o); }},
      {"readwrite", false, "same as --rw",
       [](RunOptions& o, const std::string& v) { ParseRw(v, "readwrite", o); }},
      {"rwmixread", false, "% reads in rw/randrw (default 50)",
       [](RunOptions& o, const std::string& v) { o.spec.rwmixread = ParseU32(v, "rwmixread"); }},
      {"rwmixwrite", false, "% writes in rw/randrw",
       [](RunOptions& o, const std::string& v) {
         const uint32_t w = ParseU32(v, "rwmixwrite");
         if (w > 100) throw UsageError("--rwmixwrite: expected 0..100");
         o.spec.rwmixread = 100 - w;
       }},
      {"bs", false, "block size (default 4k), or R,W per direction as fio (8k,32k; ,8k)",
       [](RunOptions& o, const std::string& v) { ParseBlockSizes(v, "bs", o.spec); }},
      {"blocksize", false, "same as --bs",
       [](RunOptions& o, const std::string& v) { ParseBlockSizes(v, "blocksize", o.spec); }},
      {"bsrange", false, "MIN-MAX block sizes (multiples of MIN), or R,W per direction",
       [](RunOptions& o, const std::string& v) {
         PerDirection(
             v, "bsrange", o.spec, [](const std::string& part, bool writes, engine::JobSpec& spec) {
               const size_t dash = part.find('-');
               if (dash == std::string::npos) {
                 throw UsageError("--bsrange: expected MIN-MAX, e.g. 4k-64k (R,W per direction)");
               }
               (writes ? spec.bs_min_w : spec.bs_min) = ParseBs(part.substr(0, dash), "bsrange");
               (writes ? spec.bs_max_w : spec.bs_max) = ParseBs(part.substr(dash + 1), "bsrange");
             });
       }},
      {"blocksize_range", false, "same as --bsrange",
       [](RunOptions& o, const std::string& v) {
         o.spec.bs_min = o.spec.bs_max = 0;
         FindRunOption("bsrange")->apply(o, v);
       }},
      {"bssplit", false, "block size shares, e.g. 4k/70:64k/30, or R,W per direction",
       [](RunOptions& o, const std::string& v) {
         PerDirection(
             v, "bssplit", o.spec, [](const std::string& part, bool writes, engine::JobSpec& spec) {
               auto& split = writes ? spec.bssplit_w : spec.bssplit;
               split.clear();
               size_t start = 0;
               for (;;) {
                 const size_t colon = part.find(':', start);
                 const std::string one = part.substr(start, colon - start);
                 const size_t slash = one.find('/');
                 if (slash == std::string::npos) {
                   throw UsageError(
                       "--bssplit: expected BS/PERCENT[:BS/PERCENT...] (R,W per direction)");
                 }
                 split.push_back({ParseBs(one.substr(0, slash), "bssplit"),
                                  ParseU32(one.substr(slash + 1), "bssplit")});
                 if (colon == std::string::npos) break;
                 start = colon + 1;
               }
             });
       }},
      {"direct", true, "O_DIRECT (default 0)",
       [](RunOptions& o, const std::string& v) {
         o.spec.direct = ParseBool(v, "direct");
         o.direct_given = true;
       }},
      {"iodepth", false, "I/Os in flight per job (default 1)",
       [](RunOptions& o, const std::string& v) {
         o.spec.iodepth = ParseU32(v, "iodepth");
         o.iodepth_given = true;
       }},
      {"iodepth_batch_submit", false,
       "at most N I/Os per submit call (default 1, as fio; 0: all that are ready)",
       [](RunOptions& o, const std::string& v) {
         o.spec.iodepth_batch_submit = ParseU32(v, "iodepth_batch_submit");
       }},
      {"iodepth_batch", false, "same as --iodepth_batch_submit",
       [](RunOptions& o, const std::string& v) {
         o.spec.iodepth_batch_submit = ParseU32(v, "iodepth_batch");
       }},
      {"iodepth_batch_complete_min", false,
       "wait for N completions (default 1; more stamps the early ones late)",
       [](RunOptions& o, const std::string& v) {
         o.spec.iodepth_batch_complete_min = ParseU32(v, "iodepth_batch_complete_min");
       }},
      {"iodepth_batch_complete", false, "same as --iodepth_batch_complete_min",
       [](RunOptions& o, const std::string& v) {
         o.spec.iodepth_batch_complete_min = ParseU32(v, "iodepth_batch_complete");
       }},
      {"iodepth_batch_complete_max", false,
       "take at most N completions per reap (default 0: iodepth; fewer stamps the rest late)",
       [](RunOptions& o, const std::string& v) {
         o.spec.iodepth_batch_complete_max = ParseU32(v, "iodepth_batch_complete_max");
       }},
      {"numjobs", false, "worker threads (default 1)",
       [](RunOptions& o, const std::string& v) { o.spec.numjobs = ParseU32(v, "numjobs"); }},
      {"cpus_allowed", false, "CPUs for the workers, e.g. 0-1,3",
       [](RunOptions& o, const std::string& v) {
         o.spec.cpus_allowed = ParseCpuList(v, "cpus_allowed");
       }},
      {"randseed", false, "random seed",
       [](RunOptions& o, const std::string& v) {
         uint64_t s = 0;
         const auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), s);
         if (ec != std::errc() || p != v.data() + v.size())
           throw UsageError("--randseed: expected a whole number");
         o.spec.randseed = s;
       }},
      {"zero_buffers", true, "write zeros instead of random data",
       [](RunOptions& o, const std::string& v) {
         o.spec.zero_buffers = ParseBool(v, "zero_buffers");
       }},
      {"runtime", false, "run time (3s, 500ms; bare = seconds)",
       [](RunOptions& o, const std::string& v) {
         o.spec.runtime_ns = ParseTimeNs(v, "runtime");
         o.runtime_given = true;
       }},
      {"time_based", true, "run for --runtime, looping over the region",
       [](RunOptions& o, const std::string& v) { o.spec.time_based = ParseBool(v, "time_based"); }},
      {"io_size", false, "bytes per job (default one pass over size)",
       [](RunOptions& o, const std::string& v) { o.spec.io_size = ParseSize(v, "io_size"); }},
      {"ramp_time", false, "warm-up time not recorded",
       [](RunOptions& o, const std::string& v) {
         o.spec.ramp_time_ns = ParseTimeNs(v, "ramp_time");
       }},
      {"end_fsync", true, "fsync files at the end",
       [](RunOptions& o, const std::string& v) { o.spec.end_fsync = ParseBool(v, "end_fsync"); }},
      {"uri", false,
       "NBD server for --ioengine=nbd: nbd://HOST[:PORT]/EXPORT, nbd+unix:///EXPORT?socket=PATH",
       [](RunOptions& o, const std::string& v) {
         if (v.empty()) throw stats::UsageError("--uri: empty");
         o.spec.uri = v;
       }},
      {"ioengine", false,
       "io_uring|libaio|psync|null|nbd (default: best available; nbd with --uri)",
       [](RunOptions& o, const std::string& v) {
         o.spec.ioengine = engine::ParseEngineKind(v);
         o.ioengine_given = true;
       }},
      {"sqthread_poll", true, "io_uring: kernel submission thread (SQPOLL)",
       [](RunOptions& o, const std::string& v) {
         o.spec.sqthread_poll = ParseBool(v, "sqthread_poll");
       }},
      {"hipri", true, "io_uring: polled completions (IOPOLL; NVMe poll queues)",
       [](RunOptions& o, const std::string& v) { o.spec.hipri = ParseBool(v, "hipri"); }},
      {"continue_on_error", true,
       "none|read|write|io|all (1 = all): count those I/O errors and keep going",
       [](RunOptions& o, const std::string& v) {
         auto& c = o.spec.continue_on_error;
         if (v == "none" || v == "0") {
           c = {false, false};
         } else if (v == "read") {
           c = {true, false};
         } else if (v == "write") {
           c = {false, true};
         } else if (v == "io" || v == "all" || v == "1") {
           c = {true, true};
         } else if (v == "verify") {
           c = {false, false};  // iotail does not verify: no verify errors to continue on
         } else {
           throw UsageError(fmt::format(
               "--continue_on_error: expected none, read, write, io, verify, all, 0 or 1, got '{}'",
               v));
         }
       }},
      {"allow_destructive", true, "allow writing over a device with a signature or mount",
       [](RunOptions& o, const std::string& v) {
         o.spec.allow_destructive = ParseBool(v, "allow_destructive");
       }},
      {"rate_iops", false, "open loop at N I/Os per second in all (over all jobs), or R,W",
       [](RunOptions& o, const std::string& v) { ParseRate(v, "rate_iops", false, o.spec); }},
      {"rate", false, "open loop at N bytes per second (1m = 1 MiB/s) in all, or R,W",
       [](RunOptions& o, const std::string& v) { ParseRate(v, "rate", true, o.spec); }},
      {"rate_process", false, "linear|poisson: spacing of scheduled I/Os (default linear)",
       [](RunOptions& o, const std::string& v) {
         if (v == "linear") {
           o.spec.rate_poisson = false;
         } else if (v == "poisson") {
           o.spec.rate_poisson = true;
         } else {
           throw UsageError(fmt::format("--rate_process: expected linear or poisson, got '{}'", v));
         }
       }},
      {"start_at", false, "start at this Unix epoch time in ms (hosts start together)",
       [](RunOptions& o, const std::string& v) {
         uint64_t ms = 0;
         const auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), ms);
         if (ec != std::errc() || p != v.data() + v.size() || ms < 1'000'000'000'000u) {
           throw UsageError(
               fmt::format("--start_at: expected Unix epoch milliseconds, got '{}'", v));
         }
         o.spec.start_at_ms = ms;
       }},
      {"status_interval", false, "live line every T (default: the log period)",
       [](RunOptions& o, const std::string& v) {
         const uint64_t ns = ParseTimeNs(v, "status_interval");
         if (ns < 1'000'000 || ns % 1'000'000 != 0) {
           throw UsageError("--status-interval: expected whole milliseconds, at least 1ms");
         }
         o.status_interval_ms = ns / 1'000'000;
       }},
      {"live_format", false, "text|json|none: live lines on stderr (default text)",
       [](RunOptions& o, const std::string& v) {
         if (v == "text") {
           o.live_format = stats::LiveFormat::kText;
         } else if (v == "json") {
           o.live_format = stats::LiveFormat::kJson;
         } else if (v == "none") {
           o.live_format = stats::LiveFormat::kNone;
         } else {
           throw UsageError(fmt::format("--live-format: expected text, json or none, got '{}'", v));
         }
       }},
      {"sla", false,
       "latency target per interval, e.g. read:p99<=2ms (repeatable; exit 3 if broken)",
       [](RunOptions& o, const std::string& v) {
         const std::string args[] = {v};
         (void)stats::ParseSlaTargets(args, "--sla");  // bad targets fail here, naming --sla
         o.sla.push_back(v);
       }},
      {"write_hist_log", false, "write PREFIX_clat_hist.N.log histogram logs",
       [](RunOptions& o, const std::string& v) { o.spec.write_hist_log = v; }},
      {"log_hist_msec", false, "log period in ms (default 1000), epoch-aligned",
       [](RunOptions& o, const std::string& v) {
         o.spec.log_hist_msec = ParseU32(v, "log_hist_msec");
         o.log_hist_msec_given = true;
       }},
      {"log_hist_coarseness", false, "0..6: sum 2^c buckets per column",
       [](RunOptions& o, const std::string& v) {
         o.spec.log_hist_coarseness = static_cast<int>(ParseU32(v, "log_hist_coarseness"));
       }},
      {"log_hist_groups", false,
       "29 or 59 bucket groups per log line (29: fio's, clamped at 17.18 s; 59: every latency "
       "kept)",
       [](RunOptions& o, const std::string& v) {
         o.spec.log_hist_groups = static_cast<int>(ParseU32(v, "log_hist_groups"));
       }},
      {"log_unix_epoch", true, "log times as Unix epoch ms",
       [](RunOptions& o, const std::string& v) {
         o.spec.log_unix_epoch = ParseBool(v, "log_unix_epoch");
       }},
      {"output_format", false,
       "normal|json|json+|terse, or several: normal,json (json+ adds the latency bins, as fio)",
       [](RunOptions& o, const std::string& v) {
         o.output_formats.clear();
         size_t start = 0;
         for (;;) {
           const size_t comma = v.find(',', start);
           const std::string one = v.substr(start, comma - start);
           if (one == "normal") {
             o.output_formats.push_back(OutputFormat::kNormal);
           } else if (one == "json") {
             o.output_formats.push_back(OutputFormat::kJson);
           } else if (one == "json+") {
             o.output_formats.push_back(OutputFormat::kJsonPlus);
           } else if (one == "terse") {
             o.output_formats.push_back(OutputFormat::kTerse);
           } else {
             throw UsageError(fmt::format(
                 "--output-format: expected normal, json, json+ or terse (or a list: normal,json), "
                 "got '{}'",
                 one));
           }
           if (comma == std::string::npos) break;
           start = comma + 1;
         }
         o.output_format = o.output_formats.front();
       }},
      {"minimal", true, "fio's terse output (as --output-format=terse)",
       [](RunOptions& o, const std::string& v) {
         if (ParseBool(v, "minimal")) {
           o.output_formats = {OutputFormat::kTerse};
           o.output_format = OutputFormat::kTerse;
         }
       }},
      {"output", false, "write the summary to FILE",
       [](RunOptions& o, const std::string& v) { o.output = v; }},
      {"percentile_list", false, "percentiles, e.g. 50:99:99.9 (default fio's list)",
       [](RunOptions& o, const std::string& v) {
         const std::string args[] = {v};
         o.percentiles = stats::ParsePercentileList(args, "--percentile_list");
       }},
  };
  return table;
}

}  // namespace

std::span<const OptionDef> CoreOptionTable() { return Table(); }

std::vector<std::span<const OptionDef>> AllOptionTables() {
  return {CoreOptionTable(), IoBehaviourOptionTable(), JobControlOptionTable(), LogOptionTable()};
}

const OptionDef* FindRunOption(std::string_view name) {
  for (auto table : AllOptionTables()) {
    for (const OptionDef& d : table) {
      if (name == d.name) return &d;
    }
  }
  return nullptr;
}

std::vector<std::string_view> RunOptionNames() {
  std::vector<std::string_view> names;
  for (auto table : AllOptionTables()) {
    for (const OptionDef& d : table) names.emplace_back(d.name);
  }
  return names;
}

std::string RunUsage() {
  std::string out =
      "usage: iotail run [options]\n"
      "Drives I/O at files or block devices and reports latency as fio does. Without --filename\n"
      "it runs a short default benchmark (4k random reads, QD32, 3 s, on a 64 MiB temporary file\n"
      "in the current directory, removed afterwards; logs to "
      "iotail_clat_hist.1.log).\n\n"
      "Rate-limited open loop: --rate_iops or --rate schedules every I/O's start in advance\n"
      "(linear or poisson); a late I/O keeps its intended start, so `lat` (intended start to\n"
      "completion, PREFIX_lat_hist.N.log, JSON lat_ns) shows backlog while `clat` (submit to\n"
      "completion) shows the device. Live lines go to stderr, the summary to stdout.\n"
      "Exit status: 0 ok; 1 I/O errors or a system failure; 2 bad options; 3 an --sla target\n"
      "was violated; 130/143 interrupted by SIGINT/SIGTERM (summary and logs still complete).\n"
      "Precedence: 1, then 130/143, then 3.\n\noptions:\n";
  for (auto table : AllOptionTables()) {
    for (const OptionDef& d : table) {
      out += fmt::format("  --{:<28} {}\n", std::string(d.name) + (d.boolean ? "" : "=V"), d.help);
    }
  }
  return out;
}

}  // namespace iotail::cli
