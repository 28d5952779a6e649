#include "cli/metrics_server.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "stats/core/errors.h"

namespace iotail::cli {

namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kClientTime =
    std::chrono::seconds(2);  // to send the request, and to take the answer
constexpr size_t kMaxRequest = 8192;
constexpr size_t kMaxConnections = 64;  // more wait in the listen backlog
constexpr char kContentType[] = "text/plain; version=0.0.4; charset=utf-8";

std::string Usage(const std::string& spec, const std::string& why) {
  return fmt::format(
      "--prometheus={}: {} (expected [ADDR:]PORT, e.g. 9100, 127.0.0.1:0 or "
      "[::1]:9100)",
      spec, why);
}

}  // namespace

MetricsServer::MetricsServer(const std::string& spec, Provider provider)
    : provider_(std::move(provider)) {
  std::string host = "127.0.0.1";
  std::string port = spec;
  if (!spec.empty() && spec.front() == '[') {
    const size_t close = spec.find("]:");
    if (close == std::string::npos)
      throw stats::UsageError(Usage(spec, "no ']:' after an IPv6 address"));
    host = spec.substr(1, close - 1);
    port = spec.substr(close + 2);
  } else if (const size_t colon = spec.rfind(':'); colon != std::string::npos) {
    host = spec.substr(0, colon);
    port = spec.substr(colon + 1);
  }
  if (port.empty() || port.size() > 5 ||
      port.find_first_not_of("0123456789") != std::string::npos || std::stoul(port) > 65535) {
    throw stats::UsageError(Usage(spec, "the port must be a number from 0 to 65535"));
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (const int rc = ::getaddrinfo(host.c_str(), port.c_str(), &hints, &found); rc != 0) {
    throw stats::UsageError(Usage(spec, fmt::format("address '{}': {}", host, gai_strerror(rc))));
  }
  std::string last_error = "no address";
  for (addrinfo* a = found; a != nullptr && listen_fd_ < 0; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) {
      last_error = std::strerror(errno);
      continue;
    }
    const int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd, a->ai_addr, a->ai_addrlen) != 0 || ::listen(fd, 16) != 0) {
      last_error = std::strerror(errno);
      ::close(fd);
      continue;
    }
    listen_fd_ = fd;
  }
  ::freeaddrinfo(found);
  if (listen_fd_ < 0) throw stats::UsageError(Usage(spec, "cannot listen: " + last_error));

  sockaddr_storage bound{};
  socklen_t len = sizeof bound;
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&bound), &len);
  char text[INET6_ADDRSTRLEN] = {};
  if (bound.ss_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&bound);
    ::inet_ntop(AF_INET6, &in6->sin6_addr, text, sizeof text);
    port_ = ntohs(in6->sin6_port);
    address_ = fmt::format("[{}]:{}", text, port_);
  } else {
    const auto* in4 = reinterpret_cast<const sockaddr_in*>(&bound);
    ::inet_ntop(AF_INET, &in4->sin_addr, text, sizeof text);
    port_ = ntohs(in4->sin_port);
    address_ = fmt::format("{}:{}", text, port_);
  }
  thread_ = std::thread([this] { Serve(); });
}

MetricsServer::~MetricsServer() { Stop(); }

void MetricsServer::Stop() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
  if (listen_fd_ >= 0) {
    ::close(listen_fd_);
    listen_fd_ = -1;
  }
}

namespace {

// One client: its request as it arrives, then its response as it leaves; closed at its deadline.
struct Connection {
  int fd = -1;
  Clock::time_point deadline;
  std::string in;
  std::string out;
  size_t sent = 0;
  bool answering = false;
};

}  // namespace

void MetricsServer::Serve() {
  std::vector<Connection> conns;
  std::vector<pollfd> fds;
  while (!stop_.load()) {
    const short accept_events = conns.size() < kMaxConnections ? POLLIN : 0;
    fds.assign(1, pollfd{listen_fd_, accept_events, 0});
    for (const Connection& c : conns) {
      fds.push_back({c.fd, static_cast<short>(c.answering ? POLLOUT : POLLIN), 0});
    }
    if (::poll(fds.data(), fds.size(), 100) < 0 && errno != EINTR) break;
    const auto now = Clock::now();
    for (size_t i = 0; i < conns.size(); ++i) {
      Connection& c = conns[i];
      const short revents = fds[i + 1].revents;
      bool done = now >= c.deadline;  // too slow to ask or to take the answer: dropped
      if (!done && revents != 0)
        done = !Progress(c.fd, c.in, c.out, c.sent, c.answering, now, c.deadline);
      if (done) {
        ::close(c.fd);
        c.fd = -1;
      }
    }
    std::erase_if(conns, [](const Connection& c) { return c.fd < 0; });
    if ((fds[0].revents & POLLIN) != 0) {
      const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (fd >= 0) conns.push_back({fd, now + kClientTime, {}, {}, 0, false});
    }
  }
  for (const Connection& c : conns) ::close(c.fd);
}

bool MetricsServer::Progress(int fd, std::string& in, std::string& out, size_t& sent,
                             bool& answering, Clock::time_point now, Clock::time_point& deadline) {
  if (!answering) {
    char chunk[2048];
    const ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
    if (n < 0) return errno == EINTR || errno == EAGAIN;
    if (n == 0) return false;
    in.append(chunk, static_cast<size_t>(n));
    if (in.find("\r\n\r\n") == std::string::npos && in.size() < kMaxRequest) return true;
    out = Respond(in);
    answering = true;
    deadline = now + kClientTime;  // as long again to take the answer
  }
  const ssize_t n = ::send(fd, out.data() + sent, out.size() - sent, MSG_NOSIGNAL);
  if (n < 0) return errno == EINTR || errno == EAGAIN;
  sent += static_cast<size_t>(n);
  return sent < out.size();
}

std::string MetricsServer::Respond(const std::string& request) {
  ++requests_;
  const size_t sp1 = request.find(' ');
  const size_t sp2 = sp1 == std::string::npos ? sp1 : request.find(' ', sp1 + 1);
  std::string status = "400 Bad Request", body = "bad request\n", type = "text/plain";
  bool head = false;
  if (sp2 != std::string::npos && request.find("\r\n\r\n") != std::string::npos) {
    const std::string method = request.substr(0, sp1);
    std::string path = request.substr(sp1 + 1, sp2 - sp1 - 1);
    path = path.substr(0, path.find('?'));
    if (path != "/metrics") {
      status = "404 Not Found";
      body = "iotail serves /metrics only\n";
    } else if (method != "GET" && method != "HEAD") {
      status = "405 Method Not Allowed";
      body = "GET or HEAD\n";
    } else {
      status = "200 OK";
      type = kContentType;
      const std::shared_ptr<const std::string> text = provider_();
      body = text ? *text : std::string();
      head = method == "HEAD";
    }
  }
  return fmt::format(
             "HTTP/1.1 {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
             status, type, body.size()) +
         (head ? std::string() : body);
}

}  // namespace iotail::cli
