// The worker's rules between I/Os, through a scripted FakeEngine and its clock (so that seconds of
// a job take microseconds): fill_device (a full filesystem ends the job cleanly), the read-back of
// each loop's writes and a block that fails it, fio's rate floor (rate_min, rate_iops_min: after a
// 2 s settle, over ratecycle, at completions), number_ios and loops.
#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <string>
#include <vector>

#include "tests/engine/worker_fixture.h"

namespace iotail::engine::testing {
namespace worker_passes_test {

using stats::Direction;
using Outcome = FakeEngine::Outcome;
using Submission = FakeEngine::Submission;

constexpr uint32_t kBs = 4096;
constexpr uint64_t kMs = 1'000'000;
constexpr uint64_t kSecond = 1000 * kMs;

class WorkerPassesTest : public WorkerTest {
 protected:
  void SetUp() override {
    spec_.region.size = 64 * kBs;
    spec_.blocks.bs = kBs;
  }
  // Every I/O takes `latency_ns` on the engine's clock.
  static std::function<void(FakeEngine&)> Latency(uint64_t latency_ns) {
    return [latency_ns](FakeEngine& e) {
      e.set_script([latency_ns](const Submission&) { return Outcome{.latency_ns = latency_ns}; });
    };
  }
};

// fio's fill_device: a sequential write runs until the filesystem is full (ENOSPC, or EDQUOT), and
// that is the job's end, not an error; the read-back checks what was written before it.
TEST_F(WorkerPassesTest, FillDeviceEndsCleanlyWhenTheFilesystemIsFull) {
  spec_.rw = RwMode::kWrite;
  spec_.region.fill_device = true;
  spec_.verify.kind = VerifyKind::kCrc32c;
  for (const int full : {ENOSPC, EDQUOT}) {
    SCOPED_TRACE(full);
    TearDown();
    Run([full](FakeEngine& e) {
      e.set_script([full](const Submission& s) {
        return s.offset >= 40 * kBs ? Outcome{.result = -full} : Outcome{};
      });
    });
    EXPECT_EQ(Ios(Direction::kWrite), 40u);
    EXPECT_EQ(Bytes(Direction::kWrite), 40u * kBs);
    EXPECT_EQ(snap_.TotalErrors(), 0u);
    EXPECT_FALSE(worker_->Failed());
    EXPECT_EQ(worker_->verified_blocks(), 40u) << worker_->verify_failure();
    EXPECT_EQ(Ios(Direction::kRead), 40u);  // the read-back, as fio's reads
  }
  // Without fill_device a full filesystem is an error that ends the job.
  TearDown();
  spec_.region.fill_device = false;
  spec_.verify.kind = VerifyKind::kNone;
  Run([](FakeEngine& e) {
    e.set_script([](const Submission& s) {
      return s.offset >= 40 * kBs ? Outcome{.result = -ENOSPC} : Outcome{};
    });
  });
  EXPECT_EQ(Errors(ENOSPC), 1u);
  EXPECT_TRUE(worker_->Failed());
}

// A mixed job with verify reads back each loop's writes once the loop's I/O is over, before the
// next loop (fio's do_io, then do_verify, per loop): a loop's reads are its own reads plus the
// read-backs, one per block.
TEST_F(WorkerPassesTest, VerifyReadsBackEachLoopsWrites) {
  spec_.rw = RwMode::kRandReadWrite;
  spec_.verify.kind = VerifyKind::kMd5;
  spec_.loops = 3;
  spec_.queue.iodepth = 4;
  Run();
  EXPECT_EQ(worker_->verify_phases(), 3u);
  EXPECT_EQ(Ios(Direction::kRead), 3 * 64u);
  EXPECT_EQ(worker_->verified_blocks(), Ios(Direction::kWrite));
  EXPECT_GT(Ios(Direction::kWrite), 3 * 64u / 4);
  EXPECT_EQ(worker_->verify_failure(), "");
  EXPECT_FALSE(worker_->Failed());
  // The read-backs go through the job's engine, as fio's.
  EXPECT_EQ(engine_->submissions().size(), 3 * 64u + worker_->verified_blocks());
}

// A block whose data lands damaged fails its loop's read-back: EILSEQ counted, the job ended
// there, the failure named.
TEST_F(WorkerPassesTest, ADamagedBlockFailsItsLoopsReadBack) {
  spec_.rw = RwMode::kRandReadWrite;
  spec_.verify.kind = VerifyKind::kMd5;
  spec_.loops = 3;
  Run([](FakeEngine& e) {
    // The first write of the second loop.
    e.set_script([seen = false](const Submission& s) mutable {
      const bool damage = s.index >= 64 && s.dir == Direction::kWrite && !seen;
      seen = seen || damage;
      return Outcome{.corrupt = damage};
    });
  });
  EXPECT_EQ(Errors(EILSEQ), 1u);
  EXPECT_TRUE(worker_->Failed());
  EXPECT_EQ(worker_->verify_phases(), 2u);
  EXPECT_NE(worker_->verify_failure().find("of file 0"), std::string::npos)
      << worker_->verify_failure();
  // No third loop: two loops' I/Os and the read-backs (through the engine) that were checked.
  EXPECT_EQ(engine_->submissions().size(), 2 * 64u + worker_->verified_blocks());
}

// rate_iops_min: nothing is checked for 2 s after the recording start; then the floor is checked
// at completions over at least ratecycle (1 s) since the last check, and a worker below it ends
// with EIO and fio's line. 2 ms an I/O is 500 IOPS.
TEST_F(WorkerPassesTest, ARateFloorMissedEndsTheJobAfterTheSettleAndACycle) {
  spec_.region.size = 1ull << 30;
  spec_.rw = RwMode::kRandRead;
  spec_.time_based = true;
  spec_.rates.min[0].iops = 1000;
  Run(Latency(2 * kMs), /*diskless=*/true, 0, 60 * kSecond);
  EXPECT_EQ(worker_->rate_shortfall(),
            "iotail: rate_iops_min=1000 not met, got 500 IOPS (reads, over 1000 ms)");
  EXPECT_EQ(Errors(EIO), 1u);
  EXPECT_TRUE(worker_->Failed());
  const uint64_t ended = engine_->now_ns() - start_ns_;
  EXPECT_GE(ended, 3 * kSecond);  // the settle, then a cycle
  EXPECT_LT(ended, 3 * kSecond + 10 * kMs);
}

// The settle counts from the end of the ramp (the recording start), and a shorter ratecycle checks
// sooner.
TEST_F(WorkerPassesTest, TheSettleCountsFromTheRampsEnd) {
  spec_.region.size = 1ull << 30;
  spec_.rw = RwMode::kRandRead;
  spec_.time_based = true;
  spec_.rates.min[0].iops = 1000;
  spec_.rates.cycle_ms = 250;
  Run(Latency(2 * kMs), /*diskless=*/true, 1 * kSecond, 60 * kSecond);
  EXPECT_FALSE(worker_->rate_shortfall().empty());
  const uint64_t ended = engine_->now_ns() - start_ns_;
  EXPECT_GE(ended, 1 * kSecond + 2 * kSecond + 250 * kMs);
  EXPECT_LT(ended, 1 * kSecond + 2 * kSecond + 260 * kMs);
}

// A floor met over ratecycle at completions keeps the job going though no completion falls in
// most seconds: one 4k I/O every 2 s is 2 KiB/s against rate_min=1k (fio's 1mbs_clients example,
// scaled down); the job runs to its runtime. 2.5 s an I/O (1.6 KiB/s) against 2k ends it.
TEST_F(WorkerPassesTest, AFloorMetBetweenCompletionsKeepsTheJobRunning) {
  spec_.region.size = 1ull << 20;
  spec_.time_based = true;
  spec_.rates.min[0].bytes_per_s = 1024;
  Run(Latency(2 * kSecond), /*diskless=*/false, 0, 20 * kSecond);
  EXPECT_EQ(worker_->rate_shortfall(), "");
  EXPECT_FALSE(worker_->Failed());
  EXPECT_EQ(Ios(Direction::kRead), 10u);

  TearDown();
  spec_.rates.min[0].bytes_per_s = 2048;
  Run(Latency(2500 * kMs), /*diskless=*/false, 0, 20 * kSecond);
  EXPECT_NE(
      worker_->rate_shortfall().find("rate_min=2048B/s not met, got 1638B/s (reads, over 2500 ms)"),
      std::string::npos)
      << worker_->rate_shortfall();
  EXPECT_TRUE(worker_->Failed());
}

// number_ios ends the job after N I/Os per loop (x loops), before the loop's size.
TEST_F(WorkerPassesTest, NumberIosEndsTheJobAfterThatManyIosPerLoop) {
  spec_.rw = RwMode::kRandRead;
  spec_.number_ios = 5;
  spec_.loops = 3;
  Run();
  EXPECT_EQ(Ios(Direction::kRead), 15u);
  EXPECT_EQ(engine_->submissions().size(), 15u);
  EXPECT_FALSE(worker_->Failed());
}

// loops: the pass over the region again, the same offsets each time for a sequential job, and
// the random map's every block once a pass for a random one.
TEST_F(WorkerPassesTest, LoopsRepeatThePass) {
  spec_.loops = 3;
  Run();
  const auto& subs = engine_->submissions();
  ASSERT_EQ(subs.size(), 3 * 64u);
  for (size_t i = 0; i < subs.size(); ++i) EXPECT_EQ(subs[i].offset, (i % 64) * kBs) << i;
  EXPECT_EQ(worker_->restarts(), 2u);

  TearDown();
  spec_.rw = RwMode::kRandWrite;
  Run();
  ASSERT_EQ(engine_->submissions().size(), 3 * 64u);
  for (size_t pass = 0; pass < 3; ++pass) {
    std::vector<bool> seen(64);
    for (size_t i = 0; i < 64; ++i) seen[engine_->submissions()[pass * 64 + i].offset / kBs] = true;
    EXPECT_EQ(std::count(seen.begin(), seen.end(), true), 64) << pass;
  }
  EXPECT_EQ(Bytes(Direction::kWrite), 3 * 64u * kBs);
}

}  // namespace worker_passes_test
}  // namespace iotail::engine::testing
