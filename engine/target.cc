#include "engine/target.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>
#include <vector>

#if IOTAIL_HAVE_BLKID
#include <blkid/blkid.h>
#endif

#include "stats/core/errors.h"

namespace iotail::engine {

namespace {

[[noreturn]] void ThrowErrno(const std::string& what) {
  throw std::system_error(errno, std::generic_category(), what);
}

// Writes zeros to the file from its current size up to `want` bytes.
void FillFile(int fd, const std::string& path, uint64_t from, uint64_t want) {
  constexpr size_t kChunk = 1 << 20;
  std::vector<char> zeros(kChunk, 0);
  uint64_t pos = from;
  while (pos < want) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(kChunk, want - pos));
    const ssize_t w = pwrite(fd, zeros.data(), n, static_cast<off_t>(pos));
    if (w < 0) {
      if (errno == EINTR) continue;
      ThrowErrno(fmt::format("lay out '{}' to {} bytes", path, want));
    }
    pos += static_cast<uint64_t>(w);
  }
  if (fsync(fd) != 0) ThrowErrno(fmt::format("fsync '{}'", path));
}

std::string MountedOrHeld(dev_t dev) {
  std::ifstream mountinfo("/proc/self/mountinfo");
  std::string line;
  const std::string want = fmt::format("{}:{}", major(dev), minor(dev));
  while (std::getline(mountinfo, line)) {
    std::istringstream fields(line);
    std::string id, parent, majmin, root, mount_point;
    fields >> id >> parent >> majmin >> root >> mount_point;
    if (majmin == want) return fmt::format("it is mounted on {}", mount_point);
  }
  const std::string holders = fmt::format("/sys/dev/block/{}/holders", want);
  std::error_code ec;
  if (std::filesystem::is_directory(holders, ec)) {
    for (const auto& entry : std::filesystem::directory_iterator(holders, ec)) {
      return fmt::format("it is held by {}", entry.path().filename().string());
    }
  }
  // Partitions of this disk that are mounted.
  const std::string sys = fmt::format("/sys/dev/block/{}", want);
  for (const auto& entry : std::filesystem::directory_iterator(sys, ec)) {
    std::ifstream devfile(entry.path() / "dev");
    std::string part;
    if (devfile >> part) {
      std::ifstream again("/proc/self/mountinfo");
      while (std::getline(again, line)) {
        std::istringstream f(line);
        std::string a, b, mm, r, mp;
        f >> a >> b >> mm >> r >> mp;
        if (mm == part) {
          return fmt::format("its partition {} is mounted on {}", entry.path().filename().string(),
                             mp);
        }
      }
    }
  }
  return "";
}

}  // namespace

std::string SignatureInHead(const unsigned char* head, size_t length) {
  auto at = [&](size_t off, const char* magic, size_t n) {
    return off + n <= length && std::memcmp(head + off, magic, n) == 0;
  };
  if (at(1080, "\x53\xEF", 2)) return "an ext2/3/4 filesystem";
  if (at(0, "XFSB", 4)) return "an XFS filesystem";
  if (at(65600, "_BHRfS_M", 8)) return "a btrfs filesystem";
  if (at(0, "LUKS\xBA\xBE", 6)) return "a LUKS header";
  if (at(512, "EFI PART", 8)) return "a GPT partition table";
  if (at(510, "\x55\xAA", 2)) return "an MBR boot signature or partition table";
  return "";
}

namespace {

#if IOTAIL_HAVE_BLKID
// What libblkid finds through probe `pr` ("" if nothing; also "" on a probe error).
std::string ProbeSignature(blkid_probe pr) {
  blkid_probe_enable_superblocks(pr, 1);
  blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_TYPE);
  blkid_probe_enable_partitions(pr, 1);
  std::string found;
  const int probe = blkid_do_safeprobe(pr);
  if (probe == -2) {
    // Several signatures that contradict each other: something is there; refuse to guess.
    found = "conflicting signatures (libblkid)";
  } else if (probe == 0) {
    const char* value = nullptr;
    if (blkid_probe_lookup_value(pr, "TYPE", &value, nullptr) == 0 && value != nullptr) {
      found = fmt::format("a {} signature (libblkid)", value);
    } else if (blkid_probe_lookup_value(pr, "PTTYPE", &value, nullptr) == 0 && value != nullptr) {
      found = fmt::format("a {} partition table (libblkid)", value);
    }
  }  // 1: nothing found; -1: probe error: both fall through to the sector check
  blkid_free_probe(pr);
  return found;
}
#endif

}  // namespace

