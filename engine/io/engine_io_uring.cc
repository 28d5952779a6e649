// The io_uring engine: one ring per worker, registered files and buffers (fixed reads and writes).
// Submit() queues the batch as SQEs and hands it to the kernel with one io_uring_submit(), stamping
// the batch right before and right after that call (slat is the call; clat starts when it has
// returned, as in fio). Reap() enters the kernel only when fewer than `min_complete` CQEs are
// ready, stamps once when the wait returns, and takes every ready CQE (up to out.size()) with
// io_uring_for_each_cqe and a single io_uring_cq_advance. Setup flags are tried best first
// (SINGLE_ISSUER|DEFER_TASKRUN, then COOP_TASKRUN, then none); --sqthread_poll uses SQPOLL, --hipri
// IOPOLL. Registration that the kernel refuses (e.g. buffers over RLIMIT_MEMLOCK) falls back to
// plain reads and writes.
#include "engine/io/io_engine.h"

#if IOTAIL_HAVE_LIBURING
#include <fmt/format.h>
#include <liburing.h>

#include <cerrno>
#include <cstring>
#include <system_error>
#include <vector>

#include "engine/clock.h"
#include "stats/core/errors.h"

namespace iotail::engine {

namespace {

// The kernel refuses rings deeper than this (IORING_MAX_ENTRIES, not in liburing's headers).
constexpr uint32_t kMaxRingEntries = 32768;

class IoUringEngine final : public IoEngine {
 public:
  ~IoUringEngine() override {
    if (ring_ready_) io_uring_queue_exit(&ring_);
  }

  void Prepare(const EngineSetup& setup) override {
    struct Attempt {
      unsigned flags;
      const char* name;
    };
    std::vector<Attempt> attempts;
    unsigned base = 0;
    if (setup.hipri) base |= IORING_SETUP_IOPOLL;
    if (setup.sqthread_poll) {
      attempts.push_back({base | IORING_SETUP_SQPOLL, "sqpoll"});
    } else {
      attempts.push_back({base | IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN,
                          "single_issuer+defer_taskrun"});
      attempts.push_back({base | IORING_SETUP_COOP_TASKRUN, "coop_taskrun"});
      attempts.push_back({base, "default"});
    }
    int rc = -EINVAL;
    for (const Attempt& a : attempts) {
      io_uring_params p;
      std::memset(&p, 0, sizeof(p));
      p.flags = a.flags;
      if (a.flags & IORING_SETUP_SQPOLL) p.sq_thread_idle = 1000;
      rc = io_uring_queue_init_params(setup.depth, &ring_, &p);
      if (rc == 0) {
        describe_ = a.name;
        break;
      }
    }
    if (rc == -EINVAL && setup.depth > kMaxRingEntries) {
      throw stats::UsageError(
          fmt::format("--iodepth={}: above io_uring's limit of {} entries per ring (the kernel's "
                      "IORING_MAX_ENTRIES); use --numjobs for more I/Os in flight",
                      setup.depth, kMaxRingEntries));
    }
    if (rc < 0) {
      throw std::system_error(-rc, std::generic_category(),
                              fmt::format("io_uring_queue_init(depth {})", setup.depth));
    }
    ring_ready_ = true;
    if (setup.hipri) describe_ += "+iopoll";

    fds_ = setup.fds;
    if (io_uring_register_files(&ring_, fds_.data(), static_cast<unsigned>(fds_.size())) == 0) {
      fixed_files_ = true;
      describe_ += ",registered files";
    }
    std::vector<iovec> iov(setup.depth);
    for (uint32_t i = 0; i < setup.depth; ++i) {
      iov[i].iov_base = setup.buffers + static_cast<size_t>(i) * setup.buffer_size;
      iov[i].iov_len = setup.buffer_size;
    }
    if (setup.buffers != nullptr &&
        io_uring_register_buffers(&ring_, iov.data(), static_cast<unsigned>(iov.size())) == 0) {
      fixed_buffers_ = true;
      describe_ += ",registered buffers";
    }
    if (io_uring_register_ring_fd(&ring_) == 1) describe_ += ",registered ring";
  }

