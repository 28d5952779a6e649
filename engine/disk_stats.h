// DiskStats: the block devices behind a run's targets and their /proc/diskstats counters, for
// fio's disk_util. A target that is a block device is that device; a file is the device of its
// filesystem (none for filesystems without one: tmpfs, overlay), or for a file not yet created,
// of its directory's. A partition is reported as its
// whole disk, as fio does. Read before and after the run; the difference is what the run (and
// anything else on those disks meanwhile) did. Plain functions reading /sys and /proc; a target
// whose device cannot be found is skipped, never an error.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace iotail::engine {

struct DiskCounters {
  std::string name;  // e.g. "nvme0n1", "vda", "loop3"
  uint64_t read_ios = 0, read_merges = 0, read_ticks = 0;
  uint64_t write_ios = 0, write_merges = 0, write_ticks = 0;
  uint64_t io_ticks = 0;  // ms the device was busy
  uint64_t in_queue = 0;  // weighted ms in queue
};

// The whole-disk names behind these paths (each once, in order of first appearance).
std::vector<std::string> DisksOf(const std::vector<std::string>& paths);
// Their counters now (a disk missing from /proc/diskstats is left out).
std::vector<DiskCounters> ReadDiskCounters(const std::vector<std::string>& disks);
// after - before, per disk present in both.
std::vector<DiskCounters> DiskDelta(const std::vector<DiskCounters>& before,
                                    const std::vector<DiskCounters>& after);

}  // namespace iotail::engine