std::string SignatureInImage(const unsigned char* head, size_t length) {
#if IOTAIL_HAVE_BLKID
  // libblkid probes descriptors: give it the bytes in an anonymous memory file.
  const int fd = memfd_create("iotail-probe", MFD_CLOEXEC);
  if (fd >= 0) {
    std::string found;
    if (write(fd, head, length) == static_cast<ssize_t>(length)) {
      if (blkid_probe pr = blkid_new_probe()) {
        if (blkid_probe_set_device(pr, fd, 0, static_cast<blkid_loff_t>(length)) == 0) {
          found = ProbeSignature(pr);
        } else {
          blkid_free_probe(pr);
        }
      }
    }
    close(fd);
    if (!found.empty()) return found;
  }
#endif
  return SignatureInHead(head, length);
}

std::string DeviceWriteHazard(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) ThrowErrno(fmt::format("stat '{}'", path));
  if (!S_ISBLK(st.st_mode)) return "";
  if (std::string m = MountedOrHeld(st.st_rdev); !m.empty()) return m;
#if IOTAIL_HAVE_BLKID
  if (blkid_probe pr = blkid_new_probe_from_filename(path.c_str())) {
    if (std::string found = ProbeSignature(pr); !found.empty()) return found;
  }
#endif
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) ThrowErrno(fmt::format("open '{}' to check for signatures", path));
  std::vector<unsigned char> head(68 * 1024, 0);
  const ssize_t n = pread(fd, head.data(), head.size(), 0);
  close(fd);
  if (n < 0) ThrowErrno(fmt::format("read the first sectors of '{}'", path));
  return SignatureInHead(head.data(), static_cast<size_t>(n));
}

Target::Target(std::string path, const TargetOptions& options) : path_(std::move(path)) {
  struct stat st;
  const bool exists = stat(path_.c_str(), &st) == 0;
  if (!exists && errno != ENOENT) ThrowErrno(fmt::format("stat '{}'", path_));
  block_device_ = exists && S_ISBLK(st.st_mode);
  if (exists && !block_device_ && !S_ISREG(st.st_mode)) {
    throw stats::UsageError(
        fmt::format("--filename: '{}' is neither a regular file nor a block device", path_));
  }
  const bool write = options.access == Access::kReadWrite;
  if (block_device_ && write && !options.allow_destructive) {
    if (std::string hazard = DeviceWriteHazard(path_); !hazard.empty()) {
      throw stats::UsageError(
          fmt::format("refusing to write to '{}': {}; pass --allow-destructive to overwrite it",
                      path_, hazard));
    }
  }
  if (!block_device_) {
    // Create or extend the file (buffered), so reads hit written blocks.
    const uint64_t want = options.size == 0 ? 0 : options.offset + options.size;
    const uint64_t have = exists ? static_cast<uint64_t>(st.st_size) : 0;
    if (!exists && want == 0) {
      throw stats::UsageError(
          fmt::format("--size: '{}' does not exist; give --size to create it", path_));
    }
    if (want > have) {
      const int fd = open(path_.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
      if (fd < 0) ThrowErrno(fmt::format("create '{}'", path_));
      created_ = !exists;
      try {
        FillFile(fd, path_, have, want);
      } catch (...) {
        close(fd);
        if (created_) unlink(path_.c_str());
        throw;
      }
      close(fd);
    }
  }
  int flags = (write ? O_RDWR : O_RDONLY) | O_CLOEXEC;
  if (options.direct) flags |= O_DIRECT;
  fd_ = open(path_.c_str(), flags);
  if (fd_ < 0) {
    const int err = errno;
    if (created_) unlink(path_.c_str());
    errno = err;
    if (err == EINVAL && options.direct) {
      ThrowErrno(
          fmt::format("open '{}' with O_DIRECT (--direct=1; the filesystem may not "
                      "support it)",
                      path_));
    }
    ThrowErrno(fmt::format("open '{}'", path_));
  }
  if (block_device_) {
    uint64_t bytes = 0;
    if (ioctl(fd_, BLKGETSIZE64, &bytes) != 0) ThrowErrno(fmt::format("BLKGETSIZE64 '{}'", path_));
    capacity_ = bytes;
  } else {
    struct stat now;
    if (fstat(fd_, &now) != 0) ThrowErrno(fmt::format("fstat '{}'", path_));
    capacity_ = static_cast<uint64_t>(now.st_size);
  }
  if (options.offset >= capacity_ ||
      (options.size != 0 && options.offset + options.size > capacity_)) {
    close(fd_);
    fd_ = -1;
    throw stats::UsageError(
        fmt::format("--size/--offset: '{}' has only {} bytes", path_, capacity_));
  }
}

Target::Target(Target&& other) noexcept
    : path_(std::move(other.path_)),
      fd_(other.fd_),
      block_device_(other.block_device_),
      created_(other.created_),
      capacity_(other.capacity_) {
  other.fd_ = -1;
}

Target::~Target() {
  if (fd_ >= 0) close(fd_);
}

void Target::Sync() const {
  if (fsync(fd_) != 0) ThrowErrno(fmt::format("fsync '{}'", path_));
}

}  // namespace iotail::engine
