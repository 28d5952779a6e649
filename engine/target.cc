#include "engine/target.h"

#include <blkid/blkid.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <system_error>
#include <vector>

#include "engine/io_pattern.h"
#include "stats/core/errors.h"

namespace iotail::engine {

namespace {

[[noreturn]] void ThrowErrno(const std::string& what) {
  throw std::system_error(errno, std::generic_category(), what);
}

// Refuses to lay a file out from `from` to `want` bytes on a filesystem without the room.
void CheckRoom(int fd, const std::string& path, uint64_t from, uint64_t want) {
  struct statvfs fs;
  if (fstatvfs(fd, &fs) == 0) {
    const uint64_t free_bytes = static_cast<uint64_t>(fs.f_bavail) * fs.f_frsize;
    if (want - from > free_bytes) {
      throw stats::UsageError(fmt::format(
          "--size: laying out '{}' to {} bytes needs {} more bytes; its filesystem has {} free",
          path, want, want - from, free_bytes));
    }
  }
}

// Writes the file from `from` up to `want` bytes with `content`; stops with stats::Interrupted
// when *stop is set.
void FillFile(int fd, const std::string& path, uint64_t from, uint64_t want,
              const BufferContent& content, const std::atomic<bool>* stop) {
  constexpr size_t kChunk = 1 << 20;
  std::vector<char> chunk(kChunk, 0);
  FastRandom rng(from ^ want);
  uint64_t pos = from;
  while (pos < want) {
    if (stop != nullptr && stop->load(std::memory_order_relaxed)) {
      throw stats::Interrupted(fmt::format("laying out '{}' interrupted", path));
    }
    if (pos == from || !content.Fixed()) content.Fill(chunk.data(), kChunk, rng);
    const size_t n = static_cast<size_t>(std::min<uint64_t>(kChunk, want - pos));
    const ssize_t w = pwrite(fd, chunk.data(), n, static_cast<off_t>(pos));
    if (w < 0) {
      if (errno == EINTR) continue;
      ThrowErrno(fmt::format("lay out '{}' to {} bytes", path, want));
    }
    pos += static_cast<uint64_t>(w);
  }
  if (fsync(fd) != 0) ThrowErrno(fmt::format("fsync '{}'", path));
}

// fio's fallocate_file: preallocates [0, want) by `mode`. A filesystem that cannot (native on one
// without fallocate) is left as it is, as fio does; any other failure is the job's error.
void Preallocate(int fd, const std::string& path, uint64_t want, FallocateMode mode) {
  const auto size = static_cast<off_t>(want);
  int r = 0;
  switch (mode) {
    case FallocateMode::kNone:
      return;
    case FallocateMode::kNative:
      if (fallocate(fd, 0, 0, size) != 0 && errno != EOPNOTSUPP && errno != ENOSYS) r = errno;
      break;
    case FallocateMode::kPosix:
      r = posix_fallocate(fd, 0, size);
      break;
    case FallocateMode::kKeep:
      if (fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, size) != 0) r = errno;
      break;
    case FallocateMode::kTruncate:
      if (ftruncate(fd, size) != 0) r = errno;
      break;
  }
  if (r != 0) {
    throw std::system_error(r, std::generic_category(),
                            fmt::format("--fallocate: preallocate '{}' to {} bytes", path, want));
  }
}

// Creates or extends the regular file at `path` (its size when it exists) to offset + size as
// TargetOptions says (buffered, so reads hit written blocks). Returns whether it created the file;
// on failure leaves it as it was (removed if created, its old size if extended).
bool LayOut(const std::string& path, std::optional<uint64_t> size, const TargetOptions& options) {
  // Create or extend the file (buffered), so reads hit written blocks.
  const uint64_t want = options.size == 0 ? 0
                        : options.file_size != 0
                            ? std::max(options.file_size, options.offset + options.size)
                            : options.offset + options.size;
  const bool exists = size.has_value();
  const uint64_t have = size.value_or(0);
  if (!exists && want == 0) {
    throw stats::UsageError(
        fmt::format("--size: '{}' does not exist; give --size to create it", path));
  }
  if (!exists && !options.allow_create) {
    throw stats::UsageError(fmt::format(
        "--allow_file_create=0: '{}' does not exist, and creating files is disallowed", path));
  }
  if (want > have) {
    // As fio (create_work_dirs): the directories in a new file's name are made, mode 0700.
    for (size_t slash = path.find('/', 1); !exists && slash != std::string::npos;
         slash = path.find('/', slash + 1)) {
      (void)mkdir(path.substr(0, slash).c_str(), 0700);  // open() reports what failed
    }
    const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) ThrowErrno(fmt::format("create '{}'", path));
    const bool created = !exists;
    try {
      // Room for what is allocated: all of it unless the file is left sparse.
      if (options.fill || (options.fallocate != FallocateMode::kNone &&
                           options.fallocate != FallocateMode::kTruncate)) {
        CheckRoom(fd, path, have, want);
      }
      Preallocate(fd, path, want, options.fallocate);
      if (options.fill) FillFile(fd, path, have, want, options.content, options.stop);
    } catch (...) {
      // Leave the file as it was: removed if created, its old size if extended.
      if (!created && ftruncate(fd, static_cast<off_t>(have)) != 0) {
        std::fprintf(stderr, "iotail: could not restore '%s' to %llu bytes\n", path.c_str(),
                     static_cast<unsigned long long>(have));
      }
      close(fd);
      if (created) unlink(path.c_str());
      throw;
    }
    close(fd);
  }
  return !exists;  // a missing file without a size was refused above
}

