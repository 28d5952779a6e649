// The nbd engine against servers that stop answering, and its checks before the run.
// - A server whose reads never complete (nbdkit's delay filter, rdelay=100000: 100000 s per read)
//   must not keep a stopping run alive: at --runtime, SIGINT or SIGTERM the worker waits 1 s for
//   what is in flight, then gives it up (counted as ETIMEDOUT), and the run prints its summary,
//   keeps its logs exact and exits (1 at --runtime, 128 + the signal when interrupted).
// - A socket that accepts connections but never speaks NBD (a listener of the test's own, on a
//   Unix socket and on a TCP loopback port) must not hang the connection: it times out after
//   --nbd_timeout naming the URI, and SIGINT ends it at once (exit 130) naming the URI; so does
//   the read of the export's first MiB (the signature check before writing).
// - A block size larger than the export is refused naming both sizes; --hipri with the nbd engine
//   or without O_DIRECT is refused, and on a file the kernel cannot poll (an export on FUSE) the
//   run's end says polled I/O needs a block device with poll queues.
// The tests that connect run on both data paths (--nbd_path=libnbd and direct). Each test runs a
// few seconds; servers, listeners and runs are stopped by their owners.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "cli_test_util.h"
#include "http_get.h"
#include "nbd_fixture.h"

namespace run_nbd_stall_test {

namespace fs = std::filesystem;
using iotail::testing::ChildProcess;
using iotail::testing::NbdServer;
using nlohmann::json;
using Seconds = std::chrono::duration<double>;
using SteadyClock = std::chrono::steady_clock;

constexpr const char* kStalledReads = "--filter=delay memory 64M rdelay=100000";

// Sum of the counts of direction `ddir` in a fio histogram log.
uint64_t LogCount(const fs::path& p, int ddir) {
  std::ifstream in(p);
  uint64_t total = 0;
  for (std::string line; std::getline(in, line);) {
    std::stringstream ss(line);
    std::vector<uint64_t> v;
    for (std::string field; std::getline(ss, field, ',');) v.push_back(std::stoull(field));
    if (v.size() < 4 || static_cast<int>(v[1]) != ddir) continue;
    for (size_t i = 3; i < v.size(); ++i) total += v[i];
  }
  return total;
}

// A listener that accepts connections and never writes a byte: a server that does not speak NBD.
// On a Unix socket in a fresh directory, or on an ephemeral TCP port of 127.0.0.1. The destructor
// stops the accepting thread, closes every socket and removes the directory.
class SilentListener {
 public:
  enum class Kind { kUnix, kTcp };

  explicit SilentListener(Kind kind) {
    if (kind == Kind::kUnix) {
      dir_ = iotail::testing::MakeShortTempDir();
      const std::string path = (dir_ / "sock").string();
      fd_ = iotail::testing::BindUnixSocket(path);
      if (fd_ < 0) return;
      uri_ = "nbd+unix:///?socket=" + path;
    } else {
      int port = 0;
      fd_ = iotail::testing::BindLoopbackSocket(&port);
      if (fd_ < 0) return;
      uri_ = "nbd://127.0.0.1:" + std::to_string(port) + "/";
    }
    if (::listen(fd_, 16) != 0) {
      uri_.clear();
      return;
    }
    thread_ = std::thread([this] {
      while (!stop_.load()) {
        pollfd p{fd_, POLLIN, 0};
        if (::poll(&p, 1, 20) == 1) {
          const int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
          if (c >= 0) accepted_.push_back(c);
        }
      }
    });
  }
  ~SilentListener() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    for (int c : accepted_) ::close(c);
    if (fd_ >= 0) ::close(fd_);
    if (!dir_.empty()) {
      std::error_code ec;
      fs::remove_all(dir_, ec);
    }
  }
  SilentListener(const SilentListener&) = delete;
  SilentListener& operator=(const SilentListener&) = delete;

  // The URI to connect to; empty if the listener could not be set up.
  const std::string& uri() const { return uri_; }

 private:
  fs::path dir_;
  int fd_ = -1;
  std::string uri_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::vector<int> accepted_;  // only the accepting thread touches it until it is joined
};

class RunNbdStallTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = iotail::testing::MakeScratchDir("iotail_nbd_stall");
    prefix_ = (dir_ / "h").string();
    summary_ = dir_ / "summary.json";
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  // Starts server_ with nbdkit's PLUGIN arguments: "" when it runs, else why nbdkit cannot run
  // here (the test skips).
  std::string StartServer(const std::string& plugin) {
    if (std::string why = NbdServer::Unavailable(); !why.empty()) return why;
    EXPECT_EQ(server_.Start(plugin), "");
    return "";
  }
  // Starts `iotail run ARGS` on path_ (its stdout and stderr into DIR/iotail.log).
  void Spawn(ChildProcess& run, const std::vector<std::string>& args) {
    std::vector<std::string> argv = {IOTAIL_BINARY, "run", "--live_format=none",
                                     "--nbd_path=" + path_};
    argv.insert(argv.end(), args.begin(), args.end());
    ASSERT_EQ(run.Spawn(argv, log(), SIGKILL), "");
  }
  // QD4 randrw 4k against server_ for `runtime`, logging to prefix_ and the JSON summary_.
  // (--allow-destructive: no read of the first MiB for signatures before the run.)
  void SpawnRandrw(ChildProcess& run, const std::string& runtime) {
    Spawn(run, {"--ioengine=nbd", "--uri=" + server_.uri(), "--rw=randrw", "--allow-destructive",
                "--bs=4k", "--iodepth=4", "--runtime=" + runtime, "--time_based",
                "--write_hist_log=" + prefix_, "--log_hist_msec=250", "--output-format=json",
                "--output=" + summary_.string()});
  }
  fs::path log() const { return dir_ / "iotail.log"; }
  std::string Log() const { return iotail::testing::ReadWholeFile(log()); }

  // A stopping run against a server whose reads never end: the 4 reads in flight are given up and
  // counted as ETIMEDOUT, the writes that completed are in the summary and, exactly, in the logs.
  void ExpectReadsGivenUp(const fs::path& summary_path, const std::string& prefix) {
    std::ifstream in(summary_path);
    ASSERT_TRUE(in.good()) << "no summary; output: " << Log();
    const json j = json::parse(in, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << iotail::testing::ReadWholeFile(summary_path);
    const json& job = j.at("jobs").at(0);
    const json& errors = job.at("iotail_errors");
    EXPECT_EQ(errors.at("total").get<int64_t>(), 4) << errors.dump();
    EXPECT_EQ(errors.at("by_errno").value("ETIMEDOUT", 0), 4) << errors.dump();
    EXPECT_EQ(job.at("read").at("total_ios").get<uint64_t>(), 0u);
    if (prefix.empty()) return;
    const uint64_t writes = job.at("write").at("total_ios").get<uint64_t>();
    EXPECT_EQ(LogCount(prefix + "_clat_hist.1.log", 1), writes);
    EXPECT_EQ(LogCount(prefix + "_clat_hist.1.log", 0), 0u);
  }

  fs::path dir_;
  std::string prefix_;         // of the histogram logs
  fs::path summary_;           // the JSON summary
  std::string path_ = "auto";  // --nbd_path
  NbdServer server_;
};

// The tests that connect, once per data path.
class RunNbdStallPathTest : public RunNbdStallTest,
                            public ::testing::WithParamInterface<const char*> {
 protected:
  void SetUp() override {
    RunNbdStallTest::SetUp();
    path_ = GetParam();
  }
};

TEST_P(RunNbdStallPathTest, RuntimeEndsARunWhoseServerStoppedAnswering) {
  if (const std::string why = StartServer(kStalledReads); !why.empty()) GTEST_SKIP() << why;
  ChildProcess run;
  // Writes complete at once, reads never: the four slots soon hold reads that will not end.
  SpawnRandrw(run, "1s");
  const auto start = SteadyClock::now();
  ASSERT_TRUE(run.WaitFor(std::chrono::seconds(8))) << "still running after 8 s: " << Log();
  EXPECT_LT(Seconds(SteadyClock::now() - start).count(), 5.0);
  EXPECT_EQ(run.status(), 1) << Log();
  const std::string out = Log();
  EXPECT_NE(out.find("4 I/O(s) still in flight"), std::string::npos) << out;
  EXPECT_NE(out.find("ETIMEDOUT"), std::string::npos) << out;
  ExpectReadsGivenUp(summary_, prefix_);
}

