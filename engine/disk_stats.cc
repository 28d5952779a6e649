#include "engine/disk_stats.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace iotail::engine {

namespace fs = std::filesystem;

std::vector<std::string> DisksOf(const std::vector<std::string>& paths) {
  std::vector<std::string> disks;
  for (const std::string& path : paths) {
    struct stat st {};
    if (stat(path.c_str(), &st) != 0) {
      // A file the run is about to create: the device of the directory it goes in.
      const std::filesystem::path parent = std::filesystem::path(path).parent_path();
      if (stat(parent.empty() ? "." : parent.c_str(), &st) != 0) continue;
    }
    const dev_t dev = S_ISBLK(st.st_mode) ? st.st_rdev : st.st_dev;
    if (major(dev) == 0) continue;  // no block device (tmpfs, overlay, ...)
    std::error_code ec;
    const fs::path sys = fs::path("/sys/dev/block") /
                         (std::to_string(major(dev)) + ":" + std::to_string(minor(dev)));
    fs::path target = fs::canonical(sys, ec);
    if (ec) continue;
    if (fs::exists(target / "partition", ec)) target = target.parent_path();  // its whole disk
    const std::string name = target.filename().string();
    if (std::find(disks.begin(), disks.end(), name) == disks.end()) disks.push_back(name);
  }
  return disks;
}

std::vector<DiskCounters> ReadDiskCounters(const std::vector<std::string>& disks) {
  std::vector<DiskCounters> out;
  if (disks.empty()) return out;
  std::ifstream in("/proc/diskstats");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream f(line);
    unsigned maj = 0, min = 0;
    DiskCounters c;
    uint64_t sectors_read = 0, sectors_written = 0, in_flight = 0;
    f >> maj >> min >> c.name >> c.read_ios >> c.read_merges >> sectors_read >> c.read_ticks >>
        c.write_ios >> c.write_merges >> sectors_written >> c.write_ticks >> in_flight >>
        c.io_ticks >> c.in_queue;
    if (!f) continue;
    if (std::find(disks.begin(), disks.end(), c.name) != disks.end()) out.push_back(c);
  }
  return out;
}

std::vector<DiskCounters> DiskDelta(const std::vector<DiskCounters>& before,
                                    const std::vector<DiskCounters>& after) {
  std::vector<DiskCounters> out;
  for (const DiskCounters& a : after) {
    for (const DiskCounters& b : before) {
      if (a.name != b.name) continue;
      auto d = [](uint64_t x, uint64_t y) { return x >= y ? x - y : 0; };
      out.push_back({a.name, d(a.read_ios, b.read_ios), d(a.read_merges, b.read_merges),
                     d(a.read_ticks, b.read_ticks), d(a.write_ios, b.write_ios),
                     d(a.write_merges, b.write_merges), d(a.write_ticks, b.write_ticks),
                     d(a.io_ticks, b.io_ticks), d(a.in_queue, b.in_queue)});
    }
  }
  return out;
}

}  // namespace iotail::engine
