#include "engine/io_scheduler.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include "stats/core/errors.h"

namespace iotail::engine {

namespace fs = std::filesystem;

std::string SwitchIoScheduler(const std::string& path, const std::string& name) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) {
    throw std::system_error(errno, std::generic_category(),
                            fmt::format("--ioscheduler: stat '{}'", path));
  }
  const dev_t dev = S_ISBLK(st.st_mode) ? st.st_rdev : st.st_dev;
  if (major(dev) == 0) {
    return fmt::format("--ioscheduler: '{}' is on no block device; its scheduler is not switched",
                       path);
  }
  std::error_code ec;
  fs::path sysfs = fs::canonical(fmt::format("/sys/dev/block/{}:{}", major(dev), minor(dev)), ec);
  if (ec) {
    return fmt::format("--ioscheduler: no sysfs entry for the device under '{}'; not switched",
                       path);
  }
  if (fs::exists(sysfs / "partition")) sysfs = sysfs.parent_path();  // the whole disk's queue
  const fs::path file = sysfs / "queue" / "scheduler";
  if (!fs::exists(file)) {
    return fmt::format("--ioscheduler: the kernel cannot switch the scheduler of {}",
                       sysfs.filename().string());
  }
  {
    std::ofstream out(file);
    out << name << std::flush;
    if (!out) {
      // The kernel refuses a name it does not have with EINVAL; the read-back below says which.
      if (errno == EACCES || errno == EPERM) {
        throw std::system_error(errno, std::generic_category(),
                                fmt::format("--ioscheduler: write '{}'", file.string()));
      }
    }
  }
  std::ifstream in(file);
  std::string now;
  std::getline(in, now);
  if (now == "none") {
    return fmt::format("--ioscheduler: the queue of {} is not tunable (none)",
                       sysfs.filename().string());
  }
  if (now.find("[" + name + "]") == std::string::npos) {
    throw stats::UsageError(fmt::format("--ioscheduler: {} has no scheduler '{}' (it offers: {})",
                                        sysfs.filename().string(), name, now));
  }
  return "";
}

}  // namespace iotail::engine
