// Targets: the files and block devices a run reads or writes, opened once before the run.
//
// A Target creates a missing regular file (or extends a short one) to offset + size as fio lays
// files out (TargetOptions: preallocated, and written out with data where the job reads, so reads
// hit real blocks), after checking the filesystem has the room; a failure or a stop request
// removes a created file and truncates an extended one back to its size. It finds the usable
// size of files and devices; and, before opening a block device for writing, refuses one that is in
// use (mounted, swap, held: always) or that holds a filesystem, partition table or other signature
// (unless allow_destructive), then opens it with O_EXCL so that the kernel refuses a device claimed
// meanwhile and keeps mount and mkfs off it during the run. Reading is always allowed. Failures:
// UsageError for refusals and bad sizes, std::system_error for OS errors. A Target owns its
// descriptor and closes it when destroyed.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "engine/buffer_fill.h"

namespace iotail::engine {

enum class Access { kRead, kReadWrite };

// The capacity of a regular file written with fill_device and no size (fio's size of -1): 1 PiB,
// more than any filesystem here has free.
inline constexpr uint64_t kFillDeviceBytes = uint64_t{1} << 50;

// fio's fallocate=: how a file being made is preallocated. none; native: fallocate(2) mode 0 (none
// where the filesystem cannot); posix: posix_fallocate(3); keep: FALLOC_FL_KEEP_SIZE (allocated,
// size unchanged); truncate: ftruncate(2) to the size (sparse).
enum class FallocateMode { kNone, kNative, kPosix, kKeep, kTruncate };

struct TargetOptions {
  Access access = Access::kRead;
  bool direct = false;
  uint64_t size = 0;  // bytes wanted from offset; 0 = everything after offset
  uint64_t offset = 0;
  uint64_t file_size = 0;  // the file's whole length (fio's filesize); 0: offset + size
  bool allow_destructive = false;
  const std::atomic<bool>* stop = nullptr;  // set: laying out a file stops (stats::Interrupted)
  int sync_flags = 0;       // O_SYNC or O_DSYNC (fio's sync=), added to the open flags
  int fadvise = -1;         // POSIX_FADV_* for the whole file after opening (-1: none)
  bool invalidate = false;  // drop the page cache of the file (or device) after opening
  // A file missing or shorter than offset + size is made as fio lays it out: created (unless
  // !allow_create: an error), preallocated by `fallocate`, then, when `fill` (a job that reads,
  // or writes with --overwrite), written to its end with `content` (fio's buffer contents).
  // Without fill it is not written: a write job's I/Os may extend it, so its capacity is taken as
  // offset + size. An existing file is only extended, never recreated (fio unlinks a short one).
  FallocateMode fallocate = FallocateMode::kNative;
  bool fill = true;
  // fio's fill_device on a regular file: created if missing, neither preallocated nor written,
  // its capacity offset + size or, without a size, kFillDeviceBytes (a write job runs on until
  // ENOSPC). Devices keep their size.
  bool fill_device = false;
  // fio's create_on_open with an engine that moves data: a regular file is neither laid out nor
  // preallocated, only created (mode 0600, as fio's open) when missing; its capacity is offset +
  // size (fio's real_file_size), so reads past its end find nothing (fio's EIO, "full resid").
  bool create_on_open = false;
  BufferContent content;
  bool allow_create = true;
};

class Target {
 public:
  Target(std::string path, const TargetOptions& options);
  ~Target();
  Target(Target&& other) noexcept;
  Target& operator=(Target&&) = delete;
  Target(const Target&) = delete;

  int fd() const { return fd_; }
  const std::string& path() const { return path_; }
  bool is_block_device() const { return block_device_; }
  bool created() const { return created_; }
  uint64_t capacity() const { return capacity_; }  // bytes of the file or device


 private:
  std::string path_;
  int fd_ = -1;
  bool block_device_ = false;
  bool created_ = false;
  uint64_t capacity_ = 0;
};

// Why block device `path` is in use ("" if it is not): it or one of its partitions is mounted, an
// active swap area (/proc/swaps) or held by another device (device-mapper, md). iotail never
// writes to a device in use, --allow-destructive or not.
std::string DeviceInUse(const std::string& path);
// What block device `path` holds that writing would destroy ("" if nothing was found): a
// signature found by libblkid (filesystems, swap, partition tables, RAID and LVM members) or in
// the first sectors (ext2/3/4, XFS, btrfs, LUKS, GPT, MBR). Overridden by --allow-destructive.
std::string DeviceSignature(const std::string& path);

// The signature libblkid (when built in) or the built-in check finds in an image of a target's
// first bytes ("" if none): for targets that are not local devices (NBD exports).
std::string SignatureInImage(const unsigned char* head, size_t length);

// The signature found in a device's first bytes ("" if none). `head` should hold at least the
// first 68 KiB when available. Exposed for tests.
std::string SignatureInHead(const unsigned char* head, size_t length);

}  // namespace iotail::engine
