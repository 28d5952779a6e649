// PrivateFiles: an engine's own open file descriptions of its worker's targets.
//
// The worker's descriptors belong to the job and are shared by its clones when they do their I/O
// over the same files (a --filename list), and with them the file position. Engines whose calls
// depend on that position (sync, vsync: lseek, then read) or on the descriptor itself (glibc's
// POSIX AIO works on one descriptor's requests one at a time) open each target again, as each of
// fio's clones opens its own files: through /proc/self/fd, with the same access mode and status
// flags (O_DIRECT, O_SYNC, ...), without O_EXCL (the job's descriptor keeps holding a device), and
// with the job's fadvise hint (it belongs to the open file description). A new description starts
// at position 0. Owned by one engine, closed with it; not thread-safe.
#pragma once

#include <span>
#include <vector>

namespace iotail::engine {

class PrivateFiles {
 public:
  PrivateFiles() = default;
  PrivateFiles(const PrivateFiles&) = delete;
  PrivateFiles& operator=(const PrivateFiles&) = delete;
  ~PrivateFiles();

  // Opens every descriptor of `shared` again (a negative one stays as it is) and gives each the
  // POSIX_FADV_* `fadvise` (-1: none). Throws std::system_error naming the descriptor.
  void Open(std::span<const int> shared, int fadvise);
  const std::vector<int>& fds() const { return fds_; }

 private:
  void Close();
  std::vector<int> fds_;
};

}  // namespace iotail::engine
