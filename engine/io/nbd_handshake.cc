#include "engine/io/nbd_handshake.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <memory>
#include <system_error>
#include <utility>
#include <vector>

#include "engine/clock.h"
#include "engine/io/nbd_wire.h"
#include "stats/core/errors.h"
#include "stats/util/printable_text.h"

namespace iotail::engine {

using nbd_wire::Get16;
using nbd_wire::Get32;
using nbd_wire::Get64;
using nbd_wire::Put32;
using nbd_wire::Put64;

namespace {

constexpr uint64_t kNbdMagic = 0x4e42444d41474943;    // "NBDMAGIC"
constexpr uint64_t kOptMagic = 0x49484156454F5054;    // "IHAVEOPT"
constexpr uint64_t kReplyMagic = 0x0003e889045565a9;  // option replies
constexpr uint32_t kOptGo = 7;
constexpr uint32_t kRepAck = 1;
constexpr uint32_t kRepInfo = 3;
constexpr uint32_t kRepErrUnsup = 0x80000001;
constexpr uint32_t kRepErrTlsReqd = 0x80000005;
constexpr uint16_t kFlagFixedNewstyle = 1;
constexpr uint16_t kFlagNoZeroes = 2;
constexpr uint32_t kMaxReplyData = 1 << 16;  // more is not a reply to NBD_OPT_GO

// A socket being set up: closed unless released.
struct Socket {
  int fd = -1;
  ~Socket() {
    if (fd >= 0) ::close(fd);
  }
  int Release() { return std::exchange(fd, -1); }
};

// Waits for `events` on `fd` under the limits, throwing as ConnectNbd does.
class Deadline {
 public:
  Deadline(const std::string& uri, const NbdLimits& limits)
      : uri_(uri), limits_(limits), start_(Clock::MonotonicNs()) {}

  void Wait(int fd, short events) const {
    for (;;) {
      if (limits_.stop != nullptr && limits_.stop->load()) {
        throw stats::Interrupted(fmt::format("interrupted while connecting to '{}'", uri_));
      }
      const uint64_t elapsed = Clock::MonotonicNs() - start_;
      if (limits_.timeout_ns != 0 && elapsed >= limits_.timeout_ns) {
        throw std::system_error(
            ETIMEDOUT, std::generic_category(),
            fmt::format("--uri: cannot connect to '{}': the server did not answer within {:g} s "
                        "(--nbd_timeout)",
                        uri_, static_cast<double>(limits_.timeout_ns) / 1e9));
      }
      uint64_t slice = kNbdPollSliceNs;
      if (limits_.timeout_ns != 0) slice = std::min(slice, limits_.timeout_ns - elapsed);
      pollfd p{fd, events, 0};
      const timespec ts{0, static_cast<long>(slice)};
      const int rc = ppoll(&p, 1, &ts, nullptr);
      if (rc < 0 && errno != EINTR) Fail(errno, "poll");
      if (rc > 0) return;
    }
  }

  [[noreturn]] void Fail(int err, std::string_view what) const {
    throw std::system_error(err, std::generic_category(),
                            fmt::format("--uri: cannot connect to '{}': {}", uri_, what));
  }

  // Reads or writes exactly `len` bytes of the handshake.
  void Read(int fd, void* buf, size_t len) const { Transfer(fd, buf, len, false); }
  void Write(int fd, const void* buf, size_t len) const {
    Transfer(fd, const_cast<void*>(buf), len, true);
  }

 private:
  // All of buf sent or received, waiting (bounded, as Wait) while the socket is not ready.
  void Transfer(int fd, void* buf, size_t len, bool write) const {
    auto* p = static_cast<char*>(buf);
    while (len > 0) {
      const ssize_t n = write ? ::send(fd, p, len, MSG_NOSIGNAL) : ::recv(fd, p, len, 0);
      if (n == 0 && !write) {
        Fail(ECONNRESET, "the server closed the connection during the handshake");
      }
      if (n < 0) {
        if (errno == EAGAIN || errno == EINTR) {
          Wait(fd, write ? POLLOUT : POLLIN);
          continue;
        }
        Fail(errno, write ? "writing the handshake" : "reading the handshake");
      }
      p += n;
      len -= static_cast<size_t>(n);
    }
  }

