// HttpGet: a minimal HTTP/1.1 client for tests of iotail's metrics endpoint (no curl needed): one
// request on a fresh connection, the whole response (head and body) read until the server closes.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

namespace iotail::testing {

struct HttpResponse {
  bool ok = false;  // connected and got a response
  std::string head, body;
};

inline HttpResponse HttpGet(int port, const std::string& path, const std::string& method = "GET") {
  HttpResponse r;
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return r;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  timeval tv{10, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return r;
  }
  const std::string request = method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
  if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL) !=
      static_cast<ssize_t>(request.size())) {
    ::close(fd);
    return r;
  }
  std::string all;
  char buf[4096];
  for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;)
    all.append(buf, static_cast<size_t>(n));
  ::close(fd);
  const size_t end = all.find("\r\n\r\n");
  if (end == std::string::npos) return r;
  r.ok = true;
  r.head = all.substr(0, end + 2);
  r.body = all.substr(end + 4);
  return r;
}

// A TCP socket bound to an ephemeral port of 127.0.0.1 (the caller's to close), its port in
// *port; -1 if the system refused.
inline int BindLoopbackSocket(int* port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    if (fd >= 0) ::close(fd);
    return -1;
  }
  *port = ntohs(addr.sin_port);
  return fd;
}

// A port on loopback that was free a moment ago (for a server started next); 0 if none.
inline int FreeLoopbackPort() {
  int port = 0;
  const int fd = BindLoopbackSocket(&port);
  if (fd < 0) return 0;
  ::close(fd);
  return port;
}

}  // namespace iotail::testing
