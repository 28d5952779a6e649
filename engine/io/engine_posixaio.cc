// fio's posixaio engine: POSIX asynchronous I/O from glibc (aio_read(3)/aio_write(3), completion
// by aio_error(3)/aio_return(3), waiting in aio_suspend(3)), with a real queue of iodepth requests.
// glibc implements it in user space with a pool of threads doing pread/pwrite, and works on one
// file descriptor's requests one at a time (the rest wait in its queue), so a job's queue reaches
// the device as one I/O per file at a time, as it does under fio. Each worker opens its targets
// again (PrivateFiles), as each of fio's clones has descriptors of its own; otherwise the clones'
// requests would wait for each other.
//
// Stamps: each request's start right before its aio_read/aio_write and issued right after (slat is
// that call: queueing the request, and starting a glibc thread when one is needed); completions
// are stamped once per scan of the requests in flight, when aio_error shows them done. Requests
// glibc does not accept (aio_read fails, EAGAIN when it is out of resources) complete at once with
// that error. Requests still in flight when the engine is destroyed are cancelled and waited for,
// so glibc never touches a freed buffer. One instance per worker thread.
#include <aio.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <vector>

#include "engine/clock.h"
#include "engine/io/io_engine.h"
#include "engine/io/private_files.h"

namespace iotail::engine {

namespace {

class PosixAioEngine final : public IoEngine {
 public:
  ~PosixAioEngine() override { CancelAll(); }

  void Prepare(const EngineSetup& setup) override {
    own_.Open(setup.fds, setup.fadvise);
    cbs_.assign(setup.depth, aiocb{});
    flight_.assign(setup.depth, 0);
    waiting_.assign(setup.depth, nullptr);
    failed_.assign(setup.depth, IoCompletion{});
    flight_count_ = 0;
    failed_count_ = 0;
  }

  int Submit(std::span<const IoRequest> requests) override {
    for (const IoRequest& r : requests) {
      aiocb& cb = cbs_[r.slot];
      std::memset(&cb, 0, sizeof(cb));
      cb.aio_fildes = own_.fds()[r.file];
      cb.aio_buf = r.buf;
      cb.aio_nbytes = r.len;
      cb.aio_offset = static_cast<off_t>(r.offset);
      cb.aio_sigevent.sigev_notify = SIGEV_NONE;
      const uint64_t start = Clock::NowNs();
      const int rc = r.dir == stats::Direction::kRead ? aio_read(&cb) : aio_write(&cb);
      const int err = rc == 0 ? 0 : errno;
      const uint64_t issued = Clock::NowNs();
      r.stamps->start_ns = start;
      r.stamps->issued_ns = issued;
      if (rc == 0) {
        flight_[flight_count_++] = r.slot;
      } else {
        failed_[failed_count_++] = IoCompletion{r.slot, -err, issued};
      }
    }
    return static_cast<int>(requests.size());
  }

  int Reap(std::span<IoCompletion> out, uint32_t min_complete) override {
    return Wait(out, min_complete, false, 0);
  }

  int ReapTimeout(std::span<IoCompletion> out, uint32_t min_complete,
                  uint64_t timeout_ns) override {
    return Wait(out, min_complete, true, timeout_ns);
  }

  std::string Describe() const override { return "posixaio"; }
  bool Asynchronous() const override { return true; }

 private:
  // Takes the requests that are done (at most out.size()), all stamped with one clock read.
  size_t Collect(std::span<IoCompletion> out) {
    size_t n = 0;
    uint64_t done = 0;
    for (size_t i = 0; i < flight_count_ && n < out.size();) {
      const uint32_t slot = flight_[i];
      aiocb& cb = cbs_[slot];
      const int err = aio_error(&cb);
      if (err == EINPROGRESS) {
        ++i;
        continue;
      }
      if (done == 0) done = Clock::NowNs();
      const ssize_t ret = aio_return(&cb);
      const int64_t result = err == 0 ? static_cast<int64_t>(ret) : err > 0 ? -err : -EINVAL;
      out[n++] = IoCompletion{slot, result, done};
      flight_[i] = flight_[--flight_count_];
    }
    return n;
  }

  // Reap() (bounded = false: until min_complete are done) and ReapTimeout() (or until timeout_ns
  // has passed, or a signal interrupts the wait).
  int Wait(std::span<IoCompletion> out, uint32_t min_complete, bool bounded, uint64_t timeout_ns) {
    size_t n = 0;
    while (failed_count_ > 0 && n < out.size()) out[n++] = failed_[--failed_count_];
    if (n > 0 && bounded) return static_cast<int>(n);
    const uint64_t deadline = bounded ? Clock::NowNs() + timeout_ns : 0;
    for (;;) {
      n += Collect(out.subspan(n));
      if (n >= min_complete || n == out.size() || flight_count_ == 0) break;
      timespec left{};
      if (bounded) {
        const uint64_t now = Clock::NowNs();
        if (now >= deadline) break;
        left.tv_sec = static_cast<time_t>((deadline - now) / 1'000'000'000u);
        left.tv_nsec = static_cast<long>((deadline - now) % 1'000'000'000u);
      }
      for (size_t i = 0; i < flight_count_; ++i) waiting_[i] = &cbs_[flight_[i]];
      if (aio_suspend(waiting_.data(), static_cast<int>(flight_count_), bounded ? &left : nullptr) <
          0) {
        if (errno == EINTR && bounded) break;  // a signal ends a timed wait early
        if (errno != EINTR && errno != EAGAIN) {
          const int err = errno;
          return n > 0 ? static_cast<int>(n) : -err;
        }
      }
    }
    return static_cast<int>(n);
  }

  void CancelAll() {
    if (flight_count_ == 0) return;
    for (int fd : own_.fds()) {
      if (fd >= 0) (void)aio_cancel(fd, nullptr);
    }
    while (flight_count_ > 0) {
      for (size_t i = 0; i < flight_count_;) {
        aiocb& cb = cbs_[flight_[i]];
        if (aio_error(&cb) == EINPROGRESS) {
          waiting_[i] = &cb;
          ++i;
          continue;
        }
        (void)aio_return(&cb);
        flight_[i] = flight_[--flight_count_];
      }
      if (flight_count_ > 0)
        (void)aio_suspend(waiting_.data(), static_cast<int>(flight_count_), nullptr);
    }
  }

  PrivateFiles own_;
  std::vector<aiocb> cbs_;             // by slot
  std::vector<uint32_t> flight_;       // slots in flight
  std::vector<const aiocb*> waiting_;  // aio_suspend's list
  std::vector<IoCompletion> failed_;   // requests glibc refused, completed at once
  size_t flight_count_ = 0;
  size_t failed_count_ = 0;
};

}  // namespace

std::unique_ptr<IoEngine> MakePosixAioEngine() { return std::make_unique<PosixAioEngine>(); }

}  // namespace iotail::engine
