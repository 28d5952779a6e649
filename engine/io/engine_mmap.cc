// fio's mmap engine: each target is mapped whole (MAP_SHARED, read-write when the job writes) in
// Prepare(), and an I/O is a memcpy from the mapping into the slot's buffer (read) or from the
// buffer into the mapping (write); the page cache does the rest, through page faults and
// writeback. With --direct=1 (a file opened O_DIRECT, which a mapping ignores) each I/O is followed
// by msync(MS_SYNC) of its pages, as fio does ("not really direct"; fio's posix_madvise
// POSIX_MADV_DONTNEED after it does nothing under glibc, so iotail leaves it out). The mapping is
// advised POSIX_MADV_RANDOM or _SEQUENTIAL by the job's pattern when fadvise_hint is on (fio's
// default), as fio does.
//
// A synchronous engine (JobSpec::Synchronous: depth 1): each request is stamped right before its
// memcpy and its completion right after it (and the msync), so clat is the copy with the faults it
// takes; mapping the file is setup and is not timed, as in fio. An I/O past the end of a mapping
// transfers what is inside it (a read at the end reads 0 bytes, a write fails with ENOSPC): the
// mapping cannot grow a file. A target that shrinks under the mapping (another process truncates
// it) would end the process with SIGBUS, as it ends fio: the copy runs under a guard instead, and
// the fault makes that I/O fail with EIO, counted as the job's error (the error policy decides
// whether it goes on), so the run ends with its summary. The guard is a SIGBUS handler installed
// once per process that jumps back into the copy of the thread that armed it (sigsetjmp without
// a system call; SA_NODEFER leaves the signal unblocked after the jump); a SIGBUS of any other
// code gets the disposition that was there before. One instance per worker thread.
#include <fcntl.h>
#include <fmt/format.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <system_error>
#include <vector>

#include "engine/clock.h"
#include "engine/io/io_engine.h"
#include "engine/io/sync_engine_base.h"

namespace iotail::engine {

namespace {

// The copy a worker thread has armed against SIGBUS (GuardedCopy).
struct FaultGuard {
  sigjmp_buf env;
  volatile sig_atomic_t armed = 0;
};
thread_local FaultGuard t_guard;
struct sigaction g_previous_sigbus {};

void OnSigbus(int /*signal*/, siginfo_t* /*info*/, void* /*context*/) {
  if (t_guard.armed != 0) {
    t_guard.armed = 0;
    siglongjmp(t_guard.env, 1);
  }
  // Not a guarded copy: the disposition before ours, which the faulting instruction meets again
  // when this returns (the default ends the process, as before).
  sigaction(SIGBUS, &g_previous_sigbus, nullptr);
}

void InstallSigbusGuard() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction sa {};
    sa.sa_sigaction = OnSigbus;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGBUS, &sa, &g_previous_sigbus) != 0) {
      throw std::system_error(errno, std::generic_category(), "mmap: SIGBUS handler");
    }
  });
}

// memcpy from or into a mapping: false when the mapping faulted (SIGBUS: the file shrank).
[[gnu::noinline]] bool GuardedCopy(void* to, const void* from, size_t n) {
  if (sigsetjmp(t_guard.env, 0) != 0) return false;
  t_guard.armed = 1;
  std::memcpy(to, from, n);
  t_guard.armed = 0;
  return true;
}

class MmapEngine final : public SyncEngineBase {
 public:
  ~MmapEngine() override { Unmap(); }

  void Prepare(const EngineSetup& setup) override {
    SyncEngineBase::Prepare(setup);
    InstallSigbusGuard();
    Unmap();
    page_ = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
    for (int fd : setup.fds) {
      Mapping m;
      const int flags = fcntl(fd, F_GETFL);
      if (flags < 0) throw std::system_error(errno, std::generic_category(), "mmap: fcntl");
      m.direct = (flags & O_DIRECT) != 0;
      const off_t end = lseek(fd, 0, SEEK_END);
      if (end < 0) throw std::system_error(errno, std::generic_category(), "mmap: size of target");
      if (end > 0) {
        const int prot = (flags & O_ACCMODE) == O_RDONLY ? PROT_READ : PROT_READ | PROT_WRITE;
        void* p = mmap(nullptr, static_cast<size_t>(end), prot, MAP_SHARED, fd, 0);
        if (p == MAP_FAILED) {
          throw std::system_error(errno, std::generic_category(),
                                  fmt::format("mmap of {} bytes", end));
        }
        m.base = static_cast<char*>(p);
        m.length = static_cast<uint64_t>(end);
        if (setup.fadvise >= 0) {
          (void)posix_madvise(p, m.length,
                              setup.random_access ? POSIX_MADV_RANDOM : POSIX_MADV_SEQUENTIAL);
        }
      }
      maps_.push_back(m);
    }
  }

  int Submit(std::span<const IoRequest> requests) override {
    for (const IoRequest& r : requests) {
      const Mapping& m = maps_[r.file];
      const uint64_t start = Clock::NowNs();
      int64_t result;
      if (r.offset >= m.length) {
        result = r.dir == stats::Direction::kRead ? 0 : -ENOSPC;
      } else {
        const size_t n = static_cast<size_t>(std::min<uint64_t>(r.len, m.length - r.offset));
        char* at = m.base + r.offset;
        const bool copied = r.dir == stats::Direction::kRead ? GuardedCopy(r.buf, at, n)
                                                             : GuardedCopy(at, r.buf, n);
        result = copied ? static_cast<int64_t>(n) : -EIO;
        if (copied && m.direct) {
          const uint64_t skew = r.offset % page_;  // msync takes whole pages
          if (msync(at - skew, n + skew, MS_SYNC) < 0) result = -errno;
        }
      }
      const uint64_t done = Clock::NowNs();
      r.stamps->start_ns = start;
      r.stamps->issued_ns = start;
      Complete(r.slot, result, done);
    }
    return static_cast<int>(requests.size());
  }

  std::string Describe() const override { return "mmap"; }

 private:
  struct Mapping {
    char* base = nullptr;  // nullptr: an empty target, nothing mapped
    uint64_t length = 0;
    bool direct = false;  // O_DIRECT: msync each I/O
  };

  void Unmap() {
    for (const Mapping& m : maps_) {
      if (m.base != nullptr) munmap(m.base, m.length);
    }
    maps_.clear();
  }

  std::vector<Mapping> maps_;
  uint64_t page_ = 4096;
};

}  // namespace

std::unique_ptr<IoEngine> MakeMmapEngine() { return std::make_unique<MmapEngine>(); }

}  // namespace iotail::engine
