// BlockTracer on loop devices: its request table holds exactly the requests of its devices (count,
// sectors, direction, times within the reads' CLOCK_MONOTONIC stamps), nothing of another busy
// device, the same through plain tracepoints, a device of known latency as that latency, and every
// request either taken or counted as no I/O's. Root, BTF and
// the right to load BPF are needed: without them each test is skipped with the tracer's reason.
#include "engine/explain/block_tracer.h"

#include <gtest/gtest.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <filesystem>
#include <set>
#include <thread>
#include <tuple>

#include "engine/explain/tracepoint_format.h"
#include "tests/cli/nbd_fixture.h"
#include "tests/engine/explain_fixture.h"

namespace iotail::testing {
namespace block_tracer_test {

using engine::BlockOp;
using engine::BlockTracer;
using engine::TracerAttach;

// Reads at known offsets on device A while `dd` reads device B: A's tracer sees exactly A's reads,
// with times inside each read's own stamps (bpf_ktime_get_ns is CLOCK_MONOTONIC), and nothing of
// dd's 2000 direct reads of B.
void ExpectExactlyOwnReads(TracerAttach attach) {
  LoopDevice a, b;
  if (std::string why = a.AttachNewFile(16 << 20); !why.empty()) GTEST_SKIP() << why;
  if (std::string why = b.AttachNewFile(16 << 20); !why.empty()) GTEST_SKIP() << why;
  std::unique_ptr<BlockTracer> tracer_a;
  const dev_t dev_a = a.rdev();
  IOTAIL_OPEN_TRACER_OR_SKIP(tracer_a, std::span(&dev_a, 1), 0, {.attach = attach});
  EXPECT_STREQ(tracer_a->Attachment(),
               attach == TracerAttach::kTyped ? "typed raw tracepoints" : "tracepoints");

  std::pair<int, std::string> dd;
  std::thread other(
      [&] { dd = RunShell("dd if=" + b.path() + " of=/dev/null bs=4k count=2000 iflag=direct"); });
  const std::vector<uint64_t> offsets = {4096, 1 << 20, 12288, 8 << 20, 15 << 20};
  std::vector<TracedRead> reads;
  for (int pass = 0; pass < 20; ++pass) {  // spread over dd's run
    const auto some = TracedReads(*tracer_a, a.path(), dev_a, {offsets[pass % offsets.size()]});
    reads.insert(reads.end(), some.begin(), some.end());
  }
  other.join();
  ASSERT_EQ(dd.first, 0) << dd.second;
  ASSERT_NE(dd.second.find("2000+0 records in"), std::string::npos) << dd.second;
  EXPECT_EQ(tracer_a->Counters().missed, 0u);

  ASSERT_EQ(reads.size(), 20u);
  for (size_t i = 0; i < reads.size(); ++i) {
    const StampedRead& read = reads[i].read;
    SCOPED_TRACE("read " + std::to_string(i) + " at " + std::to_string(read.offset));
    ASSERT_TRUE(reads[i].request.has_value());
    const engine::BlockRequestEvent& e = *reads[i].request;
    EXPECT_EQ(e.dev, dev_a);
    EXPECT_EQ(e.sector, read.offset / 512);
    EXPECT_EQ(e.nr_sector, 8u);
    EXPECT_EQ(e.op, BlockOp::kRead);
    EXPECT_EQ(e.error, 0);
    EXPECT_FALSE(e.partial);
    EXPECT_FALSE(e.ambiguous);
    EXPECT_GT(e.issue_ns, 0u);
    EXPECT_LE(read.before_ns, e.entered_ns);
    EXPECT_LE(e.entered_ns, e.issue_ns);
    EXPECT_LE(e.issue_ns, e.complete_ns);
    EXPECT_LE(e.complete_ns, read.after_ns);
  }
  // Exactly A's 20 requests were written, each taken by its read: dd's 2000 left nothing.
  const engine::TraceCounters counters = tracer_a->Counters();
  EXPECT_EQ(counters.block_records, reads.size());
  EXPECT_EQ(counters.block_unmatched, 0u);
  EXPECT_EQ(tracer_a->Requests().Untaken(), 0u);
}

TEST(BlockTracerTest, TypedSeesExactlyItsDevicesReadsWhileAnotherDeviceIsBusy) {
  ExpectExactlyOwnReads(TracerAttach::kTyped);
}

// A disk that keeps no I/O statistics and has no scheduler: its requests carry no allocation time,
// so the typed programs attach their insert hook and each request's entry is its insert, else its
// issue: still inside the read's stamps, before the issue.
TEST(BlockTracerTest, WithoutIoStatisticsTheEntryIsTheInsertOrTheIssue) {
  LoopDevice loop;
  if (std::string why = loop.AttachNewFile(16 << 20); !why.empty()) GTEST_SKIP() << why;
  const std::string iostats =
      "/sys/block/" + std::filesystem::path(loop.path()).filename().string() + "/queue/iostats";
  if (RunShell("echo 0 > " + iostats).first != 0) GTEST_SKIP() << "cannot write " << iostats;
  const dev_t dev = loop.rdev();
  std::unique_ptr<BlockTracer> tracer;
  IOTAIL_OPEN_TRACER_OR_SKIP(tracer, std::span(&dev, 1), 0, {.attach = TracerAttach::kTyped});
  const std::vector<TracedRead> reads = TracedReads(*tracer, loop.path(), dev, {0, 8192, 1 << 20});
  ASSERT_EQ(reads.size(), 3u);
  for (const TracedRead& read : reads) {
    ASSERT_TRUE(read.request.has_value()) << read.read.offset;
    EXPECT_LE(read.read.before_ns, read.request->entered_ns);
    EXPECT_LE(read.request->entered_ns, read.request->issue_ns);
    EXPECT_LE(read.request->complete_ns, read.read.after_ns);
  }
  RunShell("echo 1 > " + iostats);
}

// The plain tracepoints need tracefs: mounted for the test when it is not (and unmounted after).
TEST(BlockTracerTest, TracepointsSeeExactlyItsDevicesReadsWhileAnotherDeviceIsBusy) {
  const std::string tracefs = engine::TracefsDir();
  bool mounted_here = false;
  struct stat st {};
  if (::stat((tracefs + "/events").c_str(), &st) != 0) {
    if (::geteuid() != 0) GTEST_SKIP() << "tracefs is not mounted and mounting it needs root";
    if (::mount("nodev", tracefs.c_str(), "tracefs", 0, nullptr) != 0) {
      GTEST_SKIP() << "cannot mount tracefs on " << tracefs << ": " << std::strerror(errno);
    }
    mounted_here = true;
  }
  ExpectExactlyOwnReads(TracerAttach::kTracepoints);
  if (mounted_here) {
    EXPECT_EQ(::umount2(tracefs.c_str(), MNT_DETACH), 0) << std::strerror(errno);
  }
}

// The device stage (issue to completion) of QD1 reads on `loop`, and the reads' own latency
// (pread's return minus its call), in ms; each read's device stage lies inside its latency.
std::pair<std::vector<double>, std::vector<double>> DeviceStageMs(LoopDevice& loop, int reads,
                                                                  uint64_t span_bytes) {
  const dev_t dev = loop.rdev();
  std::unique_ptr<BlockTracer> tracer;
  [&] { IOTAIL_OPEN_TRACER_OR_SKIP(tracer, std::span(&dev, 1), 0); }();
  if (!tracer) return {};
  std::vector<uint64_t> offsets;
  for (int i = 0; i < reads; ++i) {
    offsets.push_back((static_cast<uint64_t>(i) * 7919 * 4096) % span_bytes);
  }
  const std::vector<TracedRead> traced = TracedReads(*tracer, loop.path(), dev, offsets);
  std::vector<double> device, total;
  for (const TracedRead& t : traced) {
    EXPECT_TRUE(t.request.has_value()) << t.read.offset;
    if (!t.request) continue;
    const auto& e = *t.request;
    EXPECT_LE(t.read.before_ns, e.issue_ns);
    EXPECT_LE(e.complete_ns, t.read.after_ns);
    device.push_back((e.complete_ns - e.issue_ns) / 1e6);
    total.push_back((t.read.after_ns - t.read.before_ns) / 1e6);
  }
  EXPECT_EQ(device.size(), offsets.size());
  return {device, total};
}

// nbdkit's delay filter makes every read of the FUSE file take 2 ms: the loop device's requests
// take that long from issue to completion; over tmpfs they take microseconds.
TEST(BlockTracerTest, DeviceStageIsTheBackingFilesLatency) {
  NbdFuseMount slow;
  if (std::string why = slow.Start("--filter=delay memory 64M rdelay=2ms"); !why.empty()) {
    GTEST_SKIP() << why;
  }
  slow.ServeRealTime();
  LoopDevice slow_loop, fast_loop;
  if (std::string why = slow_loop.Attach(slow.path().string()); !why.empty()) GTEST_SKIP() << why;
  if (std::string why = fast_loop.AttachNewFile(64 << 20); !why.empty()) GTEST_SKIP() << why;
  const auto [slow_ms, slow_total_ms] = DeviceStageMs(slow_loop, 100, 64 << 20);
  if (IsSkipped()) return;
  // The tmpfs side's bound is tens of microseconds from its measure: a machine stalled by other
  // work for a moment (the CI once saw 0.16 ms, with the reads themselves at 0.33 ms) is not the
  // device; the best of three rounds of 200 reads is.
  std::vector<double> fast_ms, fast_total_ms;
  for (int round = 0; round < 3 && (fast_ms.empty() || Median(fast_ms) >= 0.1); ++round) {
    std::tie(fast_ms, fast_total_ms) = DeviceStageMs(fast_loop, 200, 64 << 20);
  }
  ASSERT_FALSE(slow_ms.empty());
  ASSERT_FALSE(fast_ms.empty());
  const double slow_p50 = Median(slow_ms), fast_p50 = Median(fast_ms);
  std::printf(
      "device stage p50: %.3f ms over nbdkit rdelay=2ms (pread %.3f ms), %.4f ms over "
      "tmpfs (pread %.4f ms)\n",
      slow_p50, Median(slow_total_ms), fast_p50, Median(fast_total_ms));
  // The device stage is at least the delay the server adds, and it is nearly all of what the read
  // took: the loop driver reads the backing file between issue and completion, so the stage must
  // account for the time, wherever the FUSE path's own overhead puts it on a busy machine (2.3 to
  // 3.7 ms measured here under load; 2.24 ms on a quiet one).
  EXPECT_GE(slow_p50, 2.0);
  EXPECT_LT(Median(slow_total_ms) - slow_p50, 0.15);
  EXPECT_LT(fast_p50, 0.1);
}

// A table of 64 entries and 300 reads none takes: each request written over an entry no I/O took
// is counted, and the entries still untaken at the end hold the rest: every request is counted.
// Then 100 reads, each taken as it completes: nothing more is counted as no I/O's.
TEST(BlockTracerTest, EveryRequestIsTakenOrCountedAsNoIos) {
  LoopDevice loop;
  if (std::string why = loop.AttachNewFile(16 << 20); !why.empty()) GTEST_SKIP() << why;
  const dev_t dev = loop.rdev();
  std::unique_ptr<BlockTracer> tracer;
  IOTAIL_OPEN_TRACER_OR_SKIP(tracer, std::span(&dev, 1), 0, {.request_entries = 64});
  std::vector<uint64_t> offsets;
  for (uint64_t i = 0; i < 300; ++i) offsets.push_back(i * 3 * 4096);
  DirectReads(loop.path(), offsets);
  engine::TraceCounters counters = tracer->Counters();
  const uint64_t untaken = tracer->Requests().Untaken();
  EXPECT_EQ(counters.block_records, offsets.size());
  EXPECT_GT(counters.block_unmatched, 0u);
  EXPECT_LE(untaken, 64u);
  EXPECT_EQ(counters.block_unmatched + untaken, offsets.size());

  std::vector<uint64_t> more;
  for (uint64_t i = 0; i < 100; ++i) more.push_back((1000 + i * 5) * 4096);
  const std::vector<TracedRead> traced = TracedReads(*tracer, loop.path(), dev, more);
  size_t found = 0;
  for (const TracedRead& t : traced) found += t.request.has_value() ? 1 : 0;
  EXPECT_EQ(found, more.size());
  counters = tracer->Counters();
  EXPECT_EQ(counters.block_records, offsets.size() + more.size());
  // The entries these reads wrote over held the first round's untaken requests, counted now.
  EXPECT_EQ(counters.block_unmatched + tracer->Requests().Untaken(), offsets.size());
}

// A small table: requests no I/O took yet, at places of one hash, fill its entries (each still
// found at its place); one more is written over the first of them (counted as no I/O's), which is
// then not found, and never mistaken for another.
TEST(BlockTracerTest, ARequestWrittenOverIsNotFound) {
  LoopDevice loop;
  if (std::string why = loop.AttachNewFile(16 << 20); !why.empty()) GTEST_SKIP() << why;
  const dev_t dev = loop.rdev();
  std::unique_ptr<BlockTracer> tracer;
  IOTAIL_OPEN_TRACER_OR_SKIP(tracer, std::span(&dev, 1), 0, {.request_entries = 64});
  const uint32_t kdev = (major(dev) << 20) | minor(dev);
  // IOTAIL_REQUEST_PROBES + 1 places whose first entry is the same.
  std::vector<uint64_t> places = {8};
  for (uint64_t sector = 16; places.size() <= IOTAIL_REQUEST_PROBES; sector += 8) {
    if (iotail_request_index(kdev, sector, 63) == iotail_request_index(kdev, places[0], 63)) {
      places.push_back(sector);
    }
  }
  const engine::RequestTable table = tracer->Requests();
  for (size_t i = 0; i < IOTAIL_REQUEST_PROBES; ++i) {
    DirectReads(loop.path(), {places[i] * 512});
    ASSERT_TRUE(table.Find(dev, places[i]).has_value()) << places[i];
  }
  for (size_t i = 0; i < IOTAIL_REQUEST_PROBES; ++i) {
    EXPECT_TRUE(table.Find(dev, places[i]).has_value()) << "still there: " << places[i];
  }
  EXPECT_EQ(tracer->Counters().block_unmatched, 0u);
  DirectReads(loop.path(), {places.back() * 512});
  EXPECT_FALSE(table.Find(dev, places[0]).has_value()) << "written over";
  for (size_t i = 1; i < places.size(); ++i) {
    const auto request = table.Find(dev, places[i]);
    ASSERT_TRUE(request.has_value()) << places[i];
    EXPECT_EQ(request->sector, places[i]);
  }
  EXPECT_EQ(tracer->Counters().block_unmatched, 1u);
}

TEST(BlockTracerTest, NothingToTraceOrNoDiskIsRefusedWithAReason) {
  auto refused = [](std::span<const dev_t> devices, pid_t tgid) {
    const auto opened = BlockTracer::Open(devices, tgid);
    const auto* why = std::get_if<engine::TracerUnavailable>(&opened);
    return why != nullptr ? why->reason : std::string("opened");
  };
  EXPECT_NE(refused({}, 0).find("nothing to trace"), std::string::npos);
  struct stat st {};
  ASSERT_EQ(::stat("/dev/shm", &st), 0);
  const dev_t tmpfs = st.st_dev;  // no block device: would match nothing
  EXPECT_NE(refused(std::span(&tmpfs, 1), 0).find("not a block device"), std::string::npos);
}

}  // namespace block_tracer_test
}  // namespace iotail::testing
