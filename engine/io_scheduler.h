// fio's ioscheduler=NAME: before a job runs, the I/O scheduler of the block device under each of
// its targets (the device itself, or the whole disk holding a file's filesystem or a partition) is
// set to NAME through /sys/dev/block/MAJ:MIN/queue/scheduler, then read back. As fio: a target on
// no block device (tmpfs, overlay), a kernel without the file, or a queue that is not tunable
// ("none" alone) is a note, not an error; a scheduler the queue does not offer is an error. The
// setting is not restored afterwards (fio's neither). Needs root to write; used before the run
// only.
#pragma once

#include <string>

namespace iotail::engine {

// Switches the scheduler under `path` to `name`. Returns a note to show ("" when switched), throws
// stats::UsageError (a scheduler the device does not have) or std::system_error.
std::string SwitchIoScheduler(const std::string& path, const std::string& name);

}  // namespace iotail::engine
