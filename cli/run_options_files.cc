// fio's options for a job's files and their layout: where they are (directory), how many and what
// they are called (nrfiles, filename_format), how big (filesize), how a missing or short one is
// made (fallocate, overwrite, allow_file_create; engine/target.h) and whether it is synced when
// closed (fsync_on_close).
#include <fmt/format.h>

#include "cli/option_table.h"
#include "cli/option_values.h"
#include "cli/run_options.h"
#include "engine/zoned_file.h"
#include "stats/core/errors.h"

namespace iotail::cli {

using stats::UsageError;

namespace {

// fio's FLOAT_LIST options of one value in [0, 1] (zone_reset_threshold, zone_reset_frequency).
double ParseFraction(const std::string& text, std::string_view option) {
  size_t used = 0;
  const double v = ParseNumber(text, option, &used);
  if (used != text.size() || v < 0 || v > 1) {
    throw UsageError(fmt::format("--{}: expected a number from 0 to 1, got '{}'", option, text));
  }
  return v;
}

using engine::FallocateMode;
using engine::JobSpec;
using enum ValueType;

const std::vector<OptionDef>& FileRows() {
  static const std::vector<OptionDef> table = {
      Row<kName, &RunOptions::directory>(
          "directory", "directory of the files (fio's default names NAME.CLONE.FILE there)", "."),
      {"nrfiles", kCount, RunField<&RunOptions::nrfiles>,
       "files per clone when no --filename is given", "1", Also("nr_files"), Choices(),
       OptionScope::kJob, 1, 100000},
      Row<kName, &RunOptions::filename_format>(
          "filename_format",
          "names of the files when no --filename is given: $jobname, $jobnum (the clone, from 0), "
          "$filenum (from 0) replaced, in any case; $clientuid is empty",
          "$jobname.$jobnum.$filenum"),
      Row<kSize, &RunOptions::filesize>("filesize", "size of each file",
                                        "--size divided among the files"),
      Row<kChoice, &JobSpec::fallocate>(
          "fallocate",
          "preallocate a file being made: native (fallocate, where the filesystem can), posix "
          "(posix_fallocate), keep (FALLOC_FL_KEEP_SIZE), truncate (ftruncate), none",
          "native",
          {{"native", FallocateMode::kNative},
           {"posix", FallocateMode::kPosix},
           {"1", FallocateMode::kPosix},
           {"keep", FallocateMode::kKeep},
           {"truncate", FallocateMode::kTruncate},
           {"none", FallocateMode::kNone},
           {"0", FallocateMode::kNone}}),
      Row<kFlag, &JobSpec::overwrite>(
          "overwrite",
          "a write job lays a file it makes out with data first (a job that reads always does; one "
          "that only writes otherwise just preallocates it)"),
      Row<kFlag, &JobSpec::allow_file_create>(
          "allow_file_create", "0: a file that does not exist is an error, not made", "1"),
      Row<kName, &JobSpec::ioscheduler>(
          "ioscheduler",
          "switch the I/O scheduler of the block device under each file (or the device) to this "
          "first, as fio (root; not restored after)"),
      Row<kFlag, &JobSpec::fsync_on_close>(
          "fsync_on_close",
          "fsync each written file when it is closed (iotail closes them at the job's end)"),
      Row<kFlag, &JobSpec::refill_buffers>(
          "refill_buffers", "new random data for every write (else each buffer's is made once)"),
      {"buffer_compress_percentage", kCount, JobField<&JobSpec::buffer_compress_percentage>,
       "each chunk of a written buffer is (100 - N)% random, then N% the pattern (zeros): about N% "
       "compressible (refills buffers unless --refill_buffers=0)",
       "0", Also(), Choices(), OptionScope::kJob, 0, 100},
      Row<kSize, &JobSpec::buffer_compress_chunk>(
          "buffer_compress_chunk", "the chunk of --buffer_compress_percentage", "512"),
      {"buffer_pattern", kText,
       [](RunOptions& o, const OptionValue& v) {
         o.spec.buffer_pattern = engine::ParseBufferPattern(v.text, v.option);
       },
       "write buffers hold this pattern repeated: \"text\", 0x hex bytes, decimal numbers (LE), "
       "one after another"},
      Row<kFlag, &JobSpec::zero_buffers>("zero_buffers", "write zeros instead of random data"),
      {"dedupe_percentage", kCount,
       [](RunOptions& o, const OptionValue& v) {
         o.spec.dedupe.percentage = static_cast<uint32_t>(v.number);
       },
       "of the written buffers, N% repeat earlier contents (--dedupe_mode; refills buffers "
       "unless --refill_buffers=0)",
       "0", Also(), Choices(), OptionScope::kJob, 0, 100},
      {"dedupe_mode",
       kChoice,
       [](RunOptions& o, const OptionValue& v) { o.spec.dedupe.working_set = v.number == 1; },
       "repeat: the last new buffer again; working_set: one of --dedupe_working_set_percentage "
       "of the job's size in distinct buffers",
       "repeat",
       Also(),
       {{"repeat", 0}, {"working_set", 1}}},
      {"dedupe_working_set_percentage", kCount,
       [](RunOptions& o, const OptionValue& v) {
         o.spec.dedupe.working_set_percentage = static_cast<uint32_t>(v.number);
       },
       "the working set of --dedupe_mode=working_set, in % of the job's size", "5", Also(),
       Choices(), OptionScope::kJob, 0, 100},
      {"dedupe_global", kFlag,
       [](RunOptions& o, const OptionValue& v) { o.spec.dedupe.global = v.number != 0; },
       "one working set for every job (their duplicates shared)", "0"},
      {"zonemode",
       kChoice,
       [](RunOptions& o, const OptionValue& v) {
         o.spec.zone_mode = static_cast<engine::ZoneMode>(v.number);
       },
       "strided: I/O in one zone (--zonerange) until --zonesize bytes are done there, then "
       "--zoneskip on; zbd: fio's emulated zones of --zonesize on a file or non-zoned block "
       "device (writes at each zone's write pointer; zoned block devices are refused); none: no "
       "zones",
       "none",
       Also(),
       {{"none", engine::ZoneMode::kNone},
        {"strided", engine::ZoneMode::kStrided},
        {"zbd", engine::ZoneMode::kZbd}}},
      Row<kSize, &JobSpec::zone_size>("zonesize",
                                      "bytes done in a zone before moving on; with "
                                      "zonemode=zbd the size of a zone",
                                      "0"),
      Row<kSize, &JobSpec::zone_range>("zonerange", "the size of a zone", "--zonesize"),
      {"zoneskip", kText,
       [](RunOptions& o, const OptionValue& v) {
         o.zoneskip_zones = 0;
         if (const std::optional<uint32_t> zones = ParseZoneCount(v.text, v.option)) {
           o.zoneskip_zones = *zones;
           o.spec.zone_skip = 0;
         } else {
           o.spec.zone_skip = ParseSize(v.text, v.option);
         }
       },
       "bytes skipped after each zone (or Nz: N zones)", "0"},
      Row<kSize, &JobSpec::zone_capacity>(
          "zonecapacity", "zonemode=zbd: the bytes of a zone that can be written (0: --zonesize)",
          "0"),
      {"max_open_zones", kCount, JobField<&JobSpec::max_open_zones>,
       "zonemode=zbd: zones of a file open for writing at once, all jobs together (0: no limit)",
       "0", Also(), Choices(), OptionScope::kJob, 0, engine::kZbdMaxOpenZones},
      {"job_max_open_zones", kCount, JobField<&JobSpec::job_max_open_zones>,
       "zonemode=zbd: zones each clone may hold open (0: no limit; needs --max_open_zones)", "0",
       Also(), Choices(), OptionScope::kJob, 0, engine::kZbdMaxOpenZones},
      {"zone_reset_threshold", kText,
       [](RunOptions& o, const OptionValue& v) {
         o.spec.zone_reset_threshold = ParseFraction(v.text, v.option);
       },
       "zonemode=zbd: once the file's written bytes reach this share (0..1) of the job's range, a "
       "zone is reset before every 1/--zone_reset_frequency-th write",
       "0"},
      {"zone_reset_frequency", kText,
       [](RunOptions& o, const OptionValue& v) {
         o.spec.zone_reset_frequency = ParseFraction(v.text, v.option);
       },
       "zonemode=zbd: 0..1, a zone reset every 1/N writes past --zone_reset_threshold (0: none)",
       "0"},
      Row<kFlag, &JobSpec::read_beyond_wp>(
          "read_beyond_wp", "zonemode=zbd: reads may go past a zone's write pointer"),
      Row<kFlag, &JobSpec::ignore_zone_limits>(
          "ignore_zone_limits",
          "zonemode=zbd: ignore a zoned device's own open-zone limit (emulated zones have none)"),
      {"verify", kText,
       [](RunOptions& o, const OptionValue& v) { o.spec.verify = engine::ParseVerifyKind(v.text); },
       "crc32c|md5|crc64|crc32|crc16|crc7|xxhash|meta|null|0: checksummed blocks, checked when "
       "read (and read back); meta checks where a block belongs, null nothing",
       "0"},
      Row<kCount, &JobSpec::verify_backlog>(
          "verify_backlog", "read back and check the written blocks every N completed writes", "0"),
      Row<kCount, &JobSpec::verify_backlog_batch>(
          "verify_backlog_batch", "of the waiting blocks, check this many at a time (0: all)", "0"),
      Row<kFlag, &JobSpec::verify_dump>(
          "verify_dump",
          "dump a bad block as read and as written (FILE.OFFSET.received/.expected)"),
      {"verify_fatal", kFlag, AcceptOnly,
       "accepted: fio 3.33 ends the job at the first bad block either way, and so does iotail",
       "0"},
      Row<kFlag, &JobSpec::do_verify>(
          "do_verify", "with --verify on a write job: read every block back after", "1"),
  };
  return table;
}

}  // namespace

std::span<const OptionDef> FileOptionTable() { return FileRows(); }

}  // namespace iotail::cli
