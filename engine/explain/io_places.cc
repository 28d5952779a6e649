#include "engine/explain/io_places.h"

#include <exception>

#include "engine/explain/trace_device.h"

namespace iotail::engine {

std::optional<DevicePlace> FilePlace::Of(uint64_t offset, stats::Direction dir) const {
  uint64_t byte = offset;
  if (extents) {
    const std::optional<uint64_t> at = dir == stats::Direction::kRead
                                           ? extents->PhysicalByte(offset)
                                           : extents->WrittenByte(offset);
    if (!at) return std::nullopt;
    byte = *at;
  }
  return DevicePlace{disk, start_sector + byte / 512};
}

std::variant<FilePlace, std::string> PlaceOf(int fd, const std::string& path) {
  std::variant<TraceDevice, std::string> device = TraceDeviceOf(path);
  if (auto* why = std::get_if<std::string>(&device)) return *why;
  const TraceDevice& d = std::get<TraceDevice>(device);
  FilePlace place;
  place.disk = d.disk;
  place.start_sector = d.start_sector;
  if (d.through_filesystem) {
    try {
      place.extents = std::make_shared<const FileExtents>(FileExtents::Of(fd, path));
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
  }
  return place;
}

}  // namespace iotail::engine