TEST_P(RunNbdStallPathTest, RuntimeEndsARateLimitedRunWhoseServerStoppedAnswering) {
  if (const std::string why = StartServer(kStalledReads); !why.empty()) GTEST_SKIP() << why;
  ChildProcess run;
  Spawn(run, {"--ioengine=nbd", "--uri=" + server_.uri(), "--rw=randread", "--bs=4k", "--iodepth=4",
              "--rate_iops=100", "--runtime=1s", "--time_based", "--output-format=json",
              "--output=" + summary_.string()});
  ASSERT_TRUE(run.WaitFor(std::chrono::seconds(8))) << "still running after 8 s: " << Log();
  EXPECT_EQ(run.status(), 1) << Log();
  ExpectReadsGivenUp(summary_, "");
}

class RunNbdStallSignalTest : public RunNbdStallTest,
                              public ::testing::WithParamInterface<std::tuple<int, const char*>> {
 protected:
  void SetUp() override {
    RunNbdStallTest::SetUp();
    path_ = std::get<1>(GetParam());
  }
};

TEST_P(RunNbdStallSignalTest, SignalEndsARunWhoseServerStoppedAnswering) {
  if (const std::string why = StartServer(kStalledReads); !why.empty()) GTEST_SKIP() << why;
  const int sig = std::get<0>(GetParam());
  ChildProcess run;
  SpawnRandrw(run, "60s");
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));
  ASSERT_TRUE(run.Running()) << Log();
  run.Signal(sig);
  const auto signalled = SteadyClock::now();
  ASSERT_TRUE(run.WaitFor(std::chrono::seconds(6)))
      << "still running 6 s after the signal: " << Log();
  EXPECT_LT(Seconds(SteadyClock::now() - signalled).count(), 3.0);
  EXPECT_EQ(run.status(), 128 + sig) << Log();
  const std::string out = Log();
  EXPECT_NE(out.find(std::string("interrupted by SIG") + sigabbrev_np(sig)), std::string::npos)
      << out;
  EXPECT_NE(out.find("4 I/O(s) still in flight"), std::string::npos) << out;
  ExpectReadsGivenUp(summary_, prefix_);
  std::ifstream in(summary_);
  const json j = json::parse(in, nullptr, false);
  ASSERT_FALSE(j.is_discarded());
  EXPECT_EQ(j["iotail_run"]["interrupted"], true);
}

INSTANTIATE_TEST_SUITE_P(Signals, RunNbdStallSignalTest,
                         ::testing::Combine(::testing::Values(SIGINT, SIGTERM),
                                            ::testing::Values("libnbd", "direct")),
                         [](const auto& info) {
                           return std::string("SIG") + sigabbrev_np(std::get<0>(info.param)) + "_" +
                                  std::get<1>(info.param);
                         });

TEST_P(RunNbdStallPathTest, SignatureCheckOfAServerThatDoesNotAnswerReadsTimesOut) {
  // Writing needs the first MiB read for signatures first: that read is bounded too.
  if (const std::string why = StartServer(kStalledReads); !why.empty()) GTEST_SKIP() << why;
  ChildProcess run;
  Spawn(run, {"--ioengine=nbd", "--uri=" + server_.uri(), "--rw=randwrite", "--bs=4k", "--size=1m",
              "--nbd_timeout=1s"});
  ASSERT_TRUE(run.WaitFor(std::chrono::seconds(5))) << "still running after 5 s: " << Log();
  EXPECT_EQ(run.status(), 1) << Log();
  const std::string out = Log();
  EXPECT_NE(out.find("reading the first MiB of '" + server_.uri() + "'"), std::string::npos) << out;
  EXPECT_NE(out.find("--nbd_timeout"), std::string::npos) << out;
}

TEST_P(RunNbdStallPathTest, SilentServerTimesOutNamingTheUri) {
  for (const auto kind : {SilentListener::Kind::kUnix, SilentListener::Kind::kTcp}) {
    SilentListener listener(kind);
    ASSERT_FALSE(listener.uri().empty()) << std::strerror(errno);
    ChildProcess run;
    Spawn(run, {"--ioengine=nbd", "--uri=" + listener.uri(), "--rw=randread", "--bs=4k",
                "--size=1m", "--nbd_timeout=1s"});
    const auto start = SteadyClock::now();
    ASSERT_TRUE(run.WaitFor(std::chrono::seconds(5))) << "still running after 5 s: " << Log();
    EXPECT_LT(Seconds(SteadyClock::now() - start).count(), 3.0);
    EXPECT_EQ(run.status(), 1) << Log();
    const std::string out = Log();
    EXPECT_NE(out.find(listener.uri()), std::string::npos) << out;
    EXPECT_NE(out.find("--nbd_timeout"), std::string::npos) << out;
    fs::remove(log());
  }
}

