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
#include "stats/util/option_text.h"

namespace iotail::cli {

using stats::UsageError;

namespace {

uint32_t ParseBs(std::string_view text, std::string_view option) {
  const uint64_t v = ParseSize(text, option);
  if (v == 0 || v > UINT32_MAX)
    throw UsageError(fmt::format("--{}: bad block size '{}'", option, text));
  return static_cast<uint32_t>(v);
}

// fio's rw=MODE[:N]: the offset modifier is a gap in bytes after each sequential I/O (negative:
// backwards, rw=read:-8k), or the number of I/Os per random offset (the ones between are
// sequential).
void ParseRw(const std::string& v, std::string_view option, RunOptions& o) {
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
    o.spec.rw_modifier = ParseU32(n, option);
    return;
  }
  const bool backwards = n.starts_with('-');
  const uint64_t gap = ParseSize(backwards ? n.substr(1) : n, option);
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
  std::vector<std::string_view> parts;
  const std::string args[] = {v};
  stats::ForEachListItem(args, ",",
                         [&](std::string_view item, const std::string&) { parts.push_back(item); });
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

// fio's ':'-separated file names, '\:' being a colon inside one.
void ParseFilenames(RunOptions& o, const OptionValue& v) {
  const std::string& text = v.text;
  o.spec.filenames.assign(1, "");
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 1 < text.size() && text[i + 1] == ':') {
      o.spec.filenames.back() += ':';
      ++i;
    } else if (text[i] == ':') {
      o.spec.filenames.emplace_back();
    } else {
      o.spec.filenames.back() += text[i];
    }
  }
}

// A size or "N%" of each file's size, into the bytes or the percentage (the other cleared).
template <uint64_t engine::JobSpec::*Bytes, double engine::JobSpec::*Percent>
void SizeOrPercent(RunOptions& o, const OptionValue& v) {
  if (v.text.ends_with('%')) {
    o.spec.*Percent = ParsePercent(v.text, v.option);
    o.spec.*Bytes = 0;
  } else {
    o.spec.*Bytes = ParseSize(v.text, v.option);
    o.spec.*Percent = 0;
  }
}

void ParseBsRange(const std::string& part, bool writes, engine::JobSpec& spec) {
  const size_t dash = part.find('-');
  if (dash == std::string::npos) {
    throw UsageError("--bsrange: expected MIN-MAX, e.g. 4k-64k (R,W per direction)");
  }
  (writes ? spec.bs_min_w : spec.bs_min) = ParseBs(part.substr(0, dash), "bsrange");
  (writes ? spec.bs_max_w : spec.bs_max) = ParseBs(part.substr(dash + 1), "bsrange");
}

void ParseBsSplit(const std::string& part, bool writes, engine::JobSpec& spec) {
  auto& split = writes ? spec.bssplit_w : spec.bssplit;
  split.clear();
  const std::string args[] = {part};
  stats::ForEachListItem(args, ":", [&](std::string_view one, const std::string&) {
    const size_t slash = one.find('/');
    if (slash == std::string_view::npos) {
      throw UsageError("--bssplit: expected BS/PERCENT[:BS/PERCENT...] (R,W per direction)");
    }
    split.push_back(
        {ParseBs(one.substr(0, slash), "bssplit"), ParseU32(one.substr(slash + 1), "bssplit")});
  });
}

void ParseOutputFormats(RunOptions& o, const OptionValue& v) {
  static const OptionDef kFormat = {"output_format",
                                    ValueType::kChoice,
                                    nullptr,
                                    "",
                                    "",
                                    {},
                                    {{"normal", static_cast<int>(OutputFormat::kNormal)},
                                     {"json", static_cast<int>(OutputFormat::kJson)},
                                     {"json+", static_cast<int>(OutputFormat::kJsonPlus)},
                                     {"terse", static_cast<int>(OutputFormat::kTerse)}}};
  o.output_formats.clear();
  const std::string args[] = {v.text};
  stats::ForEachListItem(args, ",", [&](std::string_view one, const std::string&) {
    const OptionValue format = ParseOptionValue(kFormat, v.option, std::string(one));
    o.output_formats.push_back(static_cast<OutputFormat>(format.number));
  });
  o.output_format = o.output_formats.front();
}

