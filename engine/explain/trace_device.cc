#include "engine/explain/trace_device.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace iotail::engine {
namespace {

namespace fs = std::filesystem;

bool ReadNumber(const fs::path& path, uint64_t& value) {
  std::ifstream in(path);
  return static_cast<bool>(in >> value);
}

// "MAJ:MIN" of a sysfs `dev` file.
bool ReadDev(const fs::path& path, dev_t& dev) {
  std::ifstream in(path);
  unsigned maj = 0, min = 0;
  char colon = 0;
  if (!(in >> maj >> colon >> min) || colon != ':') return false;
  dev = makedev(maj, min);
  return true;
}

}  // namespace

std::variant<TraceDevice, std::string> TraceDeviceOf(dev_t dev) {
  const std::string name = fmt::format("{}:{}", major(dev), minor(dev));
  std::error_code ec;
  const fs::path sys = fs::canonical(fs::path("/sys/dev/block") / name, ec);
  if (ec) {
    return fmt::format(
        "device {} is not a block device (tmpfs, a network or FUSE filesystem, "
        "btrfs's subvolumes...): its I/O issues no block requests to trace",
        name);
  }
  TraceDevice device;
  if (fs::exists(sys / "partition")) {
    if (!ReadNumber(sys / "start", device.start_sector) ||
        !ReadDev(sys.parent_path() / "dev", device.disk)) {
      return fmt::format("cannot read the partition {} in {}", name, sys.string());
    }
  } else {
    device.disk = dev;
  }
  const fs::path disk = device.disk == dev ? sys : sys.parent_path();
  if (fs::exists(disk / "dm") || fs::exists(disk / "md")) {
    return fmt::format("{} is a {} device: its requests are those of the devices beneath it",
                       disk.filename().string(),
                       fs::exists(disk / "dm") ? "device-mapper" : "md (software RAID)");
  }
  return device;
}

std::variant<TraceDevice, std::string> TraceDeviceOf(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return fmt::format("cannot stat '{}': {}", path, std::strerror(errno));
  }
  if (S_ISBLK(st.st_mode)) return TraceDeviceOf(st.st_rdev);
  if (!S_ISREG(st.st_mode)) return fmt::format("'{}' is neither a file nor a block device", path);
  auto device = TraceDeviceOf(st.st_dev);
  if (auto* d = std::get_if<TraceDevice>(&device)) d->through_filesystem = true;
  return device;
}

}  // namespace iotail::engine
