// MetricsServer: the small HTTP/1.1 server behind `iotail run --prometheus=[ADDR:]PORT`. It serves
// `GET /metrics` (and HEAD) with the body its provider returns and
// `Content-Type: text/plain; version=0.0.4; charset=utf-8`, 404 for any other path, 405 for any
// other method, and closes every connection after its response.
//
// Why built in rather than a library: the endpoint serves one text the interval clock already
// renders, to one scraper every few seconds; prometheus-cpp would add a dependency that takes a
// mutex per observation and its own registry, and civetweb's threads; 200 lines of poll() do the
// job and are easy to bound. One thread serves up to 64 connections at once with non-blocking
// sockets and poll(): a client gets 2 s to send its request and 2 s to take the answer, requests
// are capped at 8 KiB, so slow or hostile clients never delay a real scrape (silent ones only take
// connection slots until their deadline) and can never stall the run (the run's threads never wait
// for the server; the provider returns a pointer copy).
//
// Listens on loopback unless an address is given; port 0 lets the kernel choose (port() tells).
// Start() throws UsageError naming --prometheus on a bad address or a port that cannot be bound.
// Stop() (and the destructor) ends the thread within about 100 ms.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>

namespace iotail::cli {

class MetricsServer {
 public:
  using Provider = std::function<std::shared_ptr<const std::string>()>;

  // `spec` is [ADDR:]PORT: "9100", "127.0.0.1:0", "[::1]:9100", "0.0.0.0:9100".
  MetricsServer(const std::string& spec, Provider provider);
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  // The address and port actually bound, for the user: "127.0.0.1:41234" or "[::1]:9100".
  const std::string& address() const { return address_; }
  int port() const { return port_; }
  uint64_t requests() const { return requests_.load(); }
  void Stop();

 private:
  using Clock = std::chrono::steady_clock;
  void Serve();
  // Reads a connection's request or sends its response, as far as the socket allows now; false
  // when the connection is over (answered, closed by the client, or failed).
  bool Progress(int fd, std::string& in, std::string& out, size_t& sent, bool& answering,
                Clock::time_point now, Clock::time_point& deadline);
  // The HTTP response to one request.
  std::string Respond(const std::string& request);

  Provider provider_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::string address_;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> requests_{0};
  std::thread thread_;
};

}  // namespace iotail::cli
