// fio's engines that move no data but change a file's allocation or size, one system call per
// I/O, completed inside Submit() (fio's FIO_SYNCIO, so at depth 1):
//   falloc     fallocate(2): a read is FALLOC_FL_KEEP_SIZE over its range, a write mode 0 (which
//              may extend the file), a trim FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE (iotail's
//              workers do trims themselves, by the same punch, whatever the engine)
//   ftruncate  ftruncate(2) to the I/O's offset; only writes (a read fails with EINVAL, as fio's)
// An I/O that succeeds counts its full length, as in fio. Stamps as the other synchronous engines:
// around the call, no slat.
//
// And fio's file and directory operation engines (FIO_FAKEIO | FIO_NOSTATS): an I/O moves nothing
// (it completes at once and is counted without a latency), and what is timed is the file's
// operation, done where fio opens the file (OperateOn, once per file per pass, before the file's
// first I/O of the pass), around the one system call:
//   filecreate  open(path, O_CREAT | O_RDWR, 0600) (closed again at once, untimed)
//   filestat    stat(2), lstat(2), or realpath(3) + statx(2) (--stat_type; realpath timed too)
//   filedelete  unlink(2)
//   dircreate   mkdir(path, S_IFDIR): as fio, a directory with no permission bits
//   dirstat     as filestat, on a directory
//   dirdelete   rmdir(2)
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <vector>

#include "engine/clock.h"
#include "engine/io/io_engine.h"
#include "engine/io/sync_engine_base.h"

namespace iotail::engine {

namespace {

template <EngineKind kKind>
class FileOpEngine final : public SyncEngineBase {
 public:
  int Submit(std::span<const IoRequest> requests) override {
    for (const IoRequest& r : requests) {
      const int fd = fds_[r.file];
      const uint64_t start = Clock::NowNs();
      int rc;
      if constexpr (kKind == EngineKind::kFalloc) {
        const int mode = r.dir == stats::Direction::kRead ? FALLOC_FL_KEEP_SIZE
                         : r.dir == stats::Direction::kWrite
                             ? 0
                             : FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE;
        rc = fallocate(fd, mode, static_cast<off_t>(r.offset), static_cast<off_t>(r.len));
      } else {
        if (r.dir != stats::Direction::kWrite) {
          rc = -1;
          errno = EINVAL;
        } else {
          rc = ftruncate(fd, static_cast<off_t>(r.offset));
        }
      }
      const int64_t result = rc == 0 ? static_cast<int64_t>(r.len) : -errno;
      const uint64_t done = Clock::NowNs();
      r.stamps->start_ns = start;
      r.stamps->issued_ns = start;
      Complete(r.slot, result, done);
    }
    return static_cast<int>(requests.size());
  }
  std::string Describe() const override { return EngineKindName(kKind); }
};

class FileOperationEngine final : public SyncEngineBase {
 public:
  explicit FileOperationEngine(EngineKind kind) : kind_(kind) {}
  void Prepare(const EngineSetup& setup) override {
    SyncEngineBase::Prepare(setup);
    paths_ = setup.paths;
    stat_type_ = setup.stat_type;
  }
  int Submit(std::span<const IoRequest> requests) override {
    const uint64_t now = Clock::NowNs();
    for (const IoRequest& r : requests) {
      r.stamps->start_ns = now;
      r.stamps->issued_ns = now;
      Complete(r.slot, r.len, now);
    }
    return static_cast<int>(requests.size());
  }
  bool OperatesOnFiles() const override { return true; }
  int64_t OperateOn(uint32_t file) override {
    if (file >= paths_.size()) return -EINVAL;
    const char* path = paths_[file].c_str();
    const uint64_t start = Clock::NowNs();
    int rc = 0;
    int fd = -1;
    switch (kind_) {
      case EngineKind::kFileCreate:
        rc = fd = open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0600);
        break;
      case EngineKind::kDirCreate:
        rc = mkdir(path, S_IFDIR);
        break;
      case EngineKind::kFileDelete:
        rc = unlink(path);
        break;
      case EngineKind::kDirDelete:
        rc = rmdir(path);
        break;
      default:
        rc = Stat(path);
        break;
    }
    const uint64_t done = Clock::NowNs();
    if (rc < 0) return -errno;
    if (fd >= 0) close(fd);
    return static_cast<int64_t>(done - start);
  }
  std::string Describe() const override {
    if (kind_ != EngineKind::kFileStat && kind_ != EngineKind::kDirStat) {
      return EngineKindName(kind_);
    }
    const char* call = stat_type_ == StatType::kStat    ? "stat"
                       : stat_type_ == StatType::kLstat ? "lstat"
                                                        : "statx";
    return EngineKindName(kind_) + " (" + call + ")";
  }

 private:
  int Stat(const char* path) {
    struct stat st {};
    switch (stat_type_) {
      case StatType::kStat:
        return stat(path, &st);
      case StatType::kLstat:
        return lstat(path, &st);
      case StatType::kStatx: {
        // fio resolves the path first (realpath), inside the timed call: so does iotail, into a
        // buffer of its own (no allocation).
        if (realpath(path, resolved_) == nullptr) return -1;
        struct statx stx {};
        return statx(AT_FDCWD, resolved_, 0, STATX_BASIC_STATS | STATX_BTIME, &stx);
      }
    }
    return -1;
  }
  EngineKind kind_;
  std::vector<std::string> paths_;
  StatType stat_type_ = StatType::kStat;
  char resolved_[PATH_MAX] = {};
};

}  // namespace

std::unique_ptr<IoEngine> MakeFileOperationEngine(EngineKind kind) {
  return std::make_unique<FileOperationEngine>(kind);
}
std::unique_ptr<IoEngine> MakeFallocEngine() {
  return std::make_unique<FileOpEngine<EngineKind::kFalloc>>();
}
std::unique_ptr<IoEngine> MakeFtruncateEngine() {
  return std::make_unique<FileOpEngine<EngineKind::kFtruncate>>();
}

}  // namespace iotail::engine
