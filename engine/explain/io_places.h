// FilePlace: where one of a worker's files lies on a traced disk, so that an I/O's offset becomes
// the disk sector its block request carries: a block device's offsets directly (a partition's
// from its first sector), a file's through its extents (FIEMAP, taken once when built). Built
// before a run by PlaceOf(); immutable after; thread-safe to read.
#pragma once

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <variant>

#include "engine/explain/file_extents.h"
#include "stats/core/direction.h"

namespace iotail::engine {

// Where an I/O lies on a traced disk.
struct DevicePlace {
  dev_t dev = 0;
  uint64_t sector = 0;  // 512-byte sectors from the start of the whole disk
};

struct FilePlace {
  dev_t disk = 0;
  uint64_t start_sector = 0;                   // a partition's first sector on the disk
  std::shared_ptr<const FileExtents> extents;  // a file's; null for a block device

  // The disk place of `offset`, or nothing (a hole, an extent with no device block, or, for a
  // read, an unwritten extent, which the filesystem answers without I/O).
  std::optional<DevicePlace> Of(uint64_t offset, stats::Direction dir) const;
};

// The place of the open file or device `fd` named `path`, or why its I/O cannot be joined to
// block requests (in words for the user: "tmpfs issues no block requests", ...).
std::variant<FilePlace, std::string> PlaceOf(int fd, const std::string& path);

}  // namespace iotail::engine