  const std::string& uri_;
  NbdLimits limits_;
  uint64_t start_;
};

// Connects a non-blocking socket to `addr`, waiting under the deadline.
void ConnectTo(Socket& s, const sockaddr* addr, socklen_t len, const Deadline& deadline) {
  if (::connect(s.fd, addr, len) == 0) return;
  if (errno != EINPROGRESS && errno != EAGAIN) deadline.Fail(errno, "connect");
  deadline.Wait(s.fd, POLLOUT);
  int err = 0;
  socklen_t err_len = sizeof err;
  ::getsockopt(s.fd, SOL_SOCKET, SO_ERROR, &err, &err_len);
  if (err != 0) deadline.Fail(err, "connect");
}

Socket Dial(const PlainNbdUri& u, const Deadline& deadline) {
  Socket s;
  if (!u.socket_path.empty()) {
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    if (u.socket_path.size() >= sizeof a.sun_path) deadline.Fail(ENAMETOOLONG, "socket path");
    std::memcpy(a.sun_path, u.socket_path.c_str(), u.socket_path.size() + 1);
    s.fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (s.fd < 0) deadline.Fail(errno, "socket");
    ConnectTo(s, reinterpret_cast<const sockaddr*>(&a), sizeof a, deadline);
    return s;
  }
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* list = nullptr;
  const int rc = ::getaddrinfo(u.host.c_str(), u.port.c_str(), &hints, &list);
  if (rc != 0) deadline.Fail(EHOSTUNREACH, fmt::format("{}: {}", u.host, ::gai_strerror(rc)));
  std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> owned(list, &::freeaddrinfo);
  int last = ECONNREFUSED;
  for (const addrinfo* a = list; a != nullptr; a = a->ai_next) {
    Socket attempt;
    attempt.fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (attempt.fd < 0) continue;
    try {
      ConnectTo(attempt, a->ai_addr, a->ai_addrlen, deadline);
    } catch (const std::system_error& e) {
      if (e.code().value() == ETIMEDOUT || a->ai_next == nullptr) throw;
      last = e.code().value();
      continue;
    }
    const int one = 1;
    ::setsockopt(attempt.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    s.fd = attempt.Release();
    return s;
  }
  deadline.Fail(last, "connect");
}

}  // namespace

std::string ExportTooLarge(uint64_t size) {
  return fmt::format(
      "the export's size, {} bytes, is over 2^63-1, the most an NBD client can address", size);
}

PlainNbdUri ParsePlainNbdUri(const std::string& uri) {
  PlainNbdUri u;
  auto not_plain = [&](const char* why) {
    PlainNbdUri r;
    r.why_not = fmt::format("'{}' {}", uri, why);
    return r;
  };
  if (uri.find_first_of("%@[#") != std::string::npos) {
    return not_plain("has escapes, user info, an IPv6 literal or a fragment");
  }
  constexpr std::string_view kUnix = "nbd+unix://";
  constexpr std::string_view kTcp = "nbd://";
  std::string_view rest = uri;
  if (rest.starts_with(kUnix)) {
    rest.remove_prefix(kUnix.size());
    const size_t q = rest.find('?');
    if (!rest.starts_with("/") || q == std::string_view::npos) {
      return not_plain("is not nbd+unix:///EXPORT?socket=PATH");
    }
    const std::string_view query = rest.substr(q + 1);
    if (!query.starts_with("socket=") || query.find('&') != std::string_view::npos) {
      return not_plain("has a query other than socket=PATH");
    }
    u.export_name = std::string(rest.substr(1, q - 1));
    u.socket_path = std::string(query.substr(7));
    if (u.socket_path.empty()) return not_plain("has an empty socket=");
    return u;
  }
  if (!rest.starts_with(kTcp)) return not_plain("is neither nbd:// nor nbd+unix://");
  rest.remove_prefix(kTcp.size());
  if (rest.find('?') != std::string_view::npos) return not_plain("has a query");
  const size_t slash = rest.find('/');
  const std::string_view authority = rest.substr(0, slash);
  if (slash != std::string_view::npos) u.export_name = std::string(rest.substr(slash + 1));
  const size_t colon = authority.find(':');
  u.host = std::string(authority.substr(0, colon));
  u.port = colon == std::string_view::npos ? "10809" : std::string(authority.substr(colon + 1));
  if (u.host.empty() || u.port.empty()) return not_plain("has no host or an empty port");
  return u;
}

DirectNbdConnection ConnectNbdDirect(const std::string& uri, const NbdLimits& limits) {
  DirectNbdConnection c;
  const PlainNbdUri u = ParsePlainNbdUri(uri);
  if (!u.why_not.empty()) {
    c.why_not = u.why_not;
    return c;
  }
  const Deadline deadline(uri, limits);
  Socket s = Dial(u, deadline);
  unsigned char greeting[18];
  deadline.Read(s.fd, greeting, sizeof greeting);
  if (Get64(greeting) != kNbdMagic) deadline.Fail(EPROTO, "not an NBD server");
  const uint16_t server_flags = Get16(greeting + 16);
  if (Get64(greeting + 8) != kOptMagic || !(server_flags & kFlagFixedNewstyle)) {
    c.why_not = "the server does not speak fixed newstyle NBD";
    return c;
  }
  unsigned char client_flags[4];
  Put32(client_flags, kFlagFixedNewstyle | (server_flags & kFlagNoZeroes));
  deadline.Write(s.fd, client_flags, sizeof client_flags);

  // NBD_OPT_GO: the export's name and no information requests.
  std::vector<unsigned char> go(16 + 4 + u.export_name.size() + 2, 0);
  Put64(go.data(), kOptMagic);
  Put32(go.data() + 8, kOptGo);
  Put32(go.data() + 12, static_cast<uint32_t>(go.size() - 16));
  Put32(go.data() + 16, static_cast<uint32_t>(u.export_name.size()));
  std::memcpy(go.data() + 20, u.export_name.data(), u.export_name.size());
  deadline.Write(s.fd, go.data(), go.size());

  bool have_export = false;
  for (;;) {
    unsigned char head[20];
    deadline.Read(s.fd, head, sizeof head);
    const uint32_t type = Get32(head + 12);
    const uint32_t len = Get32(head + 16);
    if (Get64(head) != kReplyMagic || Get32(head + 8) != kOptGo || len > kMaxReplyData) {
      deadline.Fail(EPROTO, "malformed reply to NBD_OPT_GO");
    }
    std::vector<unsigned char> data(len);
    if (len > 0) deadline.Read(s.fd, data.data(), len);
    if (type == kRepErrTlsReqd) {
      c.why_not = "the server requires TLS";
      return c;
    }
    if (type == kRepErrUnsup) {
      c.why_not = "the server does not know NBD_OPT_GO";
      return c;
    }
    if (type & 0x80000000u) {  // the server's text, as a terminal may show it
      deadline.Fail(ECONNABORTED,
                    fmt::format("the server refused the export '{}': {}", u.export_name,
                                stats::Printable(std::string_view(
                                    reinterpret_cast<const char*>(data.data()), data.size()))));
    }
    if (type == kRepInfo && len >= 12 && Get16(data.data()) == 0) {  // NBD_INFO_EXPORT
      c.size = Get64(data.data() + 2);
      if (c.size > uint64_t{INT64_MAX}) deadline.Fail(EOVERFLOW, ExportTooLarge(c.size));
      c.transmission_flags = Get16(data.data() + 10);
      have_export = true;
    }
    if (type == kRepAck) break;
  }
  if (!have_export) deadline.Fail(EPROTO, "the server sent no NBD_INFO_EXPORT");
  c.fd = s.Release();
  return c;
}

}  // namespace iotail::engine
