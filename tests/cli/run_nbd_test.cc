// The nbd engine beyond latency: what the server says of its export is checked before the run,
// every mode works over it (fixed size, histogram logs, SLA gates), and writing over a filesystem
// on an export needs --allow-destructive, as on a device. Each test runs on both data paths
// (--nbd_path=libnbd and direct); --nbd_conns and the fallback of --nbd_path=auto are tested too.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_test_util.h"
#include "nbd_fixture.h"

namespace run_nbd_test {

namespace fs = std::filesystem;
using iotail::testing::NbdServer;
using nlohmann::json;

class RunNbdTest : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    if (const std::string why = NbdServer::Unavailable(); !why.empty()) GTEST_SKIP() << why;
    dir_ = iotail::testing::MakeScratchDir("iotail_nbd");
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  iotail::testing::CommandResult Run(const NbdServer& server, const std::string& args) {
    return iotail::testing::RunIotail("run --ioengine=nbd --uri='" + server.uri() +
                                          "' --live_format=none --nbd_path=" + GetParam() + " " +
                                          args,
                                      dir_);
  }
  fs::path dir_;
};

TEST_P(RunNbdTest, BlockSizesTheServerCannotTakeAreRefusedBeforeTheRun) {
  NbdServer server;
  ASSERT_EQ(server.Start("--filter=blocksize-policy memory 64M blocksize-minimum=4096 "
                         "blocksize-preferred=4096 blocksize-maximum=65536"),
            "");
  auto r = Run(server, "--bs=512 --rw=randread --runtime=5s --time_based");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--bs"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("multiples of 4096"), std::string::npos) << r.err;
  r = Run(server, "--bs=1m --rw=randread --runtime=5s --time_based");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("at most 65536"), std::string::npos) << r.err;
  r = Run(server, "--bs=8k --rw=randread --size=1m --output-format=json");
  EXPECT_EQ(r.status, 0) << r.err;
}

TEST_P(RunNbdTest, FixedSizeRunWithLogsAndSlaGates) {
  NbdServer server;
  ASSERT_EQ(server.Start("memory 64M"), "");
  const std::string prefix = (dir_ / "n").string();
  // 2 MiB in 64 KiB writes: exactly 32 I/Os, every one in the log; an SLA no server can meet.
  const auto r =
      Run(server, "--rw=write --bs=64k --size=2m --iodepth=4 --write_hist_log=" + prefix +
                      " --log_hist_msec=100 --sla 'p99<=1ns' "
                      "--output-format=json");
  EXPECT_EQ(r.status, 3) << r.err;  // the SLA gate, not an I/O error
  const size_t brace = r.out.find('{');
  ASSERT_NE(brace, std::string::npos) << r.out;
  const json j = json::parse(r.out.substr(brace));
  EXPECT_EQ(j["jobs"][0]["write"]["total_ios"].get<uint64_t>(), 32u);
  EXPECT_EQ(j["jobs"][0]["write"]["io_bytes"].get<uint64_t>(), 2u << 20);
  std::ifstream log(prefix + "_clat_hist.1.log");
  uint64_t logged = 0;
  for (std::string line; std::getline(log, line);) {
    size_t field = 0, start = 0;
    for (;;) {
      const size_t comma = line.find(',', start);
      if (field == 1 && std::stoi(line.substr(start)) != 1) break;  // writes only
      if (field >= 3) logged += std::stoull(line.substr(start, comma - start));
      if (comma == std::string::npos) break;
      start = comma + 1;
      ++field;
    }
  }
  EXPECT_EQ(logged, 32u);
}

