// The reader held against the real tools on dumps built byte by byte, in both byte orders:
// blkparse (1.2) merges a per-CPU file into a `-d` dump the reader reads as the same I/Os, and
// fio 3.33 replaying each file issues the I/O count and bytes the reader yields.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "engine/replay/blktrace_reader.h"
#include "engine/replay/compressed_source.h"
#include "tests/cli/cli_test_util.h"
#include "tests/engine/replay/blktrace_dump.h"
#include "tests/engine/replay/replay_counts.h"

namespace iotail::engine::replay {
namespace blktrace_tools_test {

namespace fs = std::filesystem;
namespace tc = iotail::testing;
using tc::Act;
using tc::ByteOrder;

std::vector<TraceEvent> ReadFileEvents(const fs::path& path) {
  return tc::AllEvents(*MakeBlktraceReader(OpenByteSource(path.string())));
}

// Reads, writes, a flush, a zero-length read and a process notification on 8,16 (no trims: fio
// trims a regular file with BLKDISCARD, which fails).
std::vector<tc::BtRecord> Workload() {
  constexpr uint32_t kW = tc::kTcWrite | tc::kTcSync | tc::kTcQueue;
  constexpr uint32_t kR = tc::kTcRead | tc::kTcQueue;
  return {
      tc::Rec(1000, Act(tc::kQueue, kW), 8, 4096),
      tc::Rec(2000, Act(tc::kIssue, tc::kTcWrite), 8, 4096),
      tc::Rec(9000, Act(tc::kComplete, tc::kTcWrite), 8, 4096),
      tc::Rec(30000, Act(tc::kQueue, kR), 64, 8192),
      tc::WithPdu(tc::Rec(31000, tc::kNotifyProcess), std::string("fio\0\0\0\0\0", 8)),
      tc::Rec(32000, Act(tc::kIssue, tc::kTcRead), 64, 8192),
      tc::Rec(40000, Act(tc::kComplete, tc::kTcRead), 64, 8192),
      tc::Rec(50000, Act(tc::kQueue, tc::kTcFlush | tc::kTcWrite | tc::kTcSync)),
      tc::Rec(51000, Act(tc::kIssue, tc::kTcFlush)),
      tc::Rec(55000, Act(tc::kComplete, tc::kTcFlush)),
      tc::Rec(60000, Act(tc::kQueue, kR), 100, 0),
      tc::Rec(70000, Act(tc::kQueue, kW), 2048, 16384),
      tc::Rec(71000, Act(tc::kIssue, tc::kTcWrite), 2048, 16384),
      tc::Rec(80000, Act(tc::kComplete, tc::kTcWrite), 2048, 16384),
      tc::Rec(90000, Act(tc::kQueue, kR), 4096, 4096),
  };
}

class BlktraceToolsTest : public ::testing::TestWithParam<ByteOrder> {
 protected:
  void SetUp() override {
    for (const char* tool : {"blkparse", "fio"}) {
      if (tc::Capture(std::string("command -v ") + tool).status != 0) {
        GTEST_SKIP() << tool << " is not installed (scripts/setup.sh installs it)";
      }
    }
    dir_ = tc::MakeScratchDir("iotail_blktrace_tools");
    const auto made = tc::RunShell("truncate -s 4M " + (dir_ / "target.img").string(), dir_);
    ASSERT_EQ(made.status, 0) << made.err;
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  fs::path dir_;
};

TEST_P(BlktraceToolsTest, BlkparseAndFioAgreeWithTheReader) {
  const fs::path per_cpu = dir_ / "hand.blktrace.0";
  std::ofstream(per_cpu, std::ios::binary) << tc::EncodeAll(Workload(), GetParam());
  const std::vector<TraceEvent> direct = ReadFileEvents(per_cpu);
  ASSERT_EQ(direct.size(), 5u);
  const tc::ReplayCounts want{
      .reads = 2, .read_bytes = 8192 + 4096, .writes = 2, .write_bytes = 4096 + 16384, .syncs = 1};
  EXPECT_EQ(tc::CountEvents(direct), want);

  // blkparse merges the per-CPU file into one dump (its times start at 0).
  const auto parsed =
      tc::RunShell("cd " + dir_.string() + " && blkparse -i hand -d dump.bin > blkparse.txt", dir_);
  ASSERT_EQ(parsed.status, 0) << parsed.err;
  EXPECT_TRUE(tc::ContainsAll(tc::ReadFile(dir_ / "blkparse.txt"),
                              {"Q  WS 8 + 8", "Q   R 64 + 16", "Q FWS", "C   W 2048 + 32"}))
      << tc::ReadFile(dir_ / "blkparse.txt");
  const std::vector<TraceEvent> dumped = ReadFileEvents(dir_ / "dump.bin");
  ASSERT_EQ(dumped.size(), direct.size());
  for (size_t i = 0; i < direct.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(dumped[i].op, direct[i].op);
    EXPECT_EQ(dumped[i].offset, direct[i].offset);
    EXPECT_EQ(dumped[i].length, direct[i].length);
    EXPECT_EQ(dumped[i].time_ns, direct[i].time_ns);
    EXPECT_EQ(dumped[i].recorded_ns, direct[i].recorded_ns);
  }
  EXPECT_EQ(direct[4].time_ns, 89000u);
  EXPECT_EQ(direct[1].recorded_ns, 8000u);

  // fio replays the per-CPU file and the dump with the same I/Os.
  for (const fs::path& trace : {per_cpu, dir_ / "dump.bin"}) {
    SCOPED_TRACE(trace.filename().string());
    EXPECT_EQ(tc::FioReplayCounts(trace, dir_ / "target.img", dir_), want);
  }
}

// How OpenTrace tells and opens a blktrace dump, compressed or not: the decompressed first bytes
// say blktrace, and the reader reads the same I/Os from the peeked source.
TEST_P(BlktraceToolsTest, CompressedDumpIsToldAndReadTheSame) {
  std::ofstream(dir_ / "dump.bin", std::ios::binary) << tc::EncodeAll(Workload(), GetParam());
  const auto packed = tc::RunShell(
      "cd " + dir_.string() + " && gzip -k dump.bin && zstd -q dump.bin -o dump.bin.zst", dir_);
  ASSERT_EQ(packed.status, 0) << packed.err;
  const std::vector<TraceEvent> plain = ReadFileEvents(dir_ / "dump.bin");
  for (const char* name : {"dump.bin", "dump.bin.gz", "dump.bin.zst"}) {
    SCOPED_TRACE(name);
    auto source = std::make_unique<PeekableSource>(OpenByteSource((dir_ / name).string()));
    ASSERT_TRUE(LooksLikeBlktrace(source->Peek(kBlktraceRecordBytes)));
    const std::vector<TraceEvent> events = tc::AllEvents(*MakeBlktraceReader(std::move(source)));
    ASSERT_EQ(events.size(), plain.size());
    for (size_t i = 0; i < events.size(); ++i) {
      EXPECT_EQ(events[i].offset, plain[i].offset);
      EXPECT_EQ(events[i].length, plain[i].length);
      EXPECT_EQ(events[i].op, plain[i].op);
      EXPECT_EQ(events[i].time_ns, plain[i].time_ns);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(ByteOrders, BlktraceToolsTest,
                         ::testing::Values(ByteOrder::kLittle, ByteOrder::kBig),
                         [](const auto& info) {
                           return info.param == ByteOrder::kLittle ? "Little" : "Big";
                         });

}  // namespace blktrace_tools_test
}  // namespace iotail::engine::replay