  int Submit(std::span<const IoRequest> requests) override {
    for (const IoRequest& r : requests) {
      io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
      if (sqe == nullptr) return -EBUSY;  // cannot happen with at most depth requests in flight
      const int fd = fixed_files_ ? static_cast<int>(r.file) : fds_[r.file];
      const bool read = r.dir == stats::Direction::kRead;
      if (fixed_buffers_) {
        if (read) {
          io_uring_prep_read_fixed(sqe, fd, r.buf, r.len, r.offset, static_cast<int>(r.slot));
        } else {
          io_uring_prep_write_fixed(sqe, fd, r.buf, r.len, r.offset, static_cast<int>(r.slot));
        }
      } else if (read) {
        io_uring_prep_read(sqe, fd, r.buf, r.len, r.offset);
      } else {
        io_uring_prep_write(sqe, fd, r.buf, r.len, r.offset);
      }
      if (fixed_files_) sqe->flags |= IOSQE_FIXED_FILE;
      // As fio: the job's priority on every request (an SQPOLL thread does not inherit it), or
      // the one cmdprio chose.
      sqe->ioprio = r.ioprio;
      io_uring_sqe_set_data64(sqe, r.slot);
    }
    const uint64_t start = Clock::NowNs();
    int rc;
    do {
      rc = io_uring_submit(&ring_);
    } while (rc == -EINTR);
    const uint64_t issued = Clock::NowNs();
    // -EAGAIN/-EBUSY: the SQEs stay queued and go with the next enter (in Reap).
    if (rc < 0 && rc != -EAGAIN && rc != -EBUSY) return rc;
    StampBatch(requests, start, issued);
    return static_cast<int>(requests.size());
  }

  int Reap(std::span<IoCompletion> out, uint32_t min_complete) override {
    if (min_complete > 0 && io_uring_cq_ready(&ring_) < min_complete) {
      int rc;
      do {
        rc = io_uring_submit_and_wait(&ring_, min_complete);
      } while (rc == -EINTR);
      if (rc < 0 && rc != -EAGAIN && rc != -EBUSY && rc != -ETIME) return rc;
    }
    return Take(out);
  }

  // Rate-limited loop: wait for min_complete CQEs or the timeout, whichever is first.
  int ReapTimeout(std::span<IoCompletion> out, uint32_t min_complete,
                  uint64_t timeout_ns) override {
    if (io_uring_cq_ready(&ring_) < min_complete) {
      __kernel_timespec ts;
      ts.tv_sec = static_cast<int64_t>(timeout_ns / 1'000'000'000u);
      ts.tv_nsec = static_cast<long long>(timeout_ns % 1'000'000'000u);
      io_uring_cqe* first = nullptr;
      const int rc = io_uring_submit_and_wait_timeout(&ring_, &first, min_complete, &ts, nullptr);
      if (rc < 0 && rc != -ETIME && rc != -EINTR && rc != -EAGAIN && rc != -EBUSY) return rc;
    }
    return Take(out);
  }

  std::string Describe() const override { return "io_uring(" + describe_ + ")"; }
  bool Asynchronous() const override { return true; }

 private:
  // Takes the ready CQEs (up to out.size()), all stamped with one clock read.
  int Take(std::span<IoCompletion> out) {
    const uint64_t done = Clock::NowNs();
    size_t n = 0;
    unsigned head;
    io_uring_cqe* cqe;
    io_uring_for_each_cqe(&ring_, head, cqe) {
      if (n == out.size()) break;
      out[n++] = IoCompletion{static_cast<uint32_t>(cqe->user_data), cqe->res, done};
    }
    io_uring_cq_advance(&ring_, static_cast<unsigned>(n));
    return static_cast<int>(n);
  }

  io_uring ring_{};
  bool ring_ready_ = false;
  bool fixed_files_ = false;
  bool fixed_buffers_ = false;
  std::vector<int> fds_;
  std::string describe_;
};

}  // namespace

std::unique_ptr<IoEngine> MakeIoUringEngine() { return std::make_unique<IoUringEngine>(); }

}  // namespace iotail::engine

#else  // not built in: the engine table's row has no engine

namespace iotail::engine {
std::unique_ptr<IoEngine> MakeIoUringEngine() { return nullptr; }
}  // namespace iotail::engine

#endif  // built in
