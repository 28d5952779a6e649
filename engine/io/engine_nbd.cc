// The nbd engine: network block devices over their own sockets, no kernel module. Prepare()
// connects --nbd_conns connections per worker and picks the data path (--nbd_path,
// engine/io/engine_nbd_paths.h): `direct` takes iotail's own handshake and transmission phase
// (engine/io/nbd_handshake.h, engine/io/engine_nbd_direct.cc) and refuses a URI or a server it
// cannot serve (UsageError naming --nbd_path and why); `libnbd` takes libnbd for everything;
// `auto` (the default) is direct where it can serve and libnbd otherwise (TLS, other URI forms, a
// server without NBD_OPT_GO). The engine then forwards every call to the path it chose.
//
// The libnbd path: libnbd's asynchronous API, one handle per connection. Submit() issues
// nbd_aio_pread/nbd_aio_pwrite per request (libnbd writes the request to the socket at once when
// it can, else queues it for the next notify_write), stamping right before and right after each
// call. Completions come back through a callback that libnbd runs inside nbd_aio_notify_read (on
// the worker's thread, handle locked): it stamps the completion, writes {slot, bytes or -errno,
// stamp} into a fixed ring sized to the queue depth and returns 1, which retires the command, so
// nothing allocates per I/O (libnbd's own command structures aside). Reap() drains the ring and,
// while fewer than min_complete are there, polls the handles' sockets in the directions libnbd asks
// for and lets their state machines run. Polls are bounded (100 ms): a Reap may return none so that
// the worker sees a stop request. A connection that dies (server killed, socket closed) fails the
// in-flight commands through the same callback (counted per errno) and every call after that
// returns -ENOTCONN, an engine failure that stops the worker at once. A server that stops
// answering is left by Abandon(): the worker of a stopping run calls it once its grace has passed,
// and nbd_close drops what is in flight (libnbd runs no completion callback from nbd_close, and
// touches no buffer after it). Read buffers are not pre-zeroed by libnbd (nbd_set_pread_initialize
// false).
#include "engine/io/io_engine.h"

#if IOTAIL_HAVE_LIBNBD
#include <fmt/format.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <ctime>
#include <string>
#include <system_error>
#include <vector>

#include "engine/clock.h"
#include "engine/io/engine_nbd_paths.h"
#include "engine/io/nbd_handshake.h"
#include "engine/libnbd_loader.h"
#include "engine/nbd_target.h"
#include "stats/core/errors.h"

namespace iotail::engine {

namespace {

class NbdLibnbdEngine final : public BoundedWaitEngine {
 public:
  NbdLibnbdEngine(std::vector<nbd_handle*> handles, const EngineSetup& setup)
      : hs_(std::move(handles)), polls_(hs_.size()) {
    ctx_.resize(setup.depth);
    for (uint32_t i = 0; i < setup.depth; ++i) {
      ctx_[i] = Context{this, i, 0, hs_[i % hs_.size()]};
    }
    done_.resize(setup.depth);
  }
  ~NbdLibnbdEngine() override { Close(); }  // drops what is still in flight (no callback runs)

  void Prepare(const EngineSetup&) override {}  // connected by MakeNbdEngine's Prepare

  int Submit(std::span<const IoRequest> requests) override {
    if (dead_) return -ENOTCONN;
    for (const IoRequest& r : requests) {
      Context& c = ctx_[r.slot];
      c.len = r.len;
      const nbd_completion_callback cb{
          .callback = &NbdLibnbdEngine::OnComplete, .user_data = &c, .free = nullptr};
      const uint64_t start = Clock::NowNs();
      const int64_t cookie = r.dir == stats::Direction::kRead
                                 ? Nbd().aio_pread(c.h, r.buf, r.len, r.offset, cb, 0)
                                 : Nbd().aio_pwrite(c.h, r.buf, r.len, r.offset, cb, 0);
      const uint64_t issued = Clock::NowNs();
      r.stamps->start_ns = start;
      r.stamps->issued_ns = issued;
      if (cookie == -1) {
        const int err = Nbd().get_errno();
        if (CheckDead()) return -ENOTCONN;
        Push(r.slot, -(err != 0 ? err : EIO), issued);  // refused by libnbd: this I/O failed
      }
    }
    return static_cast<int>(requests.size());
  }

