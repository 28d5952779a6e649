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
constexpr char kContentType[] = "text/plain; version=0.0.4; charset=utf-8";

int MsLeft(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return left.count() > 0 ? static_cast<int>(left.count()) : 0;
}

// Waits until fd is ready for `events` or the deadline passes.
bool WaitFor(int fd, short events, Clock::time_point deadline) {
  pollfd p{fd, events, 0};
  for (;;) {
    const int n = ::poll(&p, 1, MsLeft(deadline));
    if (n > 0) return true;
    if (n == 0 || errno != EINTR) return false;
  }
}

void SendAll(int fd, const std::string& data, Clock::time_point deadline) {
  size_t sent = 0;
  while (sent < data.size()) {
    if (!WaitFor(fd, POLLOUT, deadline)) return;  // a client that does not read is dropped
    const ssize_t n = ::send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    sent += static_cast<size_t>(n);
  }
}

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

void MetricsServer::Serve() {
  while (!stop_.load()) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    Answer(fd);
    ::close(fd);
  }
}

void MetricsServer::Answer(int fd) {
  const auto deadline = Clock::now() + kClientTime;
  std::string request;
  char chunk[2048];
  while (request.find("\r\n\r\n") == std::string::npos && request.size() < kMaxRequest) {
    if (!WaitFor(fd, POLLIN, deadline)) return;  // too slow: dropped
    const ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    request.append(chunk, static_cast<size_t>(n));
  }
  ++requests_;
  const size_t sp1 = request.find(' ');
  const size_t sp2 = sp1 == std::string::npos ? sp1 : request.find(' ', sp1 + 1);
  std::string status = "400 Bad Request", body = "bad request\n", type = "text/plain";
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
      if (method == "HEAD") {
        SendAll(fd,
                fmt::format("HTTP/1.1 200 OK\r\nContent-Type: {}\r\nContent-Length: {}\r\n"
                            "Connection: close\r\n\r\n",
                            type, body.size()),
                Clock::now() + kClientTime);
        return;
      }
    }
  }
  SendAll(fd,
          fmt::format("HTTP/1.1 {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: "
                      "close\r\n\r\n",
                      status, type, body.size()) +
              body,
          Clock::now() + kClientTime);
}

}  // namespace iotail::cli
