// The nbd engine against a server that breaks the rules (tests/cli/nbd_misbehaving_server.h):
// - a server that sends its replies one byte every 50 ms after the 20th must not keep the run past
//   --runtime nor past a signal's grace: the run ends with its summary and --output, the stuck
//   I/Os counted as ETIMEDOUT (both data paths);
// - protocol violations (a duplicated reply, a reply to a handle never sent) are reported as what
//   they are (EPROTO, naming the handle), not as a lost connection, and the replies that came
//   before the violation, in the same receive too, are counted (the direct path: libnbd's own
//   checks are libnbd's);
// - an export of 2^63 bytes or more is refused naming its size;
// - a server's refusal message reaches the terminal printable (\xNN for control bytes).
// Each run is a child process with a bound: a run that hangs fails the test instead of hanging it.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "cli_test_util.h"
#include "nbd_fixture.h"
#include "nbd_misbehaving_server.h"

namespace run_nbd_misbehaving_test {

namespace fs = std::filesystem;
using iotail::testing::ChildProcess;
using iotail::testing::MisbehavingNbdServer;
using nlohmann::json;
using Seconds = std::chrono::duration<double>;
using SteadyClock = std::chrono::steady_clock;
using Config = MisbehavingNbdServer::Config;

// A server that misbehaves as `b` after `good_replies` replies.
Config Misbehaving(MisbehavingNbdServer::Behaviour b, uint32_t good_replies = 20) {
  Config c;
  c.behaviour = b;
  c.good_replies = good_replies;
  return c;
}

class RunNbdMisbehavingTest : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    dir_ = iotail::testing::MakeScratchDir("iotail_nbd_misbehaving");
    summary_ = dir_ / "summary.json";
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  // Starts `iotail run --ioengine=nbd --uri=URI --nbd_path=PATH ARGS` (JSON summary in summary_,
  // stdout and stderr in DIR/iotail.log).
  void Spawn(ChildProcess& run, const std::string& uri, const std::vector<std::string>& args) {
    std::vector<std::string> argv = {
        IOTAIL_BINARY,          "run",
        "--live_format=none",   "--ioengine=nbd",
        "--uri=" + uri,         std::string("--nbd_path=") + GetParam(),
        "--output-format=json", "--output=" + summary_.string()};
    argv.insert(argv.end(), args.begin(), args.end());
    ASSERT_EQ(run.Spawn(argv, dir_ / "iotail.log", SIGKILL), "");
  }
  // Runs it to its end (at most `bound` seconds): its exit status, or -1 if it was still running.
  int RunToEnd(const std::string& uri, const std::vector<std::string>& args, int bound = 10) {
    ChildProcess run;
    Spawn(run, uri, args);
    if (!run.WaitFor(std::chrono::seconds(bound))) return -1;
    return run.status();
  }
  std::string Log() const { return iotail::testing::ReadWholeFile(dir_ / "iotail.log"); }
  json Summary() const {
    std::ifstream in(summary_);
    return json::parse(in, nullptr, false);
  }

  fs::path dir_;
  fs::path summary_;
};

// The summary of a run stopped while the slow server's reply trickled in: the 20 good reads and the
// 4 stuck ones given up as ETIMEDOUT.
void ExpectStuckReadsGivenUp(const json& j, const std::string& log) {
  ASSERT_FALSE(j.is_discarded()) << "no JSON summary in --output: " << log;
  const json& job = j.at("jobs").at(0);
  EXPECT_EQ(job.at("read").at("total_ios").get<uint64_t>(), 20u) << log;
  EXPECT_EQ(job.at("iotail_errors").at("by_errno").value("ETIMEDOUT", 0), 4) << job.dump();
}

const std::vector<std::string> kDripJob = {"--rw=randread", "--bs=4k", "--iodepth=4",
                                           "--time_based"};