// fio's fill_device: a missing file is created empty (its directories too), to be written until
// the filesystem is full. Returns true.
bool CreateEmpty(const std::string& path, mode_t mode = 0644) {
  for (size_t slash = path.find('/', 1); slash != std::string::npos;
       slash = path.find('/', slash + 1)) {
    (void)mkdir(path.substr(0, slash).c_str(), 0700);  // open() reports what failed
  }
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, mode);
  if (fd < 0) ThrowErrno(fmt::format("create '{}'", path));
  close(fd);
  return true;
}

// The block device numbers of the active swap areas (/proc/swaps names their paths).
std::vector<dev_t> SwapDevices() {
  std::vector<dev_t> out;
  std::ifstream swaps("/proc/swaps");
  std::string line;
  std::getline(swaps, line);  // header
  while (std::getline(swaps, line)) {
    std::istringstream fields(line);
    std::string path, type;
    fields >> path >> type;
    struct stat st;
    if (type == "partition" && stat(path.c_str(), &st) == 0 && S_ISBLK(st.st_mode)) {
      out.push_back(st.st_rdev);
    }
  }
  return out;
}

// The mount point of device `majmin` ("MAJ:MIN") in /proc/self/mountinfo, or "".
std::string MountPointOf(const std::string& majmin) {
  std::ifstream mountinfo("/proc/self/mountinfo");
  std::string line;
  while (std::getline(mountinfo, line)) {
    std::istringstream fields(line);
    std::string id, parent, mm, root, mount_point;
    fields >> id >> parent >> mm >> root >> mount_point;
    if (mm == majmin) return mount_point;
  }
  return "";
}

// Why device `dev` is in use ("" if it is not): mounted, an active swap area, or held by another
// device (device-mapper, md); and the same for each of its partitions.
std::string InUse(dev_t dev, const std::string& what) {
  const std::string majmin = fmt::format("{}:{}", major(dev), minor(dev));
  if (std::string mp = MountPointOf(majmin); !mp.empty()) {
    return fmt::format("{} is mounted on {}", what, mp);
  }
  for (dev_t swap : SwapDevices()) {
    if (swap == dev) return fmt::format("{} is an active swap area", what);
  }
  const std::string sys = fmt::format("/sys/dev/block/{}", majmin);
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(sys + "/holders", ec)) {
    return fmt::format("{} is held by {}", what, entry.path().filename().string());
  }
  return "";
}

