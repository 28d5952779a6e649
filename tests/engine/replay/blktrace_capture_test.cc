// A real blktrace: a known sequence of direct I/Os on a loop device over a temporary file, traced
// by the kernel (blktrace, or ftrace's blk tracer where lockdown forbids blktrace's relay files),
// merged by `blkparse -d`; the reader yields exactly those I/Os, each with its dispatch-to-complete
// time, and fio 3.33 replaying the dump onto another loop device issues the same I/Os and bytes.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "engine/replay/blktrace_reader.h"
#include "engine/replay/compressed_source.h"
#include "tests/cli/cli_test_util.h"
#include "tests/engine/explain_fixture.h"
#include "tests/engine/replay/block_trace_capture.h"
#include "tests/engine/replay/replay_counts.h"

namespace iotail::engine::replay {
namespace blktrace_capture_test {

namespace fs = std::filesystem;
namespace tc = iotail::testing;

struct Io {
  TraceOp op;
  uint64_t offset;
  uint32_t length;
};

// Reads, writes of several sizes, a discard and a flush, one at a time.
const std::vector<Io> kPattern = {
    {TraceOp::kWrite, 0, 4096},      {TraceOp::kWrite, 65536, 8192},
    {TraceOp::kRead, 4096, 4096},    {TraceOp::kWrite, 1 << 20, 16384},
    {TraceOp::kRead, 65536, 12288},  {TraceOp::kTrim, 2 << 20, 65536},
    {TraceOp::kRead, 3 << 20, 4096}, {TraceOp::kWrite, (3 << 20) + 8192, 32768},
    {TraceOp::kSync, 0, 0},          {TraceOp::kRead, 0, 65536},
};

// Issues kPattern on `device` with O_DIRECT; empty, or what failed.
std::string IssuePattern(const std::string& device) {
  const int fd = ::open(device.c_str(), O_RDWR | O_DIRECT);
  if (fd < 0) return "open " + device + ": " + std::strerror(errno);
  void* buf = nullptr;
  if (::posix_memalign(&buf, 4096, 65536) != 0) return "posix_memalign";
  std::memset(buf, 0x5a, 65536);
  std::string error;
  for (const Io& io : kPattern) {
    const auto off = static_cast<off_t>(io.offset);
    ssize_t done = io.length;
    if (io.op == TraceOp::kWrite) done = ::pwrite(fd, buf, io.length, off);
    if (io.op == TraceOp::kRead) done = ::pread(fd, buf, io.length, off);
    if (io.op == TraceOp::kTrim) {
      uint64_t range[2] = {io.offset, io.length};
      done = ::ioctl(fd, BLKDISCARD, range) == 0 ? io.length : -1;
    }
    if (io.op == TraceOp::kSync) done = ::fdatasync(fd) == 0 ? 0 : -1;
    if (done != static_cast<ssize_t>(io.length)) {
      error = "I/O at " + std::to_string(io.offset) + ": " + std::strerror(errno);
      break;
    }
  }
  std::free(buf);
  ::close(fd);
  return error;
}

class BlktraceCaptureTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root (losetup, blktrace)";
    for (const char* tool : {"blkparse", "fio"}) {
      if (tc::Capture(std::string("command -v ") + tool).status != 0) {
        GTEST_SKIP() << tool << " is not installed (scripts/setup.sh installs it)";
      }
    }
    dir_ = tc::MakeScratchDir("iotail_blktrace_capture");
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  fs::path dir_;
};

TEST_F(BlktraceCaptureTest, LoopDeviceTraceYieldsItsIosAndFioReplaysTheSame) {
  tc::LoopDevice traced;
  tc::LoopDevice replay_target;
  for (tc::LoopDevice* loop : {&traced, &replay_target}) {
    if (const std::string why = loop->AttachNewFile(8 << 20); !why.empty()) GTEST_SKIP() << why;
  }
  tc::RunShell("udevadm settle 2>/dev/null", dir_);
  std::string trouble;
  {
    tc::BlockTraceCapture capture;
    if (const std::string why = capture.Start(traced.path(), dir_); !why.empty()) {
      GTEST_SKIP() << "cannot trace " << traced.path() << ": " << why;
    }
    trouble = IssuePattern(traced.path());
    const std::string stopped = capture.Stop();
    ASSERT_EQ(stopped, "");
    std::cout << "traced " << traced.path() << " with " << capture.method() << "\n";
  }
  ASSERT_EQ(trouble, "");
  const auto parsed = tc::RunShell(
      "cd " + dir_.string() + " && blkparse -i trace -d dump.bin > blkparse.txt", dir_);
  ASSERT_EQ(parsed.status, 0) << parsed.err << tc::RunShell("ls -l " + dir_.string(), dir_).out;

  auto reader = MakeBlktraceReader(OpenByteSource((dir_ / "dump.bin").string()));
  const std::vector<TraceEvent> events = tc::AllEvents(*reader, 8);

  const std::string blkparse_text = tc::ReadFile(dir_ / "blkparse.txt");
  ASSERT_EQ(events.size(), kPattern.size()) << blkparse_text;
  uint64_t previous = 0;
  for (size_t i = 0; i < kPattern.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(events[i].op, kPattern[i].op);
    EXPECT_EQ(events[i].offset, kPattern[i].offset);
    EXPECT_EQ(events[i].length, kPattern[i].length);
    EXPECT_EQ(events[i].device, 0u);
    EXPECT_GE(events[i].time_ns, previous);
    previous = events[i].time_ns;
    // Each I/O was dispatched and completed while traced.
    EXPECT_GT(events[i].recorded_ns, 0u) << blkparse_text;
    EXPECT_LT(events[i].recorded_ns, 5'000'000'000u);
  }
  const std::string dev =
      std::to_string(major(traced.rdev())) + "," + std::to_string(minor(traced.rdev()));
  EXPECT_EQ(reader->devices(), std::vector<std::string>{dev});
  EXPECT_EQ(CountsOf(*reader).matched, kPattern.size());
  EXPECT_GT(reader->skipped(), 0u);

  // fio replays the dump onto the other loop device with the same I/Os and bytes.
  const tc::ReplayCounts ours = tc::CountEvents(events);
  EXPECT_EQ(ours, (tc::ReplayCounts{.reads = 4,
                                    .read_bytes = 4096 + 12288 + 4096 + 65536,
                                    .writes = 4,
                                    .write_bytes = 4096 + 8192 + 16384 + 32768,
                                    .trims = 1,
                                    .trim_bytes = 65536,
                                    .syncs = 1}));
  EXPECT_EQ(tc::FioReplayCounts(dir_ / "dump.bin", replay_target.path(), dir_), ours);
}

}  // namespace blktrace_capture_test
}  // namespace iotail::engine::replay