TEST_P(RunNbdStallPathTest, SigintWhileConnectingToASilentServerExits130NamingTheUri) {
  SilentListener listener(SilentListener::Kind::kUnix);
  ASSERT_FALSE(listener.uri().empty()) << std::strerror(errno);
  ChildProcess run;
  Spawn(run,
        {"--ioengine=nbd", "--uri=" + listener.uri(), "--rw=randread", "--bs=4k", "--size=1m"});
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  ASSERT_TRUE(run.Running()) << Log();
  run.Signal(SIGINT);
  const auto signalled = SteadyClock::now();
  ASSERT_TRUE(run.WaitFor(std::chrono::seconds(3))) << "SIGINT ignored: " << Log();
  EXPECT_LT(Seconds(SteadyClock::now() - signalled).count(), 1.0);
  EXPECT_EQ(run.status(), 130) << Log();
  EXPECT_NE(Log().find(listener.uri()), std::string::npos) << Log();
}

INSTANTIATE_TEST_SUITE_P(Paths, RunNbdStallPathTest, ::testing::Values("libnbd", "direct"));

TEST_F(RunNbdStallTest, BlockSizeLargerThanTheExportSaysBoth) {
  if (const std::string why = StartServer("memory 1M"); !why.empty()) GTEST_SKIP() << why;
  const auto r = iotail::testing::RunIotail(
      "run --live_format=none --ioengine=nbd --uri='" + server_.uri() + "' --rw=read --bs=2m",
      dir_);
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("--bs"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("1048576"), std::string::npos) << r.err;  // the export's size
  EXPECT_NE(r.err.find("2097152"), std::string::npos) << r.err;  // the block size
  EXPECT_EQ(r.err.find("(0 bytes)"), std::string::npos) << r.err;
}

TEST_F(RunNbdStallTest, HipriSaysPolledIoNeedsABlockDeviceWithPollQueues) {
  // With the nbd engine: refused before connecting (no server needed).
  auto r = iotail::testing::RunIotail(
      "run --live_format=none --ioengine=nbd --uri=nbd://127.0.0.1:1/ --rw=read --bs=4k --hipri",
      dir_);
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("--hipri: only with --ioengine=pvsync2 or io_uring (not --ioengine=nbd)"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("polled I/O"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("block device with poll queues"), std::string::npos) << r.err;
  // On a regular file without O_DIRECT: every polled I/O would fail with EOPNOTSUPP.
  const fs::path file = dir_ / "f";
  std::ofstream(file).close();
  fs::resize_file(file, 1 << 20);
  r = iotail::testing::RunIotail("run --live_format=none --ioengine=io_uring --filename=" +
                                     file.string() + " --rw=read --bs=4k --hipri",
                                 dir_);
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("--hipri: polled I/O needs --direct=1"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("EOPNOTSUPP"), std::string::npos) << r.err;
}

TEST_F(RunNbdStallTest, HipriOnAFileTheKernelCannotPollSaysWhy) {
  // An NBD export as a file on FUSE, with O_DIRECT: the kernel refuses polled I/O on it.
  iotail::testing::NbdFuseMount mount;
  if (const std::string why = mount.Start("memory 64M"); !why.empty()) GTEST_SKIP() << why;
  const auto r = iotail::testing::RunIotail(
      "run --live_format=none --ioengine=io_uring --filename=" + mount.path().string() +
          " --rw=read --bs=4k --size=1m --direct=1 --hipri",
      dir_);
  if (r.status == 2 && r.err.find("not available") != std::string::npos) GTEST_SKIP() << r.err;
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("--hipri: the target refused polled I/O (EOPNOTSUPP)"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("block device with poll queues"), std::string::npos) << r.err;
}

}  // namespace run_nbd_stall_test