  std::string Describe() const override {
    return "nbd(libnbd async, " + std::to_string(hs_.size()) + " connection(s) per worker)";
  }
  bool Asynchronous() const override { return true; }
  bool CanAbandon() const override { return true; }

  void Abandon() override {
    Close();
    dead_ = true;
    count_ = 0;
  }

 private:
  struct Context {
    NbdLibnbdEngine* engine;
    uint32_t slot;
    uint32_t len;
    nbd_handle* h;  // the slot's connection
  };

  void Close() {
    for (nbd_handle*& h : hs_) {
      if (h != nullptr) Nbd().close(h);
      h = nullptr;
    }
  }

  // libnbd's completion callback: runs inside nbd_aio_notify_* (or nbd_close) on this thread.
  static int OnComplete(void* user_data, int* error) {
    const Context* c = static_cast<const Context*>(user_data);
    const uint64_t now = Clock::NowNs();
    c->engine->Push(c->slot, *error != 0 ? -static_cast<int64_t>(*error) : c->len, now);
    return 1;  // retire the command
  }

  bool CheckDead() {
    for (nbd_handle* h : hs_) {
      if (!dead_ && (Nbd().aio_is_dead(h) || Nbd().aio_is_closed(h))) dead_ = true;
    }
    return dead_;
  }

