// fio's synchronous engines of its sync.c, one system call per I/O, completed inside Submit():
//   psync    pread(2)/pwrite(2)
//   sync     read(2)/write(2) after lseek(2); the lseek is skipped when the file position is
//            already there (after a sequential I/O), as fio does
//   vsync    readv(2)/writev(2) of one iovec after lseek(2). fio's vsync keeps iodepth I/Os
//            queued and, with iodepth_batch_submit above 1, gathers adjacent ones into one call;
//            iotail runs every synchronous engine at depth 1, where fio's vsync too does one
//            iovec per call (and an lseek before each)
//   pvsync   preadv(2)/pwritev(2) of one iovec
//   pvsync2  preadv2(2)/pwritev2(2) of one iovec, with RWF_HIPRI (--hipri) and RWF_NOWAIT
//            (--nowait: an I/O that would block fails with EAGAIN, an error as in fio, not retried)
// and null (no I/O at all: every request completes at once with its full length, for measuring
// iotail's own per-I/O cost).
//
// Stamps, as fio takes its own: each request's start right before its system call and its
// completion right after, so an I/O's clat is that one call; issued_ns equals start_ns (there is
// no separate submission, so no slat). sync's lseek is the I/O's preparation (fio's prep, before
// its start time) and is not timed; vsync's is part of fio's commit and is timed with the readv.
// sync and vsync move a file position, so they do their I/O through files of their own
// (PrivateFiles), as fio's clones do. A worker runs these engines at depth 1 (see
// JobSpec::Normalize): with a deeper batch the later requests would wait for the earlier ones.
// null stamps once per Submit() and once per Reap(), so its latencies are iotail's own overhead.
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

#include "engine/clock.h"
#include "engine/io/io_engine.h"
#include "engine/io/private_files.h"
#include "engine/io/sync_engine_base.h"

namespace iotail::engine {

namespace {

// The system calls of fio's sync.c engines.
enum class SyncCall { kPread, kRead, kReadv, kPreadv, kPreadv2 };

template <SyncCall kCall>
class SyncCallEngine final : public SyncEngineBase {
 public:
  void Prepare(const EngineSetup& setup) override {
    SyncEngineBase::Prepare(setup);
    if constexpr (kCall == SyncCall::kRead || kCall == SyncCall::kReadv) {
      own_.Open(setup.fds, setup.fadvise);
      fds_ = own_.fds();
      position_.assign(fds_.size(), 0);  // a new open file description starts at 0
    }
    if constexpr (kCall == SyncCall::kPreadv2) {
      hipri_ = setup.hipri;
      nowait_ = setup.nowait;
      flags_ = (hipri_ ? RWF_HIPRI : 0) | (nowait_ ? RWF_NOWAIT : 0);
    }
  }

  int Submit(std::span<const IoRequest> requests) override {
    for (const IoRequest& r : requests) {
      const int fd = fds_[r.file];
      const bool reading = r.dir == stats::Direction::kRead;
      const auto offset = static_cast<off_t>(r.offset);
      if constexpr (kCall == SyncCall::kRead) {
        if (position_[r.file] != r.offset && lseek(fd, offset, SEEK_SET) < 0) {
          const int64_t err = -errno;
          const uint64_t now = Clock::NowNs();
          position_[r.file] = kUnknownPosition;
          Stamp(r, now);
          Complete(r.slot, err, now);
          continue;
        }
      }
      iovec iov{r.buf, r.len};
      const uint64_t start = Clock::NowNs();
      ssize_t n;
      if constexpr (kCall == SyncCall::kPread) {
        n = reading ? pread(fd, r.buf, r.len, offset) : pwrite(fd, r.buf, r.len, offset);
      } else if constexpr (kCall == SyncCall::kRead) {
        n = reading ? read(fd, r.buf, r.len) : write(fd, r.buf, r.len);
      } else if constexpr (kCall == SyncCall::kReadv) {
        n = lseek(fd, offset, SEEK_SET) < 0 ? -1
            : reading                       ? readv(fd, &iov, 1)
                                            : writev(fd, &iov, 1);
      } else if constexpr (kCall == SyncCall::kPreadv) {
        n = reading ? preadv(fd, &iov, 1, offset) : pwritev(fd, &iov, 1, offset);
      } else {
        n = reading ? preadv2(fd, &iov, 1, offset, flags_) : pwritev2(fd, &iov, 1, offset, flags_);
      }
      const int64_t result = n >= 0 ? n : -errno;
      const uint64_t done = Clock::NowNs();
      if constexpr (kCall == SyncCall::kRead) {
        position_[r.file] = n >= 0 ? r.offset + static_cast<uint64_t>(n) : kUnknownPosition;
      }
      Stamp(r, start);
      Complete(r.slot, result, done);
    }
    return static_cast<int>(requests.size());
  }

