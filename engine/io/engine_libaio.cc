// The libaio engine: Linux native AIO (io_submit/io_getevents), one context per worker. A batch is
// stamped right before and right after io_submit (slat is that call); completions are stamped once
// when io_getevents returns. Requests the kernel does not accept (-EAGAIN on io_submit) complete at
// once with that error, so the worker resubmits them.
#include "engine/io/io_engine.h"

#if IOTAIL_HAVE_LIBAIO
#include <fmt/format.h>
#include <libaio.h>

#include <cerrno>
#include <system_error>
#include <vector>

#include "engine/clock.h"

namespace iotail::engine {

namespace {

constexpr unsigned kIocbFlagIoprio = 1u << 1;  // IOCB_FLAG_IOPRIO (linux/aio_abi.h, Linux 5.0)

class LibaioEngine final : public IoEngine {
 public:
  ~LibaioEngine() override {
    if (ctx_ != nullptr) io_destroy(ctx_);
  }
  void Prepare(const EngineSetup& setup) override {
    fds_ = setup.fds;
    const int rc = io_setup(static_cast<int>(setup.depth), &ctx_);
    if (rc < 0) {
      ctx_ = nullptr;
      throw std::system_error(-rc, std::generic_category(),
                              fmt::format("libaio io_setup({})", setup.depth));
    }
    iocbs_.resize(setup.depth);
    ptrs_.resize(setup.depth);
    events_.resize(setup.depth);
    failed_.resize(setup.depth);
  }
  int Submit(std::span<const IoRequest> requests) override {
    size_t n = 0;
    for (const IoRequest& r : requests) {
      iocb* cb = &iocbs_[r.slot];
      if (r.dir == stats::Direction::kRead) {
        io_prep_pread(cb, fds_[r.file], r.buf, r.len, static_cast<long long>(r.offset));
      } else {
        io_prep_pwrite(cb, fds_[r.file], r.buf, r.len, static_cast<long long>(r.offset));
      }
      if (r.cmdprio) {
        // fio's cmdprio: the request's own priority (IOCB_FLAG_IOPRIO, Linux 5.0).
        cb->aio_reqprio = static_cast<short>(r.ioprio);
        cb->u.c.flags |= kIocbFlagIoprio;
      }
      cb->data = reinterpret_cast<void*>(static_cast<uintptr_t>(r.slot));
      ptrs_[n++] = cb;
    }
    size_t done = 0;
    const uint64_t start = Clock::NowNs();
    while (done < n) {
      const int rc = io_submit(ctx_, static_cast<long>(n - done), ptrs_.data() + done);
      if (rc > 0) {
        done += static_cast<size_t>(rc);
      } else if (rc != -EINTR) {
        const int err = rc == 0 ? -EAGAIN : rc;
        for (size_t i = done; i < n; ++i) {
          failed_[failed_count_++] = IoCompletion{
              static_cast<uint32_t>(reinterpret_cast<uintptr_t>(ptrs_[i]->data)), err, start};
        }
        break;
      }
    }
    const uint64_t issued = Clock::NowNs();
    StampBatch(requests, start, issued);
    return static_cast<int>(requests.size());
  }
  int Reap(std::span<IoCompletion> out, uint32_t min_complete) override {
    size_t n = 0;
    while (failed_count_ > 0 && n < out.size()) out[n++] = failed_[--failed_count_];
    if (n >= min_complete && n > 0) return static_cast<int>(n);
    const long want = static_cast<long>(min_complete > n ? min_complete - n : 0);
    const long room = static_cast<long>(out.size() - n);
    int rc;
    do {
      rc = io_getevents(ctx_, want, room, events_.data(), nullptr);
    } while (rc == -EINTR);
    if (rc < 0) return n > 0 ? static_cast<int>(n) : rc;
    return static_cast<int>(n + TakeEvents(rc, out.subspan(n)));
  }
  // Rate-limited loop: io_getevents with a timeout; an interrupting signal ends the wait early.
  int ReapTimeout(std::span<IoCompletion> out, uint32_t min_complete,
                  uint64_t timeout_ns) override {
    size_t n = 0;
    while (failed_count_ > 0 && n < out.size()) out[n++] = failed_[--failed_count_];
    if (n > 0) return static_cast<int>(n);
    timespec ts;
    ts.tv_sec = static_cast<time_t>(timeout_ns / 1'000'000'000u);
    ts.tv_nsec = static_cast<long>(timeout_ns % 1'000'000'000u);
    const int rc = io_getevents(ctx_, static_cast<long>(min_complete),
                                static_cast<long>(out.size()), events_.data(), &ts);
    if (rc == -EINTR) return 0;
    if (rc < 0) return rc;
    return static_cast<int>(TakeEvents(rc, out));
  }
  std::string Describe() const override { return "libaio"; }
  bool Asynchronous() const override { return true; }

 private:
  // Copies the first `count` events into `out`, all stamped with one clock read.
  size_t TakeEvents(int count, std::span<IoCompletion> out) {
    const uint64_t done = Clock::NowNs();
    for (int i = 0; i < count; ++i) {
      const io_event& ev = events_[static_cast<size_t>(i)];
      out[static_cast<size_t>(i)] =
          IoCompletion{static_cast<uint32_t>(reinterpret_cast<uintptr_t>(ev.data)),
                       static_cast<int64_t>(static_cast<long>(ev.res)), done};
    }
    return static_cast<size_t>(count);
  }

  io_context_t ctx_ = nullptr;
  std::vector<int> fds_;
  std::vector<iocb> iocbs_;
  std::vector<iocb*> ptrs_;
  std::vector<io_event> events_;
  std::vector<IoCompletion> failed_;
  size_t failed_count_ = 0;
};

}  // namespace

std::unique_ptr<IoEngine> MakeLibaioEngine() { return std::make_unique<LibaioEngine>(); }

}  // namespace iotail::engine

#else  // not built in: the engine table's row has no engine

namespace iotail::engine {
std::unique_ptr<IoEngine> MakeLibaioEngine() { return nullptr; }
}  // namespace iotail::engine

#endif  // built in
