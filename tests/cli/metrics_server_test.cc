// The metrics endpoint's HTTP server on its own: the exact content type, 404/405, bad --prometheus
// values, and a client that connects and never sends cannot keep others waiting for long.
#include "cli/metrics_server.h"

#include <gtest/gtest.h>
#include <sys/socket.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "http_get.h"
#include "stats/core/errors.h"

namespace metrics_server_test {

using iotail::cli::MetricsServer;
using iotail::testing::HttpGet;

MetricsServer::Provider Text(const std::string& text) {
  auto shared = std::make_shared<const std::string>(text);
  return [shared] { return shared; };
}

TEST(MetricsServerTest, ServesMetricsWithPrometheusContentTypeAndNothingElse) {
  MetricsServer server("127.0.0.1:0", Text("iotail_x 1\n"));
  ASSERT_GT(server.port(), 0);
  EXPECT_EQ(server.address(), "127.0.0.1:" + std::to_string(server.port()));
  const auto r = HttpGet(server.port(), "/metrics");
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.head.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << r.head;
  EXPECT_NE(r.head.find("\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"),
            std::string::npos)
      << r.head;
  EXPECT_NE(r.head.find("Content-Length: 11\r\n"), std::string::npos) << r.head;
  EXPECT_EQ(r.body, "iotail_x 1\n");
  const auto head = HttpGet(server.port(), "/metrics", "HEAD");
  ASSERT_TRUE(head.ok);
  EXPECT_EQ(head.body, "");
  EXPECT_EQ(HttpGet(server.port(), "/").head.rfind("HTTP/1.1 404", 0), 0u);
  EXPECT_EQ(HttpGet(server.port(), "/metrics", "POST").head.rfind("HTTP/1.1 405", 0), 0u);
  EXPECT_EQ(HttpGet(server.port(), "/metrics?x=1").body, "iotail_x 1\n");
  EXPECT_EQ(server.requests(), 5u);
}

TEST(MetricsServerTest, BadAddressesNameTheOption) {
  for (const char* spec : {"99999", "abc", "127.0.0.1:", "[::1", "127.0.0.1:-1"}) {
    try {
      MetricsServer server(spec, Text(""));
      ADD_FAILURE() << spec << " was accepted";
    } catch (const iotail::stats::UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("--prometheus="), std::string::npos) << e.what();
    }
  }
  // A port already taken.
  MetricsServer first("127.0.0.1:0", Text(""));
  EXPECT_THROW(MetricsServer("127.0.0.1:" + std::to_string(first.port()), Text("")),
               iotail::stats::UsageError);
}

// Silent clients (connected, sending nothing) do not delay a real scrape: one took 2 s each
// before, so 5 delayed a scrape by about 10 s (issue 25); now every connection is served at once.
TEST(MetricsServerTest, SilentClientsDoNotDelayAScrape) {
  MetricsServer server("127.0.0.1:0", Text("iotail_x 1\n"));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(server.port()));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::vector<int> silent;
  for (int i = 0; i < 20; ++i) {
    silent.push_back(::socket(AF_INET, SOCK_STREAM, 0));
    ASSERT_EQ(::connect(silent.back(), reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  }
  const auto start = std::chrono::steady_clock::now();
  const auto r = HttpGet(server.port(), "/metrics");
  const double waited =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.body, "iotail_x 1\n");
  EXPECT_LT(waited, 1.0);
  // The silent ones are dropped at their deadline (2 s): their sockets see the close.
  for (int fd : silent) {
    char c;
    const auto t0 = std::chrono::steady_clock::now();
    timeval tv{4, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    EXPECT_EQ(::recv(fd, &c, 1, 0), 0) << "not closed by the server";
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 3.5);
    ::close(fd);
  }
  const auto stop_start = std::chrono::steady_clock::now();
  server.Stop();
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - stop_start).count(),
            1.0);
}

// A client that asks and never reads a large answer is dropped at its deadline; others go on.
TEST(MetricsServerTest, AClientThatDoesNotReadIsDropped) {
  MetricsServer server("127.0.0.1:0", Text(std::string(8 << 20, 'x')));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(server.port()));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const int lazy = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_EQ(::connect(lazy, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  const std::string request = "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";
  ASSERT_EQ(::send(lazy, request.data(), request.size(), 0), static_cast<ssize_t>(request.size()));
  const auto r = HttpGet(server.port(), "/metrics");
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.body.size(), 8u << 20);
  ::close(lazy);
}

}  // namespace metrics_server_test