TEST_P(RunNbdMisbehavingTest, RuntimeEndsARunAgainstASlowDripServer) {
  MisbehavingNbdServer server(Misbehaving(MisbehavingNbdServer::kSlowDrip));
  ASSERT_EQ(server.Start(), "");
  std::vector<std::string> args = kDripJob;
  args.push_back("--runtime=2");
  const auto start = SteadyClock::now();
  const int status = RunToEnd(server.uri(), args, 8);
  ASSERT_NE(status, -1) << "still running 8 s after a run of --runtime=2: " << Log();
  EXPECT_LT(Seconds(SteadyClock::now() - start).count(), 8.0);
  EXPECT_EQ(status, 1) << Log();  // the I/Os given up are errors
  EXPECT_NE(Log().find("4 I/O(s) still in flight"), std::string::npos) << Log();
  ExpectStuckReadsGivenUp(Summary(), Log());
}

TEST_P(RunNbdMisbehavingTest, SignalEndsARunAgainstASlowDripServerWithinTheGrace) {
  for (const int sig : {SIGINT, SIGTERM}) {
    MisbehavingNbdServer server(Misbehaving(MisbehavingNbdServer::kSlowDrip));
    ASSERT_EQ(server.Start(), "");
    std::vector<std::string> args = kDripJob;
    args.push_back("--runtime=60");
    ChildProcess run;
    Spawn(run, server.uri(), args);
    // Until the drip has begun (the 21st reply), then a little into it.
    const auto deadline = SteadyClock::now() + std::chrono::seconds(5);
    while (server.replies() < 21 && SteadyClock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ASSERT_GE(server.replies(), 21u) << Log();
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    ASSERT_TRUE(run.Running()) << Log();
    run.Signal(sig);
    const auto signalled = SteadyClock::now();
    ASSERT_TRUE(run.WaitFor(std::chrono::seconds(8)))
        << "still running 8 s after SIG" << sigabbrev_np(sig) << ": " << Log();
    // The worker waits Worker::kStopGraceNs (1 s) for what is in flight, then gives it up.
    EXPECT_LT(Seconds(SteadyClock::now() - signalled).count(), 2.5) << Log();
    EXPECT_EQ(run.status(), 128 + sig) << Log();
    EXPECT_NE(Log().find(std::string("interrupted by SIG") + sigabbrev_np(sig)), std::string::npos)
        << Log();
    const json j = Summary();
    ExpectStuckReadsGivenUp(j, Log());
    if (!j.is_discarded()) {
      EXPECT_EQ(j["iotail_run"]["interrupted"], true);
    }
    fs::remove(dir_ / "iotail.log");
    fs::remove(summary_);
  }
}

TEST_P(RunNbdMisbehavingTest, ExportOfTwoToThe63BytesOrMoreIsRefusedNamingItsSize) {
  for (const uint64_t size : {uint64_t{1} << 63, ~uint64_t{0}}) {
    Config config;
    config.export_size = size;
    MisbehavingNbdServer server(config);
    ASSERT_EQ(server.Start(), "");
    const int status = RunToEnd(server.uri(), {"--rw=randread", "--bs=4k", "--runtime=1"});
    const std::string log = Log();
    EXPECT_EQ(status, 1) << log;
    EXPECT_EQ(log.find("string pointer is null"), std::string::npos) << log;
    EXPECT_NE(log.find(std::to_string(size)), std::string::npos) << log;
    EXPECT_NE(log.find("2^63"), std::string::npos) << log;
    fs::remove(dir_ / "iotail.log");
  }
}

TEST_P(RunNbdMisbehavingTest, RefusalTextReachesTheTerminalPrintable) {
  // The probe's connection (libnbd's on either path) and, on the direct path, the engine's own
  // handshake (the second connection).
  const std::vector<int> refused =
      std::string(GetParam()) == "direct" ? std::vector<int>{0, 1} : std::vector<int>{0};
  for (const int index : refused) {
    Config config;
    config.refuse_connection = index;
    config.refusal_text = "no entry\x1b[2J\x07\r\nroot# ";
    MisbehavingNbdServer server(config);
    ASSERT_EQ(server.Start(), "");
    const int status = RunToEnd(server.uri(), {"--rw=randread", "--bs=4k", "--runtime=1"});
    const std::string log = Log();
    EXPECT_EQ(status, 1) << log;
    EXPECT_EQ(log.find('\x1b'), std::string::npos) << "connection " << index << ": " << log;
    EXPECT_EQ(log.find('\x07'), std::string::npos) << "connection " << index << ": " << log;
    EXPECT_EQ(log.find('\r'), std::string::npos) << "connection " << index << ": " << log;
    if (log.find("no entry") != std::string::npos) {  // libnbd may not pass the text on
      EXPECT_NE(log.find("no entry\\x1b[2J\\x07\\x0d\\x0aroot# "), std::string::npos) << log;
    }
    fs::remove(dir_ / "iotail.log");
  }
}

INSTANTIATE_TEST_SUITE_P(Paths, RunNbdMisbehavingTest, ::testing::Values("libnbd", "direct"));

// The direct path's own reading of replies.
class RunNbdProtocolErrorTest : public RunNbdMisbehavingTest {};

TEST_P(RunNbdProtocolErrorTest, GoodRepliesBeforeAProtocolErrorInTheSameReceiveAreCounted) {
  MisbehavingNbdServer server(Misbehaving(MisbehavingNbdServer::kBatchThenDuplicate));
  ASSERT_EQ(server.Start(), "");
  const int status = RunToEnd(server.uri(), {"--rw=randread", "--bs=512", "--iodepth=20",
                                             "--iodepth_batch_submit=20", "--runtime=5"});
  const std::string log = Log();
  ASSERT_NE(status, -1) << log;
  EXPECT_EQ(status, 1) << log;
  const json j = Summary();
  ASSERT_FALSE(j.is_discarded()) << log;
  const json& job = j.at("jobs").at(0);
  EXPECT_EQ(job.at("read").at("total_ios").get<uint64_t>(), 20u) << log;
  EXPECT_GE(job.at("iotail_errors").at("by_errno").value("EPROTO", 0), 1) << job.dump();
}

TEST_P(RunNbdProtocolErrorTest, DuplicatedAndUnknownHandlesAreProtocolErrorsNotALostConnection) {
  struct Case {
    MisbehavingNbdServer::Behaviour behaviour;
    std::string says;
  };
  for (const Case& c : {Case{MisbehavingNbdServer::kDuplicateHandle, "a second reply to handle 0"},
                        Case{MisbehavingNbdServer::kUnknownHandle,
                             "a reply to handle 81985529216486895, which was never sent"}}) {
    MisbehavingNbdServer server(Misbehaving(c.behaviour, 5));
    ASSERT_EQ(server.Start(), "");
    const int status =
        RunToEnd(server.uri(), {"--rw=randread", "--bs=512", "--iodepth=1", "--runtime=5"});
    const std::string log = Log();
    ASSERT_NE(status, -1) << log;
    EXPECT_EQ(status, 1) << log;
    EXPECT_NE(log.find("broke the NBD protocol"), std::string::npos) << log;
    EXPECT_NE(log.find(c.says), std::string::npos) << log;
    EXPECT_NE(log.find("EPROTO"), std::string::npos) << log;
    EXPECT_EQ(log.find("was lost"), std::string::npos) << log;
    EXPECT_EQ(log.find("ENOTCONN"), std::string::npos) << log;
    const json j = Summary();
    ASSERT_FALSE(j.is_discarded()) << log;
    // The replies before the violation (and the first of a duplicated pair) are reads done.
    const uint64_t reads = j.at("jobs").at(0).at("read").at("total_ios").get<uint64_t>();
    EXPECT_EQ(reads, c.behaviour == MisbehavingNbdServer::kDuplicateHandle ? 6u : 5u) << log;
    fs::remove(dir_ / "iotail.log");
  }
}

INSTANTIATE_TEST_SUITE_P(Direct, RunNbdProtocolErrorTest, ::testing::Values("direct"));

}  // namespace run_nbd_misbehaving_test