  // Moves ready completions to `out`; waits (up to `timeout_ns`) while fewer than `min_complete`.
  int Wait(std::span<IoCompletion> out, uint32_t min_complete, uint64_t timeout_ns) override {
    const uint64_t deadline = Clock::MonotonicNs() + timeout_ns;
    bool polled = false;
    while (count_ < min_complete || !polled) {
      if (CheckDead()) break;
      const uint64_t now = Clock::MonotonicNs();
      const bool must_wait = count_ < min_complete;
      if (must_wait && polled && now >= deadline) break;
      const uint64_t left = must_wait && deadline > now ? deadline - now : 0;
      for (size_t i = 0; i < hs_.size(); ++i) {
        const unsigned dir = Nbd().aio_get_direction(hs_[i]);
        polls_[i] = pollfd{Nbd().aio_get_fd(hs_[i]), 0, 0};
        if (dir & LIBNBD_AIO_DIRECTION_READ) polls_[i].events |= POLLIN;
        if (dir & LIBNBD_AIO_DIRECTION_WRITE) polls_[i].events |= POLLOUT;
      }
      const timespec ts{static_cast<time_t>(left / 1'000'000'000u),
                        static_cast<long>(left % 1'000'000'000u)};
      const int rc = ppoll(polls_.data(), polls_.size(), &ts, nullptr);
      polled = true;
      if (rc < 0) {
        if (errno == EINTR) break;
        return Drain(out, -errno);
      }
      if (rc == 0) continue;
      for (size_t i = 0; i < hs_.size(); ++i) {
        const short revents = polls_[i].revents;
        int nrc = 0;
        if (revents & (POLLIN | POLLHUP | POLLERR)) nrc = Nbd().aio_notify_read(hs_[i]);
        if (nrc == 0 && (revents & POLLOUT)) nrc = Nbd().aio_notify_write(hs_[i]);
        if (nrc == -1) CheckDead();
      }
    }
    return Drain(out, dead_ ? -ENOTCONN : 0);
  }

  std::vector<nbd_handle*> hs_;
  std::vector<pollfd> polls_;
  std::vector<Context> ctx_;
  bool dead_ = false;
};

// Connection i of n: its errors name it when there are several (a server may take the first ones
// and refuse a later one).
template <class Connect>
auto NthConnection(uint32_t i, uint32_t n, Connect connect) -> decltype(connect()) {
  if (n <= 1) return connect();
  const std::string which = fmt::format("--nbd_conns={}: connection {} of {}", n, i + 1, n);
  try {
    return connect();
  } catch (const stats::UsageError& e) {
    throw stats::UsageError(fmt::format("{}: {}", which, e.what()));
  } catch (const std::system_error& e) {
    std::string what = e.what();  // "MESSAGE: strerror": the code's text is added again
    const std::string code = ": " + e.code().message();
    if (what.ends_with(code)) what.resize(what.size() - code.size());
    throw std::system_error(e.code(), fmt::format("{}: {}", which, what));
  }
}

// Connects and chooses the data path in Prepare(), then forwards every call to it.
class NbdEngine final : public IoEngine {
 public:
  void Prepare(const EngineSetup& setup) override {
    const NbdLimits limits{setup.nbd_timeout_ns, setup.stop};
    // Slot i goes to connection i % conns: more connections than slots would stay idle.
    const uint32_t conns = std::clamp<uint32_t>(setup.nbd_conns, 1, std::max(setup.depth, 1u));
    if (setup.nbd_path != NbdPath::kLibnbd) {
      std::string why_not;
      std::vector<int> fds;
      try {
        for (uint32_t i = 0; i < conns && why_not.empty(); ++i) {
          DirectNbdConnection c =
              NthConnection(i, conns, [&] { return ConnectNbdDirect(setup.uri, limits); });
          if (c.fd >= 0) fds.push_back(c.fd);
          why_not = c.why_not;
          if (!why_not.empty() && conns > 1) {
            why_not = fmt::format("--nbd_conns={}: connection {} of {}: {}", conns, i + 1, conns,
                                  why_not);
          }
        }
      } catch (...) {
        for (int fd : fds) ::close(fd);
        throw;
      }
      if (why_not.empty()) {
        path_ = MakeNbdDirectEngine(std::move(fds), setup);
        return;
      }
      for (int fd : fds) ::close(fd);
      why_not_direct_ = why_not;
      if (setup.nbd_path == NbdPath::kDirect) {
        throw stats::UsageError(fmt::format(
            "--nbd_path=direct: cannot serve '{}': {} (--nbd_path=auto falls back to libnbd)",
            setup.uri, why_not));
      }
    }
    std::vector<nbd_handle*> handles;
    try {
      for (uint32_t i = 0; i < conns; ++i) {
        handles.push_back(NthConnection(i, conns, [&] { return ConnectNbd(setup.uri, limits); }));
      }
    } catch (...) {
      for (nbd_handle* h : handles) Nbd().close(h);
      throw;
    }
    path_ = MakeNbdLibnbdEngine(std::move(handles), setup);
  }

  int Submit(std::span<const IoRequest> requests) override { return path_->Submit(requests); }
  int Reap(std::span<IoCompletion> out, uint32_t min_complete) override {
    return path_->Reap(out, min_complete);
  }
  int ReapTimeout(std::span<IoCompletion> out, uint32_t min_complete,
                  uint64_t timeout_ns) override {
    return path_->ReapTimeout(out, min_complete, timeout_ns);
  }
  std::string Describe() const override {
    const std::string d = path_ ? path_->Describe() : "nbd";
    return why_not_direct_.empty() ? d : d + " (not direct: " + why_not_direct_ + ")";
  }
  bool Asynchronous() const override { return true; }
  bool CanAbandon() const override { return true; }
  void Abandon() override {
    if (path_) path_->Abandon();
  }

 private:
  std::unique_ptr<IoEngine> path_;
  std::string why_not_direct_;  // why --nbd_path=auto fell back to libnbd
};

}  // namespace

std::unique_ptr<IoEngine> MakeNbdLibnbdEngine(std::vector<nbd_handle*> handles,
                                              const EngineSetup& setup) {
  return std::make_unique<NbdLibnbdEngine>(std::move(handles), setup);
}

std::unique_ptr<IoEngine> MakeNbdEngine() { return std::make_unique<NbdEngine>(); }

}  // namespace iotail::engine

#else  // not built in: the engine table's row has no engine

namespace iotail::engine {
std::unique_ptr<IoEngine> MakeNbdEngine() { return nullptr; }
}  // namespace iotail::engine

#endif  // built in
