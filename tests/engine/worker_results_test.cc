// The worker's rules for what an engine returns, through a scripted FakeEngine: short transfers
// and -EAGAIN resubmitted (liburing's rule), errors counted per errno and the error policy applied
// (fio's continue_on_error and ignore_error), end of file as an error, late completions and
// partial batches, and an engine that fails.
#include <gtest/gtest.h>

#include <cerrno>
#include <set>

#include "tests/engine/worker_fixture.h"

namespace iotail::engine::testing {
namespace worker_results_test {

using stats::Direction;
using Outcome = FakeEngine::Outcome;
using Submission = FakeEngine::Submission;

constexpr uint32_t kBs = 16384;
constexpr uint32_t kBlocks = 8;

class WorkerResultsTest : public WorkerTest {
 protected:
  void SetUp() override {
    spec_.region.size = kBlocks * kBs;
    spec_.blocks.bs = kBs;
  }
};

// A short transfer is resubmitted for its remainder (the rest of the range, from the rest of its
// buffer), and the I/O counts once, whole; a write in pieces reads back intact.
TEST_F(WorkerResultsTest, ShortTransfersAreResubmittedForTheRemainder) {
  spec_.rw = RwMode::kWrite;
  spec_.verify.kind = VerifyKind::kMd5;
  Run([](FakeEngine& e) {
    e.set_script([](const Submission& s) {
      return s.index == 0   ? Outcome{.result = 4096}
             : s.index == 1 ? Outcome{.result = 1}
                            : Outcome{};
    });
  });
  const auto& subs = engine_->submissions();
  ASSERT_EQ(subs.size(), kBlocks + 2 + kBlocks);  // then the read-back, through the engine
  EXPECT_EQ(subs[1].offset, 4096u);
  EXPECT_EQ(subs[1].len, kBs - 4096);
  EXPECT_EQ(subs[2].offset, 4097u);
  EXPECT_EQ(subs[2].len, kBs - 4097);
  EXPECT_EQ(subs[3].offset, kBs);  // then the next I/O
  for (size_t i = kBlocks + 2; i < subs.size(); ++i) EXPECT_EQ(subs[i].dir, Direction::kRead);
  EXPECT_EQ(Ios(Direction::kWrite), kBlocks);
  EXPECT_EQ(Bytes(Direction::kWrite), kBlocks * kBs);
  EXPECT_EQ(snap_.TotalErrors(), 0u);
  EXPECT_FALSE(worker_->Failed());
  EXPECT_EQ(worker_->verified_blocks(), kBlocks) << worker_->verify_failure();
  EXPECT_EQ(worker_->verify_failure(), "");
}

// Every transfer short, at depth: each I/O finishes in pieces, all of them counted once.
TEST_F(WorkerResultsTest, ReadsInManyPiecesAtDepthCountOnceEach) {
  spec_.rw = RwMode::kRandRead;
  spec_.queue.iodepth = 4;
  Run([](FakeEngine& e) {
    e.set_script(
        [](const Submission& s) { return Outcome{.result = s.len > 5000 ? 5000 : s.len}; });
  });
  EXPECT_EQ(engine_->submissions().size(), kBlocks * 4);  // 5000, 5000, 5000, 1384
  EXPECT_EQ(Ios(Direction::kRead), kBlocks);
  EXPECT_EQ(Bytes(Direction::kRead), kBlocks * kBs);
  EXPECT_EQ(snap_.TotalErrors(), 0u);
}

// -EAGAIN only means "try again": the same request again, nothing counted.
TEST_F(WorkerResultsTest, EagainIsResubmittedWhole) {
  Run([](FakeEngine& e) {
    e.set_script(
        [](const Submission& s) { return s.index < 3 ? Outcome{.result = -EAGAIN} : Outcome{}; });
  });
  const auto& subs = engine_->submissions();
  ASSERT_EQ(subs.size(), kBlocks + 3);
  for (size_t i = 1; i <= 3; ++i) {
    EXPECT_EQ(subs[i].offset, 0u);
    EXPECT_EQ(subs[i].len, kBs);
  }
  EXPECT_EQ(Ios(Direction::kRead), kBlocks);
  EXPECT_EQ(snap_.TotalErrors(), 0u);
  EXPECT_FALSE(worker_->Failed());
}

// An engine for which EAGAIN is the I/O's own result (pvsync2 with nowait): an error, as fio's.
TEST_F(WorkerResultsTest, EagainIsAnErrorWhenTheEngineSaysSo) {
  Run([](FakeEngine& e) {
    e.set_retries_eagain(false);
    e.set_script(
        [](const Submission& s) { return s.index == 2 ? Outcome{.result = -EAGAIN} : Outcome{}; });
  });
  EXPECT_EQ(Errors(EAGAIN), 1u);
  EXPECT_EQ(Ios(Direction::kRead), 2u);
  EXPECT_TRUE(worker_->Failed());
}

// By default an I/O error ends the job: counted under its errno, nothing issued after it.
TEST_F(WorkerResultsTest, AnIoErrorIsCountedAndEndsTheJob) {
  Run([](FakeEngine& e) {
    e.set_script(
        [](const Submission& s) { return s.index == 2 ? Outcome{.result = -EIO} : Outcome{}; });
  });
  EXPECT_EQ(Errors(EIO), 1u);
  EXPECT_EQ(snap_.TotalErrors(), 1u);
  EXPECT_EQ(Ios(Direction::kRead), 2u);
  EXPECT_EQ(engine_->submissions().size(), 3u);
  EXPECT_TRUE(worker_->Failed());
  EXPECT_EQ(worker_->engine_error(), 0);  // the I/O's error, not the engine's
}

// The I/Os in flight when an error ends the job complete and are recorded.
TEST_F(WorkerResultsTest, AnErrorAtDepthStillReapsTheIosInFlight) {
  spec_.queue.iodepth = 4;
  Run([](FakeEngine& e) {
    e.set_script(
        [](const Submission& s) { return s.index == 0 ? Outcome{.result = -EIO} : Outcome{}; });
  });
  EXPECT_EQ(Errors(EIO), 1u);
  EXPECT_EQ(Ios(Direction::kRead), 3u);  // the other three of the first batch
  EXPECT_EQ(engine_->submissions().size(), 4u);
  EXPECT_EQ(snap_.in_flight, 0u);
  EXPECT_TRUE(worker_->Failed());
}

// fio's td_non_fatal_error: continue_on_error goes on past the errnos of the type's list (EIO and
// EILSEQ by default), each one counted; another errno, or an error of a type not continued, ends
// the job; ignore_error gives the type its list.
TEST_F(WorkerResultsTest, ContinueOnErrorGoesOnOnlyPastTheListedErrnos) {
  auto every_third = [](int err) {
    return [err](FakeEngine& e) {
      e.set_script([err](const Submission& s) {
        return s.index % 3 == 1 ? Outcome{.result = -err} : Outcome{};
      });
    };
  };
  spec_.errors.continue_on_error[0] = true;  // read
  Run(every_third(EIO));
  EXPECT_EQ(Errors(EIO), 3u);  // I/Os 1, 4, 7
  EXPECT_EQ(Ios(Direction::kRead), kBlocks - 3);
  EXPECT_FALSE(worker_->Failed());

  TearDown();
  Run(every_third(ENOSPC));  // not in the read list
  EXPECT_EQ(Errors(ENOSPC), 1u);
  EXPECT_EQ(Ios(Direction::kRead), 1u);
  EXPECT_TRUE(worker_->Failed());

  TearDown();
  spec_.errors.lists[0] = {ENOSPC};
  Run(every_third(ENOSPC));
  EXPECT_EQ(Errors(ENOSPC), 3u);
  EXPECT_FALSE(worker_->Failed());

  TearDown();
  spec_.errors.continue_on_error = {false, true, false};  // writes only: a read error ends the job
  spec_.errors.lists[0] = {EIO, EILSEQ};
  Run(every_third(EIO));
  EXPECT_EQ(Errors(EIO), 1u);
  EXPECT_TRUE(worker_->Failed());
}

// End of file (0 bytes for a request of some) is fio's "full resid" error, EIO.
// A synchronous engine's read at the end of the file is fio's "full resid" EIO.
TEST_F(WorkerResultsTest, EndOfFileIsAnIoErrorOnASynchronousEngine) {
  Run([](FakeEngine& e) {
    e.set_asynchronous(false);
    e.set_script(
        [](const Submission& s) { return s.index == 5 ? Outcome{.result = 0} : Outcome{}; });
  });
  EXPECT_EQ(Errors(EIO), 1u);
  EXPECT_EQ(Ios(Direction::kRead), 5u);
  EXPECT_TRUE(worker_->Failed());
  EXPECT_EQ(worker_->short_reads(), 0u);
}

// An asynchronous one's completes short with what it brought, counted, and the job goes on (fio
// counts such reads on libaio and io_uring: a create_on_open file read before it is written).
TEST_F(WorkerResultsTest, EndOfFileCompletesShortOnAnAsynchronousEngine) {
  Run([](FakeEngine& e) {
    e.set_script(
        [](const Submission& s) { return s.index == 5 ? Outcome{.result = 0} : Outcome{}; });
  });
  EXPECT_EQ(Errors(EIO), 0u);
  EXPECT_FALSE(worker_->Failed());
  EXPECT_EQ(worker_->short_reads(), 1u);
  EXPECT_EQ(Ios(Direction::kRead), spec_.region.size / kBs);
  EXPECT_EQ(Bytes(Direction::kRead), spec_.region.size - kBs);  // the short one brought nothing
}

// A completion that comes after later ones: its slot stays taken until it arrives (no other I/O
// uses its buffer meanwhile), the others are replaced as they complete, and every I/O is recorded
// once.
TEST_F(WorkerResultsTest, ALateCompletionKeepsItsSlotWhileTheOthersAreReplaced) {
  spec_.region.size = 64 * kBs;
  spec_.rw = RwMode::kRandRead;
  spec_.queue.iodepth = 4;
  Run([](FakeEngine& e) {
    e.set_script(
        [](const Submission& s) { return s.index == 0 ? Outcome{.delay_reaps = 20} : Outcome{}; });
  });
  const auto& subs = engine_->submissions();
  ASSERT_EQ(subs.size(), 64u);
  const uint32_t late_slot = subs[0].slot;
  std::set<uint32_t> others;
  for (size_t i = 1; i <= 20; ++i) {
    EXPECT_NE(subs[i].slot, late_slot) << i;
    others.insert(subs[i].slot);
  }
  EXPECT_EQ(others.size(), 3u);  // the queue stays full around it
  EXPECT_EQ(Ios(Direction::kRead), 64u);
  EXPECT_EQ(Bytes(Direction::kRead), 64u * kBs);
  EXPECT_EQ(snap_.in_flight, 0u);
}

// Reaps that return fewer completions than are ready (one at a time) lose none; by default
// (iodepth_batch_complete_max 0) the worker takes one per reap anyway, and with a larger maximum
// it takes what is there.
TEST_F(WorkerResultsTest, PartialBatchesLoseNoCompletion) {
  spec_.region.size = 64 * kBs;
  spec_.rw = RwMode::kRandRead;
  spec_.queue.iodepth = 8;
  spec_.queue.batch_submit = 0;
  spec_.queue.batch_complete_max = 8;
  Run([](FakeEngine& e) { e.set_max_per_reap(1); });
  EXPECT_EQ(Ios(Direction::kRead), 64u);
  EXPECT_EQ(engine_->reap_calls(), 64u);
  const auto& one = worker_->depths().complete;
  EXPECT_EQ(one[static_cast<size_t>(stats::IoDepthCounts::BatchIndex(1))], 64u);

  TearDown();
  Run();
  EXPECT_EQ(Ios(Direction::kRead), 64u);
  EXPECT_LT(engine_->reap_calls(), 64u);  // batches of what had completed
}

// An engine-level failure (Reap's -errno) stops the worker: kept as the engine's error and
// counted.
TEST_F(WorkerResultsTest, AnEngineFailureStopsTheWorker) {
  Run([](FakeEngine& e) { e.fail_reap(3, ENXIO); });
  EXPECT_EQ(worker_->engine_error(), ENXIO);
  EXPECT_EQ(Errors(ENXIO), 1u);
  EXPECT_EQ(Ios(Direction::kRead), 3u);
  EXPECT_TRUE(worker_->Failed());
}

// A synchronous engine records no slat and no separate lat; an asynchronous one records both.
TEST_F(WorkerResultsTest, SlatAndLatOnlyFromAsynchronousEngines) {
  Run([](FakeEngine& e) { e.set_asynchronous(false); });
  const auto& sync = snap_.dirs[static_cast<size_t>(stats::DirectionIndex(Direction::kRead))];
  EXPECT_EQ(sync.clat.n, kBlocks);
  EXPECT_EQ(sync.slat.n, 0u);
  EXPECT_EQ(sync.lat.n, 0u);
  TearDown();
  Run();
  const auto& async = snap_.dirs[static_cast<size_t>(stats::DirectionIndex(Direction::kRead))];
  EXPECT_EQ(async.slat.n, kBlocks);
  EXPECT_EQ(async.lat.n, kBlocks);
  EXPECT_GE(async.clat.min_ns, 1000u);  // the fake's latency
}

}  // namespace worker_results_test
}  // namespace iotail::engine::testing
