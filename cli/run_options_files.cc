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

const std::vector<OptionDef>& Table() {
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
  };
  return table;
}

}  // namespace

std::span<const OptionDef> FileOptionTable() { return Table(); }

}  // namespace iotail::cli
