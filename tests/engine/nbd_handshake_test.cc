// The direct nbd path's own handshake (engine/io/nbd_handshake.h) against a listener that never
// speaks (bounded by the timeout, ended by a stop request, both naming the URI) and against
// nbdkit (the export's size; a TLS-only server is left to libnbd).
#include "engine/io/nbd_handshake.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <string>
#include <system_error>

#include "stats/core/errors.h"
#include "tests/cli/nbd_fixture.h"

namespace nbd_handshake_test {

using iotail::engine::ConnectNbdDirect;
using iotail::engine::NbdLimits;

// A Unix socket that listens and never accepts: connect() succeeds (the backlog), no byte comes.
class MuteSocket {
 public:
  MuteSocket() {
    dir_ = iotail::testing::MakeShortTempDir();
    const std::string path = (dir_ / "sock").string();
    fd_ = iotail::testing::BindUnixSocket(path);
    if (fd_ >= 0 && ::listen(fd_, 4) == 0) {
      uri_ = "nbd+unix:///?socket=" + path;
    }
  }
  ~MuteSocket() {
    ::close(fd_);
    iotail::testing::RemoveTree(dir_);
  }
  const std::string& uri() const { return uri_; }

 private:
  std::filesystem::path dir_;
  int fd_ = -1;
  std::string uri_;
};

TEST(NbdHandshakeTest, SilentServerTimesOutNamingTheUriAndTheOption) {
  MuteSocket mute;
  ASSERT_FALSE(mute.uri().empty());
  const auto start = std::chrono::steady_clock::now();
  try {
    ConnectNbdDirect(mute.uri(), NbdLimits{200'000'000, nullptr});
    FAIL() << "connected to a server that never spoke";
  } catch (const std::system_error& e) {
    EXPECT_EQ(e.code().value(), ETIMEDOUT);
    EXPECT_NE(std::string(e.what()).find(mute.uri()), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("--nbd_timeout"), std::string::npos) << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
}

TEST(NbdHandshakeTest, StopRequestEndsTheWait) {
  MuteSocket mute;
  ASSERT_FALSE(mute.uri().empty());
  const std::atomic<bool> stop{true};
  EXPECT_THROW(ConnectNbdDirect(mute.uri(), NbdLimits{0, &stop}), iotail::stats::Interrupted);
}

TEST(NbdHandshakeTest, NbdkitExportIsReadyWithItsSize) {
  if (const std::string why = iotail::testing::NbdServer::Unavailable(); !why.empty()) {
    GTEST_SKIP() << why;
  }
  iotail::testing::NbdServer server;
  ASSERT_EQ(server.Start("memory 3M"), "");
  const auto c = ConnectNbdDirect(server.uri(), NbdLimits{5'000'000'000, nullptr});
  ASSERT_GE(c.fd, 0) << c.why_not;
  EXPECT_EQ(c.size, 3u << 20);
  ::close(c.fd);
}

TEST(NbdHandshakeTest, RefusedConnectionNamesTheUri) {
  const std::string uri = "nbd+unix:///?socket=/nonexistent/sock";
  try {
    ConnectNbdDirect(uri, NbdLimits{1'000'000'000, nullptr});
    FAIL();
  } catch (const std::system_error& e) {
    EXPECT_NE(std::string(e.what()).find(uri), std::string::npos) << e.what();
  }
}

}  // namespace nbd_handshake_test