using engine::JobSpec;
using enum ValueType;

const std::vector<OptionDef>& Table() {
  static const std::vector<OptionDef> table = {
      {"help",
       kChoice,
       RunField<&RunOptions::help>,
       "show this help (markdown: every option as docs/run-options.md)",
       "",
       {},
       {{"1", 1}, {"0", 0}, {"markdown", 2}},
       OptionScope::kRun},
      {"name", kText, JobField<&JobSpec::name>, "job name; each --name starts a job"},
      {"filename", kText, ParseFilenames,
       "target file(s) or block device(s), ':'-separated ('\\:' for a colon)"},
      {"size", kText, SizeOrPercent<&JobSpec::size, &JobSpec::size_percent>,
       "bytes per clone, divided among its files (or N% of each); created if missing",
       "the whole file or device"},
      {"offset", kText, SizeOrPercent<&JobSpec::offset, &JobSpec::offset_percent>,
       "start offset in each file (or N% of it)", "0"},
      {"offset_increment", kText,
       SizeOrPercent<&JobSpec::offset_increment, &JobSpec::offset_increment_percent>,
       "clone i starts at offset + i x this (or N% of the file; then aligned up to the bs)", "0"},
      {"rw",
       kText,
       [](RunOptions& o, const OptionValue& v) { ParseRw(v.text, v.option, o); },
       "read|write|randread|randwrite|rw|randrw|trim|randtrim; :N as fio (read:4k skips 4k after "
       "each I/O, read:-8k goes backwards, randread:8 takes a new random offset every 8 I/Os)",
       "read",
       {"readwrite"}},
      {"rwmixread", kCount, JobField<&JobSpec::rwmixread>, "% reads in rw/randrw", "50"},
      {"rwmixwrite",
       kCount,
       [](RunOptions& o, const OptionValue& v) {
         o.spec.rwmixread = 100 - static_cast<uint32_t>(v.number);
       },
       "% writes in rw/randrw",
       "50",
       {},
       {},
       OptionScope::kJob,
       0,
       100},
      {"bs",
       kText,
       [](RunOptions& o, const OptionValue& v) { ParseBlockSizes(v.text, v.option, o.spec); },
       "block size, or R,W per direction as fio (8k,32k; ,8k)",
       "4k",
       {"blocksize"}},
      {"bsrange",
       kText,
       [](RunOptions& o, const OptionValue& v) {
         PerDirection(v.text, v.option, o.spec, ParseBsRange);
       },
       "MIN-MAX block sizes (multiples of MIN), or R,W per direction",
       "",
       {"blocksize_range"}},
      {"bssplit", kText,
       [](RunOptions& o, const OptionValue& v) {
         PerDirection(v.text, v.option, o.spec, ParseBsSplit);
       },
       "block size shares, e.g. 4k/70:64k/30, or R,W per direction"},
      {"direct", kFlag, JobField<&JobSpec::direct>, "O_DIRECT", "0"},
      {"buffered", kFlag,
       [](RunOptions& o, const OptionValue& v) { o.spec.direct = v.number == 0; },
       "buffered I/O: the inverse of --direct, on the same setting (the later one wins)", "1"},
      {"iodepth", kCount, JobField<&JobSpec::iodepth>, "I/Os in flight per clone", "1"},
      {"iodepth_batch_submit",
       kCount,
       JobField<&JobSpec::iodepth_batch_submit>,
       "at most N I/Os per submit call (0: all that are ready)",
       "1",
       {"iodepth_batch"}},
      {"iodepth_batch_complete_min",
       kCount,
       JobField<&JobSpec::iodepth_batch_complete_min>,
       "wait for N completions (more stamps the early ones late)",
       "1",
       {"iodepth_batch_complete"}},
      {"iodepth_batch_complete_max", kCount, JobField<&JobSpec::iodepth_batch_complete_max>,
       "take at most N completions per reap (0: iodepth; fewer stamps the rest late)", "0"},
      {"numjobs", kCount, JobField<&JobSpec::numjobs>, "clones of the job (worker threads)", "1"},
      {"cpus_allowed", kText,
       [](RunOptions& o, const OptionValue& v) {
         o.spec.cpus_allowed = ParseCpuList(v.text, v.option);
       },
       "CPUs for the workers, e.g. 0-1,3", "all"},
      {"randseed", kText,
       [](RunOptions& o, const OptionValue& v) {
         uint64_t s = 0;
         const std::string& t = v.text;
         const auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), s);
         if (ec != std::errc() || p != t.data() + t.size())
           throw UsageError(fmt::format("--{}: expected a whole number", v.option));
         o.spec.randseed = s;
       },
       "random seed"},
      {"zero_buffers", kFlag, JobField<&JobSpec::zero_buffers>,
       "write zeros instead of random data", "0"},
      {"runtime",
       kTime,
       JobField<&JobSpec::runtime_ns>,
       "run time (3s, 500ms; bare = seconds)",
       "no limit",
       {"timeout"}},
      {"time_based", kFlag, JobField<&JobSpec::time_based>,
       "run for --runtime, looping over the region", "0"},
      {"io_size", kSize, JobField<&JobSpec::io_size>, "bytes per clone", "one pass over size"},
      {"ramp_time", kTime, JobField<&JobSpec::ramp_time_ns>, "warm-up time, not recorded", "0"},
      {"end_fsync", kFlag, JobField<&JobSpec::end_fsync>, "fsync files at the end", "0"},
      {"uri", kText,
       [](RunOptions& o, const OptionValue& v) {
         if (v.text.empty()) throw UsageError(fmt::format("--{}: empty", v.option));
         o.spec.uri = v.text;
       },
       "NBD server for --ioengine=nbd: nbd://HOST[:PORT]/EXPORT, nbd+unix:///EXPORT?socket=PATH"},
      {"nbd_timeout", kTime, JobField<&JobSpec::nbd_timeout_ns>,
       "nbd: how long connecting to the server and its handshake may take (0: no limit)", "10s"},
      {"ioengine", kText,
       [](RunOptions& o, const OptionValue& v) {
         o.spec.ioengine = engine::ParseEngineKind(v.text);
       },
       "sync|psync|vsync|pvsync|pvsync2|io_uring|libaio|posixaio|mmap|null|nbd (sync ones at depth "
       "1)",
       "psync, as fio (nbd with --uri; the default benchmark: best available)"},
      {"sqthread_poll", kFlag, JobField<&JobSpec::sqthread_poll>,
       "io_uring: kernel submission thread (SQPOLL)", "0"},
      {"hipri", kFlag, JobField<&JobSpec::hipri>,
       "io_uring: polled completions (IOPOLL; NVMe poll queues); pvsync2: RWF_HIPRI", "0"},
      {"nowait", kFlag, JobField<&JobSpec::nowait>,
       "pvsync2: RWF_NOWAIT (an I/O that would block fails with EAGAIN, an error as in fio)", "0"},
      {"uncached", kCount, JobField<&JobSpec::uncached>,
       "pvsync2: RWF_UNCACHED, refused (Linux never had it; ignored with --direct=1, as fio)", "0"},
      {"continue_on_error",
       kChoice,
       [](RunOptions& o, const OptionValue& v) {
         o.spec.continue_on_error = {(v.number & 1) != 0, (v.number & 2) != 0};
       },
       "count these I/O errors and keep going (verify: iotail has no verify errors to continue "
       "on)",
       "none",
       {},
       {{"none", 0},
        {"read", 1},
        {"write", 2},
        {"io", 3},
        {"verify", 0},
        {"all", 3},
        {"0", 0},
        {"1", 3}}},
      {"allow_destructive", kFlag, JobField<&JobSpec::allow_destructive>,
       "allow writing over a device or export with a signature (never a mounted one)", "0"},
      {"rate_iops", kText,
       [](RunOptions& o, const OptionValue& v) { ParseRate(v.text, v.option, false, o.spec); },
       "open loop at N I/Os per second per clone and direction, or R,W"},
      {"rate", kText,
       [](RunOptions& o, const OptionValue& v) { ParseRate(v.text, v.option, true, o.spec); },
       "open loop at N bytes per second per clone and direction (1m = 1 MiB/s), or R,W"},
      {"rate_process",
       kChoice,
       JobField<&JobSpec::rate_poisson>,
       "spacing of the scheduled I/Os",
       "linear",
       {},
       {{"linear", 0}, {"poisson", 1}}},
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
       "start at this Unix epoch time in ms (hosts start together)", "now"},
      {"status_interval",
       kMillis,
       RunField<&RunOptions::status_interval_ms>,
       "a live line every T",
       "the log period",
       {"eta_newline"},
       {},
       OptionScope::kRun},
      {"live_format",
       kChoice,
       RunField<&RunOptions::live_format>,
       "live lines on stderr",
       "text",
       {},
       {{"text", static_cast<int>(stats::LiveFormat::kText)},
        {"json", static_cast<int>(stats::LiveFormat::kJson)},
        {"none", static_cast<int>(stats::LiveFormat::kNone)}},
       OptionScope::kRun},
      {"sla",
       kText,
       [](RunOptions& o, const OptionValue& v) {
         const std::string args[] = {v.text};
         (void)stats::ParseSlaTargets(args, "--sla");  // bad targets fail here, naming --sla
         o.sla.push_back(v.text);
       },
       "latency target per interval, e.g. read:p99<=2ms (repeatable; exit 3 if broken)",
       "",
       {},
       {},
       OptionScope::kRun},
      {"write_hist_log", kText, JobField<&JobSpec::write_hist_log>,
       "write PREFIX_clat_hist.N.log histogram logs"},
      {"log_hist_msec", kCount, JobField<&JobSpec::log_hist_msec>,
       "log period in ms, epoch-aligned", "1000"},
      {"log_hist_coarseness", kCount, JobField<&JobSpec::log_hist_coarseness>,
       "0..6: sum 2^c buckets per column", "0"},
      {"log_hist_groups", kCount, JobField<&JobSpec::log_hist_groups>,
       "29 or 59 bucket groups per log line (29: fio's, clamped at 17.18 s; 59: every latency "
       "kept)",
       "29"},
      {"log_unix_epoch", kFlag, JobField<&JobSpec::log_unix_epoch>, "log times as Unix epoch ms",
       "0"},
      {"output_format",
       kText,
       ParseOutputFormats,
       "normal|json|json+|terse, or several: normal,json (json+ adds the latency bins, as fio)",
       "normal",
       {},
       {},
       OptionScope::kRun},
      {"minimal",
       kFlag,
       [](RunOptions& o, const OptionValue& v) {
         if (v.number == 0) return;
         o.output_formats = {OutputFormat::kTerse};
         o.output_format = OutputFormat::kTerse;
       },
       "fio's terse output (as --output-format=terse)",
       "0",
       {},
       {},
       OptionScope::kRun},
      {"output",
       kText,
       RunField<&RunOptions::output>,
       "write the summary to FILE",
       "stdout",
       {},
       {},
       OptionScope::kRun},
      {"percentile_list", kText,
       [](RunOptions& o, const OptionValue& v) {
         const std::string args[] = {v.text};
         o.percentiles = stats::ParsePercentileList(args, "--percentile_list");
       },
       "percentiles, e.g. 50:99:99.9", "fio's list"},
  };
  return table;
}

}  // namespace

