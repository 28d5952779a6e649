// fio's options that shape how a job does its I/O beyond what and where: thinktime (stalls),
// fsync/fdatasync every N writes, sync (O_SYNC/O_DSYNC), fadvise_hint and invalidate. See
// engine/job_spec.h for their meanings in the engine.
#include <fcntl.h>
#include <fmt/format.h>

#include "cli/option_table.h"
#include "cli/run_options.h"
#include "stats/core/errors.h"

namespace iotail::cli {

using stats::UsageError;

namespace {

// fio's rate_min=N or R,W: N applies to both directions.
template <bool Bytes>
void ParseRateMin(RunOptions& o, const OptionValue& v) {
  engine::JobSpec parsed;
  ParseRate(v.text, v.option, Bytes, parsed);
  if (parsed.rate.Any()) {
    o.spec.rate_min = {parsed.rate, parsed.rate};
  } else {
    o.spec.rate_min = parsed.rate_dir;
  }
}

using engine::JobSpec;
using enum ValueType;

const std::vector<OptionDef>& Table() {
  static const std::vector<OptionDef> table = {
      {"thinktime", kTimeUs, JobField<&JobSpec::thinktime_ns>,
       "stall this long after I/Os complete before issuing more (bare = us)", "0"},
      {"thinktime_spin", kTimeUs, JobField<&JobSpec::thinktime_spin_ns>,
       "of the thinktime, spin this long (the rest sleeps; bare = us)", "0"},
      {"thinktime_blocks", kCount, JobField<&JobSpec::thinktime_blocks>,
       "stall after this many I/Os", "1"},
      {"fsync", kCount, JobField<&JobSpec::fsync_every>,
       "fsync a file after every N writes to it (counted under sync in JSON)", "0"},
      {"fdatasync", kCount, JobField<&JobSpec::fdatasync_every>,
       "fdatasync a file after every N writes to it", "0"},
      {"sync",
       kChoice,
       JobField<&JobSpec::sync_flags>,
       "open for synchronous writes (sync, 1: O_SYNC; dsync: O_DSYNC)",
       "none",
       {},
       {{"none", 0}, {"0", 0}, {"sync", O_SYNC}, {"1", O_SYNC}, {"dsync", O_DSYNC}}},
      {"fadvise_hint",
       kChoice,
       JobField<&JobSpec::fadvise>,
       "posix_fadvise the targets (1: by rw, random or sequential)",
       "1",
       {},
       {{"1", -2},
        {"0", -1},
        {"sequential", POSIX_FADV_SEQUENTIAL},
        {"random", POSIX_FADV_RANDOM},
        {"normal", POSIX_FADV_NORMAL}}},
      {"directory", kText,
       [](RunOptions& o, const OptionValue& v) {
         if (v.text.empty()) throw UsageError(fmt::format("--{}: empty", v.option));
         o.directory = v.text;
       },
       "directory of the files (fio's default names NAME.CLONE.FILE there)", "."},
      {"nrfiles",
       kCount,
       RunField<&RunOptions::nrfiles>,
       "files per clone when no --filename is given",
       "1",
       {"nr_files"},
       {},
       OptionScope::kJob,
       1,
       100000},
      {"filesize", kSize, RunField<&RunOptions::filesize>, "size of each file",
       "--size divided among the files"},
      {"verify", kText,
       [](RunOptions& o, const OptionValue& v) { o.spec.verify = engine::ParseVerifyKind(v.text); },
       "crc32c|md5|0: checksummed blocks, checked when read (and read back)", "0"},
      {"do_verify", kFlag, JobField<&JobSpec::do_verify>,
       "with --verify on a write job: read every block back after", "1"},
      {"rate_min",
       kText,
       ParseRateMin<true>,
       "stop with an error when a direction falls below N bytes/s (or R,W)",
       "",
       {"ratemin"}},
      {"rate_iops_min", kText, ParseRateMin<false>,
       "stop with an error when a direction falls below N IOPS (or R,W)"},
      {"invalidate", kFlag, JobField<&JobSpec::invalidate>,
       "drop the page cache of the targets before the run", "1"},
  };
  return table;
}

}  // namespace

std::span<const OptionDef> IoBehaviourOptionTable() { return Table(); }

}  // namespace iotail::cli
