// End-to-end tests of trace replay (read_iolog, the replay_* options) and write_iolog: the
// iologs fio 3.33 writes replayed by iotail and iotail's replayed by fio with the same I/Os and
// bytes per direction, a timed trace replayed in the open loop on its clock (lateness in
// iotail_replay), and what is refused.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "tests/cli/cli_test_util.h"
#include "tests/cli/fio_semantics_fixture.h"
#include "tests/cli/nbd_fixture.h"
#include "tests/engine/replay/blktrace_dump.h"

namespace run_replay_test {

namespace fs = std::filesystem;
using iotail::testing::CommandResult;
using iotail::testing::HaveFio;
using iotail::testing::ReadFile;
using iotail::testing::RunShell;
using nlohmann::json;

// An iolog's I/O counts and bytes per direction.
struct LogCounts {
  uint64_t reads = 0, writes = 0, read_bytes = 0, write_bytes = 0;
};
LogCounts CountLog(const fs::path& p) {
  LogCounts c;
  std::ifstream in(p);
  std::string line;
  std::getline(in, line);  // the version line
  while (std::getline(in, line)) {
    std::istringstream ss(line);
    std::string t, file, act;
    uint64_t off = 0, len = 0;
    ss >> t >> file >> act >> off >> len;
    if (act == "read") {
      ++c.reads;
      c.read_bytes += len;
    } else if (act == "write") {
      ++c.writes;
      c.write_bytes += len;
    }
  }
  return c;
}

class RunReplayTest : public iotail::testing::ScratchDirTest {
 protected:
  std::string P(const std::string& name) const { return (dir_ / name).string(); }
  json Json(const std::string& path) { return json::parse(ReadFile(path)); }
};

TEST_F(RunReplayTest, IotailReplaysTheIologFio333WroteWithTheSameIosAndBytes) {
  if (!HaveFio()) GTEST_SKIP() << "fio not installed";
  const CommandResult fio = RunShell(
      "fio --name=w --filename=" + P("target") + " --size=2M --rw=randrw --bs=4k " +
          "--number_ios=300 --ioengine=psync --randseed=11 --write_iolog=" + P("fio.iolog") +
          " >/dev/null",
      dir_);
  ASSERT_EQ(fio.status, 0) << fio.err;
  const LogCounts want = CountLog(P("fio.iolog"));
  ASSERT_EQ(want.reads + want.writes, 300u);
  const CommandResult r = Iotail("run --name=r --read_iolog=" + P("fio.iolog") +
                                 " --output-format=json --output=" + P("out.json"));
  ASSERT_EQ(r.status, 0) << r.err;
  const json j = Json(P("out.json"));
  const json& job = j["jobs"][0];
  EXPECT_EQ(job["read"]["total_ios"].get<uint64_t>(), want.reads);
  EXPECT_EQ(job["write"]["total_ios"].get<uint64_t>(), want.writes);
  EXPECT_EQ(job["read"]["io_bytes"].get<uint64_t>(), want.read_bytes);
  EXPECT_EQ(job["write"]["io_bytes"].get<uint64_t>(), want.write_bytes);
  EXPECT_EQ(j["iotail_replay"]["trace_ios"].get<uint64_t>(), 300u);
  EXPECT_EQ(j["iotail_replay"]["issued"].get<uint64_t>(), 300u);
  EXPECT_EQ(j["iotail_replay"]["lateness_ns"]["N"].get<uint64_t>(), 300u);
  EXPECT_TRUE(j["iotail_replay"]["lateness_ns"].contains("percentile"));
}

TEST_F(RunReplayTest, Fio333ReplaysTheIologIotailWroteWithTheSameIosAndBytes) {
  if (!HaveFio()) GTEST_SKIP() << "fio not installed";
  const CommandResult r =
      Iotail("run --name=w --filename=" + P("target") +
             " --size=2M --rw=randrw --bs=4k --number_ios=300 "
             "--ioengine=psync --write_iolog=" +
             P("iotail.iolog") + " --output-format=json --output=" + P("w.json"));
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string log = ReadFile(P("iotail.iolog"));
  ASSERT_EQ(log.rfind("fio version 3 iolog\n", 0), 0u) << log.substr(0, 200);
  EXPECT_NE(log.find(" " + P("target") + " add\n"), std::string::npos);
  EXPECT_NE(log.find(" " + P("target") + " open\n"), std::string::npos);
  EXPECT_NE(log.find(" " + P("target") + " close\n"), std::string::npos);
  const LogCounts want = CountLog(P("iotail.iolog"));
  const json w = Json(P("w.json"));
  EXPECT_EQ(want.reads, w["jobs"][0]["read"]["total_ios"].get<uint64_t>());
  EXPECT_EQ(want.writes, w["jobs"][0]["write"]["total_ios"].get<uint64_t>());
  const CommandResult fio =
      RunShell("fio --name=r --read_iolog=" + P("iotail.iolog") +
                   " --ioengine=psync --output-format=json --output=" + P("fio.json"),
               dir_);
  ASSERT_EQ(fio.status, 0) << fio.err;
  const json f = Json(P("fio.json"));
  EXPECT_EQ(f["jobs"][0]["read"]["total_ios"].get<uint64_t>(), want.reads);
  EXPECT_EQ(f["jobs"][0]["write"]["total_ios"].get<uint64_t>(), want.writes);
  EXPECT_EQ(f["jobs"][0]["read"]["io_bytes"].get<uint64_t>(), want.read_bytes);
  EXPECT_EQ(f["jobs"][0]["write"]["io_bytes"].get<uint64_t>(), want.write_bytes);
}

// A v3 trace of 2,000 reads at 5,000/s (0.4 s): replayed on its clock, every I/O done, the
// runtime the trace's span, and lateness reported. The 20,000-read figure with bursts is
// scripts/bench-replay.sh's.
TEST_F(RunReplayTest, ATimedTraceReplaysOnItsClockWithLatenessReported) {
  {
    std::ofstream t(P("trace.iolog"));
    t << "fio version 3 iolog\n0 " << P("target") << " add\n0 " << P("target") << " open\n";
    for (int i = 0; i < 2000; ++i)
      t << 200 * i << " " << P("target") << " read " << (i % 256) * 4096 << " 4096\n";
  }
  std::ofstream(P("target")).close();
  fs::resize_file(P("target"), 1 << 20);
  const CommandResult r = Iotail("run --name=r --read_iolog=" + P("trace.iolog") +
                                 " --iodepth=8 --ioengine=io_uring --output-format=json "
                                 "--output=" +
                                 P("out.json"));
  ASSERT_EQ(r.status, 0) << r.err;
  const json j = Json(P("out.json"));
  const json& rep = j["iotail_replay"];
  EXPECT_EQ(j["jobs"][0]["read"]["total_ios"].get<uint64_t>(), 2000u);
  EXPECT_EQ(rep["trace_span_ns"].get<uint64_t>(), 1999u * 200'000);
  EXPECT_NEAR(rep["trace_iops"].get<double>(), 2000 / 0.3998, 1);
  // On its clock: not faster than the trace, and (on a shared CI machine, whose load delays
  // wake-ups) not far slower; the 2% figure is scripts/bench-replay.sh's, measured alone.
  const double runtime_s = j["jobs"][0]["read"]["runtime"].get<double>() / 1e3;
  EXPECT_GE(runtime_s, 0.399);
  EXPECT_LE(runtime_s, 0.5);
  EXPECT_EQ(rep["lateness_ns"]["N"].get<uint64_t>(), 2000u);
  EXPECT_TRUE(rep["lateness_ns"]["percentile"].contains("99.000000"));
  // Latency from the intended times (iotail_olat_ns) as well as fio's clat.
  EXPECT_EQ(j["jobs"][0]["read"]["iotail_olat_ns"]["N"].get<uint64_t>(), 2000u);
  const CommandResult text = Iotail("run --name=r --read_iolog=" + P("trace.iolog") +
                                    " --replay_time_scale=400 --live_format=json");
  ASSERT_EQ(text.status, 0) << text.err;
  EXPECT_NE(text.out.find("replay of " + P("trace.iolog")), std::string::npos) << text.out;
  EXPECT_NE(text.err.find("\"lateness_p99_ns\""), std::string::npos) << text.err;
  EXPECT_NE(text.out.find("lateness (issue - intended, usec)"), std::string::npos) << text.out;
}

// Replayed at 4x onto an export that cannot keep up (nbdkit's delay filter: 2 ms a read, 4 in
// flight: at most 2,000 reads/s against the trace's 20,000/s at 4x): every I/O done, the replay
// says it fell behind and by how much, and latency counts from the intended times.
TEST_F(RunReplayTest, ATargetThatCannotKeepUpIsReportedBehindAndLosesNoIo) {
  iotail::testing::NbdServer server;
  if (const std::string why = server.Start("--filter=delay memory 64M rdelay=2ms"); !why.empty())
    GTEST_SKIP() << why;
  {
    std::ofstream t(P("trace.iolog"));
    t << "fio version 3 iolog\n0 /dev/sdq add\n";
    for (int i = 0; i < 400; ++i) t << 200 * i << " /dev/sdq read " << i * 4096 << " 4096\n";
  }
  const CommandResult r = Iotail("run --name=r --ioengine=nbd --uri='" + server.uri() +
                                 "' --read_iolog=" + P("trace.iolog") +
                                 " --replay_time_scale=400 --iodepth=4 --live_format=none " +
                                 "--output-format=json --output=" + P("o.json"));
  ASSERT_EQ(r.status, 0) << r.err;
  const json j = Json(P("o.json"));
  const json& rep = j["iotail_replay"];
  const json& rd = j["jobs"][0]["read"];
  EXPECT_EQ(rd["total_ios"].get<uint64_t>(), 400u);
  EXPECT_EQ(rep["trace_span_ns"].get<uint64_t>(), 399u * 200'000 / 4);
  EXPECT_TRUE(rep["behind"].get<bool>());
  EXPECT_GT(rep["max_behind_ns"].get<uint64_t>(), 50'000'000u);  // ~180 ms at 2,000/s
  EXPECT_LT(rep["achieved_iops"].get<double>(), rep["trace_iops"].get<double>() / 4);
  const double olat_p99 = rd["iotail_olat_ns"]["percentile"]["99.000000"].get<double>();
  const double clat_p99 = rd["clat_ns"]["percentile"]["99.000000"].get<double>();
  EXPECT_GT(olat_p99, 10 * clat_p99) << "latency from the intended times shows the backlog";
}

TEST_F(RunReplayTest, ReplayOptionsKeepFiosMeaning) {
  // replay_scale divides, replay_align rounds down, replay_skip leaves a direction out,
  // replay_redirect puts everything on one target.
  {
    std::ofstream t(P("t.iolog"));
    t << "fio version 2 iolog\nA add\nB add\nA open\nB open\nA write 1048576 4096\n"
         "B read 40960 4096\nA read 12288 4096\nA close\nB close\n";
  }
  const CommandResult ok =
      Iotail("run --name=r --read_iolog=" + P("t.iolog") + " --replay_redirect=" + P("one") +
             " --replay_scale=2 --replay_align=16k --replay_skip=write "
             "--size=1M --output-format=json --output=" +
             P("o.json"));
  ASSERT_EQ(ok.status, 0) << ok.err;
  const json j = Json(P("o.json"));
  EXPECT_EQ(j["jobs"][0]["read"]["total_ios"].get<uint64_t>(), 2u);
  EXPECT_EQ(j["jobs"][0]["write"]["total_ios"].get<uint64_t>(), 0u);
  EXPECT_EQ(j["iotail_replay"]["trace_span_ns"].get<uint64_t>(), 0u);  // v2: untimed
  EXPECT_TRUE(fs::exists(P("one")));
  EXPECT_FALSE(fs::exists(dir_ / "A"));
}

TEST_F(RunReplayTest, ReplayMapPutsEachTraceFileOnItsOwnTargetInOneTimeOrder) {
  {
    std::ofstream t(P("t.iolog"));
    t << "fio version 3 iolog\n0 /dev/sdx add\n0 /dev/sdy add\n10 /dev/sdx write 0 4096\n"
         "20 /dev/sdy write 65536 4096\n30 /dev/sdx write 8192 4096\n";
  }
  const CommandResult r =
      Iotail("run --name=r --read_iolog=" + P("t.iolog") + " --replay_map=/dev/sdx=" + P("x") +
             ",/dev/sdy=" + P("y") + " --output-format=json --output=" + P("o.json"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(Json(P("o.json"))["jobs"][0]["write"]["total_ios"].get<uint64_t>(), 3u);
  EXPECT_TRUE(fs::exists(P("x")));
  EXPECT_TRUE(fs::exists(P("y")));
  const CommandResult missing =
      Iotail("run --name=r --read_iolog=" + P("t.iolog") + " --replay_map=/dev/sdx=" + P("x"));
  EXPECT_EQ(missing.status, 2);
  EXPECT_NE(missing.err.find("the trace's file '/dev/sdy' has no target"), std::string::npos)
      << missing.err;
}

// A blktrace dump (blkparse -d) and a gzip-compressed iolog go through the same replay: the
// dump's devices, named MAJOR,MINOR, need a target from the user.
TEST_F(RunReplayTest, BlktraceDumpsAndCompressedIologsReplay) {
  using namespace iotail::testing;  // NOLINT: the dump builders
  std::vector<BtRecord> recs;
  for (int i = 0; i < 50; ++i) {
    recs.push_back(Rec(i * 100'000ull, Act(kQueue, kTcQueue | kTcRead), i * 8ull, 4096));
    recs.push_back(
        Rec(i * 100'000ull, Act(kQueue, kTcQueue | kTcWrite), 4096 + i * 8ull, 4096, Dev(8, 32)));
  }
  std::ofstream(P("d.bin"), std::ios::binary) << EncodeAll(recs, ByteOrder::kLittle);
  const CommandResult unnamed = Iotail("run --name=r --read_iolog=" + P("d.bin"));
  EXPECT_EQ(unnamed.status, 2);
  EXPECT_NE(unnamed.err.find("names its devices by number (8,16 8,32)"), std::string::npos)
      << unnamed.err;
  const CommandResult r =
      Iotail("run --name=r --read_iolog=" + P("d.bin") + " --replay_map=8,16=" + P("a") +
             ",8,32=" + P("b") + " --output-format=json --output=" + P("o.json"));
  ASSERT_EQ(r.status, 0) << r.err;
  json j = Json(P("o.json"));
  EXPECT_EQ(j["jobs"][0]["read"]["total_ios"].get<uint64_t>(), 50u);
  EXPECT_EQ(j["jobs"][0]["write"]["total_ios"].get<uint64_t>(), 50u);
  EXPECT_EQ(j["iotail_replay"]["trace_span_ns"].get<uint64_t>(), 49u * 100'000);
  EXPECT_TRUE(fs::exists(P("b")));

  {
    std::ofstream t(P("t.iolog"));
    t << "fio version 3 iolog\n0 " << P("g") << " add\n";
    for (int i = 0; i < 30; ++i) t << i * 10 << " " << P("g") << " read " << i * 4096 << " 4096\n";
  }
  if (RunShell("gzip -k " + P("t.iolog"), dir_).status != 0) GTEST_SKIP() << "no gzip";
  const CommandResult gz = Iotail("run --name=r --read_iolog=" + P("t.iolog.gz") +
                                  " --output-format=json --output=" + P("g.json"));
  ASSERT_EQ(gz.status, 0) << gz.err;
  EXPECT_EQ(Json(P("g.json"))["jobs"][0]["read"]["total_ios"].get<uint64_t>(), 30u);
}

TEST_F(RunReplayTest, WhatAReplayCannotHonourIsRefused) {
  {
    std::ofstream t(P("t.iolog"));
    t << "fio version 3 iolog\n0 " << P("f") << " add\n5 " << P("f") << " read 0 4096\n";
    std::ofstream bad(P("bad.iolog"));
    bad << "fio version 3 iolog\n0 f add\n7 f fly 0 4096\n";
    std::ofstream blk(P("blk.bin"), std::ios::binary);
    blk.write("\x07\x74\x61\x65", 4);
  }
  iotail::testing::ExpectRefused(
      {{"--name=r --read_iolog=" + P("t.iolog") + " --rate_iops=100",
        "--rate_iops with --read_iolog"},
       {"--name=r --read_iolog=" + P("t.iolog") + " --filename=x", "--replay_redirect"},
       {"--name=r --read_iolog=" + P("t.iolog") + " --replay_align=3k", "not a power of 2"},
       {"--name=r --read_iolog=" + P("t.iolog") + " --replay_skip=reads", "'reads' is not"},
       {"--name=r --filename=x --size=1M --replay_scale=2", "--replay_scale: only with"},
       {"--name=r --filename=x --size=1M --numjobs=2 --write_iolog=" + P("w.log"),
        "--write_iolog with --numjobs"},
       {"--name=r --read_iolog=" + P("t.iolog") + " --write_iolog=" + P("w.log"),
        "--write_iolog with --read_iolog"}},
      dir_);
  const CommandResult bad = Iotail("run --name=r --read_iolog=" + P("bad.iolog"));
  EXPECT_NE(bad.status, 0);
  EXPECT_NE(bad.err.find("bad.iolog:3: 'fly'"), std::string::npos) << bad.err;
  const CommandResult blk = Iotail("run --name=r --read_iolog=" + P("blk.bin"));
  EXPECT_NE(blk.status, 0);
  EXPECT_NE(blk.err.find("blk.bin"), std::string::npos) << blk.err;  // a truncated record
}

TEST_F(RunReplayTest, WriteIologRefusesASymlink) {
  fs::create_symlink(P("elsewhere"), P("link.log"));
  const CommandResult r = Iotail("run --name=w --filename=" + P("t") +
                                 " --size=64k --number_ios=4 --write_iolog=" + P("link.log"));
  EXPECT_NE(r.status, 0);
  EXPECT_FALSE(fs::exists(P("elsewhere")));
}

}  // namespace run_replay_test
