// TraceDeviceOf(): which block device's requests carry a target's I/O, so that BlockTracer can be
// told the devices to trace and a caller can match requests to its offsets. A block device target
// is its st_rdev; a file is on st_dev (its offsets map to the device through FileExtents,
// engine/explain/file_extents.h). The block tracepoints name the whole disk and count sectors from
// its start, so a partition is resolved to its disk and its first sector (sysfs). A loop device's
// requests are its own (its sectors are the backing file's offsets / 512). What issues no block
// requests (tmpfs, network filesystems, device-mapper and md, which hand bios to the devices
// beneath them) is said, not guessed. Pure function of the path and sysfs; thread-safe.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <variant>

namespace iotail::engine {

struct TraceDevice {
  dev_t disk = 0;             // the whole disk, as BlockRequestEvent::dev names it
  uint64_t start_sector = 0;  // the partition's first 512-byte sector on the disk (0: the disk)
  bool through_filesystem = false;  // a file: its offsets are mapped with FileExtents
};

// The device of `path` (a block device or a file), or why its I/O cannot be traced.
std::variant<TraceDevice, std::string> TraceDeviceOf(const std::string& path);

// The same for a device number (st_dev of a file or st_rdev of a block device).
std::variant<TraceDevice, std::string> TraceDeviceOf(dev_t dev);

}  // namespace iotail::engine
