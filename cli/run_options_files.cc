// fio's options for a job's files and their layout: where they are (directory), how many and what
// they are called (nrfiles, filename_format), how big (filesize), how a missing or short one is
// made (fallocate, overwrite, allow_file_create; engine/target.h) and whether it is synced when
// closed (fsync_on_close); and, in a table of their own, when files are created and opened
// (create_on_open, openfiles), the file and directory operation engines' stat_type, and unlink.
#include <fmt/format.h>

#include "cli/option_table.h"
#include "cli/option_values.h"
#include "cli/run_options.h"
#include "stats/core/errors.h"

namespace iotail::cli {

using stats::UsageError;

namespace {

using engine::FallocateMode;
using engine::JobSpec;
using enum ValueType;

const std::vector<OptionDef>& FileRows() {
  static const std::vector<OptionDef> table = {
      Labeled("DIR",
              Row<kName, &RunOptions::directory>(
                  "directory", "directory of the files (fio's default names NAME.CLONE.FILE there)",
                  ".")),
      {"nrfiles", kCount, RunField<&RunOptions::nrfiles>,
       "files per clone when no --filename is given", "1", Also("nr_files"), Choices(),
       OptionScope::kJob, 1, 100000},
      Labeled("FORMAT", Row<kName, &RunOptions::filename_format>(
                            "filename_format",
                            "names of the files when no --filename is given: $jobname, $jobnum "
                            "(the clone, from 0), "
                            "$filenum (from 0) replaced, in any case; $clientuid is empty",
                            "$jobname.$jobnum.$filenum")),
      Row<kSize, &RunOptions::filesize>("filesize", "size of each file",
                                        "--size divided among the files"),
      Row<kChoice, &JobSpec::files, &FileOptions::fallocate>(
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
      Row<kFlag, &JobSpec::files, &FileOptions::overwrite>(
          "overwrite",
          "a write job lays a file it makes out with data first (a job that reads always does; one "
          "that only writes otherwise just preallocates it)"),
      Row<kFlag, &JobSpec::files, &FileOptions::allow_file_create>(
          "allow_file_create", "0: a file that does not exist is an error, not made", "1"),
      Labeled("SCHEDULER", Row<kName, &JobSpec::files, &FileOptions::ioscheduler>(
                               "ioscheduler",
                               "switch the I/O scheduler of the block device "
                               "under each file (or the device) to this "
                               "first, as fio (root; not restored after)")),
      Row<kFlag, &JobSpec::syncs, &SyncOptions::fsync_on_close>(
          "fsync_on_close",
          "fsync each written file when it is closed (iotail closes them at the job's end)"),
      Row<kFlag, &JobSpec::buffers, &BufferOptions::refill>(
          "refill_buffers", "new random data for every write (else each buffer's is made once)"),
      {"buffer_compress_percentage", kCount,
       JobField<&JobSpec::buffers, &BufferOptions::compress_percentage>,
       "each chunk of a written buffer is (100 - N)% random, then N% the pattern (zeros): about N% "
       "compressible (refills buffers unless --refill_buffers=0)",
       "0", Also(), Choices(), OptionScope::kJob, 0, 100},
      Row<kSize, &JobSpec::buffers, &BufferOptions::compress_chunk>(
          "buffer_compress_chunk", "the chunk of --buffer_compress_percentage", "512"),
      Labeled("PATTERN", {"buffer_pattern", kText,
                          [](RunOptions& o, const OptionValue& v) {
                            o.spec.buffers.pattern = engine::ParseBufferPattern(v.text, v.option);
                          },
                          "write buffers hold this pattern repeated: \"text\", 0x hex bytes, "
                          "decimal numbers (LE), "
                          "one after another"}),
      Row<kFlag, &JobSpec::buffers, &BufferOptions::zero>("zero_buffers",
                                                          "write zeros instead of random data"),
      {"dedupe_percentage", kCount,
       [](RunOptions& o, const OptionValue& v) {
         o.spec.buffers.dedupe.percentage = static_cast<uint32_t>(v.number);
       },
       "of the written buffers, N% repeat earlier contents (--dedupe_mode; refills buffers "
       "unless --refill_buffers=0)",
       "0", Also(), Choices(), OptionScope::kJob, 0, 100},
      {"dedupe_mode",
       kChoice,
       [](RunOptions& o, const OptionValue& v) {
         o.spec.buffers.dedupe.working_set = v.number == 1;
       },
       "repeat: the last new buffer again; working_set: one of --dedupe_working_set_percentage "
       "of the job's size in distinct buffers",
       "repeat",
       Also(),
       {{"repeat", 0}, {"working_set", 1}}},
      {"dedupe_working_set_percentage", kCount,
       [](RunOptions& o, const OptionValue& v) {
         o.spec.buffers.dedupe.working_set_percentage = static_cast<uint32_t>(v.number);
       },
       "the working set of --dedupe_mode=working_set, in % of the job's size", "5", Also(),
       Choices(), OptionScope::kJob, 0, 100},
      {"dedupe_global", kFlag,
       [](RunOptions& o, const OptionValue& v) { o.spec.buffers.dedupe.global = v.number != 0; },
       "one working set for every job (their duplicates shared)", "0"},
      {"fill_device", kFlag, JobField<&JobSpec::region, &RegionOptions::fill_device>,
       "write (sequentially, one file) until the filesystem is full: ENOSPC ends the job, "
       "without --size the file has no end",
       "0", Also("fill_fs")},
  };
  return table;
}

// When a job's files are created and opened, which operation the file and directory operation
// engines time, and what is removed at the end.
const std::vector<OptionDef>& OpenRows() {
  static const std::vector<OptionDef> table = {
      Row<kFlag, &JobSpec::files, &FileOptions::create_on_open>(
          "create_on_open",
          "create a file when it is opened rather than lay it out before the run (a read past "
          "its end is an error, as fio's)"),
      {"openfiles", kCount, JobField<&JobSpec::files, &FileOptions::openfiles>,
       "files of a clone open at once (0: all; fewer than its files only with the file and "
       "directory operation engines)",
       "0", Also(), Choices(), OptionScope::kJob, 0, 100000},
      Row<kFlag, &JobSpec::files, &FileOptions::unlink>(
          "unlink",
          "remove the job's files (dircreate/dirstat/dirdelete: directories) once it ends"),
      Row<kChoice, &JobSpec::engine_options, &EngineOptions::stat_type>(
          "stat_type",
          EngineOptionHelp(engine::kStatTypeOption,
                           "the call timed: stat, lstat, or statx (after realpath, as fio)"),
          "stat",
          {{"stat", engine::StatType::kStat},
           {"lstat", engine::StatType::kLstat},
           {"statx", engine::StatType::kStatx}}),
  };
  return table;
}

}  // namespace

std::span<const OptionDef> FileOptionTable() { return FileRows(); }
std::span<const OptionDef> OpenOptionTable() { return OpenRows(); }

}  // namespace iotail::cli
