// The metrics endpoint's HTTP server on its own: the exact content type, 404/405, bad --prometheus
// values, and a client that connects and never sends cannot keep others waiting for long.
#include "cli/metrics_server.h"

#include <gtest/gtest.h>
#include <sys/socket.h>

#include <chrono>
#include <memory>
#include <string>

#include "http_get.h"
#include "stats/core/errors.h"

namespace {

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

TEST(MetricsServerTest, SilentClientDelaysOthersByAtMostItsTimeout) {
  MetricsServer server("127.0.0.1:0", Text("iotail_x 1\n"));
  // Connects and sends nothing.
  const int silent = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(server.port()));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::connect(silent, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  const auto start = std::chrono::steady_clock::now();
  const auto r = HttpGet(server.port(), "/metrics");
  const double waited =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ::close(silent);
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.body, "iotail_x 1\n");
  EXPECT_LT(waited, 4.0);  // the silent client's 2 s, plus scheduling
  const auto stop_start = std::chrono::steady_clock::now();
  server.Stop();
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - stop_start).count(),
            1.0);
}

}  // namespace