  std::string Describe() const override {
    // The call's engine, as fio names it: psync, sync, vsync, pvsync, pvsync2 (+ its flags).
    constexpr EngineKind kKinds[] = {EngineKind::kPsync, EngineKind::kSync, EngineKind::kVsync,
                                     EngineKind::kPvsync, EngineKind::kPvsync2};
    return EngineKindName(kKinds[static_cast<int>(kCall)]) + (hipri_ ? "+hipri" : "") +
           (nowait_ ? "+nowait" : "");
  }

  bool RetriesEagain() const override { return !nowait_; }

 private:
  static constexpr uint64_t kUnknownPosition = UINT64_MAX;

  static void Stamp(const IoRequest& r, uint64_t start) {
    r.stamps->start_ns = start;
    r.stamps->issued_ns = start;
  }

  PrivateFiles own_;                // sync, vsync: this worker's own files
  std::vector<uint64_t> position_;  // sync: each file's position, as far as known
  int flags_ = 0;                   // pvsync2: RWF_*
  bool hipri_ = false;
  bool nowait_ = false;
};

// The null engine: every request completes at once, with its whole length (iotail's own cost per
// I/O). It keeps the slots submitted and stamps them done when reaped: two clock reads per I/O.
class NullEngine final : public IoEngine {
 public:
  void Prepare(const EngineSetup& setup) override {
    slots_.assign(setup.depth, 0);
    lens_.assign(setup.depth, 0);
    count_ = 0;
  }
  int Submit(std::span<const IoRequest> requests) override {
    const uint64_t now = Clock::NowNs();
    for (const IoRequest& r : requests) {
      r.stamps->start_ns = now;
      r.stamps->issued_ns = now;
      slots_[count_] = r.slot;
      lens_[count_++] = r.len;
    }
    return static_cast<int>(requests.size());
  }
  int Reap(std::span<IoCompletion> out, uint32_t /*min_complete*/) override {
    if (count_ == 0) return 0;
    const size_t n = count_ < out.size() ? count_ : out.size();
    const uint64_t now = Clock::NowNs();
    for (size_t i = 0; i < n; ++i) out[i] = IoCompletion{slots_[i], lens_[i], now};
    // Keep any remainder (only when out is smaller than what is done).
    for (size_t i = n; i < count_; ++i) {
      slots_[i - n] = slots_[i];
      lens_[i - n] = lens_[i];
    }
    count_ -= n;
    return static_cast<int>(n);
  }
  bool Asynchronous() const override { return false; }
  std::string Describe() const override { return "null"; }

 private:
  std::vector<uint32_t> slots_;
  std::vector<uint32_t> lens_;
  size_t count_ = 0;
};

}  // namespace

std::unique_ptr<IoEngine> MakePsyncEngine() {
  return std::make_unique<SyncCallEngine<SyncCall::kPread>>();
}
std::unique_ptr<IoEngine> MakeSyncEngine() {
  return std::make_unique<SyncCallEngine<SyncCall::kRead>>();
}
std::unique_ptr<IoEngine> MakeVsyncEngine() {
  return std::make_unique<SyncCallEngine<SyncCall::kReadv>>();
}
std::unique_ptr<IoEngine> MakePvsyncEngine() {
  return std::make_unique<SyncCallEngine<SyncCall::kPreadv>>();
}
std::unique_ptr<IoEngine> MakePvsync2Engine() {
  return std::make_unique<SyncCallEngine<SyncCall::kPreadv2>>();
}
std::unique_ptr<IoEngine> MakeNullEngine() { return std::make_unique<NullEngine>(); }

}  // namespace iotail::engine