std::string InUseWithPartitions(dev_t dev) {
  if (std::string why = InUse(dev, "it"); !why.empty()) return why;
  // Partitions of this disk: /sys/dev/block/MAJ:MIN/<name>/dev.
  std::error_code ec;
  const std::string sys = fmt::format("/sys/dev/block/{}:{}", major(dev), minor(dev));
  for (const auto& entry : std::filesystem::directory_iterator(sys, ec)) {
    std::ifstream devfile(entry.path() / "partition");
    if (!devfile) continue;
    std::ifstream numbers(entry.path() / "dev");
    unsigned maj = 0, min = 0;
    char colon = 0;
    if (numbers >> maj >> colon >> min) {
      const std::string name = entry.path().filename().string();
      if (std::string why = InUse(makedev(maj, min), "its partition " + name); !why.empty()) {
        return why;
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

}  // namespace

std::string SignatureInImage(const unsigned char* head, size_t length) {
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
  return SignatureInHead(head, length);
}

std::string DeviceInUse(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) ThrowErrno(fmt::format("stat '{}'", path));
  if (!S_ISBLK(st.st_mode)) return "";
  return InUseWithPartitions(st.st_rdev);
}

std::string DeviceSignature(const std::string& path) {
  if (blkid_probe pr = blkid_new_probe_from_filename(path.c_str())) {
    if (std::string found = ProbeSignature(pr); !found.empty()) return found;
  }
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
  if (block_device_ && write) {
    if (std::string why = DeviceInUse(path_); !why.empty()) {
      throw stats::UsageError(
          fmt::format("refusing to write to '{}': {}; iotail never writes to a device in use "
                      "(--allow-destructive does not override this)",
                      path_, why));
    }
    if (!options.allow_destructive) {
      if (std::string found = DeviceSignature(path_); !found.empty()) {
        throw stats::UsageError(
            fmt::format("refusing to write to '{}': it holds {}; pass --allow-destructive to "
                        "overwrite it",
                        path_, found));
      }
    }
  }
  if (!block_device_ && options.fill_device) {
    created_ = !exists && CreateEmpty(path_);
  } else if (!block_device_ && options.create_on_open) {
    if (!exists && options.size == 0) {
      throw stats::UsageError(
          fmt::format("--size: '{}' does not exist; give --size to create it", path_));
    }
    if (!exists && !options.allow_create) {
      throw stats::UsageError(fmt::format(
          "--allow_file_create=0: '{}' does not exist, and creating files is disallowed", path_));
    }
    created_ = !exists && CreateEmpty(path_, 0600);
  } else if (!block_device_) {
    created_ = LayOut(path_, exists ? std::optional<uint64_t>(st.st_size) : std::nullopt, options);
  }
  int flags = (write ? O_RDWR : O_RDONLY) | O_CLOEXEC | options.sync_flags;
  if (options.direct) flags |= O_DIRECT;
  // A device opened for writing is claimed exclusively: the kernel refuses it when it is mounted
  // or claimed (closing the race with the checks above), and refuses mount and mkfs meanwhile.
  if (block_device_ && write) flags |= O_EXCL;
  fd_ = open(path_.c_str(), flags);
  if (fd_ < 0) {
    const int err = errno;
    if (created_) unlink(path_.c_str());
    errno = err;
    if (err == EBUSY && block_device_ && write) {
      throw stats::UsageError(fmt::format(
          "refusing to write to '{}': the kernel refuses exclusive access (the device is in use: "
          "mounted, swap, or held); --allow-destructive does not override this",
          path_));
    }
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
    // A file laid out without data (a write job) may be shorter: its writes extend it.
    if ((!options.fill && write) || options.create_on_open) {
      capacity_ = std::max({capacity_, options.offset + options.size, options.file_size});
    }
    if (options.fill_device && write && options.size == 0) {
      capacity_ = std::max(capacity_, options.offset + kFillDeviceBytes);
    }
  }
  // fio's invalidate (its default): start from a cold page cache; and its fadvise_hint. Both are
  // hints whose failure changes nothing else, as in fio.
  if (options.invalidate) {
    if (block_device_) {
      (void)ioctl(fd_, BLKFLSBUF, 0);
    } else {
      (void)posix_fadvise(fd_, 0, 0, POSIX_FADV_DONTNEED);
    }
  }
  if (options.fadvise >= 0) (void)posix_fadvise(fd_, 0, 0, options.fadvise);
  if (options.offset >= capacity_ ||
      (options.size != 0 && options.size > capacity_ - options.offset)) {
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

}  // namespace iotail::engine