TEST_P(RunNbdTest, WritingOverAFilesystemOnAnExportNeedsTheFlag) {
  const fs::path image = dir_ / "image";
  std::ofstream(image).close();
  fs::resize_file(image, 16 << 20);
  const auto mkfs = iotail::testing::Capture("mkfs.ext4 -q -F " + image.string() + " 2>&1");
  if (mkfs.status != 0) GTEST_SKIP() << "mkfs.ext4 failed: " << mkfs.out;
  NbdServer server;
  ASSERT_EQ(server.Start("file " + image.string()), "");
  auto r = Run(server, "--rw=write --bs=4k --size=1m");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("ext4"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--allow-destructive"), std::string::npos) << r.err;
  // Reading is harmless; the flag lets the write run.
  EXPECT_EQ(Run(server, "--rw=read --bs=4k --size=1m").status, 0);
  r = Run(server, "--rw=write --bs=4k --size=1m --allow-destructive");
  EXPECT_EQ(r.status, 0) << r.err;
}

TEST_P(RunNbdTest, SeveralConnectionsShareTheQueue) {
  NbdServer server;
  const fs::path log = dir_ / "connections.log";
  ASSERT_EQ(server.Start("--filter=log memory 64M logfile=" + log.string()), "");
  const auto r = Run(server,
                     "--rw=randrw --bs=4k --size=4m --iodepth=8 --nbd_conns=4 "
                     "--allow-destructive --output-format=json");
  ASSERT_EQ(r.status, 0) << r.err;
  const json j = json::parse(r.out.substr(r.out.find('{')));
  EXPECT_EQ(j["jobs"][0]["read"]["io_bytes"].get<uint64_t>() +
                j["jobs"][0]["write"]["io_bytes"].get<uint64_t>(),
            4u << 20);
  // The probe's connection and the worker's four.
  const std::string text = iotail::testing::ReadWholeFile(log);
  size_t connects = 0;
  for (size_t at = text.find("Connect"); at != std::string::npos;
       at = text.find("Connect", at + 1)) {
    ++connects;
  }
  EXPECT_EQ(connects, 5u) << text;
}

TEST_P(RunNbdTest, SeveralConnectionsWritingNeedMultiConn) {
  NbdServer server;
  ASSERT_EQ(server.Start("--filter=multi-conn memory 64M multi-conn-mode=disable"), "");
  auto r = Run(server, "--rw=randwrite --bs=4k --size=1m --nbd_conns=2 --allow-destructive");
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("--nbd_conns=2"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("multi-conn"), std::string::npos) << r.err;
  r = Run(server, "--rw=randread --bs=4k --size=1m --nbd_conns=2");  // reads may
  EXPECT_EQ(r.status, 0) << r.err;
}

// A server that takes the first connections and refuses a later one (nbdkit's limit filter: two
// clients at a time): the error names the connection that failed (issue 38).
TEST_P(RunNbdTest, ARefusedConnectionOfSeveralIsNamed) {
  NbdServer server;
  ASSERT_EQ(server.Start("--filter=limit memory 64M limit=2"), "");
  const auto r =
      Run(server, "--nbd_conns=4 --iodepth=4 --rw=randread --bs=4k --runtime=1 --time_based");
  EXPECT_NE(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("--nbd_conns=4: connection 3 of 4: "), std::string::npos) << r.err;
}

INSTANTIATE_TEST_SUITE_P(Paths, RunNbdTest, ::testing::Values("libnbd", "direct"));

// A URI the direct path does not parse (a percent-escape in the export name): --nbd_path=direct
// refuses it naming the option, auto falls back to libnbd and runs.
TEST(RunNbdPathTest, AutoFallsBackToLibnbdWhereDirectCannotServe) {
  if (const std::string why = NbdServer::Unavailable(); !why.empty()) GTEST_SKIP() << why;
  const fs::path dir = iotail::testing::MakeScratchDir("iotail_nbd_path");
  NbdServer server;
  ASSERT_EQ(server.Start("memory 16M"), "");
  const std::string uri = "nbd+unix:///a%62?socket=" + server.socket().string();
  auto run = [&](const std::string& path) {
    return iotail::testing::RunIotail("run --ioengine=nbd --uri='" + uri +
                                          "' --live_format=none --rw=randread --bs=4k --size=1m "
                                          "--nbd_path=" +
                                          path,
                                      dir);
  };
  auto r = run("direct");
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("--nbd_path=direct"), std::string::npos) << r.err;
  r = run("auto");
  EXPECT_EQ(r.status, 0) << r.err;
  fs::remove_all(dir);
}

}  // namespace run_nbd_test
