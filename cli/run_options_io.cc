// fio's options that shape how a job does its I/O beyond what and where: thinktime (stalls),
// fsync/fdatasync every N writes, sync (O_SYNC/O_DSYNC), fadvise_hint and invalidate. See
// engine/job_spec.h for their meanings in the engine.
#include <fcntl.h>
#include <fmt/format.h>

#include <algorithm>

#include "cli/option_table.h"
#include "cli/run_options.h"
#include "stats/core/errors.h"

namespace iotail::cli {

using stats::UsageError;

namespace {

// fio's thinktime values: a bare number is microseconds; units as for other times.
uint64_t ThinkTimeNs(const std::string& v, std::string_view option) {
  if (!v.empty() && std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return ParseTimeNs(v + "us", option);
  }
  return ParseTimeNs(v, option);
}

// fio's rate_min=N or R,W: N applies to both directions.
void ParseRateMin(const std::string& v, std::string_view option, bool bytes,
                  engine::JobSpec& spec) {
  engine::JobSpec parsed;
  ParseRate(v, option, bytes, parsed);
  if (parsed.rate.Any()) {
    spec.rate_min = {parsed.rate, parsed.rate};
  } else {
    spec.rate_min = parsed.rate_dir;
  }
}

const std::vector<OptionDef>& Table() {
  static const std::vector<OptionDef> table = {
      {"thinktime", false, "stall this long after I/Os complete before issuing more (bare = us)",
       [](RunOptions& o, const std::string& v) {
         o.spec.thinktime_ns = ThinkTimeNs(v, "thinktime");
       }},
      {"thinktime_spin", false, "of the thinktime, spin this long (the rest sleeps; bare = us)",
       [](RunOptions& o, const std::string& v) {
         o.spec.thinktime_spin_ns = ThinkTimeNs(v, "thinktime_spin");
       }},
      {"thinktime_blocks", false, "stall after this many I/Os (default 1)",
       [](RunOptions& o, const std::string& v) {
         o.spec.thinktime_blocks = ParseU32(v, "thinktime_blocks");
       }},
      {"fsync", false, "fsync a file after every N writes to it (counted under sync in JSON)",
       [](RunOptions& o, const std::string& v) { o.spec.fsync_every = ParseU32(v, "fsync"); }},
      {"fdatasync", false, "fdatasync a file after every N writes to it",
       [](RunOptions& o, const std::string& v) {
         o.spec.fdatasync_every = ParseU32(v, "fdatasync");
       }},
      {"sync", false, "none|sync|dsync (0|1): open for synchronous writes (O_SYNC, O_DSYNC)",
       [](RunOptions& o, const std::string& v) {
         if (v == "none" || v == "0") {
           o.spec.sync_flags = 0;
         } else if (v == "sync" || v == "1") {
           o.spec.sync_flags = O_SYNC;
         } else if (v == "dsync") {
           o.spec.sync_flags = O_DSYNC;
         } else {
           throw UsageError(fmt::format("--sync: expected none, sync, dsync, 0 or 1, got '{}'", v));
         }
       }},
      {"fadvise_hint", false, "1 (default: by rw) | 0 | sequential | random | normal",
       [](RunOptions& o, const std::string& v) {
         if (v == "1") {
           o.spec.fadvise = -2;
         } else if (v == "0") {
           o.spec.fadvise = -1;
         } else if (v == "sequential") {
           o.spec.fadvise = POSIX_FADV_SEQUENTIAL;
         } else if (v == "random") {
           o.spec.fadvise = POSIX_FADV_RANDOM;
         } else if (v == "normal") {
           o.spec.fadvise = POSIX_FADV_NORMAL;
         } else {
           throw UsageError(fmt::format(
               "--fadvise_hint: expected 0, 1, sequential, random or normal, got '{}'", v));
         }
       }},
      {"directory", false, "directory of the files (fio's default names NAME.CLONE.FILE there)",
       [](RunOptions& o, const std::string& v) {
         if (v.empty()) throw UsageError("--directory: empty");
         o.directory = v;
       }},
      {"nrfiles", false, "files per clone when no --filename is given (default 1)",
       [](RunOptions& o, const std::string& v) {
         o.nrfiles = ParseU32(v, "nrfiles");
         if (o.nrfiles == 0 || o.nrfiles > 100000) {
           throw UsageError("--nrfiles: expected 1..100000");
         }
       }},
      {"nr_files", false, "same as --nrfiles",
       [](RunOptions& o, const std::string& v) {
         o.nrfiles = ParseU32(v, "nr_files");
         if (o.nrfiles == 0 || o.nrfiles > 100000)
           throw UsageError("--nr_files: expected 1..100000");
       }},
      {"filesize", false, "size of each file (default: --size divided among the files, as fio)",
       [](RunOptions& o, const std::string& v) { o.filesize = ParseSize(v, "filesize"); }},
      {"verify", false, "crc32c|md5|0: checksummed blocks, checked when read (and read back)",
       [](RunOptions& o, const std::string& v) { o.spec.verify = engine::ParseVerifyKind(v); }},
      {"do_verify", true, "with --verify on a write job: read every block back after (default 1)",
       [](RunOptions& o, const std::string& v) { o.spec.do_verify = ParseBool(v, "do_verify"); }},
      {"rate_min", false, "stop with an error when a direction falls below N bytes/s (or R,W)",
       [](RunOptions& o, const std::string& v) { ParseRateMin(v, "rate_min", true, o.spec); }},
      {"ratemin", false, "same as --rate_min",
       [](RunOptions& o, const std::string& v) { ParseRateMin(v, "ratemin", true, o.spec); }},
      {"rate_iops_min", false, "stop with an error when a direction falls below N IOPS (or R,W)",
       [](RunOptions& o, const std::string& v) {
         ParseRateMin(v, "rate_iops_min", false, o.spec);
       }},
      {"invalidate", true, "drop the page cache of the targets before the run (default 1)",
       [](RunOptions& o, const std::string& v) { o.spec.invalidate = ParseBool(v, "invalidate"); }},
  };
  return table;
}

}  // namespace

std::span<const OptionDef> IoBehaviourOptionTable() { return Table(); }

}  // namespace iotail::cli
