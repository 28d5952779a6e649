// FileExtents: where a file's bytes lie on its device (FS_IOC_FIEMAP), so that a block request
// (device sector) can be matched to the file offset iotail read or wrote. Taken once, before a run
// (FIEMAP_FLAG_SYNC: delayed allocations are written and placed first); a file whose blocks move
// later (defragmentation, copy-on-write filesystems rewriting) needs a new map. Immutable once
// built; thread-safe to read.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace iotail::engine {

struct FileExtent {
  uint64_t logical = 0;   // file offset, bytes
  uint64_t physical = 0;  // device offset, bytes (of the filesystem's device: a partition's own)
  uint64_t length = 0;
  uint32_t flags = 0;  // FIEMAP_EXTENT_*
};

class FileExtents {
 public:
  // The extents of the open file `fd` (`path` names it in errors). Throws std::system_error when
  // the filesystem has no FIEMAP (tmpfs) or the call fails.
  static FileExtents Of(int fd, const std::string& path);

  explicit FileExtents(std::vector<FileExtent> extents);

  // The device byte holding file offset `offset`, or nothing when no device block does: a hole,
  // an unwritten (preallocated) extent (reads return zeros without I/O), data inline in the
  // metadata, or an extent whose place is unknown or encoded.
  std::optional<uint64_t> PhysicalByte(uint64_t offset) const;
  // The device byte a write at `offset` lands on: as PhysicalByte, but an unwritten
  // (preallocated) extent's block is written in place.
  std::optional<uint64_t> WrittenByte(uint64_t offset) const;

  std::span<const FileExtent> extents() const { return extents_; }

 private:
  std::optional<uint64_t> Lookup(uint64_t offset, uint32_t no_block) const;
  std::vector<FileExtent> extents_;  // sorted by logical offset, not overlapping
};

}  // namespace iotail::engine
