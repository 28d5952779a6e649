// The nbd engine's direct path (engine/io/engine_nbd_paths.h): the NBD transmission phase on
// iotail's own sockets, batched.
//
// Submit() writes each request's 28-byte header into the slot's fixed header cell and queues it
// (and a write's data, from the slot's buffer) as iovecs on the slot's connection, then sends
// each connection's queue with one sendmsg(MSG_DONTWAIT): every request of the batch is stamped
// around those calls, as io_uring's are around its one submit. What the socket did not take stays
// queued and goes out as soon as the socket is writable (the waits poll for it). Reap() receives
// with one recv() per connection into a 256 KiB buffer and parses every reply in it; a large read's
// remaining data is received straight into its buffer. With one connection and nothing left to
// send, the wait is the recv itself: the socket is blocking with a receive timeout of 100 ms
// (SO_RCVTIMEO), so a busy closed loop costs one sendmsg and one recv per batch of I/Os; otherwise
// the sockets are polled (ppoll) and received from without blocking. A completion's stamp is read
// once per recv. A reply's error field is the I/O's -errno (nbd_wire::ErrnoOfNbdError, as libnbd
// maps it). A connection that ends (EOF, a reset, a send that fails) fails every I/O in flight
// with ENOTCONN and the engine returns -ENOTCONN from then on, as the libnbd path does; a server
// that breaks the protocol (a wrong magic, a reply to a handle not in flight: a duplicated or
// unknown one) is dropped the same way with EPROTO, and one line on stderr names the server and
// what it sent. The replies parsed before the failure are completions like any other: until the
// worker has reaped them all, Submit() fails its requests into the same ring (with the
// connection's errno) instead of returning the error, which would end the worker with them unseen.
// Every wait checks its deadline after each receive, so a server that trickles its replies in
// (slowloris) cannot hold a Reap past its bound, nor a stopping worker past its grace
// (Worker::kStopGraceNs, then Abandon). Abandon() closes the sockets: nothing is received into a
// buffer after that. The destructor sends NBD_CMD_DISC on a connection with nothing in flight,
// then closes it.
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <climits>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <string>

#include "engine/clock.h"
#include "engine/io/engine_nbd_paths.h"
#include "engine/io/nbd_wire.h"

namespace iotail::engine {

namespace {

namespace wire = nbd_wire;

class NbdDirectEngine final : public BoundedWaitEngine {
 public:
  NbdDirectEngine(std::vector<int> fds, const EngineSetup& setup)
      : conns_(fds.size()), slots_(setup.depth), uri_(setup.uri) {
    done_.resize(setup.depth);
    headers_.resize(static_cast<size_t>(setup.depth) * wire::kRequestSize);
    recv_buffer_.resize(kRecvBufferSize);
    polls_.resize(fds.size());
    for (size_t i = 0; i < fds.size(); ++i) {
      conns_[i].fd = fds[i];
      conns_[i].iov.resize(2 * static_cast<size_t>(setup.depth));
    }
    if (conns_.size() == 1) {  // waits are blocking receives bounded by SO_RCVTIMEO
      const int fd = conns_[0].fd;
      ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
      const timeval tv{0, static_cast<suseconds_t>(kMaxWaitNs / 1000)};
      blocking_ = ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) == 0;
    }
  }

  ~NbdDirectEngine() override {
    for (Conn& c : conns_) {
      if (c.fd < 0) continue;
      if (!dead_ && c.in_flight == 0 && c.head == c.count) {
        unsigned char disc[wire::kRequestSize];
        wire::EncodeRequest(disc, wire::kCmdDisconnect, 0, 0, 0);
        (void)::send(c.fd, disc, sizeof disc, MSG_DONTWAIT | MSG_NOSIGNAL);
      }
      ::close(c.fd);
    }
  }

  void Prepare(const EngineSetup&) override {}  // connected by MakeNbdEngine's Prepare

  int Submit(std::span<const IoRequest> requests) override {
    if (dead_) return FailLate(requests);
    for (Conn& c : conns_) Compact(c);
    for (const IoRequest& r : requests) {
      Slot& s = slots_[r.slot];
      s.buf = r.buf;
      s.len = r.len;
      s.read = r.dir == stats::Direction::kRead;
      s.busy = true;
      Conn& c = conns_[r.slot % conns_.size()];
      unsigned char* h = &headers_[static_cast<size_t>(r.slot) * wire::kRequestSize];
      wire::EncodeRequest(h, s.read ? wire::kCmdRead : wire::kCmdWrite, r.slot, r.offset, r.len);
      c.iov[c.count++] = iovec{h, wire::kRequestSize};
      if (!s.read) c.iov[c.count++] = iovec{r.buf, r.len};
      ++c.in_flight;
    }
    const uint64_t start = Clock::NowNs();
    for (Conn& c : conns_) {
      if (c.head < c.count && !Flush(c)) Fail(ENOTCONN);
    }
    const uint64_t issued = Clock::NowNs();
    StampBatch(requests, start, issued);
    return static_cast<int>(requests.size());
  }

