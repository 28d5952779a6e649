#include "engine/explain/file_extents.h"

#include <fmt/format.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <sys/ioctl.h>

#include <algorithm>
#include <cerrno>
#include <system_error>

namespace iotail::engine {
namespace {

constexpr uint32_t kExtentsPerCall = 256;  // extents per FIEMAP call
constexpr uint32_t kNoDeviceBlock = FIEMAP_EXTENT_UNKNOWN | FIEMAP_EXTENT_DELALLOC |
                                    FIEMAP_EXTENT_ENCODED | FIEMAP_EXTENT_DATA_INLINE |
                                    FIEMAP_EXTENT_DATA_TAIL | FIEMAP_EXTENT_UNWRITTEN |
                                    FIEMAP_EXTENT_NOT_ALIGNED | FIEMAP_EXTENT_DATA_ENCRYPTED;

}  // namespace

FileExtents FileExtents::Of(int fd, const std::string& path) {
  std::vector<uint8_t> buffer(sizeof(fiemap) + kExtentsPerCall * sizeof(fiemap_extent));
  auto* map = reinterpret_cast<fiemap*>(buffer.data());
  std::vector<FileExtent> extents;
  uint64_t start = 0;
  for (;;) {
    std::fill(buffer.begin(), buffer.end(), 0);
    map->fm_start = start;
    map->fm_length = FIEMAP_MAX_OFFSET - start;
    map->fm_flags = FIEMAP_FLAG_SYNC;
    map->fm_extent_count = kExtentsPerCall;
    if (::ioctl(fd, FS_IOC_FIEMAP, map) != 0) {
      throw std::system_error(errno, std::generic_category(),
                              fmt::format("FIEMAP of '{}' (where its blocks lie)", path));
    }
    if (map->fm_mapped_extents == 0) break;
    bool last = false;
    for (uint32_t i = 0; i < map->fm_mapped_extents; ++i) {
      const fiemap_extent& e = map->fm_extents[i];
      extents.push_back({e.fe_logical, e.fe_physical, e.fe_length, e.fe_flags});
      last = last || (e.fe_flags & FIEMAP_EXTENT_LAST);
    }
    const FileExtent& back = extents.back();
    if (last || map->fm_mapped_extents < kExtentsPerCall) break;
    start = back.logical + back.length;
  }
  return FileExtents(std::move(extents));
}

FileExtents::FileExtents(std::vector<FileExtent> extents) : extents_(std::move(extents)) {
  std::sort(extents_.begin(), extents_.end(),
            [](const FileExtent& a, const FileExtent& b) { return a.logical < b.logical; });
}

std::optional<uint64_t> FileExtents::PhysicalByte(uint64_t offset) const {
  return Lookup(offset, kNoDeviceBlock);
}

std::optional<uint64_t> FileExtents::WrittenByte(uint64_t offset) const {
  return Lookup(offset, kNoDeviceBlock & ~uint32_t{FIEMAP_EXTENT_UNWRITTEN});
}

std::optional<uint64_t> FileExtents::Lookup(uint64_t offset, uint32_t no_block) const {
  // The last extent starting at or before `offset`.
  auto after =
      std::upper_bound(extents_.begin(), extents_.end(), offset,
                       [](uint64_t value, const FileExtent& e) { return value < e.logical; });
  if (after == extents_.begin()) return std::nullopt;
  const FileExtent& e = *std::prev(after);
  if (offset - e.logical >= e.length || (e.flags & no_block)) return std::nullopt;
  return e.physical + (offset - e.logical);
}

}  // namespace iotail::engine
