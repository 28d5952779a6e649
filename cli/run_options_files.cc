// fio's options for a job's files and their layout: where they are (directory), how many and what
// they are called (nrfiles, filename_format), how big (filesize), how a missing or short one is
// made (fallocate, overwrite, allow_file_create; engine/target.h) and whether it is synced when
// closed (fsync_on_close).
#include <fmt/format.h>

#include "cli/option_table.h"
#include "cli/run_options.h"
#include "stats/core/errors.h"

namespace iotail::cli {

using stats::UsageError;

namespace {

using engine::FallocateMode;
using engine::JobSpec;
using enum ValueType;

void NonEmpty(const OptionValue& v) {
  if (v.text.empty()) throw UsageError(fmt::format("--{}: empty", v.option));
}

const std::vector<OptionDef>& FileRows() {
  static const std::vector<OptionDef> table = {
      {"directory", kText,
       [](RunOptions& o, const OptionValue& v) {
         NonEmpty(v);
         o.directory = v.text;
       },
       "directory of the files (fio's default names NAME.CLONE.FILE there)", "."},
      {"nrfiles", kCount, RunField<&RunOptions::nrfiles>,
       "files per clone when no --filename is given", "1", Also("nr_files"), Choices(),
       OptionScope::kJob, 1, 100000},
      {"filename_format", kText,
       [](RunOptions& o, const OptionValue& v) {
         NonEmpty(v);
         o.filename_format = v.text;
       },
       "names of the files when no --filename is given: $jobname, $jobnum (the clone, from 0), "
       "$filenum (from 0) replaced, in any case; $clientuid is empty",
       "$jobname.$jobnum.$filenum"},
      {"filesize", kSize, RunField<&RunOptions::filesize>, "size of each file",
       "--size divided among the files"},
      {"fallocate",
       kChoice,
       JobField<&JobSpec::fallocate>,
       "preallocate a file being made: native (fallocate, where the filesystem can), posix "
       "(posix_fallocate), keep (FALLOC_FL_KEEP_SIZE), truncate (ftruncate), none",
       "native",
       Also(),
       {{"native", static_cast<int>(FallocateMode::kNative)},
        {"posix", static_cast<int>(FallocateMode::kPosix)},
        {"1", static_cast<int>(FallocateMode::kPosix)},
        {"keep", static_cast<int>(FallocateMode::kKeep)},
        {"truncate", static_cast<int>(FallocateMode::kTruncate)},
        {"none", static_cast<int>(FallocateMode::kNone)},
        {"0", static_cast<int>(FallocateMode::kNone)}}},
      {"overwrite", kFlag, JobField<&JobSpec::overwrite>,
       "a write job lays a file it makes out with data first (a job that reads always does; one "
       "that only writes otherwise just preallocates it)",
       "0"},
      {"allow_file_create", kFlag, JobField<&JobSpec::allow_file_create>,
       "0: a file that does not exist is an error, not made", "1"},
      {"ioscheduler", kText,
       [](RunOptions& o, const OptionValue& v) {
         NonEmpty(v);
         o.spec.ioscheduler = v.text;
       },
       "switch the I/O scheduler of the block device under each file (or the device) to this "
       "first, as fio (root; not restored after)"},
      {"fsync_on_close", kFlag, JobField<&JobSpec::fsync_on_close>,
       "fsync each written file when it is closed (iotail closes them at the job's end)", "0"},
      {"refill_buffers", kFlag, JobField<&JobSpec::refill_buffers>,
       "new random data for every write (else each buffer's is made once)", "0"},
      {"buffer_compress_percentage", kCount, JobField<&JobSpec::buffer_compress_percentage>,
       "each chunk of a written buffer is (100 - N)% random, then N% the pattern (zeros): about N% "
       "compressible (refills buffers unless --refill_buffers=0)",
       "0", Also(), Choices(), OptionScope::kJob, 0, 100},
      {"buffer_compress_chunk", kSize, JobField<&JobSpec::buffer_compress_chunk>,
       "the chunk of --buffer_compress_percentage", "512"},
      {"buffer_pattern", kText,
       [](RunOptions& o, const OptionValue& v) {
         o.spec.buffer_pattern = engine::ParseBufferPattern(v.text, v.option);
       },
       "write buffers hold this pattern repeated: \"text\", 0x hex bytes, decimal numbers (LE), "
       "one after another"},
      {"zero_buffers", kFlag, JobField<&JobSpec::zero_buffers>,
       "write zeros instead of random data", "0"},
      {"verify", kText,
       [](RunOptions& o, const OptionValue& v) { o.spec.verify = engine::ParseVerifyKind(v.text); },
       "crc32c|md5|0: checksummed blocks, checked when read (and read back)", "0"},
      {"do_verify", kFlag, JobField<&JobSpec::do_verify>,
       "with --verify on a write job: read every block back after", "1"},
  };
  return table;
}

}  // namespace

std::span<const OptionDef> FileOptionTable() { return FileRows(); }

}  // namespace iotail::cli