  std::string Describe() const override {
    return "nbd(direct: batched send/recv, " + std::to_string(conns_.size()) +
           " connection(s) per worker)";
  }
  bool Asynchronous() const override { return true; }
  bool CanAbandon() const override { return true; }

  void Abandon() override {
    for (Conn& c : conns_) {
      if (c.fd >= 0) ::close(c.fd);
      c.fd = -1;
    }
    dead_ = true;
    count_ = owed_ = 0;
  }

 private:
  static constexpr size_t kRecvBufferSize = 256 << 10;
  static constexpr size_t kStraightRecv = 64 << 10;  // data left of a read worth receiving in place

  struct Slot {
    char* buf = nullptr;  // null until first submitted
    uint32_t len = 0;
    bool read = false;
    bool busy = false;
  };
  struct Conn {
    int fd = -1;
    std::vector<iovec> iov;  // queued to send: [head, count)
    size_t head = 0, count = 0;
    uint32_t in_flight = 0;
    wire::NbdReplyParser parser;
  };
  // The parser's view of one connection's requests.
  struct Sink {
    NbdDirectEngine* e;
    size_t conn;
    bool Expect(uint64_t handle, char** data, uint32_t* len) const {
      if (handle >= e->slots_.size() || handle % e->conns_.size() != conn) return false;
      const Slot& s = e->slots_[handle];
      if (!s.busy) return false;
      *data = s.buf;
      *len = s.read ? s.len : 0;
      return true;
    }
    void Complete(uint64_t handle, uint32_t nbd_error) const {
      Slot& s = e->slots_[handle];
      s.busy = false;
      --e->conns_[conn].in_flight;
      const int64_t result = nbd_error != 0
                                 ? -static_cast<int64_t>(wire::ErrnoOfNbdError(nbd_error))
                                 : static_cast<int64_t>(s.len);
      e->Push(static_cast<uint32_t>(handle), result, e->now_);
    }
  };

  // The connection is lost (ENOTCONN) or broke the protocol (EPROTO): every I/O in flight fails
  // with `err`; what is in the ring then is owed to the worker.
  void Fail(int err) {
    if (dead_) return;
    dead_ = true;
    error_ = err;
    const uint64_t now = Clock::NowNs();
    for (uint32_t i = 0; i < slots_.size(); ++i) {
      if (slots_[i].busy) Push(i, -err, now);
      slots_[i].busy = false;
    }
    owed_ = count_;
  }

  // Submit on a dead engine: the error, once the worker has reaped what it is owed; until then the
  // requests fail into the ring behind it (the worker would end without reaping it otherwise).
  int FailLate(std::span<const IoRequest> requests) {
    if (owed_ == 0) return -error_;
    const uint64_t now = Clock::NowNs();
    StampBatch(requests, now, now);
    for (const IoRequest& r : requests) Push(r.slot, -error_, now);
    return static_cast<int>(requests.size());
  }

  // Completions to `out`, or the engine's error once dead and empty.
  int Finish(std::span<IoCompletion> out) {
    const int n = Drain(out, dead_ ? -error_ : 0);
    if (n > 0) owed_ -= std::min(owed_, static_cast<size_t>(n));
    return n;
  }

  // The server on connection `i` broke the protocol: one line on stderr saying how, then Fail.
  void ProtocolError(size_t i) {
    const wire::NbdReplyParser& p = conns_[i].parser;
    char what[160];
    if (p.violation() == wire::NbdReplyParser::Violation::kBadMagic) {
      std::snprintf(what, sizeof what, "a reply with magic 0x%08" PRIx32 ", not a simple reply's",
                    p.magic());
    } else {
      const uint64_t h = p.handle();
      const bool sent = h < slots_.size() && h % conns_.size() == i && slots_[h].buf != nullptr;
      std::snprintf(what, sizeof what,
                    sent ? "a second reply to handle %" PRIu64 " (a duplicated handle)"
                         : "a reply to handle %" PRIu64
                           ", which was never sent (an unknown handle)",
                    h);
    }
    char line[768];
    const int n =
        std::snprintf(line, sizeof line,
                      "iotail run: nbd: the server at '%s' broke the NBD protocol: %s; its "
                      "connection is dropped and its I/Os fail with EPROTO\n",
                      uri_.c_str(), what);
    if (n > 0) {
      [[maybe_unused]] const ssize_t w =
          ::write(STDERR_FILENO, line, std::min(static_cast<size_t>(n), sizeof line - 1));
    }
    Fail(EPROTO);
  }

  static void Compact(Conn& c) {
    if (c.head == 0) return;
    for (size_t i = c.head; i < c.count; ++i) c.iov[i - c.head] = c.iov[i];
    c.count -= c.head;
    c.head = 0;
  }

