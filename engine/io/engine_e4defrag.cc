// fio's e4defrag engine: each write moves the blocks under its range from a donor file into the
// target with ext4's EXT4_IOC_MOVE_EXT (what e4defrag(8) does), and the I/O's latency is that
// ioctl (with inplace, also the donor's fallocate before it and its truncation after). Only
// writes: a read or trim fails with EINVAL, as in fio. The donor (EngineSetup::donor_path, opened
// write-only and created by each clone, as fio's engine opens it per thread) is preallocated over
// [donor_offset, donor_offset + donor_len) once when !inplace; with inplace each I/O allocates its
// own range and truncates the donor to zero afterwards. Blocks are the donor's st_blksize; a move
// shorter than the I/O counts what moved (the rest is resubmitted, a short transfer), none at all
// is EINVAL, as fio's. Synchronous (fio's FIO_SYNCIO); stamps around the calls, no slat.
#include <fcntl.h>
#include <linux/types.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

#include "engine/clock.h"
#include "engine/io/io_engine.h"
#include "engine/io/sync_engine_base.h"

namespace iotail::engine {

namespace {

// The kernel's struct move_extent and EXT4_IOC_MOVE_EXT (fs/ext4/ext4.h; not in the uapi headers).
struct MoveExtent {
  __u32 reserved;  // zero
  __u32 donor_fd;
  __u64 orig_start;   // in blocks
  __u64 donor_start;  // in blocks
  __u64 len;          // blocks to move
  __u64 moved_len;    // blocks moved (out)
};
constexpr unsigned long kMoveExt = _IOWR('f', 15, MoveExtent);

class E4defragEngine final : public SyncEngineBase {
 public:
  ~E4defragEngine() override {
    if (donor_ >= 0) close(donor_);
  }
  void Prepare(const EngineSetup& setup) override {
    SyncEngineBase::Prepare(setup);
    inplace_ = setup.donor_inplace;
    if (setup.donor_path.empty()) return;  // a probe: nothing to open
    donor_ = open(setup.donor_path.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
    if (donor_ < 0) Fail("open the donor file", setup.donor_path);
    if (!inplace_ && setup.donor_len > 0 &&
        fallocate(donor_, 0, static_cast<off_t>(setup.donor_offset),
                  static_cast<off_t>(setup.donor_len)) != 0) {
      Fail("preallocate the donor file", setup.donor_path);
    }
    struct stat st;
    if (fstat(donor_, &st) != 0) Fail("stat the donor file", setup.donor_path);
    block_ = st.st_blksize > 0 ? static_cast<uint64_t>(st.st_blksize) : 4096;
  }
  int Submit(std::span<const IoRequest> requests) override {
    for (const IoRequest& r : requests) {
      const uint64_t start = Clock::NowNs();
      const int64_t result = r.dir == stats::Direction::kWrite ? Move(r) : -EINVAL;
      const uint64_t done = Clock::NowNs();
      r.stamps->start_ns = start;
      r.stamps->issued_ns = start;
      Complete(r.slot, result, done);
    }
    return static_cast<int>(requests.size());
  }
  std::string Describe() const override { return inplace_ ? "e4defrag (inplace)" : "e4defrag"; }

 private:
  [[noreturn]] static void Fail(const char* what, const std::string& path) {
    throw std::system_error(errno, std::generic_category(),
                            std::string("--ioengine=e4defrag: ") + what + " '" + path + "'");
  }
  // Bytes moved, or -errno.
  int64_t Move(const IoRequest& r) {
    if (inplace_ && fallocate(donor_, 0, static_cast<off_t>(r.offset), r.len) != 0) return -errno;
    MoveExtent me{};
    me.donor_fd = static_cast<__u32>(donor_);
    me.orig_start = r.offset / block_;
    me.donor_start = me.orig_start;
    me.len = (r.offset + r.len + block_ - 1) / block_ - me.orig_start;
    int64_t result;
    if (ioctl(fds_[r.file], kMoveExt, &me) != 0) {
      result = -errno;
    } else {
      const uint64_t moved = me.moved_len * block_;
      result = moved == 0 ? -EINVAL : static_cast<int64_t>(moved < r.len ? moved : r.len);
    }
    if (inplace_ && ftruncate(donor_, 0) != 0 && result >= 0) result = -errno;
    return result;
  }

  int donor_ = -1;
  bool inplace_ = false;
  uint64_t block_ = 4096;
};

}  // namespace

std::unique_ptr<IoEngine> MakeE4defragEngine() { return std::make_unique<E4defragEngine>(); }

}  // namespace iotail::engine