std::span<const OptionDef> CoreOptionTable() { return Table(); }

std::string RunUsage() {
  std::string out =
      "usage: iotail run [options]\n"
      "Drives I/O at files or block devices and reports latency as fio does. Without --filename\n"
      "it runs a short default benchmark (4k random reads, QD32 with the best engine available,\n"
      "3 s, on a 64 MiB temporary file in the current directory, removed afterwards; logs to "
      "iotail_clat_hist.1.log).\n"
      "A job without --ioengine runs psync (one I/O at a time), as in fio.\n\n"
      "Rate-limited open loop: --rate_iops or --rate schedules every I/O's start in advance\n"
      "(linear or poisson); a late I/O keeps its intended start, so `lat` (intended start to\n"
      "completion, PREFIX_lat_hist.N.log, JSON lat_ns) shows backlog while `clat` (submit to\n"
      "completion) shows the device. Live lines go to stderr, the summary to stdout.\n"
      "Exit status: 0 ok; 1 I/O errors or a system failure; 2 bad options; 3 an --sla target\n"
      "was violated; 130/143 interrupted by SIGINT/SIGTERM (summary and logs still complete).\n"
      "Precedence: 1, then 130/143, then 3.\n";
  return out + OptionsHelp();
}

}  // namespace iotail::cli