  // Sends what `c` has queued, as far as the socket takes it now. False when the connection failed.
  static bool Flush(Conn& c) {
    while (c.head < c.count) {
      msghdr m{};
      m.msg_iov = &c.iov[c.head];
      m.msg_iovlen = std::min<size_t>(c.count - c.head, IOV_MAX);
      ssize_t n = ::sendmsg(c.fd, &m, MSG_DONTWAIT | MSG_NOSIGNAL);
      if (n < 0) {
        if (errno == EINTR) continue;
        return errno == EAGAIN || errno == EWOULDBLOCK;
      }
      while (n > 0) {
        iovec& v = c.iov[c.head];
        if (static_cast<size_t>(n) >= v.iov_len) {
          n -= static_cast<ssize_t>(v.iov_len);
          ++c.head;
        } else {
          v.iov_base = static_cast<char*>(v.iov_base) + n;
          v.iov_len -= static_cast<size_t>(n);
          n = 0;
        }
      }
    }
    c.head = c.count = 0;
    return true;
  }

  // One recv on connection `i` (blocking up to SO_RCVTIMEO if `block`), its replies parsed.
  // Returns the bytes received (0: none there, the timeout, or a signal); fails the engine on
  // EOF, a socket error or a protocol error.
  size_t Receive(size_t i, bool block) {
    Conn& c = conns_[i];
    Sink sink{this, i};
    const bool straight = c.parser.DataLeft() >= kStraightRecv;
    char* dst = straight ? c.parser.DataDestination() : recv_buffer_.data();
    const size_t cap = straight ? c.parser.DataLeft() : recv_buffer_.size();
    const ssize_t n = ::recv(c.fd, dst, cap, block ? 0 : MSG_DONTWAIT);
    now_ = Clock::NowNs();
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return 0;
    if (n <= 0) {
      Fail(ENOTCONN);
      return 0;
    }
    if (straight) {
      c.parser.Advance(static_cast<size_t>(n), sink);
    } else if (!c.parser.Feed(dst, static_cast<size_t>(n), sink)) {
      ProtocolError(i);
      return 0;
    }
    return static_cast<size_t>(n);
  }

  bool Pending() const {
    for (const Conn& c : conns_) {
      if (c.head < c.count) return true;
    }
    return false;
  }

  // Moves ready completions to `out`; waits (up to `timeout_ns`) while fewer than `min_complete`.
  // The deadline is checked after every receive: bytes trickling in do not extend it.
  int Wait(std::span<IoCompletion> out, uint32_t min_complete, uint64_t timeout_ns) override {
    if (count_ > 0 && count_ >= min_complete) return Finish(out);
    const uint64_t deadline = Clock::MonotonicNs() + timeout_ns;
    bool first = true;
    while (!dead_ && (first || count_ < min_complete)) {
      if (!first && Clock::MonotonicNs() >= deadline) break;
      first = false;
      for (Conn& c : conns_) {
        if (c.head < c.count && !Flush(c)) Fail(ENOTCONN);
      }
      if (dead_) break;
      const bool must_wait = count_ < min_complete;
      if (must_wait && blocking_ && timeout_ns >= kMaxWaitNs && !Pending()) {
        if (Receive(0, true) == 0) break;  // the timeout or a signal: let the worker look
        continue;
      }
      size_t got = 0;
      for (size_t i = 0; i < conns_.size() && !dead_; ++i) got += Receive(i, false);
      if (got > 0 || !must_wait || dead_) continue;
      const uint64_t now = Clock::MonotonicNs();
      if (now >= deadline) break;
      const uint64_t left = deadline - now;
      for (size_t i = 0; i < conns_.size(); ++i) {
        const Conn& c = conns_[i];
        polls_[i] = pollfd{c.fd, static_cast<short>(POLLIN | (c.head < c.count ? POLLOUT : 0)), 0};
      }
      const timespec ts{static_cast<time_t>(left / 1'000'000'000u),
                        static_cast<long>(left % 1'000'000'000u)};
      const int rc = ppoll(polls_.data(), polls_.size(), &ts, nullptr);
      if (rc <= 0) break;  // the timeout, or a signal
    }
    return Finish(out);
  }

  std::vector<Conn> conns_;
  std::vector<Slot> slots_;
  std::vector<unsigned char> headers_;  // slot i's request header at i * 28
  std::vector<char> recv_buffer_;
  std::vector<pollfd> polls_;
  std::string uri_;   // for the protocol error's message
  uint64_t now_ = 0;  // the stamp of the last recv
  size_t owed_ = 0;   // completions in the ring when the engine died, not yet reaped
  int error_ = 0;     // once dead_: ENOTCONN or EPROTO
  bool blocking_ = false;
  bool dead_ = false;
};

}  // namespace

std::unique_ptr<IoEngine> MakeNbdDirectEngine(std::vector<int> fds, const EngineSetup& setup) {
  return std::make_unique<NbdDirectEngine>(std::move(fds), setup);
}

}  // namespace iotail::engine
