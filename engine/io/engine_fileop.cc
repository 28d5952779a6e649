// fio's engines that move no data but change a file's allocation or size, one system call per
// I/O, completed inside Submit() (fio's FIO_SYNCIO, so at depth 1):
//   falloc     fallocate(2): a read is FALLOC_FL_KEEP_SIZE over its range, a write mode 0 (which
//              may extend the file), a trim FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE (iotail's
//              workers do trims themselves, by the same punch, whatever the engine)
//   ftruncate  ftruncate(2) to the I/O's offset; only writes (a read fails with EINVAL, as fio's)
// An I/O that succeeds counts its full length, as in fio. Stamps as the other synchronous engines:
// around the call, no slat.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

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

}  // namespace

std::unique_ptr<IoEngine> MakeFallocEngine() {
  return std::make_unique<FileOpEngine<EngineKind::kFalloc>>();
}
std::unique_ptr<IoEngine> MakeFtruncateEngine() {
  return std::make_unique<FileOpEngine<EngineKind::kFtruncate>>();
}

}  // namespace iotail::engine
