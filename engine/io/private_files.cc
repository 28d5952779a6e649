#include "engine/io/private_files.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <system_error>

namespace iotail::engine {

PrivateFiles::~PrivateFiles() { Close(); }

void PrivateFiles::Close() {
  for (int fd : fds_) {
    if (fd >= 0) close(fd);
  }
  fds_.clear();
}

void PrivateFiles::Open(std::span<const int> shared, int fadvise) {
  Close();
  fds_.reserve(shared.size());
  for (int fd : shared) {
    if (fd < 0) {
      fds_.push_back(fd);
      continue;
    }
    const int flags = fcntl(fd, F_GETFL);
    if (flags < 0) throw std::system_error(errno, std::generic_category(), "fcntl(F_GETFL)");
    const std::string path = fmt::format("/proc/self/fd/{}", fd);
    const int own = open(path.c_str(), (flags & ~(O_CREAT | O_EXCL | O_TRUNC)) | O_CLOEXEC);
    if (own < 0) {
      const int err = errno;
      Close();
      throw std::system_error(err, std::generic_category(),
                              fmt::format("open '{}' again for this worker", path));
    }
    fds_.push_back(own);
    if (fadvise >= 0) (void)posix_fadvise(own, 0, 0, fadvise);
  }
}

}  // namespace iotail::engine
